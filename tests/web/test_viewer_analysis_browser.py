"""The replay viewer with an analysis (``arena replay html --analysis``) in a real Chromium: a
bar per legal action at an analysed decision, the played and the best marked, the class and the
loss; the costly decisions marked on the timeline; each only in the whole-table view and the
deciding seat's; no console errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.cli.main import main
from tests.arena.records.test_replay_html_analysis import document
from tests.engine.planted import blunder_record
from tests.web.conftest import WatchedPage
from tests.web.test_pages_browser import shot

pytestmark = [pytest.mark.slow, pytest.mark.browser]


def test_the_viewer_draws_the_bars_and_the_timeline_marks(
    watched_page: WatchedPage, tmp_path: Path
) -> None:
    record = tmp_path / "planted.jsonl.gz"
    step, ace = blunder_record(record)
    out = tmp_path / "analysed.html"
    assert main(["replay", "html", str(record), "-o", str(out), "--analysis", "--seat", "N",
                 "--worlds", "8", "--deal", "1"]) == 0  # fmt: skip
    decisions = document(out)["analysis"]["decisions"]
    blunder = next(d for d in decisions if d["step"] == step)
    assert blunder["class"] == "blunder" and blunder["chosen"] == ace
    costly = [d for d in decisions if d["class"] in ("inaccuracy", "mistake", "blunder")]

    page = watched_page.page
    for view, shown in (("all", True), ("0", True), ("1", False)):
        page.goto(f"{out.as_uri()}#step={step}&seat={view}")
        page.reload()  # a new fragment alone does not load the page again
        page.wait_for_selector("body[data-ready='1']")
        assert page.locator(".cav-analysis").count() == int(shown), view
        assert page.locator(".cav-analysis-mark:visible").count() == len(costly) * shown, view
    page.goto(f"{out.as_uri()}#step={step}&seat=all")
    page.reload()
    page.wait_for_selector("body[data-ready='1']")
    bars = page.locator(".cav-decision .cav-bar-row")
    assert bars.count() == len(blunder["actions"])
    chosen = page.locator(".cav-bar-chosen")
    assert chosen.count() == 1 and chosen.get_attribute("data-bar-action") == ace
    assert "played" in chosen.inner_text()
    best = page.locator(".cav-bar-best")
    assert best.get_attribute("data-bar-action") == blunder["best"]
    head = page.inner_text(".cav-analysis-head")
    assert "blunder" in head.lower() and f"{blunder['loss']:.2f}" in head
    mark = page.locator(f".cav-analysis-mark.cav-class-blunder[data-step='{step}']")
    assert mark.count() == 1
    shot(page, "viewer-analysis")
    page.goto(f"{out.as_uri()}#step=0&seat=all")
    page.reload()
    page.wait_for_selector("body[data-ready='1']")
    mark.click()
    assert page.get_attribute("#viewer", "data-step") == str(step)
    assert watched_page.errors == []
