"""The admin page (/admin) in a real browser over a real ``arena host`` whose ladder real bot
processes play: signed in with the admin token (kept under its own key, never the author's),
it suspends an author (their standing and retired version shown), plays a failed unit again
(the ladder plays it), and lists both actions in the audit; no console error, no request to
anywhere but the host; its screenshot is ``admin.png``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from arena.host.config import load_competition
from arena.host.store import CompetitionStore
from tests.arena.host.processes import GOOD_BOT, Host, bot_archive, competition_config
from tests.waiting import wait_until
from tests.web.conftest import WatchedPage
from tests.web.test_pages_browser import open_page, same_host, shot

pytestmark = [pytest.mark.slow, pytest.mark.browser]


@pytest.fixture
def host(tmp_path: Path) -> Iterator[tuple[Host, int]]:
    """A host with three authors' versions rated, its ladder paused, and a failed unit of two of
    them (stored while it was stopped, as a unit whose bot kept crashing would be)."""
    config = tmp_path / "cup.toml"
    config.write_text(competition_config("whist-cup"))
    host = Host(config, tmp_path / "cup", tls=None)
    host.start()
    try:
        ids = []
        for author, bot in (("alice", "alpha"), ("bob", "beta"), ("carol", "gamma")):
            with host.client(host.add_author(author)) as c:
                r = c.put(f"/api/v1/bots/{bot}/versions", content=bot_archive(GOOD_BOT))
                assert r.status_code == 201, r.text
                ids.append(r.json()["id"])
        with host.client() as c:

            def rated() -> bool:
                rows = c.get("/api/v1/leaderboard").json()
                statuses = {c.get(f"/api/v1/versions/{v}").json()["status"] for v in ids}
                ratings = {r["ref"] for r in rows if r["matches"]}
                return statuses == {"validated"} and {"alpha@1", "beta@1"} <= ratings

            wait_until(rated, 240, what="three versions validated, alpha@1 and beta@1 rated")
        admin = (host.directory / "private" / "admin.token").read_text().strip()
        with host.client(admin) as c:
            assert c.post("/api/v1/admin/ladder", json={"state": "paused"}).status_code == 200
        host.stop()
        with CompetitionStore(host.directory, load_competition(config)) as store:
            unit = store.next_unit_id()
            seats = (ids[0], ids[1], ids[0], ids[1])
            store.create_unit("ladder", 5, ids[:2], [(f"x{unit}-r0", 0, seats)], unit_id=unit)
            assert store.fail_unit(unit, "match x-r0 could not be played in 3 attempts")
        host.start()
        yield host, unit
    finally:
        host.stop()


def test_the_admin_signs_in_suspends_reruns_and_reads_the_audit(
    host: tuple[Host, int], watched_page: WatchedPage
) -> None:
    h, unit = host
    token = (h.directory / "private" / "admin.token").read_text().strip()
    page = open_page(watched_page, f"{h.url}/admin")
    expect(page.locator("h1")).to_have_text("Admin: sign in")
    page.fill("#admin-token", token)
    page.click("#admin-signin button[type=submit]")
    expect(page.locator("h1")).to_have_text("Admin", timeout=30_000)
    expect(page.locator("#admin-authors tbody tr")).to_have_count(3)
    # Its own key: the author's sign-in is left alone.
    stored = page.evaluate(
        "[localStorage.getItem('cardarena.admin-token'), localStorage.getItem('cardarena.token')]"
    )
    assert stored == [token, None]

    # Suspend carol, with a reason.
    page.on("dialog", lambda dialog: dialog.accept())
    page.fill("#admin-authors input[aria-label='why suspend carol']", "a test of the page")
    page.click("#admin-authors button.suspend[data-author=carol]")
    expect(page.locator("#admin-message")).to_have_text("suspend carol: done", timeout=30_000)
    row = page.locator("#admin-authors tbody tr", has_text="carol")
    expect(row).to_contain_text("suspended")
    expect(row).to_contain_text("a test of the page")
    expect(row).to_contain_text("gamma@1 · archive · retired (suspended by the host")
    expect(row.locator("button.reinstate")).to_have_count(1)

    # The failed unit, with why, played again.
    failed = page.locator("#admin-failed tbody tr", has_text="could not be played")
    expect(failed).to_contain_text("alpha@1, beta@1")
    page.click(f"#admin-failed button.rerun[data-unit='{unit}']")
    expect(page.locator("#admin-message")).to_have_text(f"rerun unit {unit}: done")
    expect(failed).to_contain_text("played again as unit")
    with h.client() as c:

        def played() -> bool:
            return any(m["unit"] > unit for m in c.get("/api/v1/matches").json())

        wait_until(played, 120, what="the rerun unit played by the paused ladder")

    audit = page.locator("#admin-audit tbody tr")
    expect(audit.nth(0)).to_contain_text("rerun")
    expect(audit.nth(1)).to_contain_text("suspend")
    expect(audit.nth(1)).to_contain_text("carol")
    shot(page, "admin")
    same_host(watched_page, h)
