"""The host watched by its operators: ``/healthz``, ``/metrics`` (parsed as Prometheus does) and
the log as JSON lines in a rotating file. The API over a real store for what the routes say, a
real ``arena host`` with real bots for what the counts count."""

from __future__ import annotations

import io
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import structlog
from cardarena.messages import FaultInfo
from prometheus_client.parser import text_string_to_metric_families

from arena.cli.main import main
from arena.host.api import HostState, create_app
from arena.host.config import check_competition
from arena.host.ladder import Standings
from arena.host.metrics import CompetitionCollector, HostMetrics
from arena.host.store import DB_NAME, CompetitionStore
from arena.host.throttle import Throttle
from arena.logging import configure, log_file_handler
from arena.ratings import fit_ratings
from arena.registry import hash_token
from tests.arena.host.processes import GOOD_BOT, Host, bot_archive, competition_config
from tests.arena.host.serving import ADMIN, serving
from tests.arena.host.test_host_store import (
    MANIFEST,
    SHA,
    TIMEOUT_0,
    TIMEOUT_1,
    WIN_A,
    WIN_B,
    two_versions,
    whist_unit,
)
from tests.waiting import wait_until

OCTET = {"Content-Type": "application/octet-stream"}


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Each sample of a scrape: ``(name, sorted labels) -> value``."""
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


@contextmanager
def app_host(tmp_path: Path, parts: dict[str, str], live: list[int]) -> Iterator[str]:
    """The API over a real store, two requests a minute per address: ``parts`` and ``live``
    stand for the host's supervised parts and its live bots."""
    raw = {
        "game": "whist",
        "options": {"points_to_win": 1, "games_per_rubber": 1},
        "limits": {"address_requests_per_minute": 2, "address_burst": 2},
    }
    config = check_competition(raw, "test", "cup")
    with CompetitionStore(tmp_path / "competition", config) as store:
        empty = fit_ratings([])
        state = HostState(
            store,
            config,
            tmp_path / "competition",
            standings=lambda: Standings(empty, empty),
            admin_token_hash=hash_token(ADMIN),
            changed=lambda: None,
            throttle=Throttle(config.limits),
            live_bots=lambda: live[0],
            parts=lambda: dict(parts),
        )
        with serving(create_app(state)) as url:
            yield url


def test_healthz_names_a_part_in_its_restart_pause_and_is_never_rate_limited(
    tmp_path: Path,
) -> None:
    parts = {"ladder": "running", "validator": "running"}
    with app_host(tmp_path, parts, [0]) as url, httpx.Client(base_url=url) as c:
        for _ in range(5):  # past the address's two requests a minute
            ok = c.get("/healthz")
            assert ok.status_code == 200
            assert ok.json()["status"] == "ok" and ok.json()["parts"] == parts
        # The API's requests are limited, whatever /healthz took.
        assert [c.get("/api/v1/status").status_code for _ in range(3)] == [200, 200, 429]
        assert c.get("/healthz").status_code == 200
        parts["ladder"] = "restarting"
        sick = c.get("/healthz")
        assert sick.status_code == 503
        assert sick.json()["status"] == "unhealthy"
        assert sick.json()["problems"] == ["ladder: restarting after a failure (the log has why)"]
        parts["ladder"] = "running"
        assert c.get("/healthz").status_code == 200


def test_healthz_says_when_the_store_does_not_read(tmp_path: Path) -> None:
    with app_host(tmp_path, {"ladder": "running"}, [0]) as url, httpx.Client(base_url=url) as c:
        assert c.get("/healthz").status_code == 200
        db = sqlite3.connect(tmp_path / "competition" / DB_NAME)
        with db:  # damaged by hand, as an operator's mistake would
            db.execute("UPDATE meta SET value = 'bogus' WHERE key = 'ladder_state'")
        db.close()
        sick = c.get("/healthz")
        assert sick.status_code == 503
        (problem,) = sick.json()["problems"]
        assert problem.startswith("store: ") and "ladder_state' is damaged" in problem


def test_metrics_parse_and_count_responses_by_class(tmp_path: Path) -> None:
    parts = {"ladder": "running", "validator": "restarting"}
    with (
        app_host(tmp_path, parts, [1]) as url,
        httpx.Client(base_url=url, transport=httpx.HTTPTransport(local_address="127.0.0.2")) as c,
        httpx.Client(base_url=url) as scraper,
    ):
        assert c.get("/api/v1/status").status_code == 200
        assert c.get("/api/v1/nothing-here").status_code == 404
        assert c.get("/api/v1/status").status_code == 429
        scrape = scraper.get("/metrics")
        assert scrape.status_code == 200
        assert scrape.headers["content-type"].startswith("text/plain")
        found = samples(scrape.text)
        for status_class in ("2xx", "4xx"):
            key = ("arena_http_responses_total", (("status_class", status_class),))
            assert found[key] == {"2xx": 1, "4xx": 2}[status_class]
        assert found[("arena_live_bots_connected", ())] == 1
        assert found[("arena_validation_queue", ())] == 0
        assert found[("arena_matches_finished_total", (("phase", "ladder"),))] == 0
        assert found[("arena_units_pending", (("phase", "final"),))] == 0
        assert found[("arena_part_up", (("part", "ladder"),))] == 1
        assert found[("arena_part_up", (("part", "validator"),))] == 0
        assert found[("process_open_fds", ())] >= 3


