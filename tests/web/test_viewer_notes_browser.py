"""The replay viewer's decision panel in a real Chromium shows a bot's note as text (markup in it
stays text, and cannot end the page's script early) and marks its SDK's fallback, in the
whole-table view and that seat's, not in another seat's view."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.cli.main import main
from arena.records.format import read_record, write_record
from tests.arena.records.viewer_records import timed_record
from tests.web.conftest import WatchedPage

pytestmark = [pytest.mark.slow, pytest.mark.browser]

NOTE = "</script><img src=x onerror=\"document.title='pwned'\"> & ruff"


def test_the_decision_panel_shows_a_note_as_text(watched_page: WatchedPage, tmp_path: Path) -> None:
    record = read_record(timed_record(tmp_path, "whist", 4, faults=False).path)
    decisions = [e for e in record.entries if e.get("type") == "decision"]
    step = 2
    noted = decisions[step]
    noted["note"] = NOTE
    noted["sdk_fallback"] = "ValueError: no card"
    path = tmp_path / "noted.jsonl.gz"
    write_record(path, record.header, record.entries, record.result)
    out = tmp_path / "noted.html"
    assert main(["replay", "html", str(path), "-o", str(out)]) == 0

    page = watched_page.page
    seat = noted["seat"]
    for view, shown in (("all", True), (str(seat), True), (str((seat + 1) % 4), False)):
        page.goto(f"{out.as_uri()}#step={step}&seat={view}")
        page.reload()  # a new fragment alone does not load the page again
        page.wait_for_selector("body[data-ready='1']")
        assert page.locator(".cav-bot-note").count() == int(shown), view
        if shown:
            assert page.inner_text(".cav-bot-note") == f"note: {NOTE}"
            assert (
                page.inner_text(".cav-sdk-fallback")
                == "its SDK fell back after ValueError: no card"
            )
        assert page.locator(".cav-decision img").count() == 0
    assert page.locator(".cav-mark-sdk-fallback").count() == 1
    assert page.title() != "pwned"
    assert watched_page.errors == []
