"""The competition's pages in a real browser: a real ``arena host`` (its ladder played by real bot
processes) serves them, and Debian's Chromium, driven by Playwright, reads them as a visitor and
as a signed-in author: the leaderboard sorted by a click, its charts drawn, a bot's page, the
match list filtered, a match stepped through to its end in the viewer beside the author's seat
logs, keyboard navigation; no console error and no request to anywhere but the host. Each page's
screenshot goes to out/screenshots/ (``make screenshots`` copies them into docs/images/)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.arena.host.processes import Host, competition_config
from tests.waiting import wait_until
from tests.web.conftest import WatchedPage

#: Debian's Chromium through Playwright: `make test-browser` runs these, not `make test`.
pytestmark = [pytest.mark.slow, pytest.mark.browser]

SCREENSHOTS = Path(__file__).resolve().parents[2] / "out" / "screenshots"

# With par against the rules bot: the leaderboard shows its section.
CONFIG = competition_config("whist-cup", 'par = "rules"\n')
# Fails its validation, saying so in markup that must show as text, never as HTML.
BROKEN_BOT = b"import sys\nprint('<b>no model</b> file', file=sys.stderr)\nsys.exit(3)\n"
RULES_BOT = b"from arena.cli.main import main\nmain(['bot', 'rules'])\n"
# Alice's bot notes every decision: the match page shows her notes to her only.
NOTE = "alice thinks <b>hard</b>"
NOTING_BOT = f"""from cardarena import RandomBot, run_bot
class Noting(RandomBot):
    def choose(self, game, observation, legal):
        self.turn.note({NOTE!r})
        return super().choose(game, observation, legal)
