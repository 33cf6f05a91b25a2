"""Notes on decisions (docs/protocol.md, "Notes"): an answer's ``note`` and ``sdk_fallback``
are read on both of the server's paths, cleaned, cut at 500 bytes, and never a fault."""

from __future__ import annotations

import pytest
from cardarena import codec as sdk_codec
from cardarena._pb import arena_pb2 as pb
from cardarena.bot import Turn
from cardarena.messages import NOTE_BYTES, Answer, clean_note

import arena.protocol.wireformat as wireformat
from arena.protocol.codec import bot_bytes_to_plain
from arena.records.format import decision_entry


def test_an_answer_with_a_note_is_read_whole() -> None:
    data = sdk_codec.answer_to_proto(
        7, index=2, note="ruff the lead", sdk_fallback=""
    ).SerializeToString()
    assert bot_bytes_to_plain(data) == Answer(7, 2, None, "ruff the lead", "")
    by_text = sdk_codec.answer_to_proto(8, text="pass", sdk_fallback="ValueError: x")
    assert bot_bytes_to_plain(by_text.SerializeToString()) == Answer(
        8, None, "pass", "", "ValueError: x"
    )


def test_the_c_reader_leaves_an_answer_with_a_note_to_protobuf() -> None:
    # The fast path reads only "index and nothing else"; a note must not be dropped by it.
    if wireformat.BUILT is None:
        pytest.skip("the C module is not built")
    plain = sdk_codec.answer_to_proto(7, index=2).SerializeToString()
    noted = sdk_codec.answer_to_proto(7, index=2, note="x").SerializeToString()
    assert wireformat.BUILT.answer(plain) == (7, 2)
    assert wireformat.BUILT.answer(noted) is None


def test_the_server_cleans_and_cuts_what_a_bot_sent_raw() -> None:
    # A bot need not use the SDK: the server does not trust the note it gets.
    raw = pb.BotMessage(
        action=pb.Action(request_id=1, index=0, note="a\x1b[2Jb\nc\u202e" + "é" * 400)
    )
    answer = bot_bytes_to_plain(raw.SerializeToString())
    assert isinstance(answer, Answer) and answer.index == 0
    assert answer.note.startswith("a\ufffd[2Jb c\ufffd")
    assert answer.note.endswith("…") and len(answer.note.encode()) <= NOTE_BYTES


def test_invalid_utf8_in_a_note_is_an_undecodable_message() -> None:
    # A proto3 string must be UTF-8: such bytes are no BotMessage (a garbage fault, as any).
    good = pb.BotMessage(action=pb.Action(request_id=1, index=0, note="ab")).SerializeToString()
    bad = good.replace(b"ab", b"\xff\xfe")
    assert type(bot_bytes_to_plain(bad)).__name__ == "Garbage"


@pytest.mark.parametrize(
    ("text", "cleaned"),
    [
        ("plain", "plain"),
        ("tab\tand\r\nbreaks", "tab and  breaks"),
        ("bell\x07 del\x7f c1\x9b", "bell\ufffd del\ufffd c1\ufffd"),
        ("lone \ud800", "lone ?"),
        ("x" * NOTE_BYTES, "x" * NOTE_BYTES),
        ("x" * (NOTE_BYTES + 1), "x" * (NOTE_BYTES - 3) + "…"),
        ("€" * 200, "€" * 165 + "…"),  # cut at a character boundary: 165 * 3 + 3 <= 500
    ],
)
def test_clean_note(text: str, cleaned: str) -> None:
    assert clean_note(text) == cleaned
    assert clean_note(cleaned) == cleaned  # cleaning twice changes nothing: verify relies on it


def test_turn_notes_join() -> None:
    turn = Turn("m", 0, 4, {}, 1000, 0, 0.0)
    assert turn.note_text() == ""
    turn.note("first")
    turn.note("second")
    assert turn.note_text() == "first; second"


def test_a_decision_without_a_note_is_written_as_before() -> None:
    assert set(decision_entry(0, 3, "pass", 1.0, False)) == {
        "type", "seat", "legal", "action", "ms", "fallback",
    }  # fmt: skip
    entry = decision_entry(0, 3, "pass", 1.0, False, "why", "ValueError: x")
    assert (entry["note"], entry["sdk_fallback"]) == ("why", "ValueError: x")
