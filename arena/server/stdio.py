"""A bot that speaks over its stdin and stdout (``protocol = "stdio"``), bridged to a
:class:`~arena.server.connections.Connection` on the server's loop.

Each line the bot writes is one BotMessage in protobuf's canonical JSON mapping; each message the
hub queues for it is written as one line of a ServerMessage in the same mapping. Everything past
the bytes is the hub's as for a gRPC stream: the bot says Hello with its ``ARENA_TOKEN`` first,
the hub seats it, the referee times and faults it. No extra process sits in between: the bot's
pipes are read and written on the loop the referee runs on (docs/protocol.md, "stdio").
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import re

import structlog
from cardarena import rpc
from cardarena.messages import Answer, BotMessage, Garbage
from google.protobuf import json_format

from arena.protocol import codec
from arena.protocol.jsonmap import message_to_dict
from arena.server.connections import Connection
from arena.server.hub import Hub
from arena.server.outbox import Outgoing

log = structlog.get_logger("arena.server.stdio")

#: Longest line a bot may write, in bytes (the newline excluded): 4× the largest message a gRPC
#: bot may send (64 KiB, cardarena/rpc.py), as JSON spells bytes and numbers longer. A longer
#: line is a ``garbage`` fault and is skipped to its end.
MAX_LINE = 256 * 1024

_sessions = itertools.count(1)
#: ``json.dumps(body, separators=(",", ":"))``, its encoder made once.
_compact = json.JSONEncoder(separators=(",", ":")).encode


def encode_line(msg: Outgoing) -> bytes:
    """One ServerMessage as the line a stdio bot reads."""
    if isinstance(msg, bytes):
        msg = rpc.ServerMessage.FromString(msg)
    body = message_to_dict(msg)  # json_format.MessageToDict's dict, planned per message type
    return _compact(body).encode() + b"\n"


#: The line nearly every answer is, as the reference bots and the docs write it: read without
#: json_format (the same Answer: tests/arena/stdio/test_stdio_fast_lines.py). No leading zeros, no
#: sign, no spaces; any other spelling takes json_format's path.
_PLAIN_ANSWER = re.compile(
    rb'\{"action":\{"requestId":"(0|[1-9][0-9]{0,19})","index":(0|[1-9][0-9]{0,9})\}\}'
)


def decode_line(line: bytes) -> BotMessage:
    """One line a stdio bot wrote, as the hub reads messages (:class:`Garbage` when it is no
    BotMessage in the JSON mapping)."""
    plain = _PLAIN_ANSWER.fullmatch(line)
    if plain is not None:
        request_id, index = int(plain[1]), int(plain[2])
        if request_id < 1 << 64 and index < 1 << 31:  # uint64 and int32, as Parse checks them
            return Answer(request_id, index, None, "", "")
    try:
        msg = json_format.Parse(line, rpc.BotMessage())
    except Exception as err:  # ParseError, UnicodeDecodeError, RecursionError, whatever a bot finds
        why = str(err).splitlines()[0][:200] if str(err) else type(err).__name__
        return Garbage(f"malformed line: not a BotMessage in protobuf's JSON mapping ({why})")
    return codec.bot_proto_to_plain(msg)


class StdioLink(asyncio.Protocol):
    """One stdio bot: reads its stdout (a pipe) into the hub, writes its outbox to its stdin."""

    def __init__(self, hub: Hub, label: str) -> None:
        self._hub = hub
        self.conn = Connection(f"s{next(_sessions)}", f"stdio:{label}")
        self._buffer = bytearray()
        #: Skipping the rest of an oversize line.
        self._skipping = False
        self._writer: asyncio.WriteTransport | None = None
        self._reader: asyncio.ReadTransport | None = None
        #: Lines the bot wrote after its stream ended (only logged: no match is left to charge).
        self.late_lines = 0

    async def open(self, read_fd: int, write_fd: int) -> None:
        """Connect the pipes (this object owns both descriptors from here on)."""
        loop = asyncio.get_running_loop()
        os.set_blocking(read_fd, False)
        os.set_blocking(write_fd, False)
        try:
            self._writer, _ = await loop.connect_write_pipe(
                asyncio.Protocol, os.fdopen(write_fd, "wb", buffering=0)
            )
        except BaseException:
            os.close(read_fd)
            raise
        self._hub.dispatch(self._hub.on_open, self.conn)
        self.conn.outbox.listener = self._drain
        self._reader, _ = await loop.connect_read_pipe(
            lambda: self, os.fdopen(read_fd, "rb", buffering=0)
        )
        self._drain()

    # --- server to bot ---------------------------------------------------------------------------

    def _drain(self) -> None:
        items, writer = self.conn.outbox.items, self._writer
        while items:
            msg = items.popleft()
            if writer is None or writer.is_closing():
                continue
            if msg is None:
                # The stream is over: the bot reads end of file on its stdin.
                writer.close()
                self._hub.dispatch(self._hub.on_close, self.conn)
                continue
            try:
                writer.write(encode_line(msg))
            except Exception as err:  # a pipe the bot closed
                log.debug("stdio bot gone", session=self.conn.session_id, error=repr(err))
                writer.close()

    # --- bot to server ---------------------------------------------------------------------------

    def data_received(self, data: bytes) -> None:
        """Split the bot's output into lines, each one message."""
        buffer = self._buffer
        start = 0
        while (end := data.find(b"\n", start)) >= 0:
            if self._skipping:
                self._skipping = False
            elif len(buffer) + end - start > MAX_LINE:
                self._oversize()
            else:
                buffer += data[start:end]
                self._line(bytes(buffer))
            buffer.clear()
            start = end + 1
        if not self._skipping:
            buffer += data[start:]
            if len(buffer) > MAX_LINE:
                buffer.clear()
                self._skipping = True
                self._oversize()

    def _oversize(self) -> None:
        why = f"a line over {MAX_LINE} bytes (the stdio cap); skipped"
        self._deliver(Garbage(why))

    def _line(self, line: bytes) -> None:
        if not line.strip():
            return
        if self._late(line):
            return
        self._hub.dispatch(self._hub.on_message, self.conn, decode_line(line))

    def _deliver(self, msg: BotMessage) -> None:
        if not self._late(b""):
            self._hub.dispatch(self._hub.on_message, self.conn, msg)

    def _late(self, line: bytes) -> bool:
        """Whether the stream is over: output after it has no match left to be charged to (its
        records are written), so it is only logged, once per bot, and dropped."""
        if not self.conn.closed:
            return False
        self.late_lines += 1
        if self.late_lines == 1:
            log.warning(
                "stdio bot wrote after its stream ended",
                session=self.conn.session_id,
                peer=self.conn.peer,
                line=line[:80].decode(errors="replace"),
            )
        return True

    def eof_received(self) -> bool | None:
        """The bot closed its stdout: its stream is over, as a gRPC bot's that hung up."""
        if self._buffer and not self._skipping:
            self._line(bytes(self._buffer))
        self._buffer.clear()
        self._hub.dispatch(self._hub.on_close, self.conn)
        if self._writer is not None:
            self._writer.close()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        """The pipe is gone (read to its end, or closed)."""
        self._hub.dispatch(self._hub.on_close, self.conn)
