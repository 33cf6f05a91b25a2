"""``arena watch``'s live page in a real Chromium: a lobby match of ``arena serve`` between
search bots that think a little per move is watched while it is played. The page moves on
(more events after fewer, while the match is not over), shows exactly the record's public
events in order and no card that was not public by then, ends with the result; no console
error, no request but to the page's own loopback server."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Page

from arena.records.format import read_record
from arena.records.view import event_text
from engine import Event
from tests.arena.people.running import RULES, SHORT_WHIST, arena_play, lobby_match, started
from tests.arena.replay_truth import card_tokens
from tests.waiting import wait_until
from tests.web.conftest import WatchedPage
from tests.web.test_play_browser import SHOTS, next_turn, play_by_hand
from tests.web.test_viewer_browser import shown_tokens

pytestmark = [pytest.mark.slow, pytest.mark.browser]

WAIT_MS = 60_000
#: A record entry's keys that are not its event's data.
HEAD = {"type", "kind", "to"}
NAMES = ("N", "E", "S", "W")


def shown_events(watched: WatchedPage) -> list[str]:
    return watched.page.eval_on_selector_all("#pl-events li", "els => els.map(e => e.textContent)")


def test_a_lobby_match_is_watched_live(watched_page: WatchedPage, tmp_path: Path) -> None:
    with ExitStack() as stack:
        # Bots that think long enough for the page to load while the first tricks are played;
        # the watch is told the match's options, which the server does not say.
        lobby = stack.enter_context(lobby_match(tmp_path, budget_ms=400))
        address, match_id, bots = lobby.address, lobby.match_id, lobby.bots
        watch = stack.enter_context(started("watch", address, match_id, *SHORT_WHIST))
        assert watch.stdout is not None
        line = watch.stdout.readline().strip()
        assert line.startswith("watch at http://127.0.0.1:"), line
        url = line.split(" ", 2)[2]
        page = watched_page.page
        page.goto(url)
        page.wait_for_function(
            "() => document.querySelectorAll('#pl-events li').length >= 4", timeout=WAIT_MS
        )
        # The table is drawn, as the viewer draws it: seats round it, the hands face down.
        page.wait_for_selector("#viewer .cav-table .cav-turn", timeout=WAIT_MS)
        # Cards first, then the events: the page only adds events, so the cards seen are among
        # those the events seen next name.
        early_cards = shown_tokens(page, "body")
        early = shown_events(watched_page)
        table = drawn_table(page)
        assert page.evaluate("() => document.body.dataset.ended") != "1"
        assert table["backs"] > 0 and table["step"] >= 1, table
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "watch-whist.png"), full_page=True)
        assert "watching live" in page.inner_text("#pl-who")
        assert page.title().endswith(" \u00b7 watching"), page.title()
        page.wait_for_function(
            "n => document.querySelectorAll('#pl-events li').length > n",
            arg=len(early),
            timeout=WAIT_MS,
        )
        # It moves on with the match.
        page.wait_for_function(
            "n => Number(document.getElementById('viewer').dataset.step) > n",
            arg=table["step"],
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
    public, summary = public_lines(records[0])
    check_watched(watched_page, url, public, early, early_cards, shown)
    assert not early_cards & unplayed(records[0], early_cards), "a hidden card was shown"
    assert summary in result


def drawn_table(page: Page) -> dict[str, int]:
    """The live table's step, and how many cards it draws face down."""
    return dict(
        page.evaluate(
            """() => ({step: Number(document.getElementById('viewer').dataset.step),
                backs: document.querySelectorAll('#viewer [data-hidden-card]').length})"""
        )
    )


def unplayed(record: Path, shown: set[str]) -> set[str]:
    """The cards dealt in the record that no public event had named once ``shown``'s cards
    had all been played: what a spectator must not have seen then."""
    rec = read_record(record)
    dealt = {c for e in rec.entries if e.get("kind") == "deal" for c in e.get("hand", [])}
    played: set[str] = set()
    for e in rec.entries:
        if shown <= played:
            break
        if e.get("type") == "event" and e.get("to") is None:
            played |= set(card_tokens(" ".join(str(v) for v in e.values())))
    return dealt - played


def check_watched(
    watched: WatchedPage,
    url: str,
    public: list[str],
    early: list[str],
    early_cards: set[str],
    shown: list[str],
) -> None:
    """The page showed the record's public events in order, an early look no card its events
    had not named, and asked for nothing but its own server without a console error."""
    # The record keeps an event's data keys sorted: compare each line's words, in any order.
    assert words(early) == words(public[: len(early)]) and words(shown) == words(public)
    assert early_cards <= shown_tokens_of(early), early_cards - shown_tokens_of(early)
    assert not watched.errors, watched.errors
    origin = urlsplit(url).netloc
    assert all(urlsplit(r).netloc == origin for r in watched.requests), watched.requests


def public_lines(record: Path) -> tuple[list[str], str]:
    """The record's public events as the page writes them, and its result's summary."""
    rec = read_record(record)
    lines = [
        event_text(Event(e["kind"], {k: v for k, v in e.items() if k not in HEAD}), NAMES)
        for e in rec.entries
        if e.get("type") == "event" and e.get("to") is None
    ]
    return lines, str(rec.result["summary"])


def test_arena_play_prints_a_watch_link_that_follows_the_match(
    watched_page: WatchedPage, browser: Browser, tmp_path: Path
) -> None:
    args = ["--human", "0", *["--bot", RULES] * 3, *SHORT_WHIST, "--seed", "7"]
    with arena_play("whist", args, tmp_path) as run:
        url = run.urls(1)[0]
        link = wait_until(
            lambda: next((x for x in run.lines if x.startswith("watch at ")), None),
            60,
            what="the watch link",
        ).split(" ", 2)[2]
        watcher = watched_page.page
        watcher.goto(link)
        context = browser.new_context()
        player = context.new_page()
        player.goto(url)
        rid, turn = next_turn(player, ""), 0
        early: list[str] = []
        early_cards: set[str] = set()
        while rid:
            if turn == 3:
                # Mid-match, the spectator's page has moved on with the table, and is not over.
                watcher.wait_for_function(
                    "() => document.querySelectorAll('#pl-events li').length >= 8",
                    timeout=WAIT_MS,
                )
                early_cards = shown_tokens(watcher, "body")
                early = shown_events(watched_page)
                assert watcher.evaluate("() => document.body.dataset.ended") != "1"
            play_by_hand(player, turn)
            rid, turn = next_turn(player, rid), turn + 1
        watcher.wait_for_function("() => document.body.dataset.ended === '1'", timeout=WAIT_MS)
        shown = shown_events(watched_page)
        result = watcher.inner_text("#pl-result")
        context.close()
        status, record = run.finish()
    assert status == 0, run.errors
    public, summary = public_lines(record)
    assert len(early) >= 8 and len(shown) > len(early)
    check_watched(watched_page, link, public, early, early_cards, shown)
    assert summary in result


def words(lines: list[str]) -> list[list[str]]:
    return [sorted(line.split()) for line in lines]


def shown_tokens_of(lines: list[str]) -> set[str]:
    """The cards named in ``lines`` (as the page's text reads them)."""
    return set(card_tokens(" ".join(lines)))
