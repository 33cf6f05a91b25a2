"""The HTML replay shows a 63-bit seed exactly: JavaScript numbers hold integers exactly only up
to 2**53, so the page data carries big integers as strings (the browser's side of it is in
tests/web/test_viewer_browser.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from arena.cli.main import main
from tests.arena.replay_truth import make_record

#: Above 2**53 and odd, so a double cannot hold it (it would show ...904 or ...906).
SEED = 2**62 + 2**53 + 905


def write_page(tmp_path: Path) -> Path:
    record = make_record(tmp_path, "whist", SEED)
    out = tmp_path / "whist.html"
    assert main(["replay", "html", str(record), "-o", str(out)]) == 0
    return out


def page_data(page: Path) -> Any:
    match = re.search(r'id="replay-data">(.*?)</script>', page.read_text(), re.S)
    assert match is not None
    return json.loads(match.group(1))


def integers(data: Any) -> list[int]:
    if isinstance(data, dict):
        return [i for v in data.values() for i in integers(v)]
    if isinstance(data, list):
        return [i for v in data for i in integers(v)]
    return [data] if isinstance(data, int) and not isinstance(data, bool) else []


def test_the_page_data_carries_the_exact_seed(tmp_path: Path) -> None:
    assert float(SEED) != SEED  # the point of the test: a double would round it
    data = page_data(write_page(tmp_path))
    assert data["meta"]["seed"] == str(SEED)
    # Nothing else in the data is a number JavaScript would round either.
    numbers = integers(data)
    assert numbers and all(abs(i) <= 2**53 - 1 for i in numbers)