run_bot(Noting())
""".encode()


@dataclass
class Competition:
    host: Host
    tokens: dict[str, str]


@pytest.fixture(scope="module")
def competition(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Competition]:
    where = tmp_path_factory.mktemp("web")
    config = where / "cup.toml"
    config.write_text(CONFIG)
    host = Host(config, where / "cup", tls=None)
    host.start()
    try:
        tokens = {name: host.add_author(name) for name in ("alice", "bob", "carol")}
        for author, bot, code in (
            ("alice", "alpha", NOTING_BOT),
            ("bob", "beta", RULES_BOT),
            ("carol", "gamma", BROKEN_BOT),
        ):
            host.submit(tokens[author], bot, code)
        with host.client() as c:

            def ready() -> bool:
                rows = c.get("/api/v1/leaderboard").json()
                public = [m for m in c.get("/api/v1/matches").json() if m["record_available"]]
                return len(rows) >= 2 and len(public) >= 2

            wait_until(ready, 240, what="a rated ladder with published records")
        yield Competition(host, tokens)
    finally:
        host.stop()


def same_host(watched: WatchedPage, host: Host) -> None:
    """No console error, and every request went to the host (or was inline data)."""
    assert watched.errors == [], watched.errors
    strangers = [u for u in watched.requests if not u.startswith((host.url + "/", "data:"))]
    assert strangers == [], strangers


def open_page(watched: WatchedPage, url: str) -> Page:
    page = watched.page
    page.goto(url)
    expect(page.locator("#page[data-ready='1']")).to_have_count(1, timeout=30_000)
    return page


def sign_in(watched: WatchedPage, host: Host, token: str) -> None:
    """Through the sign-in form, as an author would."""
    page = open_page(watched, f"{host.url}/me")
    page.fill("#token", token)
    page.click("#signin button[type=submit]")
    expect(page.locator("h1")).to_have_text(re.compile(r"'s bots$"), timeout=30_000)


def shot(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def column(page: Page, table: str, key: str) -> list[str]:
    """The text of column ``key`` of ``table``, top to bottom."""
    index = page.eval_on_selector(
        f"{table} thead",
        "(head, key) => [...head.querySelectorAll('th')].findIndex(th => th.dataset.key === key)",
        key,
    )
    assert index >= 0, key
    texts: list[str] = page.eval_on_selector_all(
        f"{table} tbody tr", "(rows, i) => rows.map(r => r.children[i].textContent)", index
    )
    return texts


def test_the_leaderboard_sorts_and_draws_its_charts(
    competition: Competition, watched_page: WatchedPage
) -> None:
    host = competition.host
    page = open_page(watched_page, f"{host.url}/leaderboard")
    with host.client() as c:
        board: list[dict[str, Any]] = c.get("/api/v1/leaderboard").json()
    assert column(page, "#leaderboard", "ref") == [r["ref"].split("@")[1] for r in board]
    assert column(page, "#leaderboard", "bot") == [r["bot"] for r in board]
    # Each provisional version marked, and the rule stated in one sentence under the table.
    marks = ["provisional" if r["provisional"] else "" for r in board]
    assert column(page, "#leaderboard", "standing") == marks
    expect(page.locator("#provisional-rule")).to_contain_text("fewer than 10 rated matches")
    # A click sorts by Elo, highest first; another, lowest first; the keyboard does the same.
    elo = page.locator("#leaderboard th[data-key=elo]")
    elo.click()
    expect(elo).to_have_attribute("aria-sort", "descending")
    shown = [float(x) for x in column(page, "#leaderboard", "elo")]
    assert shown == sorted(shown, reverse=True) and len(shown) == len(board)
    elo.click()
    expect(elo).to_have_attribute("aria-sort", "ascending")
    assert [float(x) for x in column(page, "#leaderboard", "elo")] == sorted(shown)
    author = page.locator("#leaderboard th[data-key=author]")
    author.focus()
    page.keyboard.press("Enter")
    expect(author).to_have_attribute("aria-sort", "ascending")
    assert column(page, "#leaderboard", "author") == sorted(r["author"] for r in board)
    # The error bars, the history's lines, the superiority and cross-table heatmaps.
    expect(page.locator("figure.chart svg g[aria-label=rule]")).to_have_count(1)
    expect(page.locator("figure.chart svg g[aria-label=line]")).to_have_count(1)
    expect(page.locator("figure.chart svg g[aria-label=cell]")).to_have_count(2)
    # One cell per ordered pair of the rated versions in each heatmap.
    pairs = len(board) * (len(board) - 1)
    assert page.locator("figure.chart svg g[aria-label=cell] rect").count() == 2 * pairs
    for title in ("Elo with its 95 % interval", "Likelihood of superiority", "Cross-table"):
        expect(page.get_by_role("heading", name=title)).to_be_visible()
    bars = page.locator("figure.chart").first
    assert bars.locator("svg [aria-label=dot] circle").count() == len(board)
    # No chart drew Plot's warning sign (a degenerate scale, data it could not place).
    assert "\u26a0" not in page.locator("main").inner_text()
    shot(page, "leaderboard")
    same_host(watched_page, host)


def test_the_leaderboard_shows_each_versions_par(
    competition: Competition, watched_page: WatchedPage
) -> None:
    host = competition.host
    with host.client() as c:

        def computed() -> list[dict[str, Any]]:
            rows: list[dict[str, Any]] = c.get("/api/v1/leaderboard/par").json()["rows"]
            return rows if len(rows) >= 2 else []

        board = wait_until(computed, 90, what="the ladder's par")
    page = open_page(watched_page, f"{host.url}/leaderboard")
    expect(page.get_by_role("heading", name="Par against rules")).to_be_visible()
    expect(page.locator("#par-note")).to_contain_text("luck-adjusted")
    # Every version the API listed (a pass since may add one), best first, to 3 decimals.
    assert {r["ref"] for r in board} <= set(column(page, "#par", "ref"))
    pars = column(page, "#par", "par")
    assert all(re.fullmatch(r"-?\d+\.\d{3}", x) for x in pars), pars
    assert [float(x) for x in pars] == sorted((float(x) for x in pars), reverse=True)
    same_host(watched_page, host)


def test_an_author_signs_in_and_sees_why_a_version_failed(
    competition: Competition, watched_page: WatchedPage
) -> None:
    host = competition.host
    # A wrong token is refused in one line, and nothing is kept.
    page = open_page(watched_page, f"{host.url}/me")
    page.fill("#token", "cau_not-a-token")
    page.click("#signin button[type=submit]")
    expect(page.locator("#signin .error")).to_be_visible()
    assert page.evaluate("localStorage.getItem('cardarena.token')") is None
    # The browser logs the refused call itself; that one is expected.
    assert [e for e in watched_page.errors if "401" not in e] == []
    watched_page.errors.clear()
    sign_in(watched_page, host, competition.tokens["carol"])
    expect(page.locator("h1")).to_have_text("carol's bots")
    expect(page.locator("#nav-me")).to_have_text("carol's bots")
    row = page.locator("#submissions tbody tr").first
    expect(row).to_contain_text("gamma@1")
    expect(row).to_contain_text("failed validation")
    expect(row).to_contain_text("crash")
    row.locator("button.show-log").click()
    log = row.locator("pre.log")
    # The bot's output, markup and all, as text.
    expect(log).to_contain_text("<b>no model</b> file")
    assert row.locator("pre.log b").count() == 0
    shot(page, "author")
    # Another author's page of the same bot shows no reason; nothing of carol's is on bob's.
    page.click("#signout")
    expect(page.locator("#nav-me")).to_have_text("Sign in")
    page = open_page(watched_page, f"{host.url}/bots/gamma")
    expect(page.locator("#versions")).to_contain_text("failed validation")
    expect(page.locator("#versions .reason")).to_have_count(0)
    same_host(watched_page, host)


def test_a_bots_page(competition: Competition, watched_page: WatchedPage) -> None:
    host = competition.host
    page = open_page(watched_page, f"{host.url}/bots/alpha")
    expect(page.locator(".lead")).to_contain_text("by alice")
    expect(page.locator("#versions tbody tr")).to_have_count(1)
    expect(page.locator("#versions")).to_contain_text("validated")
    expect(page.get_by_role("heading", name="alpha@1")).to_be_visible()
    expect(page.get_by_role("heading", name="Head to head")).to_be_visible()
    expect(page.locator("section.card table").nth(1)).to_contain_text("beta@1")
    assert page.locator("#matches tbody tr").count() >= 1
    shot(page, "bot")
    # An unknown bot: one line, status 404 (which the browser logs itself), no other error.
    page = open_page(watched_page, f"{host.url}/bots/nobody")
    expect(page.locator("#page .error")).to_have_text("No bot called nobody.")
    assert [e for e in watched_page.errors if "status of 404" not in e] == []
    watched_page.errors.clear()
    same_host(watched_page, host)


def test_the_match_list_filters(competition: Competition, watched_page: WatchedPage) -> None:
    host = competition.host
    page = open_page(watched_page, f"{host.url}/matches")
    everything = page.locator("#matches tbody tr").count()
    assert everything >= 2
    page.select_option("#filter-bot", "alpha")
    expect(page).to_have_url(re.compile(r"bot=alpha"))
    expect(page.locator("#page[data-ready='1']")).to_have_count(1)
    seats = column(page, "#matches", "seats")
    assert seats and all("alpha@1" in s for s in seats)
    page.select_option("#filter-result", "lost")
    expect(page).to_have_url(re.compile(r"result=lost"))
    expect(page.locator("#page[data-ready='1']")).to_have_count(1)
    if page.locator("#matches").count():
        assert set(column(page, "#matches", "outcome")) == {"lost"}
    page.select_option("#filter-result", "")
    expect(page.locator("#page[data-ready='1']")).to_have_count(1)
    page.check("#filter-faults")
    expect(page.locator("#page[data-ready='1']")).to_have_count(1)
    # The ladder plays on meanwhile: the count is of the list as this page got it.
    shown = page.locator("#matches tbody tr").count()
    expect(page.locator("#match-count")).to_have_text(re.compile(rf"^{shown} of \d+ matches$"))
    if shown:
        assert all(int(n) > 0 for n in column(page, "#matches", "faults"))
    else:
        expect(page.locator(".empty")).to_have_text("No match fits.")
    same_host(watched_page, host)


def test_a_match_steps_to_its_end_beside_the_authors_seat_logs(
    competition: Competition, watched_page: WatchedPage
) -> None:
    host = competition.host
    with host.client() as c:
        public = [m for m in c.get("/api/v1/matches").json() if m["record_available"]]
    match = next(m for m in public if "alpha@1" in m["seats"])
    sign_in(watched_page, host, competition.tokens["alice"])
    page = open_page(watched_page, f"{host.url}/matches/{match['match_id']}")
    expect(page.locator("#viewer")).to_be_visible()
    # Alice's seats' logs, and only hers.
    mine = [i for i, s in enumerate(match["seats"]) if s == "alpha@1"]
    expect(page.locator("#seat-logs pre.log")).to_have_count(len(mine))
    for seat in mine:
        expect(page.locator(f"#seat-logs pre.log[data-seat='{seat}']")).not_to_be_empty()
    label = page.locator(".cav-step-label")
    total = int(re.findall(r"\d+", label.inner_text())[-1])
    page.locator("#viewer").focus()
    page.keyboard.press("End")
    expect(label).to_have_text(re.compile(rf"\b{total}\s*/\s*{total}\b"))
    expect(page).to_have_url(re.compile(rf"#step={total}"))
    page.keyboard.press("ArrowLeft")
    expect(label).to_have_text(re.compile(rf"\b{total - 1}\s*/\s*{total}\b"))
    shot(page, "match")
    _her_notes_to_her_only(page, host, competition.tokens["alice"], match["match_id"], mine)
    same_host(watched_page, host)


def _her_notes_to_her_only(
    page: Page, host: Host, token: str, match_id: str, mine: list[int]
) -> None:
    """At a decision of one of Alice's seats the panel shows her note, as text; signed out, the
    same page shows none."""
    with host.client(token) as c:
        doc = c.get(f"/api/v1/matches/{match_id}/viewer").json()
    step = next(s["n"] for s in doc["steps"] if s["seat"] in mine)
    page.evaluate(f"location.hash = '#step={step}&seat=all'")
    expect(page.locator(".cav-bot-note")).to_have_text(f"note: {NOTE}")
    expect(page.locator(".cav-decision b")).to_have_count(0)
    page.evaluate("localStorage.clear()")
    page.reload()
    expect(page.locator("#page[data-ready='1']")).to_have_count(1, timeout=30_000)
    expect(page.locator(".cav-step-label")).to_have_text(re.compile(rf"\b{step}\s*/"))
    expect(page.locator(".cav-choice")).to_be_visible()
    expect(page.locator(".cav-bot-note")).to_have_count(0)


def test_pages_are_served_with_a_policy_that_keeps_them_on_the_host(
    competition: Competition,
) -> None:
    host = competition.host
    with host.client() as c:
        for path in ("/leaderboard", "/matches", "/me", "/bots/alpha", "/matches/u1-r0"):
            r = c.get(path)
            assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
            policy = r.headers["content-security-policy"]
            assert "default-src 'self'" in policy and "script-src 'self'" in policy
            assert "http" not in r.text.split("<body>")[0].replace(host.url, "")
        assert c.get("/").headers.get("location") == "/leaderboard"
        assert c.get("/static/pages.js").status_code == 200
        assert c.get("/static/../competition.sqlite").status_code == 404
