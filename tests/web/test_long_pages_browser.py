"""The pages of a competition that runs for months, in a real browser over a real ``arena host``
whose ladder real bot processes played, then paused (so that the lists hold still while a test
reads them): /matches a page at a time with its filters in the URL. Every page: no console error,
no request leaving the host, and a screenshot in out/screenshots/ (``make screenshots``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.arena.host.processes import BROKEN_BOT, GOOD_BOT, Host, competition_config
from tests.waiting import wait_until
from tests.web.conftest import WatchedPage
from tests.web.test_pages_browser import column, open_page, same_host, shot

pytestmark = [pytest.mark.slow, pytest.mark.browser]

#: Published records enough for a few pages of two.
MATCHES = 8


def pending_units(host: Host) -> float:
    with host.client() as c:
        text = c.get("/metrics").text
    found = re.findall(r'^arena_units_pending\{phase="ladder"\} (\S+)$', text, re.M)
    return float(found[0])


#: The bots of the competition: (author, bot, code). Gamma fails its validation.
BOTS = (
    ("alice", "alpha", GOOD_BOT),
    ("bob", "beta", GOOD_BOT),
    ("alice", "delta", GOOD_BOT),
    ("carol", "gamma", BROKEN_BOT),
)


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    where = tmp_path_factory.mktemp("long")
    (where / "long.toml").write_text(competition_config("long-cup"))
    with Host(where / "long.toml", where / "cup", tls=None).running() as host:
        tokens = {author: host.add_author(author) for author in {a for a, _, _ in BOTS}}
        for author, bot, code in BOTS:
            host.submit(tokens[author], bot, code)
        with host.client() as c:

            def ready() -> bool:
                found = c.get("/api/v1/matches", params={"limit": 1000}).json()
                return sum(m["record_available"] for m in found) >= MATCHES

            wait_until(ready, 300, what=f"{MATCHES} published records")
        admin = (host.directory / "private" / "admin.token").read_text().strip()
        with host.client(admin) as c:
            r = c.post("/api/v1/admin/ladder", json={"state": "paused"})
            assert r.status_code == 200, r.text
        wait_until(lambda: pending_units(host) == 0, 120, what="the paused ladder's last units")
        yield host


def api(host: Host, path: str, **query: Any) -> Any:
    with host.client() as c:
        r = c.get(f"/api/v1{path}", params=query)
        assert r.status_code == 200, r.text
        return r.json()


def ids(page: Page) -> list[str]:
    return column(page, "#matches", "match_id")


def test_the_match_list_comes_a_page_at_a_time(host: Host, watched_page: WatchedPage) -> None:
    everything = [m["match_id"] for m in api(host, "/matches", limit=1000)]
    total = len(everything)
    page = open_page(watched_page, f"{host.url}/matches?limit=3")
    assert ids(page) == everything[:3]
    expect(page.locator("#match-count")).to_have_text(f"3 of {total} matches")
    pages = (total + 2) // 3
    expect(page.locator(".pager .page-of").first).to_have_text(f"page 1 of {pages}")
    expect(page.locator(".pager a[rel=prev]")).to_have_count(0)
    page.locator(".pager a[rel=next]").first.click()
    expect(page).to_have_url(re.compile(r"page=2"))
    expect(page.locator("#page[data-ready='1']")).to_have_count(1)
    assert ids(page) == everything[3:6]
    page.locator(".pager a[rel=prev]").first.click()
    expect(page).to_have_url(re.compile(r"page=1"))
    expect(page.locator("#page[data-ready='1']")).to_have_count(1)
    assert ids(page) == everything[:3]
    # The last page: no "older" link.
    page = open_page(watched_page, f"{host.url}/matches?limit=3&page={pages}")
    assert ids(page) == everything[3 * (pages - 1) :]
    expect(page.locator(".pager a[rel=next]")).to_have_count(0)
    # The default page: 50.
    page = open_page(watched_page, f"{host.url}/matches")
    assert ids(page) == everything[:50]
    shot(page, "matches")
    same_host(watched_page, host)


def test_filters_go_to_the_host_and_stay_in_the_url(host: Host, watched_page: WatchedPage) -> None:
    page = open_page(watched_page, f"{host.url}/matches?limit=2&page=2")
    page.select_option("#filter-bot", "beta")
    # A new choice starts at the first page.
    expect(page).to_have_url(re.compile(r"bot=beta"))
    expect(page.locator("#page[data-ready='1']")).to_have_count(1)
    assert "page=" not in page.url
    beta = [m["match_id"] for m in api(host, "/matches", bot="beta", limit=1000)]
    assert ids(page) == beta[:2]
    assert all("beta@1" in s for s in column(page, "#matches", "seats"))
    page.select_option("#filter-version", "beta@1")
    expect(page).to_have_url(re.compile(r"version=\d+"))
    expect(page.locator("#page[data-ready='1']")).to_have_count(1)
    page.select_option("#filter-phase", "ladder")
    expect(page).to_have_url(re.compile(r"phase=ladder"))
    expect(page.locator("#page[data-ready='1']")).to_have_count(1)
    assert ids(page) == beta[:2]
    expect(page.locator("#match-count")).to_have_text(f"2 of {len(beta)} matches")
    # Straight from a URL, as a link would bring it.
    page = open_page(watched_page, f"{host.url}/matches?bot=alpha&phase=final")
    expect(page.locator("#filter-bot")).to_have_value("alpha")
    expect(page.locator("#filter-phase")).to_have_value("final")
    expect(page.locator(".empty")).to_have_text("No match fits.")
    # The season (every match here is season 1's) and an event's matches (none).
    page.select_option("#filter-season", "1")
    expect(page).to_have_url(re.compile(r"season=1"))
    expect(page.locator("#page[data-ready='1']")).to_have_count(1)
    expect(page.locator("#filter-season")).to_have_value("1")
    page = open_page(watched_page, f"{host.url}/matches?phase=event")
    expect(page.locator("#filter-phase")).to_have_value("event")
    expect(page.locator(".empty")).to_have_text("No match fits.")
    same_host(watched_page, host)


def test_the_bots_index(host: Host, watched_page: WatchedPage) -> None:
    bots = api(host, "/bots")
    board = api(host, "/leaderboard")
    page = open_page(watched_page, f"{host.url}/bots")
    expect(page.locator("[data-nav=bots]")).to_have_attribute("aria-current", "page")
    expect(page.locator("#bots tbody tr")).to_have_count(len(bots))
    # Rated first, best first; each with its author, latest version and its status.
    best = {}
    for r in board:
        best.setdefault(r["bot"], r)
    ranked = sorted(best.values(), key=lambda r: -r["elo"])
    assert column(page, "#bots", "name")[: len(ranked)] == [r["bot"] for r in ranked]
    assert column(page, "#bots", "elo")[: len(ranked)] == [f"{r['elo']:.1f}" for r in ranked]
    rows = dict(zip(column(page, "#bots", "name"), column(page, "#bots", "status"), strict=True))
    assert rows["gamma"] == "failed validation" and rows["alpha"] == "validated"
    authors = dict(zip(column(page, "#bots", "name"), column(page, "#bots", "author"), strict=True))
    assert authors == {b["name"]: b["author"] for b in bots}
    assert set(column(page, "#bots", "latest")) == {f"{b['name']}@1" for b in bots}
    shot(page, "bots")
    name = page.locator("#bots th[data-key=name]")
    name.click()
    expect(name).to_have_attribute("aria-sort", "ascending")
    assert column(page, "#bots", "name") == sorted(b["name"] for b in bots)
    page.locator("#bots a", has_text="beta").click()
    expect(page).to_have_url(f"{host.url}/bots/beta")
    expect(page.locator("#page[data-ready='1']")).to_have_count(1)
    same_host(watched_page, host)


def test_unknown_pages_answer_a_page_that_leads_home(host: Host, watched_page: WatchedPage) -> None:
    page = watched_page.page
    for path, line in (
        ("/no/such/page", "There is no page at /no/such/page."),
        ("/bots/nobody", "No bot called nobody."),
        ("/matches/u999-r0", "No match u999-r0."),
    ):
        response = page.goto(host.url + path)
        assert response is not None and response.status == 404
        expect(page.locator("#page[data-ready='1']")).to_have_count(1)
        expect(page.locator("#page .error")).to_have_text(line)
        expect(page.locator("h1")).to_have_text("Not found")
    shot(page, "not-found")
    page.click("#home")
    expect(page).to_have_url(f"{host.url}/leaderboard")
    # The browser reports each 404 document itself; nothing else went wrong.
    assert [e for e in watched_page.errors if "status of 404" not in e] == []
    watched_page.errors.clear()
    same_host(watched_page, host)


def test_every_page_links_the_rules_the_protocol_and_a_starter_bot(
    host: Host, watched_page: WatchedPage
) -> None:
    for path in ("/leaderboard", "/bots", "/matches", "/me"):
        page = open_page(watched_page, host.url + path)
        for link, href in (("Rules", "/rules"), ("Protocol", "/protocol")):
            expect(page.locator("footer").get_by_role("link", name=link)).to_have_attribute(
                "href", href
            )
        expect(page.locator("#link-starter")).to_have_attribute("href", "/starter.tar.gz")
    page.click("#link-rules")
    expect(page.locator("h1")).to_have_text("The rules of whist")
    expect(page.locator("pre.source").first).to_contain_text("## Players")
    shot(page, "rules")
    page.click("#link-protocol")
    expect(page.locator("pre.source")).to_contain_text("service Arena")
    with page.expect_download() as download:
        page.click("#link-starter")
    assert download.value.suggested_filename == "starter.tar.gz"
    same_host(watched_page, host)


#: A card's code as the record writes it ("TD", "5H"), not as a glyph ("10♦").
RAW_CARD = re.compile(r"(?<![A-Za-z0-9])[2-9TJQKA][CDHS](?![A-Za-z0-9])")
UTC_TIME = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d UTC$")


def utc(iso: str) -> str:
    """How the pages print a stored time (the host stores UTC: ``…T05:13:22.123Z``)."""
    return iso[:16].replace("T", " ") + " UTC"


def test_times_are_utc_and_say_so(host: Host, watched_page: WatchedPage) -> None:
    page = watched_page.page
    # A visitor far from Greenwich reads the same times, marked UTC.
    cdp = page.context.new_cdp_session(page)
    cdp.send("Emulation.setTimezoneOverride", {"timezoneId": "Asia/Tokyo"})
    found = api(host, "/matches", limit=5)
    page = open_page(watched_page, f"{host.url}/matches?limit=5")
    assert column(page, "#matches", "finished") == [utc(m["finished"]) for m in found]
    bots = {b["name"]: b for b in api(host, "/bots")}
    page = open_page(watched_page, f"{host.url}/bots")
    for name, when in zip(
        column(page, "#bots", "name"), column(page, "#bots", "updated"), strict=True
    ):
        assert when == utc(bots[name]["versions"][-1]["created"])
    page = open_page(watched_page, f"{host.url}/bots/alpha")
    assert all(UTC_TIME.match(t) for t in column(page, "#versions", "created"))
    page = open_page(watched_page, f"{host.url}/matches/{found[0]['match_id']}")
    expect(page.locator("dl.facts")).to_contain_text(utc(found[0]["finished"]))
    same_host(watched_page, host)


def boxes_overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return not (
        a["right"] <= b["left"]
        or b["right"] <= a["left"]
        or a["bottom"] <= b["top"]
        or b["bottom"] <= a["top"]
    )


#: The width of a chart's own SVG (a legend's swatches are SVGs too, smaller).
SVG_WIDTH = "Math.max(...[...f.querySelectorAll('svg')].map(s => s.getBoundingClientRect().width))"


def chart_widths(page: Page) -> list[tuple[int, int]]:
    """(the figure's width, its chart's) of the leaderboard's two line charts."""
    pairs: list[tuple[int, int]] = page.eval_on_selector_all(
        "figure.chart", f"figs => figs.slice(0, 2).map(f => [f.clientWidth, {SVG_WIDTH}])"
    )
    return pairs


