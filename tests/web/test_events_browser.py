"""The events' pages in a real browser: a real ``arena host`` plays a knockout (three entrants: a
bye) and a Swiss event with real bots; Chromium reads ``/events``, the knockout's bracket and
the Swiss standings, each match linked; no console error, no request leaving the host.
Screenshots go to out/screenshots/ (``make screenshots`` copies them into docs/images/)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.arena.host.processes import GOOD_BOT, Host, bot_archive, competition_config
from tests.waiting import wait_until
from tests.web.conftest import WatchedPage
from tests.web.test_pages_browser import open_page, same_host, shot

pytestmark = [pytest.mark.slow, pytest.mark.browser]

EVENTS = (
    '[[events]]\nname = "cup"\nformat = "knockout"\nentrants = 3\n'
    '[[events]]\nname = "open"\nformat = "swiss"\nentrants = 3\nrounds = 2\n'
    '[[events]]\nname = "later"\nformat = "knockout"\nstart = 2099-01-01T00:00:00Z\n'
)


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    where = tmp_path_factory.mktemp("events")
    config = where / "cup.toml"
    config.write_text(competition_config("whist-cup", extra=EVENTS))
    host = Host(config, where / "cup", tls=None)
    host.start()
    try:
        for i, name in enumerate(("alpha", "beta", "gamma")):
            token = host.add_author(f"author{i}")
            with host.client(token) as c:
                body = bot_archive(GOOD_BOT + f"# {name}\n".encode())
                headers = {"Content-Type": "application/octet-stream"}
                assert c.put(f"/api/v1/bots/{name}/versions", content=body, headers=headers)
        admin = (host.directory / "private" / "admin.token").read_text().strip()
        with host.client(admin) as c:

            def validated() -> bool:
                return (
                    sum(
                        v["status"] == "validated"
                        for b in c.get("/api/v1/bots").json()
                        for v in b["versions"]
                    )
                    == 3
                )

            wait_until(validated, 120, what="three validated versions")
            for name in ("cup", "open"):
                assert c.post(f"/api/v1/admin/events/{name}/start").status_code == 200

            def over() -> bool:
                events: list[dict[str, Any]] = c.get("/api/v1/events").json()
                return sum(e["state"] == "finished" for e in events) == 2

            wait_until(over, 240, what="both events to finish")
        yield host
    finally:
        host.stop()


def test_the_events_page_lists_every_event(host: Host, watched_page: WatchedPage) -> None:
    page = open_page(watched_page, f"{host.url}/events")
    rows = page.locator("#events tbody tr")
    expect(rows).to_have_count(3)
    expect(page.locator("#events")).to_contain_text("scheduled")
    expect(page.locator("#events a[href='/events/cup']")).to_have_count(1)
    shot(page, "events")
    same_host(watched_page, host)


def test_a_knockout_is_drawn_as_a_bracket_with_its_matches(
    host: Host, watched_page: WatchedPage
) -> None:
    page = open_page(watched_page, f"{host.url}/events/cup")
    expect(page.locator("#event-winner")).to_contain_text("won cup")
    rounds = page.locator("#bracket .round")
    expect(rounds).to_have_count(2)
    expect(rounds.nth(0).locator("h3")).to_have_text("semi-final")
    expect(rounds.nth(0).locator(".bye")).to_have_count(1)  # the top seed's bye
    # Two ties played (a semi-final, the final), one deal of two rotations each, and an extra
    # deal for a level tie: every match linked.
    with host.client() as c:
        cup = c.get("/api/v1/events/cup").json()
    ids = [i for r in cup["rounds"] for t in r["ties"] for d in t["deals"] for i in d["match_ids"]]
    assert len(ids) >= 4
    expect(page.locator("#bracket a[href^='/matches/e']")).to_have_count(len(ids))
    expect(page.locator("#bracket .side.through")).to_have_count(3)
    shot(page, "event-knockout")
    page.locator("#bracket a[href^='/matches/e']").first.click()
    expect(page.locator("#page[data-ready='1']")).to_have_count(1, timeout=30_000)
    expect(page.locator("dl.facts")).to_contain_text("event")
    same_host(watched_page, host)


def test_a_swiss_event_shows_its_standings(host: Host, watched_page: WatchedPage) -> None:
    page = open_page(watched_page, f"{host.url}/events/open")
    expect(page.locator("#standings tbody tr")).to_have_count(3)
    expect(page.locator("ul.pairings")).to_have_count(2)
    expect(page.locator("ul.pairings li", has_text="bye")).to_have_count(2)
    winner = page.locator("#event-winner").inner_text()
    first = page.locator("#standings tbody tr").first.locator("td").nth(1).inner_text()
    assert first in winner
    shot(page, "event-swiss")
    same_host(watched_page, host)


def test_an_event_not_started_says_so(host: Host, watched_page: WatchedPage) -> None:
    page = open_page(watched_page, f"{host.url}/events/later")
    expect(page.locator("p.empty")).to_contain_text("Not started yet")
    same_host(watched_page, host)
