"""Every game at a person's seat (``arena play``) in a real Chromium: two people in partnership
at forty-five and at whist (two browser contexts, one per person), a person among several
seats at spoil five, tennis singles and doubles on the court. Each person plays to the end
(keys and clicks); every card each page ever showed is one its seat could see then; the record
verifies; no console error, no request but to the bridge. Screenshots: ``play-LABEL.png``."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page

from arena.cli.main import main
from arena.records.format import read_record
from tests.arena.people.running import RULES, arena_play
from tests.arena.replay_truth import engine_steps, hidden_now
from tests.waiting import wait_until
from tests.web.test_play_browser import SHOTS, shown_cards
from tests.web.test_viewer_browser import public_discards

pytestmark = [pytest.mark.slow, pytest.mark.browser]

#: (label, game, people's seats, bots, options): each short.
TABLES = [
    (
        "forty_five-partners",
        "forty_five",
        [0, 2],
        2,
        ["--players", "4", "--option", "points_to_win=15"],
    ),
    (
        "whist-partners",
        "whist",
        [1, 3],
        2,
        ["--option", "points_to_win=1", "--option", "games_per_rubber=1"],
    ),
    ("spoil_five-5", "spoil_five", [3], 4, ["--players", "5"]),
    ("tennis-singles", "tennis", [1], 1, ["--players", "2"]),
    ("tennis-doubles", "tennis", [0], 1, ["--players", "4"]),
]


class Person:
    """One person's browser context and page, and what it saw at each of its decisions."""

    def __init__(self, browser: Browser, url: str, shot: Path | None = None) -> None:
        self.context = browser.new_context(viewport={"width": 1300, "height": 900})
        self.page: Page = self.context.new_page()
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda err: self.errors.append(f"page error: {err}"))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.url = url
        self.seen: list[set[str]] = []
        self.answered = ""
        self.shot = shot
        self.page.goto(url)

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.errors.append(message.text)

    def state(self) -> tuple[bool, str]:
        ended, pending = self.page.evaluate(
            "[document.body.dataset.ended === '1', document.body.dataset.pending || '']"
        )
        return bool(ended), str(pending)

    def move(self) -> bool:
        """Play if it is this person's turn (keys, or the last button by a click); whether
        the match is over for them."""
        ended, pending = self.state()
        if ended:
            return True
        if pending and pending != self.answered:
            self.seen.append(shown_cards(self.page))
            if self.shot is not None and len(self.seen) == 4:
                self.shot.parent.mkdir(parents=True, exist_ok=True)
                self.page.screenshot(path=str(self.shot), full_page=True)
            if len(self.seen) % 2:
                self.page.keyboard.press("1")
            else:
                self.page.locator("button.pl-action").last.click()
            self.answered = pending
        return False


@pytest.mark.parametrize(("label", "game", "people", "bots", "extra"), TABLES)
def test_people_play_every_game_to_the_end(
    browser: Browser,
    tmp_path: Path,
    label: str,
    game: str,
    people: list[int],
    bots: int,
    extra: list[str],
) -> None:
    args = [a for s in people for a in ("--human", str(s))] + ["--bot", RULES] * bots + extra
    with arena_play(game, [*args, "--seed", "3"], tmp_path) as run:
        urls = run.urls(len(people))
        shot = SHOTS / f"play-{label}.png"
        persons = {
            seat: Person(browser, url, shot if seat == people[0] else None)
            for seat, url in urls.items()
        }
        wait_until(lambda: all([p.move() for p in persons.values()]), 180, what=f"{label} to end")
        status, record = run.finish()
        for p in persons.values():
            p.context.close()
    assert status == 0, run.errors
    assert main(["replay", "verify", str(record)]) == 0
    rec = read_record(record)
    steps = engine_steps(record)
    decisions = [e for e in rec.entries if e.get("type") == "decision"]
    for seat, person in persons.items():
        mine = [k for k, d in enumerate(decisions) if d["seat"] == seat]
        assert len(mine) == len(person.seen) and not any(decisions[k]["fallback"] for k in mine)
        for k, shown in zip(mine, person.seen, strict=True):
            views, _ = steps[k]
            told = [e for _, events in steps[: k + 1] for e in events]
            # Tennis card types are not unique: one lying face up on the discards is public
            # while another seat holds the same type.
            hidden = hidden_now(views, told, seat) - public_discards(views[seat])
            assert not shown & hidden, (seat, k, shown & hidden)
        assert not person.errors, person.errors
        origin = urlsplit(person.url).netloc
        assert all(urlsplit(r).netloc == origin for r in person.requests), person.requests
