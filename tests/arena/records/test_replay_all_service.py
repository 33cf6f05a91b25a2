"""The whole-match replay's service driven as gRPC drives it, without a bot process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cardarena import codec as bot_codec
from cardarena import messages as bot_messages

from arena.protocol import codec
from arena.records.ask import _WholeMatch, match_script
from arena.records.format import read_record
from tests.arena.records.test_replay_all import count_bot_record


def _read(sent: Any) -> bot_messages.ServerMessage | None:
    raw = codec.bytes_to_proto(sent) if isinstance(sent, bytes) else sent
    return bot_codec.proto_to_plain(raw)


def test_the_replay_is_done_once_match_end_is_sent(tmp_path: Path) -> None:
    # A bot may leave the moment it has MatchEnd, and gRPC then never resumes the service's
    # generator: the replay must count as done without that resumption (it once reported
    # "exited with status 0 before answering" on a loaded machine).
    record = read_record(count_bot_record(tmp_path / "whist.jsonl.gz", "whist", None, seed=4))
    match = match_script(record, seat=1)
    service = _WholeMatch(record.header, match, 1, "token")
    inbox = [bot_codec.hello_to_proto(bot_messages.Hello("t", "1", "token")).SerializeToString()]

    def requests() -> Iterator[bytes]:
        while True:
            yield inbox.pop(0)

    answered = 0
    stream = service.Play(requests(), context=None)
    for sent in stream:
        message = _read(sent)
        if isinstance(message, bot_messages.Decision):
            inbox.append(bot_codec.answer_to_proto(message.request_id, index=0).SerializeToString())
            answered += 1
        elif isinstance(message, bot_messages.MatchEnd):
            break  # the stream is gone: the generator is not resumed
    else:
        raise AssertionError("the service sent no MatchEnd")
    got = []
    while not service.results.empty():
        got.append(service.results.get_nowait())
    assert [g[0] for g in got] == ["answer"] * answered + ["done"]
    assert answered == len(match.seats[0].asked) > 0
