"""A bot's telemetry (docs/sdk.md, "Telemetry"): a note's ``t.KEY=NUMBER`` words, summed per seat
over a record's decisions by :mod:`arena.records.telemetry`."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from arena.records.format import may_contain
from arena.records.telemetry import (
    FIGURE_BYTES,
    FIGURE_SPAN,
    Telemetry,
    note_figures,
    seat_telemetry,
    telemetry_lines,
)


def decision(seat: int, note: str | None = None, **more: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "decision", "seat": seat, "action": "play:QS", **more}
    if note is not None:
        entry["note"] = note
    return entry


def test_a_note_s_figures() -> None:
    note = "llm h 90ms tries=2 tok=3+4 | match d=1 | t.tok_in=300 t.tok_out=4 t.ms=90.5 t.x=-1"
    assert note_figures(note) == {"tok_in": 300, "tok_out": 4, "ms": 90.5, "x": -1}
    # Free text is never a figure: other words, a bad key, a bad number, a prefix inside a word.
    for text in ("tries=2 tok=3+4", "t.=1", "t.A=1", "t.k=1e9", "t.k=NaN", "at.k=1", "t.k=1,2"):
        assert note_figures(text) == {}, text
    assert note_figures("t.k=1 t.k=2") == {"k": 3}


def test_sums_per_seat_over_the_record() -> None:
    entries = [
        {"type": "event", "kind": "deal", "note": "t.k=100"},  # not a decision
        decision(0, "t.tok_in=10 t.ms=5"),
        decision(1, "value 0.5"),  # a note without figures
        decision(0, "t.tok_in=20 t.fallbacks=1"),
        decision(2),
        {"type": "fault", "seat": 0, "kind": "timeout"},
        decision(0, "thinking t.tok_in=5 t.ms=7"),
    ]
    seats = seat_telemetry(entries)
    assert list(seats) == [0]
    zero = seats[0]
    assert zero.decisions == 3
    assert zero.sums == {"tok_in": 35, "ms": 12, "fallbacks": 1}
    assert list(zero.sums) == ["tok_in", "ms", "fallbacks"]  # first seen first
    assert zero.to_dict() == {"decisions": 3, "tok_in": 35, "ms": 12, "fallbacks": 1}
    assert zero.line() == "decisions 3, tok_in 35, ms 12, fallbacks 1"
    assert telemetry_lines(entries, ["N", "E", "S"]) == [
        "telemetry (the bots' notes summed over the match; docs/sdk.md):",
        "  N (seat 0): decisions 3, tok_in 35, ms 12, fallbacks 1",
    ]


def test_no_figures_nothing_to_show() -> None:
    entries = [decision(0, "value 0.5"), decision(1), decision(0, "")]
    assert seat_telemetry(entries) == {}
    assert telemetry_lines(entries, ["P1", "P2"]) == []


def test_averages_and_large_numbers() -> None:
    t = Telemetry()
    t.add({"tok_in": 12000, "ms": 3})
    t.add({"tok_in": 13001, "ms": 0.5})
    assert t.line() == "decisions 2, tok_in 25,001, ms 3.5"
    assert t.line(per=2) == "decisions 1, tok_in 12,500.5, ms 1.8"
    assert t.to_dict() == {"decisions": 2, "tok_in": 25001, "ms": 3.5}


WORDS = st.sampled_from(["t.ms=5", "t.tok_in=-12.5", "t.k=1e9", "t.A=1", "at.k=1", "t.=1", "ms=5"])
SPACES = st.sampled_from([" ", "\n", "\t", "\u2003", "\r\n"])


@given(st.lists(st.tuples(WORDS | st.text(max_size=8), SPACES), max_size=8))
def test_a_record_whose_bytes_lack_the_mark_has_no_figures(parts: list[tuple[str, str]]) -> None:
    # FIGURE_BYTES lets a report skip a record unread: never when a note holds a figure.
    note = "".join(word + space for word, space in parts)
    encoded = json.dumps({"type": "decision", "seat": 0, "note": note}).encode()
    mark = FIGURE_BYTES.search(encoded)
    if note_figures(note):
        assert mark is not None and len(mark[0]) <= FIGURE_SPAN


def test_a_record_s_bytes_are_searched_for_figures_as_far_as_they_go(tmp_path: Path) -> None:
    rng = random.Random(5)
    # Barely compressible text, so that a figure after it lies past the first read's output.
    filler = (
        json.dumps(
            {
                "type": "decision",
                "seat": 0,
                "note": "".join(rng.choice("abcdefghij klmnop") for _ in range(300_000)),
            }
        ).encode()
        + b"\n"
    )

    def noted(note: str) -> bytes:
        return json.dumps({"type": "decision", "seat": 1, "note": note}).encode() + b"\n"

    def found(name: str, data: bytes) -> bool:
        (tmp_path / name).write_bytes(data)
        return may_contain(tmp_path / name, FIGURE_BYTES, FIGURE_SPAN)

    assert found("after.gz", gzip.compress(filler + noted("done t.tok_in=1200")))
    assert not found("words.gz", gzip.compress(filler + noted("tried t.k twice, t.=1 t.K=2")))
    # A second gzip member, and a file cut short: what a reader could decompress counts.
    assert found("two.gz", gzip.compress(filler) + gzip.compress(noted("t.ms=3")))
    assert found("cut.gz", gzip.compress(noted("t.x=1") + filler)[:-1000])
    assert not found("junk.gz", b"t.ms=3 is not gzip")
