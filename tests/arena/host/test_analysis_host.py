"""An author's analysis of their seats in a finished match, over real HTTP and a real store, the
worker supervised as the host runs it (docs/analysis.md, *On a competition*): asked by the
author, done, returned to them only; refused without a seat of theirs, asked twice, over the
day's limit; a record that cannot be analysed fails in one line and the worker goes on."""

from __future__ import annotations

import queue
import threading
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from arena.cli.main import main
from arena.host.analyses import Analyses, AnalysisSettings, analysis_name
from arena.host.config import check_competition
from arena.host.retention import prune
from arena.host.store import CompetitionStore
from arena.host.supervise import supervised
from arena.layout import record_name
from tests.arena.host.serving import Host, hosting
from tests.arena.host.test_hosting_page import blocks
from tests.arena.host.test_notes_privacy import _versions
from tests.arena.host.test_retention import _file, _pair, _unit
from tests.arena.host.test_seasons import NS
from tests.engine.planted import blunder_record
from tests.waiting import wait_until

#: The cup's [analysis]: few worlds, so an analysis takes a second or two.
ANALYSIS = {"worlds": 2, "per_author_per_day": 2}


@contextmanager
def working(analyses: Analyses) -> Iterator[None]:
    """``analyses``' worker, supervised as the host supervises it, on trio in a thread."""
    started: queue.Queue[tuple[trio.lowlevel.TrioToken, trio.CancelScope]] = queue.Queue()

    async def run() -> None:
        with trio.CancelScope() as scope:
            started.put((trio.lowlevel.current_trio_token(), scope))
            await supervised("analysis", analyses.run)

    worker = threading.Thread(target=trio.run, args=(run,), name="analysis", daemon=True)
    worker.start()
    token, scope = started.get(timeout=30)
    try:
        yield
    finally:
        trio.from_thread.run_sync(scope.cancel, trio_token=token)
        worker.join(timeout=30)
        assert not worker.is_alive()


@contextmanager
def analysing(tmp_path: Path) -> Iterator[Host]:
    with hosting(tmp_path, analysis=ANALYSIS) as h:
        assert h.analyses is not None
        with working(h.analyses):
            yield h


def _finish(h: Host, unit: int, seats: tuple[int, ...], good: bool) -> str:
    """Match ``u{unit}-r0``, finished; its record the planted whist deal, or garbage."""
    match = f"u{unit}-r0"
    h.store.create_unit("ladder", unit, (seats[0], seats[1]), [(match, 0, seats)], unit_id=unit)
    path = h.directory / f"records/{record_name(match)}"
    path.parent.mkdir(parents=True, exist_ok=True)
    if good:
        blunder_record(path)
    else:
        path.write_bytes(b"not a record at all")
    h.store.commit_match(match, NS, [], f"records/{record_name(match)}")
    return match


