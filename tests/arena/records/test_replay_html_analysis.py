"""``arena replay html --analysis`` and ``--analysis-file``: the page's document carries the
analysis ``replay analyze --json`` gives (one definition); a file of another record's analysis is
refused in one line; without either option the document has no analysis."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from arena.cli.main import main
from tests.arena.records.test_analysis_page import PAGE, run_bash
from tests.arena.records.viewer_records import timed_record
from tests.engine.planted import blunder_record

OPTIONS = ["--seat", "N", "--worlds", "4", "--limit", "3"]


def document(page: Path) -> dict[str, Any]:
    found = re.search(r'id="replay-data">(.*?)</script>', page.read_text(), re.S)
    assert found is not None
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def html(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["replay", "html", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_page_embeds_the_analysis_analyze_gives(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = tmp_path / "planted.jsonl.gz"
    blunder_record(record)
    assert main(["replay", "analyze", str(record), *OPTIONS, "--json"]) == 0
    expected = json.loads(capsys.readouterr().out)
    page = tmp_path / "a.html"
    code, out, err = html(capsys, str(record), "-o", str(page), "--analysis", *OPTIONS)
    assert (code, err) == (0, "") and out.endswith("with the analysis\n")
    analysis = document(page)["analysis"]
    assert analysis == expected
    assert len(analysis["decisions"]) == 3
    assert all(len(d["actions"]) >= 2 for d in analysis["decisions"])

    saved = tmp_path / "a.json"
    saved.write_text(json.dumps(expected))
    code, _, err = html(capsys, str(record), "-o", str(page), "--analysis-file", str(saved))
    assert (code, err) == (0, "")
    assert document(page)["analysis"] == expected

    code, _, _ = html(capsys, str(record), "-o", str(page))
    assert code == 0 and "analysis" not in document(page)


def test_another_records_analysis_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = tmp_path / "planted.jsonl.gz"
    blunder_record(record)
    other = timed_record(tmp_path, "whist", 4, faults=False).path
    assert main(["replay", "analyze", str(other), *OPTIONS, "--json"]) == 0
    theirs = json.loads(capsys.readouterr().out)
    page = tmp_path / "a.html"
    cases: list[tuple[Any, str]] = [
        (theirs, "an analysis of match"),
        ({**theirs, "match_id": "planted-blunder"}, "decision"),
        ("not json {", "not JSON"),
        ([1, 2], "not an analysis"),
    ]
    for n, (content, words) in enumerate(cases):
        bad = tmp_path / f"bad{n}.json"
        bad.write_text(content if isinstance(content, str) else json.dumps(content))
        code, out, err = html(capsys, str(record), "-o", str(page), "--analysis-file", str(bad))
        assert code == 2 and out == "", content
        assert len(err.strip().splitlines()) == 1 and words in err, err
        assert "Traceback" not in err
    assert not page.exists()
    code, _, err = html(capsys, str(record), "-o", str(page), "--seat", "N")
    assert code == 2 and "--analysis" in err


@pytest.mark.slow
def test_docs_analysis_md_viewer_commands_run_as_written(tmp_path: Path) -> None:
    """docs/analysis.md's match, then its *In the viewer* commands, in bash as written."""
    blocks = re.findall(r"```sh\n(.*?)```", PAGE.read_text(), re.S)
    (viewer,) = [b for b in blocks if b.startswith("arena replay html")]
    run_bash(blocks[0] + viewer, tmp_path)
    analysis = document(tmp_path / "analysed.html")["analysis"]
    assert analysis == json.loads((tmp_path / "e.json").read_text())
    assert {s["seat_name"] for s in analysis["seats"]} == {"E"}
