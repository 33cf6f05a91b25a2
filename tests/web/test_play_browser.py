"""A person's seat in a real Chromium (``arena play``): a whole whist match played by clicking
(cards, buttons and keys) against the rules bots; every card the page ever showed checked
against the engine's truth for that seat; no console error, no request but to the bridge; the
record verifies. A person who closes the tab gets the seat's fault rules and the match ends as
the referee rules. Its screenshot is ``play-whist.png`` (``make screenshots``)."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Page

from arena.cli.main import main
from arena.records.format import read_record
from tests.arena.people.running import RULES, SHORT_WHIST, arena_play
from tests.arena.replay_truth import engine_steps, hidden_now
from tests.web.conftest import WatchedPage
from tests.web.test_viewer_browser import shown_tokens

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "out" / "screenshots"

pytestmark = [pytest.mark.slow, pytest.mark.browser]

#: Waits on the page: a bot answers in milliseconds, a match takes seconds.
WAIT_MS = 30_000


def shown_cards(page: Page) -> set[str]:
    """Every card the whole page shows (the viewer and the page's own panels)."""
    return shown_tokens(page, "body")


def next_turn(page: Page, after: str) -> str:
    """Wait for the seat's next decision (its request id) or the end (``""``)."""
    page.wait_for_function(
        "after => document.body.dataset.ended === '1' || "
        "((document.body.dataset.pending || '') !== '' && document.body.dataset.pending !== after)",
        arg=after,
        timeout=WAIT_MS,
    )
    return (
        ""
        if page.evaluate("document.body.dataset.ended") == "1"
        else str(page.evaluate("document.body.dataset.pending"))
    )


def play_by_hand(page: Page, turn: int) -> None:
    """One move, as a person makes it: a highlighted card, a button, or a key, in turn."""
    how = turn % 3
    if how == 0 and page.locator("svg.pl-legal").count():
        page.locator("svg.pl-legal").first.click()
    elif how == 1:
        page.locator("button.pl-action").last.click()
    else:
        page.keyboard.press("ArrowRight")
        page.keyboard.press("Enter")


def test_a_person_plays_whist_to_the_end_by_clicking(
    watched_page: WatchedPage, tmp_path: Path
) -> None:
    bots = ["--bot", RULES] * 3
    args = ["--human", "0", *bots, *SHORT_WHIST, "--seed", "7"]
    with arena_play("whist", args, tmp_path) as run:
        url = run.urls(1)[0]
        page = watched_page.page
        page.goto(url)
        seen: list[set[str]] = []
        rid, turn = next_turn(page, ""), 0
        while rid:
            assert page.locator("#pl-move").is_visible()
            assert page.locator("#pl-clock").inner_text().startswith("move ")
            assert page.title().startswith("\u25cf Your move")
            seen.append(shown_cards(page))
            if turn == 4:
                # The live events sit below the table, its title at the top (as the viewer's).
                assert page.evaluate(
                    """() => document.querySelector('.cav-title').getBoundingClientRect().bottom
                        <= document.getElementById('pl-live').getBoundingClientRect().top"""
                )
                SHOTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(SHOTS / "play-whist.png"), full_page=True)
            play_by_hand(page, turn)
            rid, turn = next_turn(page, rid), turn + 1
        assert "the match is over" in page.inner_text("#pl-status")
        # Between the person's moves the table moved on: the timeline holds the others' plays.
        steps_shown = int(page.inner_text(".cav-step-label").split("/")[1].split()[0]) + 1
        assert steps_shown > 2 * len(seen)
        summary = page.inner_text("#pl-result")
        status, record = run.finish()
    assert status == 0, run.errors
    assert main(["replay", "verify", str(record)]) == 0
    rec = read_record(record)
    assert rec.result["summary"] in summary
    # Each of the seat's decisions, against what the engine says only the others knew then.
    steps = engine_steps(record)
    decisions = [e for e in rec.entries if e.get("type") == "decision"]
    mine = [k for k, d in enumerate(decisions) if d["seat"] == 0]
    assert len(mine) == len(seen) and not any(decisions[k]["fallback"] for k in mine)
    for k, shown in zip(mine, seen, strict=True):
        views, _ = steps[k]
        told = [e for _, events in steps[: k + 1] for e in events]
        hidden = hidden_now(views, told, 0)
        assert not shown & hidden, (k, shown & hidden)
        assert set(views[0]["hand"]) <= shown
    assert not watched_page.errors, watched_page.errors
    origin = urlsplit(url).netloc
    assert all(urlsplit(r).netloc == origin for r in watched_page.requests), watched_page.requests


def test_a_person_who_leaves_gets_the_fault_rules(browser: Browser, tmp_path: Path) -> None:
    bots = ["--bot", RULES] * 3
    clock = ["--human-move-ms", "300", "--human-bank-ms", "0"]
    with arena_play("whist", ["--human", "2", *bots, *SHORT_WHIST, *clock], tmp_path) as run:
        url = run.urls(1)[2]
        context = browser.new_context()
        page = context.new_page()
        page.goto(url)
        next_turn(page, "")
        context.close()  # the person leaves mid-match
        status, record = run.finish()
    assert status == 3, run.errors  # as `arena match`: a seat faulted
    assert main(["replay", "verify", str(record)]) == 0
    rec = read_record(record)
    faults = rec.result["faults"]
    assert faults and all(f["seat"] == 2 and f["kind"] == "timeout" for f in faults), faults
    assert rec.result["reason"] == "forfeit" and rec.result["forfeited_by"] == 2
    assert json.dumps(rec.result)
