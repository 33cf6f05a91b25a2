"""A bot's notes on its decisions are its author's only (docs/hosting.md): over a real HTTP API
and a real store, the public record and viewer document of a match carry no note; an author
signed in gets their own seats' notes and no one else's; what each gets still verifies."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from arena.host.client import RemoteClient
from arena.layout import record_name
from arena.records.format import may_have_notes, read_record, write_record
from tests.arena.host.serving import Host, hosting
from tests.arena.host.test_seasons import NS
from tests.arena.records.viewer_records import timed_record

MATCH = "u1-r0"


def _noted(tmp_path: Path, target: Path) -> None:
    """A whist record whose every decision has its seat's note, and seat 0's first an SDK
    fallback."""
    record = read_record(timed_record(tmp_path, "whist", 5, faults=False).path)
    first = True
    for e in record.entries:
        if e.get("type") == "decision":
            e["note"] = f"secret of seat {e['seat']}"
            if first and e["seat"] == 0:
                e["sdk_fallback"] = "ValueError: secret"
                first = False
    write_record(target, record.header, record.entries, record.result)


def _versions(h: Host) -> tuple[list[int], dict[str, str]]:
    """A validated version of alice's, bob's and carol's bots; their ids, and the tokens."""
    tokens, versions = {}, []
    for name in ("alice", "bob", "carol"):
        author, tokens[name] = h.store.add_author(name)
        v = h.store.add_version(author.id, f"{name}-bot", "archive", "0" * 64, {"command": "x"})
        h.store.set_status(v.id, "validating")
        h.store.set_status(v.id, "validated")
        versions.append(v.id)
    return versions, tokens


def _finish(h: Host, a: int, b: int, write: Callable[[Path], None]) -> Path:
    """Match ``MATCH`` of ``a`` (N, S) against ``b`` (E, W), finished, its record by ``write``."""
    h.store.create_unit("ladder", 1, (a, b), [(MATCH, 0, (a, b, a, b))], unit_id=1)
    path = h.directory / f"records/{record_name(MATCH)}"
    path.parent.mkdir(parents=True, exist_ok=True)
    write(path)
    h.store.commit_match(MATCH, NS, [], f"records/{record_name(MATCH)}")
    return path


@pytest.fixture
def host(tmp_path: Path) -> Iterator[tuple[Host, dict[str, str]]]:
    with hosting(tmp_path) as h:
        (a, b, _), tokens = _versions(h)
        _finish(h, a, b, lambda path: _noted(tmp_path, path))
        yield h, tokens


def _notes(entries: list[dict[str, Any]]) -> dict[int, set[str]]:
    found: dict[int, set[str]] = {}
    for e in entries:
        for key in ("note", "sdk_fallback"):
            if key in e:
                found.setdefault(e["seat"], set()).add(key)
    return found


def _get(h: Host, tmp_path: Path, token: str | None) -> tuple[dict[int, set[str]], dict[str, Any]]:
    """The notes (by seat) in the record as downloaded, after checking it verifies; the viewer's
    document."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    with httpx.Client(base_url=h.url, headers=headers) as c:
        got = c.get(f"/api/v1/matches/{MATCH}/record")
        assert got.status_code == 200 and got.headers["content-type"] == "application/gzip"
        doc = c.get(f"/api/v1/matches/{MATCH}/viewer")
        assert doc.status_code == 200
    path = tmp_path / f"got-{token}.jsonl.gz"
    path.write_bytes(got.content)
    check = subprocess.run(
        [sys.executable, "-m", "arena.cli", "replay", "verify", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    return _notes(read_record(path).entries), doc.json()


def _doc_notes(doc: dict[str, Any]) -> set[int]:
    seats = {s["seat"] for s in doc["steps"] if s.get("note") or s.get("sdk_fallback")}
    marks = {m["seat"] for m in doc["meta"]["marks"] if m["kind"] == "sdk_fallback"}
    return seats | marks


def test_notes_are_their_authors_only(host: tuple[Host, dict[str, str]], tmp_path: Path) -> None:
    h, tokens = host
    everyone = {0: {"note", "sdk_fallback"}, 1: {"note"}, 2: {"note"}, 3: {"note"}}
    assert _notes(read_record(h.directory / f"records/{record_name(MATCH)}").entries) == everyone
    for who, seats in ((None, set()), ("carol", set()), ("alice", {0, 2}), ("bob", {1, 3})):
        notes, doc = _get(h, tmp_path, tokens[who] if who else None)
        assert notes == {s: everyone[s] for s in seats}, who
        assert _doc_notes(doc) == seats, who
        assert ("secret" in str(doc)) == bool(seats), who
    # arena remote record sends the token it has: an author's own notes come with it.
    for who, seats in ((None, set()), ("bob", {1, 3})):
        data = RemoteClient(h.url, tokens[who] if who else None).record(MATCH)
        (tmp_path / "remote.jsonl.gz").write_bytes(data)
        assert set(_notes(read_record(tmp_path / "remote.jsonl.gz").entries)) == seats


def test_a_record_without_notes_downloads_as_written(tmp_path: Path) -> None:
    with hosting(tmp_path) as h:
        (a, b, _), _ = _versions(h)
        plain = timed_record(tmp_path, "whist", 5, faults=False).path.read_bytes()
        path = _finish(h, a, b, lambda p: p.write_bytes(plain))
        with httpx.Client(base_url=h.url) as c:
            assert c.get(f"/api/v1/matches/{MATCH}/record").content == path.read_bytes()


def test_a_record_that_may_hold_notes_is_told_apart_cheaply(tmp_path: Path) -> None:
    plain = timed_record(tmp_path, "whist", 5, faults=False).path
    noted = tmp_path / "noted.jsonl.gz"
    _noted(tmp_path, noted)
    assert not may_have_notes(plain) and may_have_notes(noted)
    cut = tmp_path / "cut.jsonl.gz"  # truncated: what a reader could decompress still counts
    cut.write_bytes(noted.read_bytes()[: noted.stat().st_size // 2])
    assert may_have_notes(cut)
    two = tmp_path / "two.jsonl.gz"  # two gzip members, the note in the second
    two.write_bytes(plain.read_bytes() + noted.read_bytes())
    assert may_have_notes(two)
    junk = tmp_path / "junk.jsonl.gz"
    junk.write_bytes(b"not gzip at all")
    assert not may_have_notes(junk)
