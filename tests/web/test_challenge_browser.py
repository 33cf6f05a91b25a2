"""A challenge in a real Chromium over a real ``arena host`` (``[challenges]``): a signed-in
author presses "Challenge" on a bot's page, lands on their seat's page at the host's own
address, and plays a whole whist match by clicking against the ladder's version; the match page
then labels it human and shows its replay, the match list lists it. No console error, no request
leaving the host. Signed out, the bot's page has no button. Meanwhile a second browser, signed
out, follows the match live on its match page (hands face down) to its end."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from tests.arena.host.processes import Host, host_in
from tests.arena.host.test_challenges import validated
from tests.waiting import wait_until
from tests.web.conftest import WatchedPage
from tests.web.test_pages_browser import RULES_BOT, open_page, same_host, shot, sign_in
from tests.web.test_play_browser import next_turn, play_by_hand

pytestmark = [pytest.mark.slow, pytest.mark.browser]

CHALLENGES = "[challenges]\nenabled = true\n"


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Host, dict[str, str]]]:
    with host_in(tmp_path_factory.mktemp("challenge"), "cup", CHALLENGES).running() as h:
        tokens = {name: h.add_author(name) for name in ("alice", "bob")}
        validated(h, tokens["bob"], "beta", RULES_BOT)
        yield h, tokens


def test_a_signed_in_author_challenges_a_bot_and_plays_it_to_the_end(
    host: tuple[Host, dict[str, str]], watched_page: WatchedPage, browser: Browser
) -> None:
    h, tokens = host
    page = open_page(watched_page, f"{h.url}/bots/beta")
    expect(page.locator("#challenge")).to_have_count(0)  # signed out: no button
    sign_in(watched_page, h, tokens["alice"])
    page = open_page(watched_page, f"{h.url}/bots/beta")
    page.select_option("#challenge-seat", "1")
    shot(page, "challenge")
    page.click("#challenge")
    page.wait_for_url(f"{h.url}/play/**", timeout=30_000)
    with h.client() as c:
        (challenge,) = c.get("/api/v1/challenges").json()
        match_id = challenge["match_id"]
    # A spectator, in a browser of its own, follows it live as it is played.
    spectator = browser.new_context().new_page()
    errors: list[str] = []
    spectator.on("pageerror", lambda err: errors.append(str(err)))
    spectator.on("console", lambda m: errors.extend([m.text] if m.type == "error" else []))
    spectator.goto(f"{h.url}/matches/{match_id}")
    # Opened at once: while its seats connect it says so and looks again.
    spectator.wait_for_selector("#live-state[data-showing='live']", timeout=30_000)
    spectator.wait_for_selector("#viewer .cav-table", timeout=30_000)
    assert spectator.locator("#viewer [data-hidden-card]").count() > 0
    rid, turn = next_turn(page, ""), 0
    while rid:
        play_by_hand(page, turn)
        rid, turn = next_turn(page, rid), turn + 1
    assert turn > 0 and "the match is over" in page.inner_text("#pl-status")
    spectator.wait_for_selector("#live-match[data-ended='1']", timeout=30_000)
    assert "its replay is published" in spectator.inner_text("#live-result")
    assert spectator.locator("#live-events li").count() > 20 and errors == []
    spectator.context.close()
    with h.client() as c:

        def stored() -> bool:
            return bool(c.get(f"/api/v1/challenges/{match_id}").json()["state"] == "done")

        wait_until(stored, 60, what="the challenge stored")
    assert challenge["seats"][1] == "person:alice"
    page = open_page(watched_page, f"{h.url}/matches/{match_id}")
    expect(page.locator(".facts .human-label")).to_have_text("human")
    expect(page.locator("#viewer")).to_be_visible()
    page = open_page(watched_page, f"{h.url}/matches")
    expect(page.locator("#human-matches .human-label")).to_have_count(1)
    expect(page.locator("#human-matches")).to_contain_text(match_id)
    shot(page, "challenge-list")
    same_host(watched_page, h)
