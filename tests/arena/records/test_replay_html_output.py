"""``arena replay html -o OUT REC`` never destroys a file it did not write: not the record itself
(by any name), not a user's file; it replaces only a page it wrote (or an empty file), and
through a rename, so a failed write leaves the old page whole."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena.errors import ArenaError
from arena.records.html import SIGNATURE, write_html
from tests.arena.replay_truth import make_record

ARENA = str(Path(sys.executable).parent / "arena")


def html(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ARENA, "replay", "html", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
    )


def assert_refused(done: subprocess.CompletedProcess[str], says: str) -> None:
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena: error: "), done.stderr
    assert says in lines[0], lines[0]


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_record(tmp_path_factory.mktemp("rec"), "tennis", 7)


@pytest.mark.slow
def test_the_record_is_never_its_own_output(record: Path, tmp_path: Path) -> None:
    rec = tmp_path / "rec.jsonl.gz"
    rec.write_bytes(record.read_bytes())
    os.link(rec, tmp_path / "hardlink.gz")
    (tmp_path / "symlink.html").symlink_to(rec)
    original = rec.read_bytes()
    # The audit's command, then the same file under other names.
    assert_refused(html("-o", "rec.jsonl.gz", "rec.jsonl.gz", cwd=tmp_path), "is the record")
    assert_refused(html("-o", "./hardlink.gz", str(rec), cwd=tmp_path), "is the record")
    assert_refused(html("-o", "symlink.html", "rec.jsonl.gz", cwd=tmp_path), "is the record")
    assert rec.read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "hardlink.gz",
        "rec.jsonl.gz",
        "symlink.html",
    ]


@pytest.mark.slow
def test_a_file_it_did_not_write_is_not_overwritten(record: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes.html"  # even an .html name: the content decides
    notes.write_text("<!doctype html><p>my own page</p>")
    other = tmp_path / "other.jsonl.gz"
    other.write_bytes(record.read_bytes())
    for target in (notes, other):
        before = target.read_bytes()
        assert_refused(
            html("-o", str(target), str(record), cwd=tmp_path),
            "is not a page written by `arena replay html`",
        )
        assert target.read_bytes() == before
    assert_refused(html("-o", str(tmp_path), str(record), cwd=tmp_path), "is a directory")


@pytest.mark.slow
def test_its_own_page_and_an_empty_file_are_replaced(record: Path, tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    done = html("-o", str(page), str(record), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    first = page.read_text()
    assert SIGNATURE in first[:512]
    page.write_text(first.replace("</body>", "<!-- edited --></body>"))
    again = html("-o", str(page), str(record), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert page.read_text() == first
    empty = tmp_path / "empty.html"  # as `mktemp` makes it
    empty.touch()
    assert html("-o", str(empty), str(record), cwd=tmp_path).returncode == 0
    assert empty.read_text() == first
    assert oct(page.stat().st_mode & 0o777) == oct(0o644)
    # No temporary file is left next to the pages.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.html", "page.html"]


def test_a_failed_write_leaves_the_old_page(
    record: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = tmp_path / "page.html"
    write_html(record, page)
    old = page.read_bytes()

    def full_disk(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    # The last step, the rename, fails: the old page must survive and no temporary file stay.
    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(ArenaError, match="No space left on device"):
        write_html(record, page)
    assert page.read_bytes() == old
    assert [p.name for p in tmp_path.iterdir()] == ["page.html"]