def _settled(client: httpx.Client, match: str, token: str) -> dict[str, Any]:
    def state() -> dict[str, Any] | None:
        r = client.get(f"/api/v1/matches/{match}/analysis", headers=_auth(token))
        assert r.status_code == 200, r.text
        body: dict[str, Any] = r.json()
        return body if body["state"] in ("done", "failed") else None

    return wait_until(state, 120, what=f"the analysis of {match} to end")


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_an_author_asks_for_an_analysis_of_their_seats(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with analysing(tmp_path) as h, httpx.Client(base_url=h.url) as client:
        (a, b, _), tokens = _versions(h)
        good = _finish(h, 1, (a, b, a, b), True)
        bad = _finish(h, 2, (a, b, a, b), False)
        other = _finish(h, 3, (a, b, a, b), True)
        url = f"/api/v1/matches/{good}/analysis"
        assert client.post(url).status_code == 401
        r = client.post(url, headers=_auth(tokens["carol"]))
        assert r.status_code == 403 and "none of u1-r0's seats is your bot's" in r.text
        r = client.post(url, headers=_auth(tokens["alice"]))
        assert r.status_code == 202, r.text
        assert r.json()["state"] in ("queued", "running", "done") and r.json()["seats"] == [0, 2]
        assert client.post(url, headers=_auth(tokens["alice"])).status_code == 409

        done = _settled(client, good, tokens["alice"])
        assert done["state"] == "done", done
        analysis = done["analysis"]
        assert analysis["worlds"] == 2 and analysis["decisions"]
        assert {d["seat"] for d in analysis["decisions"]} == {0, 2}
        assert [s["seat"] for s in analysis["seats"]] == [0, 2]
        # Another author sees none of it: bob (E, W) has asked for none, carol has no seat.
        r = client.get(url, headers=_auth(tokens["bob"]))
        assert r.status_code == 200 and r.json()["state"] == "none", r.text
        assert r.json()["seats"] == [1, 3] and r.json()["analysis"] is None
        r = client.get(url, headers=_auth(tokens["carol"]))
        assert r.status_code == 403 and "analysis" not in r.json()
        assert client.get(url).status_code == 401

        # A record that cannot be analysed: failed, one line; the worker goes on.
        r = client.post(f"/api/v1/matches/{bad}/analysis", headers=_auth(tokens["alice"]))
        assert r.status_code == 202
        failed = _settled(client, bad, tokens["alice"])
        assert failed["state"] == "failed" and failed["analysis"] is None
        reason = failed["reason"]
        assert reason and "\n" not in reason and "Traceback" not in reason
        assert str(h.directory) not in reason
        r = client.post(f"/api/v1/matches/{other}/analysis", headers=_auth(tokens["alice"]))
        assert r.status_code == 429 and "the limit is 2 a day" in r.json()["detail"]
        # bob by the command line: asked, waited for, summed up.
        remote = ["remote", "analysis", "--server", h.url, "--token", tokens["bob"]]
        assert main([*remote, good, "--wait"]) == 0
        out = capsys.readouterr().out
        assert f"\nanalysis of {good} (seats 1, 3): done\n" in f"\n{out}", out
        assert "E (rules 1): " in out and "W (rules 1): " in out
        assert main([*remote[:-1], tokens["alice"], bad]) == 1
        out = capsys.readouterr().out
        assert out.endswith(f"analysis of {bad} (seats 0, 2): failed\nreason: {reason}\n"), out


def test_an_unknown_match_is_refused(tmp_path: Path) -> None:
    with analysing(tmp_path) as h, httpx.Client(base_url=h.url) as client:
        _, tokens = _versions(h)
        r = client.post("/api/v1/matches/u9-r0/analysis", headers=_auth(tokens["alice"]))
        assert r.status_code == 404 and len(r.json()["detail"].splitlines()) == 1


def test_analyses_go_by_the_records_retention_rules(tmp_path: Path) -> None:
    """An old analysis of a finished match goes with the records' age limit; a young one, and
    one of a final's match (a published result), stay."""
    config = check_competition({"game": "whist"}, "test", "cup")
    with CompetitionStore(tmp_path / "competition", config) as store:
        pair = _pair(store)
        old, young, final = (
            _unit(store, pair, "ladder", 10)[0],
            _unit(store, pair, "ladder", 1)[0],
            _unit(store, pair, "final", 10)[0],
        )
        for match_id, age in ((old, 10), (young, 1), (final, 10)):
            _file(store.directory, analysis_name(match_id, 1), age)
        retention = check_competition(
            {"game": "whist", "retention": {"records_days": 5}}, "test", "cup"
        ).retention
        report = prune(store, retention)
        assert analysis_name(old, 1) in {r.path for r in report.removed}
        assert not (store.directory / analysis_name(old, 1)).exists()
        assert (store.directory / analysis_name(young, 1)).exists()
        assert (store.directory / analysis_name(final, 1)).exists()


def test_hosting_md_states_the_analysis_defaults() -> None:
    """docs/hosting.md's config block, loaded as written, gives [analysis] its defaults."""
    (cup,) = [b for b in blocks("toml") if b.startswith("# cup.toml")]
    assert "[analysis]" in cup
    raw = tomllib.loads(cup)
    assert check_competition(raw, "cup", "cup").analysis == AnalysisSettings()


def test_a_host_with_analysis_off_refuses_in_one_line(tmp_path: Path) -> None:
    with hosting(tmp_path, analysis={"enabled": False}) as h, httpx.Client(base_url=h.url) as c:
        (a, b, _), tokens = _versions(h)
        match = _finish(h, 1, (a, b, a, b), True)
        r = c.post(f"/api/v1/matches/{match}/analysis", headers=_auth(tokens["alice"]))
        assert r.status_code == 403 and r.json() == {
            "detail": "this competition does not analyse matches"
        }