def test_the_log_file_rotates_at_its_size(tmp_path: Path) -> None:
    path = tmp_path / "private" / "host.log"
    handler = log_file_handler(path, max_bytes=300, backups=2)
    assert not path.parent.exists()  # made by the first line
    was_configured, saved = structlog.is_configured(), structlog.get_config()
    stderr = io.StringIO()
    try:
        configure("info", json=False, stream=stderr, log_file=handler)
        log = structlog.get_logger("arena.test")
        for i in range(20):
            log.info("an event", n=i)
    finally:
        handler.close()
        if was_configured:
            structlog.configure(**saved)
        else:
            structlog.reset_defaults()
    assert "an event" in stderr.getvalue() and "{" not in stderr.getvalue()  # console lines
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700
    files = sorted(p.name for p in path.parent.iterdir())
    assert files == ["host.log", "host.log.1", "host.log.2"]
    lines = [json.loads(line) for p in path.parent.iterdir() for line in p.read_text().splitlines()]
    assert all(e["event"] == "an event" and "timestamp" in e for e in lines)
    assert max(e["n"] for e in lines) == 19  # the newest kept, the oldest rotated away
    assert all(p.stat().st_size <= 300 for p in path.parent.iterdir())


@pytest.mark.slow
def test_a_running_host_is_healthy_counts_its_matches_and_logs_json(tmp_path: Path) -> None:
    config = tmp_path / "cup.toml"
    config.write_text(competition_config())
    host = Host(config, tmp_path / "cup", None)
    host.extra = ["--log-level", "info"]  # "hosting" is an info event
    with host.running():
        alice, bob = host.add_author("alice"), host.add_author("bob")
        with host.client(alice) as a, host.client(bob) as b:
            for client, name in ((a, "alpha"), (b, "beta")):
                put = client.put(
                    f"/api/v1/bots/{name}/versions", content=bot_archive(GOOD_BOT), headers=OCTET
                )
                assert put.status_code == 201, put.text
            live = b.post("/api/v1/bots/beta-live/live")
            assert live.status_code == 201
            health = a.get("/healthz")
            assert health.status_code == 200, health.text
            parts = {"ladder": "running", "validator": "running", "seasons": "running"}
            parts["analysis"] = "running"  # authors' analyses ([analysis] enabled by default)
            assert health.json()["parts"] == parts

            def scrape() -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
                return samples(a.get("/metrics").text)

            def listed() -> int:
                return len(
                    a.get("/api/v1/matches", params={"phase": "ladder", "limit": 1000}).json()
                )

            wait_until(lambda: listed() >= 4, 180, what="four ladder matches")

            def agree() -> bool:
                before = listed()
                counted = scrape()[("arena_matches_finished_total", (("phase", "ladder"),))]
                return before == counted == listed()

            wait_until(agree, 60, what="the metric and the API to agree on the matches")
            assert scrape()[("arena_live_bots_connected", ())] == 0
            env = {**os.environ, "ARENA_ADDRESS": host.grpc, "ARENA_TOKEN": live.json()["token"]}
            bot = subprocess.Popen(
                [sys.executable, "-m", "arena.cli", "bot", "random", "--give-up", "60"],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            try:
                wait_until(
                    lambda: scrape()[("arena_live_bots_connected", ())] == 1,
                    60,
                    what="the live bot counted",
                )
            finally:
                bot.kill()
                bot.wait()
    log = tmp_path / "cup" / "private" / "host.log"
    events = [json.loads(line) for line in log.read_text().splitlines()]
    assert any(e["event"] == "hosting" and e["competition"] == "cup" for e in events)


def test_a_log_file_that_cannot_be_written_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "cup.toml"
    config.write_text(competition_config())
    (tmp_path / "a-file").write_text("")
    where = tmp_path / "a-file" / "host.log"
    assert main(["host", str(config), "--log-file", str(where)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"arena: error: --log-file {where}: cannot be written (")
    assert "\n" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "cup.toml"]  # nothing made


def test_the_metrics_count_what_the_store_holds(tmp_path: Path) -> None:
    cfg = check_competition({"game": "whist", "options": {"points_to_win": 5}}, "test", "cup")
    with CompetitionStore(tmp_path / "competition", cfg) as store:
        a, b = two_versions(store)
        done, failed, waiting = (whist_unit(store, a.id, b.id) for _ in range(3))
        store.commit_match(f"u{done}-r0", WIN_A, [TIMEOUT_0, TIMEOUT_1], None)
        store.commit_match(f"u{done}-r1", WIN_B, [FaultInfo(0, "illegal", "")], None)
        store.commit_match(f"u{failed}-r0", WIN_A, [], None)
        store.fail_unit(failed, "a worker lost")
        store.add_version(a.author_id, "alpha", "archive", SHA, MANIFEST)  # waits for validation
        metrics = HostMetrics(CompetitionCollector(store, lambda: 2, dict))
        found = samples(metrics.scrape().decode())
    assert waiting and found[("arena_matches_finished_total", (("phase", "ladder"),))] == 3
    assert found[("arena_matches_finished_total", (("phase", "final"),))] == 0
    assert found[("arena_units_pending", (("phase", "ladder"),))] == 1
    assert found[("arena_units_failed_total", (("phase", "ladder"),))] == 1
    assert found[("arena_validation_queue", ())] == 1
    assert found[("arena_live_bots_connected", ())] == 2
    assert found[("arena_faults_total", (("kind", "timeout"),))] == 2
    assert found[("arena_faults_total", (("kind", "illegal"),))] == 1
