"""A competition's match page while the match is played, in a real Chromium against a real
``arena host`` whose ladder plays one match at a time: a rotation whose sibling is still to
play says when it will be shown and draws nothing; the match shown live draws the table as the
viewer does (hands face down), moves on with the match, shows no card before it is played,
and ends with the result; no console error, no request but to the host."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.arena.host.processes import Host, competition_config
from tests.arena.host.test_live_feed import SLOW_BOT
from tests.arena.replay_truth import card_tokens
from tests.waiting import wait_until
from tests.web.conftest import WatchedPage
from tests.web.test_play_browser import SHOTS
from tests.web.test_viewer_browser import shown_tokens

pytestmark = [pytest.mark.slow, pytest.mark.browser]

WAIT_MS = 60_000


def _showing(c: httpx.Client, showing: str) -> str | None:
    for m in c.get("/api/v1/live").json()["matches"]:
        if c.get(f"/api/v1/live/{m['match_id']}").json()["showing"] == showing:
            return str(m["match_id"])
    return None


def test_the_match_page_follows_a_match_live_once_its_rule_allows(
    watched_page: WatchedPage, tmp_path: Path
) -> None:
    config = tmp_path / "live-page.toml"
    config.write_text(competition_config("live-page").replace("concurrency = 2", "concurrency = 1"))
    host = Host(config, tmp_path / "live-page", tls=None)
    page = watched_page.page
    with host.running():
        token = host.add_author("alice")
        for bot in ("alpha", "beta"):
            host.submit(token, bot, SLOW_BOT)
        with host.client() as c:
            held = wait_until(lambda: _showing(c, "waiting"), 240, what="a rotation held back")
            page.goto(f"{host.url}/matches/{held}")
            page.wait_for_selector("#live-state[data-showing='waiting']", timeout=WAIT_MS)
            assert "other seatings of its deal" in page.inner_text("#live-state")
            assert page.locator("#live-match .cav-table").count() == 0
            shown = wait_until(lambda: _showing(c, "live"), 240, what="a match shown live")
        page.goto(f"{host.url}/matches/{shown}")
        page.wait_for_selector("#viewer .cav-table .cav-turn", timeout=WAIT_MS)
        cards = shown_tokens(page, "#live-match")
        events = page.eval_on_selector_all("#live-events li", "els => els.map(e => e.textContent)")
        step = int(page.evaluate("() => Number(document.getElementById('viewer').dataset.step)"))
        assert page.locator("#viewer [data-hidden-card]").count() > 0
        assert cards <= set(card_tokens(" ".join(events))), cards
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "live-match.png"), full_page=True)
        page.wait_for_function(
            "n => Number(document.getElementById('viewer').dataset.step) > n",
            arg=step,
            timeout=WAIT_MS,
        )
        page.wait_for_selector("#live-match[data-ended='1']", timeout=WAIT_MS)
        assert "End of the match" in page.inner_text("#live-result")
    assert not watched_page.errors, watched_page.errors
    origin = urlsplit(host.url).netloc
    assert all(urlsplit(r).netloc == origin for r in watched_page.requests), watched_page.requests
