"""The replay viewer in a real Chromium: the file ``arena replay html`` writes, for a match of
every game, stepped through with the keyboard to the end; every seat view checked against the
engine (a seat sees its own cards face up and only the backs of the others'); no console error,
and no request but the file itself."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page

from arena.cli.main import main
from arena.records.html import viewer_document
from engine.games.tennis_cards import TYPE_TEXT
from tests.arena.records.viewer_records import VIEWER_GAMES, timed_record
from tests.arena.replay_truth import card_tokens, engine_steps, hidden_now
from tests.web.conftest import WatchedPage

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "out" / "screenshots"
SEED = 4
SUITS = {"\u2663": "C", "\u2666": "D", "\u2665": "H", "\u2660": "S"}

#: Debian's Chromium through Playwright: `make test-browser` runs these, not `make test`.
pytestmark = [pytest.mark.slow, pytest.mark.browser]


def write_page(tmp_path: Path, label: str, game: str, players: int | None) -> tuple[Path, Path]:
    rec = timed_record(tmp_path, game, SEED, players)
    out = tmp_path / f"{label}.html"
    assert main(["replay", "html", str(rec.path), "-o", str(out)]) == 0
    return rec.path, out


def open_page(watched: WatchedPage, url: str) -> Page:
    page = watched.page
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']")
    return page


def label_for(k: int, last: int) -> str:
    return f"step {k} / {last}" + (" (end)" if k == last else "")


def containers(page: Page) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = page.eval_on_selector_all(
        "[data-seat-hand]",
        """els => els.map(e => ({
            seat: Number(e.dataset.seatHand),
            player: e.dataset.player === undefined ? null : Number(e.dataset.player),
            faces: [...e.querySelectorAll(':scope > [data-card]')].map(c => c.dataset.card),
            cards: [...e.querySelectorAll('[data-card]')].map(c => c.dataset.card),
            hidden: e.querySelectorAll('[data-hidden-card]').length}))""",
    )
    return found


def shown_tokens(page: Page, where: str = "#viewer") -> set[str]:
    """Every card the page shows: its card elements and the text of ``where`` (``10♥`` read
    back as ``TH``)."""
    cards: list[str] = page.eval_on_selector_all(
        "[data-card]", "els => els.map(e => e.dataset.card)"
    )
    text = page.inner_text(where)
    for rank, suit in re.findall(r"(10|[2-9JQKA])([\u2663\u2666\u2665\u2660])", text):
        cards.append(("T" if rank == "10" else rank) + SUITS[suit])
    return set(cards) | set(card_tokens(text))


def public_discards(obs: dict[str, Any]) -> set[str]:
    """Tennis card types lying face up on the discard pile: public, whoever held them."""
    return {t for t, n in zip(TYPE_TEXT, obs.get("discards_seen", ()), strict=False) if n}


def check_hands(page: Page, game: str, views: list[dict[str, Any]], seat: int | None) -> None:
    boxes = containers(page)
    if game != "tennis":
        assert sorted(b["seat"] for b in boxes) == list(range(len(views)))
        for b in boxes:
            hand = views[b["seat"]]["hand"]
            if seat is None or b["seat"] == seat:
                assert b["faces"] == hand and b["hidden"] == 0, b
            else:  # another seat's hand: only its backs, as many as it holds
                assert b["cards"] == [] and b["hidden"] == len(hand), b
        return
    players = views[0]["players"]
    assert sorted(b["player"] for b in boxes) == list(range(len(players)))
    for b in boxes:
        p = b["player"]
        seen = [v["players"][p] for v in views if v["players"][p]["visible"]]
        visible = seen and (seat is None or views[seat]["players"][p]["visible"])
        if visible:
            assert b["faces"] == seen[0]["hand"] and b["hidden"] == 0, b
        else:
            assert b["cards"] == [] and b["hidden"] == players[p]["hand_size"], b


@pytest.mark.parametrize(("label", "game", "players"), VIEWER_GAMES)
def test_every_game_steps_to_the_end_and_seat_views_hide_the_others(
    watched_page: WatchedPage, tmp_path: Path, label: str, game: str, players: int | None
) -> None:
    record, out = write_page(tmp_path, label, game, players)
    doc = viewer_document(record)
    truth = engine_steps(record)
    last = len(truth) - 1
    names = doc["meta"]["seat_names"]
    page = open_page(watched_page, out.as_uri())
    step_label = page.locator(".cav-step-label")
    assert step_label.inner_text() == label_for(0, last)

    # To the end with the keyboard, one step at a time.
    for k in range(1, last + 1):
        page.keyboard.press("ArrowRight")
        assert step_label.inner_text() == label_for(k, last)
    page.keyboard.press("ArrowRight")  # already at the end: stays
    assert step_label.inner_text() == label_for(last, last)
    assert page.locator(".cav-result").is_visible()
    result = page.inner_text(".cav-result")
    assert doc["meta"]["result"]["summary"] in result
    assert all(name in result for name in names)
    page.keyboard.press("Home")
    assert step_label.inner_text() == label_for(0, last)
    assert not page.locator(".cav-result").is_visible()

    # The faults of the record are ticks on the timeline.
    ticks = page.eval_on_selector_all(".cav-fault-mark", "els => els.map(e => e.dataset.step)")
    assert sorted(int(t) for t in ticks) == sorted(m["step"] for m in doc["meta"]["marks"])
    assert {"3", "5"} <= set(ticks)

    scrubber = page.locator(".cav-timeline input[type=range]")
    select = page.locator(".cav-seat-select")
    for k in sorted({0, 1, 3, 5, last // 3, last // 2, last - 1, last}):
        scrubber.fill(str(k))
        assert step_label.inner_text() == label_for(k, last)
        views, events = truth[k]
        for seat in [None, *range(len(names))]:
            select.select_option("all" if seat is None else str(seat))
            assert page.get_attribute("#viewer", "data-seat") == (
                "all" if seat is None else str(seat)
            )
            check_hands(page, game, views, seat)
            if seat is not None:
                hidden = hidden_now(views, events, seat) - public_discards(views[seat])
                leaked = hidden & shown_tokens(page)
                assert not leaked, f"step {k}: {names[seat]}'s view shows {sorted(leaked)}"
        decision = page.inner_text(".cav-decision")
        if k < last:
            bank = doc["steps"][k]["decision"]["bank_left_ms"]
            assert "time used" in decision and "bank left" in decision
            assert f"{round(bank, 1):,}".rstrip("0").rstrip(".") in decision.replace(" ms", "")
        if game == "tennis":
            assert page.locator("svg.cav-court").count() == 1
            assert page.locator(".cav-court .cav-ball").count() == (
                1 if views[0]["ball_area"] else 0
            )
            points = page.eval_on_selector_all(
                ".cav-score .cav-points", "els => els.map(e => e.textContent)"
            )
            assert len(points) == 2 and set(points) <= {"0", "15", "30", "40", "–"}
        else:
            tricks = views[0]["tricks"]
            assert page.locator(".cav-trick").count() == 1
            shown = page.locator(".cav-history li").count()
            assert shown == max(1, len(tricks))
            if tricks:
                trick_cards = page.eval_on_selector_all(
                    ".cav-trick [data-card]", "els => els.map(e => e.dataset.card)"
                )
                assert trick_cards == tricks[-1]["cards"]
            assert "robbed_by" not in page.inner_text(".cav-score")

    scrubber.fill(str(last // 2))
    SHOTS.mkdir(parents=True, exist_ok=True)
    select.select_option("all")
    page.screenshot(path=str(SHOTS / f"viewer-{label}.png"), full_page=True)
    assert watched_page.errors == []
    assert watched_page.requests == [out.as_uri()]


def test_keys_fragment_playback_and_step_events(watched_page: WatchedPage, tmp_path: Path) -> None:
    _, out = write_page(tmp_path, "whist", "whist", None)
    page = open_page(watched_page, out.as_uri() + "#step=5&seat=2")
    last = int(page.get_attribute(".cav-timeline input[type=range]", "max") or "0")
    step_label = page.locator(".cav-step-label")
    assert step_label.inner_text() == label_for(5, last)
    assert page.input_value(".cav-seat-select") == "2"
    page.evaluate(
        """() => { window.seen = [];
        document.getElementById('viewer').addEventListener('cardarena:step',
            e => window.seen.push(e.detail)); }"""
    )
    page.keyboard.press("ArrowRight")
    assert page.evaluate("location.hash") == "#step=6&seat=2"
    assert page.get_attribute(".cav-link", "href") == "#step=6&seat=2"
    page.keyboard.press("a")
    page.keyboard.press("1")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("End")
    assert step_label.inner_text() == label_for(last, last)
    assert page.evaluate("window.seen") == [
        {"step": 6, "seat": 2},
        {"step": 6, "seat": "all"},
        {"step": 6, "seat": 1},
        {"step": 5, "seat": 1},
        {"step": last, "seat": 1},
    ]
    # The API the competition pages use.
    page.evaluate("window.cardArenaPlayer.goto(2); window.cardArenaPlayer.setSeat('all')")
    assert step_label.inner_text() == label_for(2, last)
    assert page.evaluate("location.hash") == "#step=2&seat=all"
    # A link opened later shows that view.
    page.evaluate("location.hash = 'step=7&seat=3'")
    page.wait_for_function("document.getElementById('viewer').dataset.step === '7'")
    assert page.input_value(".cav-seat-select") == "3"

    # Playback at 4x moves on by itself, and Space pauses it.
    page.select_option(".cav-speed", "4")
    page.click(".cav-play")
    page.wait_for_function("Number(document.getElementById('viewer').dataset.step) >= 10")
    page.keyboard.press(" ")
    assert "Play" in page.inner_text(".cav-play")
    assert "cav-playing" not in (page.get_attribute("#viewer", "class") or "")
    page.keyboard.press(" ")
    assert "cav-playing" in (page.get_attribute("#viewer", "class") or "")
    page.keyboard.press("End")  # the end stops playback
    assert "cav-playing" not in (page.get_attribute("#viewer", "class") or "")
    assert watched_page.errors == []
    assert watched_page.requests == [out.as_uri()]


def test_the_page_shows_a_63_bit_seed_exactly(watched_page: WatchedPage, tmp_path: Path) -> None:
    from tests.arena.replay_truth import make_record

    seed = 2**62 + 2**53 + 905  # a double would show ...904 or ...906
    record = make_record(tmp_path, "whist", seed)
    out = tmp_path / "seed.html"
    assert main(["replay", "html", str(record), "-o", str(out)]) == 0
    page = open_page(watched_page, out.as_uri())
    assert page.inner_text(".cav-subtitle").endswith(f" · seed {seed}")
    assert json.loads(page.inner_text("#replay-data"))["meta"]["seed"] == str(seed)
