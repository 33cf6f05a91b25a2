"""The seasons' pages in a real browser: a real ``arena host`` whose ladder real bots play, a
season ended by the admin; ``/seasons`` lists it with its winner, ``/seasons/1`` shows its
frozen standings, the leaderboard names the current season and the latest result. No console
error, no request leaving the host; screenshots to out/screenshots/."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from tests.arena.host.processes import GOOD_BOT, Host, bot_archive, competition_config
from tests.waiting import wait_until
from tests.web.conftest import WatchedPage
from tests.web.test_pages_browser import open_page, same_host, shot

pytestmark = [pytest.mark.slow, pytest.mark.browser]

CONFIG = competition_config(
    "whist-cup",
    extra="provisional_matches = 4\nprovisional_interval = 100000\n"
    '[seasons]\nlength_days = 14\nratings = "reset"\n',
)


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    where = tmp_path_factory.mktemp("seasons-web")
    config = where / "cup.toml"
    config.write_text(CONFIG)
    h = Host(config, where / "cup", tls=None)
    h.start()
    try:
        octet = {"Content-Type": "application/octet-stream"}
        for author, bot in (("alice", "alpha"), ("bob", "beta")):
            with h.client(h.add_author(author)) as c:
                code = GOOD_BOT + f"# {bot}\n".encode()
                put = c.put(
                    f"/api/v1/bots/{bot}/versions", content=bot_archive(code), headers=octet
                )
                assert put.status_code == 201, put.text
        admin = (h.directory / "private" / "admin.token").read_text().strip()
        with h.client(admin) as c:

            def rated() -> bool:
                rows = c.get("/api/v1/leaderboard").json()
                return len(rows) == 2 and all(r["matches"] >= 6 for r in rows)

            wait_until(rated, 240, what="a ladder of established versions")
            ended = c.post("/api/v1/admin/seasons/end", json={"name": "Autumn"})
            assert ended.status_code == 200, ended.text
        yield h
    finally:
        h.stop()


def test_the_seasons_list_names_each_winner(host: Host, watched_page: WatchedPage) -> None:
    page = open_page(watched_page, f"{host.url}/seasons")
    rows = page.locator("#seasons tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.first).to_contain_text("Season 2 (Autumn)")
    expect(rows.nth(1)).to_contain_text("archived")
    with host.client() as c:
        first = c.get("/api/v1/seasons").json()[0]
    for winner in first["winners"]:
        expect(rows.nth(1)).to_contain_text(winner)
    shot(page, "seasons")
    same_host(watched_page, host)


def test_an_archived_season_shows_its_frozen_standings(
    host: Host, watched_page: WatchedPage
) -> None:
    page = open_page(watched_page, f"{host.url}/seasons/1")
    expect(page.locator("h1")).to_have_text("Season 1")
    expect(page.locator("#season-winner")).to_contain_text("Won by")
    expect(page.locator("#season-winner")).not_to_contain_text("nobody")
    with host.client() as c:
        frozen = c.get("/api/v1/seasons/1").json()["standings"]
    expect(page.locator("#season-standings tbody tr")).to_have_count(len(frozen))
    shot(page, "season")
    same_host(watched_page, host)
    page = open_page(watched_page, f"{host.url}/leaderboard")
    expect(page.locator("#current-season")).to_contain_text("Season 2 (Autumn)")
    expect(page.locator(".result").first).to_contain_text("Season 1 ended")
    same_host(watched_page, host)


def test_an_unknown_season_says_so(host: Host, watched_page: WatchedPage) -> None:
    page = open_page(watched_page, f"{host.url}/seasons/99")
    expect(page.locator("#page .error")).to_contain_text("no season 99")
    watched_page.errors.clear()  # the 404 the page asked for is the browser's console error
    same_host(watched_page, host)
