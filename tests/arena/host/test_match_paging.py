"""The match list for a long-running competition, over a real HTTP host and a real store: pages
of ``limit`` after ``offset`` with the total in ``X-Total-Count``, filters by bot, version, phase
and faults that agree with the unfiltered list, unknown names refused in one line, and
``arena remote matches`` with the same flags."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cardarena.messages import FaultInfo

from arena.cli.main import main
from arena.host.store import MATCH_FILTERS, CompetitionStoreError, Phase
from engine import Result
from tests.arena.host.serving import Host, hosting, validated_versions

WIN = Result((1, 0, 1, 0), (1, 2, 1, 2), summary="N-S")
FAULT = FaultInfo(seat=1, kind="timeout", detail="slow")


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Host]:
    monkeypatch.setenv("ARENA_SERVER", "")
    with hosting(tmp_path) as h:
        store = h.store
        ids = validated_versions(store, ("a", "b", "c"))
        pairs = [(x, y) for x in ids for y in ids if x < y] * 9  # 27 units, 54 matches
        for n, (x, y) in enumerate(pairs):
            phase: Phase = "final" if n % 5 == 4 else "ladder"
            rotations = [(f"m{n}-r{r}", r, (x, y, x, y)[r:] + (x, y, x, y)[:r]) for r in (0, 1)]
            store.create_unit(phase, n, (x, y), rotations)
            for r in (0, 1):
                store.commit_match(f"m{n}-r{r}", WIN, [FAULT] if n % 7 == 0 else [], None)
        monkeypatch.setenv("ARENA_SERVER", h.url)
        yield h


def listing(host: Host, **query: Any) -> tuple[list[dict[str, Any]], int]:
    r = httpx.get(f"{host.url}/api/v1/matches", params=query)
    assert r.status_code == 200, r.text
    return r.json(), int(r.headers["x-total-count"])


def test_pages_of_the_list_add_up_to_the_whole(host: Host) -> None:
    everything, total = listing(host, limit=1000)
    assert total == len(everything) == 54
    ids = [m["match_id"] for m in everything]
    assert ids[0] == "m26-r1" and ids[-1] == "m0-r0"  # newest first
    pages = []
    for offset in range(0, total, 10):
        page, count = listing(host, limit=10, offset=offset)
        assert count == total
        pages.extend(m["match_id"] for m in page)
    assert pages == ids
    assert listing(host, limit=10, offset=total) == ([], total)


@pytest.mark.parametrize(
    ("query", "keep"),
    [
        ({"bot": "a"}, lambda m: any(s.startswith("a@") for s in m["seats"])),
        ({"bot": "c", "phase": "final"}, lambda m: "c@1" in m["seats"] and m["phase"] == "final"),
        ({"version": 2}, lambda m: "b@1" in m["seats"]),
        ({"phase": "ladder"}, lambda m: m["phase"] == "ladder"),
        ({"faults": "true"}, lambda m: m["faults"] != []),
        ({"faults": "false", "bot": "b"}, lambda m: not m["faults"] and "b@1" in m["seats"]),
    ],
)
def test_each_filter_keeps_what_it_names(host: Host, query: dict[str, Any], keep: Any) -> None:
    everything, _ = listing(host, limit=1000)
    expected = [m["match_id"] for m in everything if keep(m)]
    assert 0 < len(expected) < len(everything)
    found, total = listing(host, limit=1000, **query)
    assert [m["match_id"] for m in found] == expected and total == len(expected)
    first, again = listing(host, limit=3, offset=1, **query)
    assert [m["match_id"] for m in first] == expected[1:4] and again == total


def test_the_season_and_event_filters_select_by_what_the_store_holds(host: Host) -> None:
    everything, total = listing(host, limit=1000)
    assert listing(host, limit=1000, season=1) == (everything, total)  # all in season 1
    assert listing(host, season=2) == ([], 0)
    assert listing(host, phase="event") == ([], 0)
    r = httpx.get(f"{host.url}/api/v1/matches", params={"event": "cup"})
    assert (r.status_code, r.json()) == (404, {"detail": "no event 'cup' has started"})


def test_bad_filters_are_one_line(host: Host) -> None:
    for query, line in (
        ({"bot": "nobody"}, "no bot 'nobody'"),
        ({"version": 99}, "no version 99"),
    ):
        r = httpx.get(f"{host.url}/api/v1/matches", params=query)
        assert (r.status_code, r.json()) == (404, {"detail": line})
    for query in ({"phase": "party"}, {"limit": 0}, {"offset": -1}, {"faults": "maybe"}):
        r = httpx.get(f"{host.url}/api/v1/matches", params=query)
        assert r.status_code == 422 and "\n" not in r.json()["detail"], r.text
    with pytest.raises(CompetitionStoreError, match="no match filter 'colour'"):
        host.store.finished_matches_paged({"colour": "red"}, 10, 0)
    assert set(MATCH_FILTERS) >= {"bot", "version", "phase", "faults", "season", "event"}


def test_arena_remote_matches_takes_the_same_flags(
    host: Host, capsys: pytest.CaptureFixture[str]
) -> None:
    everything, _ = listing(host, limit=1000)
    args = ["--bot", "a", "--phase", "ladder", "--faults", "--offset", "1", "--limit", "2"]
    assert main(["remote", "matches", *args, "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    expected = [
        m["match_id"]
        for m in everything
        if "a@1" in m["seats"] and m["phase"] == "ladder" and m["faults"]
    ]
    assert [m["match_id"] for m in found] == expected[1:3]
    assert main(["remote", "matches", "--no-faults", "--bot", "b", "--limit", "1000"]) == 0
    *rows, footer = capsys.readouterr().out.splitlines()[1:]
    clean = sum(1 for m in everything if "b@1" in m["seats"] and not m["faults"])
    assert len(rows) == clean and footer == f"matches 1-{clean} of {clean}"
    # A page says where it is in the whole and how to get the next one.
    assert main(["remote", "matches", "--bot", "b", "--limit", "2", "--offset", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    every_b = sum(1 for m in everything if "b@1" in m["seats"])
    assert len(lines) == 4 and lines[-1] == f"matches 2-3 of {every_b} (--offset 3 for more)"
    assert main(["remote", "matches", "--bot", "zed"]) == 2
    assert capsys.readouterr().err.strip() == "arena: error: HTTP 404: no bot 'zed'"