def test_charts_fill_their_cards_and_their_labels_never_overlap(
    host: Host, watched_page: WatchedPage
) -> None:
    page = open_page(watched_page, f"{host.url}/leaderboard")
    widths = chart_widths(page)
    assert len(widths) == 2 and all(w > 900 and abs(w - s) <= 1 for w, s in widths), widths
    # The end labels of the ratings over time: one per version, no two boxes meeting.
    history = page.locator("figure.chart").nth(1)
    labels = history.locator("svg g[aria-label=text] text")
    expect(labels).to_have_count(len(api(host, "/leaderboard")))
    boxes: list[dict[str, float]] = labels.evaluate_all(
        "els => els.map(e => { const r = e.getBoundingClientRect();"
        " return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; })"
    )
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert not boxes_overlap(a, b), (a, b)
    # A narrower window: the charts are drawn again at their cards' new width.
    page.set_viewport_size({"width": 800, "height": 900})
    page.wait_for_function(
        "() => [...document.querySelectorAll('figure.chart')].slice(0, 2).every(f =>"
        f" f.clientWidth < 800 && Math.abs({SVG_WIDTH} - f.clientWidth) <= 1)"
    )
    same_host(watched_page, host)


def test_the_viewers_panels_show_cards_as_glyphs(host: Host, watched_page: WatchedPage) -> None:
    public = [m for m in api(host, "/matches", limit=1000) if m["record_available"]]
    page = open_page(watched_page, f"{host.url}/matches/{public[0]['match_id']}")
    label = page.locator(".cav-step-label")
    total = int(re.findall(r"\d+", label.inner_text())[-1])
    page.locator("#viewer").focus()
    page.keyboard.press("Home")
    glyphs = 0
    for step in range(total + 1):
        expect(label).to_have_text(re.compile(rf"\b{step}\s*/\s*{total}\b"))
        for text in page.locator(".cav-panel").all_inner_texts():
            assert "play:" not in text and not RAW_CARD.search(text), (step, text)
        decision = page.locator(".cav-decision")
        glyphs += decision.locator(".cav-inline-card").count()
        page.keyboard.press("ArrowRight")
    assert glyphs > total  # the choice and the legal cards, each a glyph
    codes = page.eval_on_selector_all(".cav-decision [data-action]", "els => els.length")
    assert codes == 0  # the end: no decision
    same_host(watched_page, host)


def test_the_live_page_says_who_plays_and_nothing_more(
    host: Host, watched_page: WatchedPage
) -> None:
    page = open_page(watched_page, f"{host.url}/live")
    expect(page.locator("[data-nav=live]")).to_have_attribute("aria-current", "page")
    expect(page.locator("#live-rule")).to_contain_text("no card of a match is shown")
    # The ladder is paused and its last units played: nothing in progress.
    assert api(host, "/live") == {"matches": [], "on_workers": False}
    expect(page.locator("#live-count")).to_have_text("0 matches in progress")
    expect(page.locator("#live .empty")).to_have_text("No match is being played right now.")
    assert page.locator("#live [data-card], #live .cav-inline-card").count() == 0
    shot(page, "live")
    same_host(watched_page, host)
