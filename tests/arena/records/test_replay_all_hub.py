"""The whole-match replay's seat played through the server's hub, as a bot stream drives it,
without gRPC or a bot process."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from cardarena import codec as bot_codec
from cardarena import messages as bot_messages

from arena.protocol import codec
from arena.records.ask import match_script
from arena.records.ask.script import MatchScript
from arena.records.format import read_record
from arena.server.connections import Connection
from arena.server.hub import Hub
from arena.server.outbox import Outgoing
from tests.arena.records.test_replay_all import count_bot_record


def _read(sent: Outgoing) -> bot_messages.ServerMessage | None:
    raw = codec.bytes_to_proto(sent) if isinstance(sent, bytes) else sent
    return bot_codec.proto_to_plain(raw)


def _play(
    match: MatchScript, header: dict[str, Any], answer_with: int | None
) -> tuple[list[object], list[tuple[object, ...]]]:
    """Take a bot stream through seat 1's script on a hub; what the bot was sent and what the
    seat reported. ``answer_with``: the index it answers, ``None``: garbage at its first."""

    async def main() -> tuple[list[object], list[tuple[object, ...]]]:
        hub = Hub(asyncio.get_running_loop())
        seat = hub.add_script(match.script(header, 1, "token"))
        conn = Connection("s1", "test")
        hub.on_open(conn)
        hub.on_message(conn, bot_messages.Hello("t", "1", "token"))
        received: list[object] = []
        while conn.outbox.items:
            sent = conn.outbox.items.popleft()
            if sent is None:  # the stream ends with the script
                break
            message = _read(sent)
            received.append(message)
            if isinstance(message, bot_messages.Decision):
                if answer_with is None:
                    hub.on_message(conn, bot_messages.Garbage("empty message"))
                else:
                    hub.on_message(conn, bot_messages.Answer(message.request_id, answer_with))
        got = []
        while not seat.results.empty():
            got.append(seat.results.get_nowait())
        return received, got

    return asyncio.run(main())


def test_the_replay_is_done_before_match_end_goes_out_and_the_stream_ends(
    tmp_path: Path,
) -> None:
    # A bot may leave the moment it has MatchEnd: the replay must count as done by then (it
    # once reported "exited with status 0 before answering" on a loaded machine), and the stream
    # ends after it, so the bot exits on its own.
    record = read_record(count_bot_record(tmp_path / "whist.jsonl.gz", "whist", None, seed=4))
    match = match_script(record, seat=1)
    received, got = _play(match, record.header, 0)
    kinds = [type(m).__name__ for m in received]
    assert kinds[:2] == ["Welcome", "MatchStart"] and kinds[-1] == "MatchEnd"
    answered = kinds.count("Decision")
    assert [g[0] for g in got] == ["answer"] * answered + ["done"]
    assert answered == len(match.seats[0].asked) > 0
    assert [g[1] for g in got[:-1]] == list(range(answered))
    assert all(g[4] == "t 1" for g in got[:-1])


def test_garbage_ends_the_replay_naming_the_decision(tmp_path: Path) -> None:
    record = read_record(count_bot_record(tmp_path / "whist.jsonl.gz", "whist", None, seed=4))
    match = match_script(record, seat=1)
    received, got = _play(match, record.header, None)
    assert [type(m).__name__ for m in received].count("Decision") == 1
    assert got == [("garbage", 0, "empty message")]
