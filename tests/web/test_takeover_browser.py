"""Taking a seat over from a replay, in a real Chromium: the viewer (``arena replay html``) shows
the "Play from here" command for the step and seat shown; that command, run as printed, opens a
person's page on the branched match, which is played to its end by clicking; the new record
verifies, names its branch and starts with the record's decisions."""

from __future__ import annotations

import shlex
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from arena.cli.main import main
from arena.records.format import read_record
from tests.arena.people.running import RULES, SHORT_WHIST, arena_running
from tests.web.conftest import WatchedPage
from tests.web.test_play_browser import next_turn, play_by_hand

pytestmark = [pytest.mark.slow, pytest.mark.browser]

AT = 9


def test_play_from_here_in_the_viewer_then_play_on_by_clicking(
    watched_page: WatchedPage, tmp_path: Path
) -> None:
    bots = [a for _ in range(4) for a in ("--bot", RULES)]
    original = tmp_path / "original"
    assert (
        main(["match", "whist", *bots, *SHORT_WHIST, "--seed", "11", "--out", str(original)]) == 0
    )
    (recorded,) = original.glob("*.jsonl.gz")
    html = tmp_path / "replay.html"
    assert main(["replay", "html", str(recorded), "-o", str(html)]) == 0

    page = watched_page.page
    page.goto(html.as_uri() + f"#step={AT}&seat=2")
    page.wait_for_selector("body[data-ready='1']")
    command = page.locator(".cav-play-command")
    assert command.is_hidden()
    page.locator("button.cav-play-here").click()
    shown = command.inner_text()
    assert shown == f"arena replay play {recorded} --at {AT} --seat 2 --human"
    assert not watched_page.errors, watched_page.errors

    argv = shlex.split(shown)[1:]  # as printed, run by the test's own interpreter
    with arena_running(argv, tmp_path / "branch") as run:
        url = run.urls(1)[2]
        page.goto(url)
        rid, turn = next_turn(page, ""), 0
        while rid:
            play_by_hand(page, turn)
            rid, turn = next_turn(page, rid), turn + 1
        assert "the match is over" in page.inner_text("#pl-status")
        status, record = run.finish()
    assert status == 0, run.errors
    assert turn > 0
    assert any(line.startswith("branched from ") for line in run.lines), run.lines
    assert main(["replay", "verify", str(record)]) == 0
    branched = read_record(record)
    assert branched.header["branched_from"]["decision"] == AT
    mine = [e["action"] for _, e in branched.decisions()]
    theirs = [e["action"] for _, e in read_record(recorded).decisions()]
    assert mine[:AT] == theirs[:AT]
    assert branched.header["seats"][2]["bot_name"] != "rules"  # the person's seat
    assert not watched_page.errors, watched_page.errors
    origin = urlsplit(url).netloc
    late = watched_page.requests[watched_page.requests.index(url) :]
    assert all(urlsplit(r).netloc == origin for r in late), late
