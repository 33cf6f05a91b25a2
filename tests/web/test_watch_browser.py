"""``arena watch``'s live page in a real Chromium: a lobby match of ``arena serve`` between
search bots that think a little per move is watched while it is played. The page moves on
(more events after fewer, while the match is not over), shows exactly the record's public
events in order and no card that was not public by then, ends with the result; no console
error, no request but to the page's own loopback server."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from arena.people.watch import list_matches
from arena.records.format import read_record
from arena.records.view import event_text
from engine import Event
from tests.arena.people.running import SHORT_WHIST
from tests.arena.replay_truth import card_tokens
from tests.waiting import wait_until
from tests.web.conftest import WatchedPage
from tests.web.test_viewer_browser import shown_tokens

pytestmark = [pytest.mark.slow, pytest.mark.browser]

WAIT_MS = 60_000
#: A record entry's keys that are not its event's data.
HEAD = {"type", "kind", "to"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def started(*argv: str) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def shown_events(watched: WatchedPage) -> list[str]:
    return watched.page.eval_on_selector_all("#pl-events li", "els => els.map(e => e.textContent)")


def test_a_lobby_match_is_watched_live(watched_page: WatchedPage, tmp_path: Path) -> None:
    address = f"127.0.0.1:{free_port()}"
    with ExitStack() as stack:
        server = stack.enter_context(
            started(
                "serve",
                "--listen",
                address,
                *SHORT_WHIST,
                "--out",
                str(tmp_path),
                "--log-level",
                "warning",
            )
        )
        bot = ["bot", "search", "--budget-ms", "100", "--server", address, "--matches", "1"]
        bots = [stack.enter_context(started(*bot)) for _ in range(4)]

        def running() -> str | None:
            assert server.poll() is None, "arena serve exited"
            try:
                listed = list_matches(address)
            except Exception:  # not listening yet
                return None
            return listed[0].match_id if listed else None

        match_id = wait_until(running, 60, what="a lobby match")
        watch = stack.enter_context(started("watch", address, match_id))
        assert watch.stdout is not None
        line = watch.stdout.readline().strip()
        assert line.startswith("watch at http://127.0.0.1:"), line
        url = line.split(" ", 2)[2]
        page = watched_page.page
        page.goto(url)
        page.wait_for_function(
            "() => document.querySelectorAll('#pl-events li').length >= 4", timeout=WAIT_MS
        )
        early = shown_events(watched_page)
        early_cards = shown_tokens(page, "body")
        assert page.evaluate("() => document.body.dataset.ended") != "1"
        assert "watching live" in page.inner_text("#pl-who")
        page.wait_for_function(
            "n => document.querySelectorAll('#pl-events li').length > n",
            arg=len(early),
            timeout=WAIT_MS,
        )
        page.wait_for_function("() => document.body.dataset.ended === '1'", timeout=WAIT_MS)
        shown = shown_events(watched_page)
        result = page.inner_text("#pl-result")
        for proc in bots:
            assert proc.wait(60) == 0
        assert watch.wait(60) == 0
    records = list(tmp_path.rglob("*.jsonl*"))
    assert len(records) == 1, records
    rec = read_record(records[0])
    names = ["N", "E", "S", "W"]
    public = [
        event_text(Event(e["kind"], {k: v for k, v in e.items() if k not in HEAD}), names)
        for e in rec.entries
        if e.get("type") == "event" and e.get("to") is None
    ]
    # The record keeps an event's data keys sorted: compare each line's words, in any order.
    assert words(early) == words(public[: len(early)]) and words(shown) == words(public)
    # The early snapshot showed no card but those its public events named.
    assert early_cards <= shown_tokens_of(early), early_cards - shown_tokens_of(early)
    assert rec.result["summary"] in result
    assert not watched_page.errors, watched_page.errors
    origin = urlsplit(url).netloc
    assert all(urlsplit(r).netloc == origin for r in watched_page.requests), watched_page.requests


def words(lines: list[str]) -> list[list[str]]:
    return [sorted(line.split()) for line in lines]


def shown_tokens_of(lines: list[str]) -> set[str]:
    """The cards named in ``lines`` (as the page's text reads them)."""
    return set(card_tokens(" ".join(lines)))
