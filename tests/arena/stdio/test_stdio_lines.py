"""The stdio bridge's lines, without processes: how bytes from a bot's stdout become messages for
the hub (split across reads, malformed, over the cap, after the end)."""

from __future__ import annotations

from typing import Any, cast

import pytest
from cardarena import rpc
from cardarena.messages import Answer, BotMessage, Garbage, Hello

from arena.server.connections import Connection
from arena.server.hub import Hub
from arena.server.stdio import MAX_LINE, StdioLink, decode_line, encode_line


class FakeHub:
    """Records what a link hands the hub."""

    def __init__(self) -> None:
        self.messages: list[BotMessage] = []
        self.closed = 0

    def dispatch(self, fn: Any, *args: Any) -> None:
        fn(*args)

    def on_message(self, conn: Connection, msg: BotMessage) -> None:
        self.messages.append(msg)

    def on_close(self, conn: Connection) -> None:
        self.closed += 1
        conn.close()


def link() -> tuple[StdioLink, FakeHub]:
    hub = FakeHub()
    return StdioLink(cast(Hub, hub), "test"), hub


def test_lines_split_across_reads_are_whole_messages() -> None:
    lk, hub = link()
    lk.data_received(b'{"action":{"requestId":"7",')
    lk.data_received(b'"index":2}}\n\n{"hello":{"token":"t"}}\n{"ping"')
    assert hub.messages[0] == Answer(7, index=2)
    assert isinstance(hub.messages[1], Hello) and hub.messages[1].token == "t"
    assert len(hub.messages) == 2
    lk.data_received(b':{"nonce":"3"}}')
    lk.eof_received()  # a last line without its newline still counts
    assert len(hub.messages) == 3 and hub.closed >= 1


@pytest.mark.parametrize(
    "line", [b"not json", b"\xff", b"[" * 100_000, b'{"action":{"index":1.5}}', b"null", b"{}"]
)
def test_a_malformed_line_is_garbage(line: bytes) -> None:
    assert isinstance(decode_line(line), Garbage)


def test_a_line_over_the_cap_is_one_garbage_and_is_skipped_to_its_end() -> None:
    lk, hub = link()
    lk.data_received(b"x" * (MAX_LINE // 2))
    lk.data_received(b"x" * MAX_LINE)  # over the cap before its newline has come
    lk.data_received(b"x" * 10 + b'\n{"action":{"requestId":"1"}}\n')
    assert len(hub.messages) == 2
    assert isinstance(hub.messages[0], Garbage) and f"over {MAX_LINE} bytes" in hub.messages[0].why
    assert hub.messages[1] == Answer(1)
    # A line just at the cap, in one read, is read.
    lk.data_received(b'{"hello":{"botName":"' + b"a" * (MAX_LINE - 40) + b'"}}\n')
    assert isinstance(hub.messages[2], Hello)


def test_output_after_the_stream_ended_reaches_no_one() -> None:
    lk, hub = link()
    lk.conn.close()
    lk.data_received(b'{"action":{"requestId":"1"}}\nnot json\n')
    assert hub.messages == [] and lk.late_lines == 2


def test_what_the_arena_writes_is_one_compact_line() -> None:
    line = decode_line(b'{"hello":{"token":"t"}}')
    assert isinstance(line, Hello)
    msg = rpc.ServerMessage()
    msg.pong.nonce = 5
    assert encode_line(msg) == b'{"pong":{"nonce":"5"}}\n'
    assert encode_line(msg.SerializeToString()) == b'{"pong":{"nonce":"5"}}\n'
