"""``arena replay html``: the page is one self-contained file (no network, nothing fetched) that
embeds the match, and markup in a record cannot escape its data block. The viewer itself is
driven in a real Chromium by tests/web/test_viewer_browser.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from arena.cli.main import main
from arena.records.format import read_record, write_record
from tests.arena.replay_truth import make_record

#: The seed of the recorded matches drawn here.
SEED = 5


def test_page_is_self_contained_and_embeds_the_match(tmp_path: Path) -> None:
    record = make_record(tmp_path, "whist", SEED)
    out = tmp_path / "page" / "whist.html"
    assert main(["replay", "html", str(record), "-o", str(out)]) == 0
    page = out.read_text()
    # No network: no external script, stylesheet, image, font or frame.
    assert not re.search(r"\b(src|href)\s*=", page, re.I)
    assert "@import" not in page and "url(" not in page
    assert "http://" not in page and "https://" not in page
    data_text = re.search(r'id="replay-data">(.*?)</script>', page, re.S)
    assert data_text is not None
    data = json.loads(data_text.group(1))
    decisions = sum(1 for _ in read_record(record).decisions())
    assert data["meta"]["decisions"] == decisions
    assert len(data["steps"]) == decisions + 1 and data["steps"][-1]["end"] is True


def test_markup_in_record_text_cannot_escape_the_data_block(tmp_path: Path) -> None:
    record = make_record(tmp_path, "whist", SEED)
    rec = read_record(record)
    evil = "</script><script>document.title='pwned'</script>"
    header = dict(rec.header)
    header["seats"] = [{**seat, "bot_name": evil} for seat in header["seats"]]
    header["match_id"] = "<b>x</b>"
    forged = tmp_path / "evil.jsonl.gz"
    write_record(forged, header, rec.entries, rec.result)
    out = tmp_path / "evil.html"
    assert main(["replay", "html", str(forged), "-o", str(out)]) == 0
    page = out.read_text()
    assert evil not in page
    assert page.count("<script") == 3  # the viewer, the data block, the mount: nothing injected
    assert "<b>x</b>" not in page


def test_html_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "plain.jsonl.gz"
    bad.write_text("not gzip")
    assert main(["replay", "html", str(bad), "-o", str(tmp_path / "x.html")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a gzip file" in err
    assert not (tmp_path / "x.html").exists()
