"""An author's analysis on the competition's match page, in a real browser over a real ``arena
host``: signed in, the author of a seat asks for it with the page's button, the host's worker
does it, and the page's viewer draws the bars and the timeline marks of their seats; signed
out, the page has neither the button nor the bars. No console error."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from tests.arena.host.processes import Host, competition_config
from tests.waiting import wait_until
from tests.web.conftest import WatchedPage
from tests.web.test_pages_browser import RULES_BOT, open_page, same_host, shot, sign_in

pytestmark = [pytest.mark.slow, pytest.mark.browser]

CONFIG = competition_config("analysis-cup", "[analysis]\nworlds = 4\n")
RANDOM_BOT = b"from arena.cli.main import main\nmain(['bot', 'random'])\n"


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Host, dict[str, str]]]:
    where = tmp_path_factory.mktemp("analysis")
    config = where / "cup.toml"
    config.write_text(CONFIG)
    host = Host(config, where / "cup", tls=None)
    host.start()
    try:
        tokens = {name: host.add_author(name) for name in ("alice", "bob")}
        host.submit(tokens["alice"], "alpha", RANDOM_BOT)
        host.submit(tokens["bob"], "beta", RULES_BOT)
        with host.client() as c:

            def published() -> bool:
                return any(m["record_available"] for m in c.get("/api/v1/matches").json())

            wait_until(published, 240, what="a match with a published record")
        yield host, tokens
    finally:
        host.stop()


def test_an_author_asks_for_the_analysis_on_the_match_page(
    host: tuple[Host, dict[str, str]], watched_page: WatchedPage
) -> None:
    h, tokens = host
    with h.client() as c:
        match = next(m for m in c.get("/api/v1/matches").json() if m["record_available"])
    mine = [i for i, s in enumerate(match["seats"]) if s.startswith("alpha@")]
    url = f"{h.url}/matches/{match['match_id']}"
    page = open_page(watched_page, url)
    expect(page.locator("#viewer")).to_be_visible()
    expect(page.locator("#request-analysis")).to_have_count(0)  # signed out: no button

    sign_in(watched_page, h, tokens["alice"])
    page = open_page(watched_page, url)
    ask = page.locator("#request-analysis")
    expect(ask).to_be_visible(timeout=30_000)
    ask.click()
    expect(page.locator("#analysis[data-state='done']")).to_have_count(1, timeout=120_000)
    with h.client(tokens["alice"]) as c:
        found = c.get(f"/api/v1/matches/{match['match_id']}/analysis").json()
    decisions = found["analysis"]["decisions"]
    assert {d["seat"] for d in decisions} <= set(mine) and decisions
    first = decisions[0]
    page.evaluate(f"location.hash = '#step={first['step']}&seat=all'")
    expect(page.locator(".cav-decision .cav-bar-row")).to_have_count(len(first["actions"]))
    expect(page.locator(".cav-bar-chosen")).to_have_attribute("data-bar-action", first["chosen"])
    costly = [d for d in decisions if d["class"] in ("inaccuracy", "mistake", "blunder")]
    expect(page.locator(".cav-analysis-mark")).to_have_count(len(costly))
    shot(page, "match-analysis")
    same_host(watched_page, h)
