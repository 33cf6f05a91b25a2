"""The referee as a state machine run by its bots' answers, and the stream writer that sends what
it produces (arena/server/referee.py, arena/server/service.py)."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Coroutine
from typing import Any

import pytest
import trio
from cardarena._pb import arena_pb2 as pb

from arena.server import open_arena_server
from arena.server.connections import Connection
from arena.server.service import _StreamWriter
from engine.games.whist import WhistState
from tests.arena.wire import SHORT_WHIST, Recorder, make_spec, play_with, raw


def test_an_engine_error_while_refereeing_an_answer_ends_that_match_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The referee runs inside the stream handler that read the answer: an exception there must
    # end the match as an error, tell every bot, and leave the server serving.
    applied = 0
    real_apply = WhistState.apply

    def failing_apply(self: WhistState, action: Any) -> None:
        nonlocal applied
        applied += 1
        if applied == 10:
            raise RuntimeError("engine bug")
        real_apply(self, action)

    async def main() -> None:
        async with open_arena_server() as server:
            monkeypatch.setattr(WhistState, "apply", failing_apply)
            rec = Recorder()
            broken = make_spec("whist", 4, options=SHORT_WHIST, match_id="broken")
            with trio.fail_after(30):  # a referee that swallowed the error would hang here
                first = await play_with(server, broken, [raw(rec=rec) for _ in range(4)])
            result = first.outcome.result
            assert result.reason == "error"
            assert result.summary == "referee error: RuntimeError: engine bug"
            assert len([e for e in first.outcome.entries if e["type"] == "decision"]) == 10
            for bot in rec.bots:
                ends = bot.of_kind("match_end")
                assert [e.match_id for e in ends] == ["broken"]
                assert ends[0].reason == "error"
            monkeypatch.setattr(WhistState, "apply", real_apply)
            fine = make_spec("whist", 4, options=SHORT_WHIST, match_id="fine")
            second = await play_with(server, fine, [raw() for _ in range(4)])
            assert second.outcome.result.reason == "normal"

    trio.run(main)


# --- the stream writer, with a scripted stream -----------------------------------------------


class ScriptedStream:
    """A ``ServicerContext`` stand-in whose writes complete only when the test says so."""

    def __init__(self) -> None:
        #: Messages whose write has started, in order.
        self.started: list[object] = []
        #: The futures the writes wait for, in order.
        self.pending: list[asyncio.Future[None]] = []
        #: Writes in flight right now, and the most at once.
        self.in_flight = 0
        self.most_in_flight = 0
        #: Coroutines closed before they completed.
        self.abandoned = 0

    def write(self, msg: object) -> Coroutine[Any, Any, None]:
        return self._write(msg)

    async def _write(self, msg: object) -> None:
        self.started.append(msg)
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        done = asyncio.get_running_loop().create_future()
        self.pending.append(done)
        try:
            await done
        except GeneratorExit:
            self.abandoned += 1
            raise
        finally:
            self.in_flight -= 1

    def complete(self, i: int, error: Exception | None = None) -> None:
        if error is None:
            self.pending[i].set_result(None)
        else:
            self.pending[i].set_exception(error)


async def _turns(n: int = 3) -> None:
    for _ in range(n):
        await asyncio.sleep(0)


def _writer() -> tuple[ScriptedStream, Connection, _StreamWriter]:
    stream = ScriptedStream()
    conn = Connection("c1", "test")
    return stream, conn, _StreamWriter(stream, conn)  # type: ignore[arg-type]


def test_a_write_starts_inside_the_send_and_the_next_waits_for_it() -> None:
    async def main() -> None:
        stream, conn, writer = _writer()
        a, b, c = b"a", pb.ServerMessage(pong=pb.Pong(nonce=1)), b"c"
        conn.send(a)
        # Started before control went back to the loop: no task switch between them.
        assert stream.started == [a]
        conn.send(b)
        conn.send(c)
        await _turns()
        assert stream.started == [a]  # one write in flight at a time
        stream.complete(0)
        await _turns()
        assert stream.started == [a, b]
        stream.complete(1)
        await _turns()
        stream.complete(2)
        await _turns()
        assert stream.started == [a, b, c]
        assert stream.most_in_flight == 1
        assert not writer.finished.done()
        conn.close()  # the end of the stream, queued behind nothing
        assert writer.finished.done()

    asyncio.run(main())


def test_the_end_of_the_stream_waits_for_the_writes_before_it() -> None:
    async def main() -> None:
        stream, conn, writer = _writer()
        conn.send(b"a")
        conn.send(b"b")
        conn.close()
        assert not writer.finished.done()
        stream.complete(0)
        await _turns()
        assert not writer.finished.done()
        stream.complete(1)
        await _turns()
        assert writer.finished.done()
        assert stream.started == [b"a", b"b"]

    asyncio.run(main())


def test_a_failed_write_ends_the_stream_and_stop_abandons_a_write_in_flight() -> None:
    async def main() -> None:
        stream, conn, writer = _writer()
        conn.send(b"a")
        conn.send(b"b")
        stream.complete(0, RuntimeError("the RPC died"))
        await _turns()
        assert writer.finished.done() and stream.started == [b"a"]
        conn.send(b"c")  # nothing more is written once finished
        assert stream.started == [b"a"]

        stream, conn, writer = _writer()
        conn.send(b"x")
        writer.stop()
        assert stream.abandoned == 1 and stream.in_flight == 0
        conn.send(b"y")  # the outbox no longer drives the writer
        assert stream.started == [b"x"]
        # gRPC fails the abandoned write's operation later: that is expected, not an error
        # for asyncio to report as lost.
        stream.complete(0, RuntimeError("the RPC is gone"))
        await _turns()

    reported: list[str] = []

    def run() -> None:
        loop = asyncio.new_event_loop()
        loop.set_exception_handler(lambda _, context: reported.append(context["message"]))
        try:
            loop.run_until_complete(main())
        finally:
            loop.close()
        gc.collect()  # an unretrieved exception is reported when its future is collected

    run()
    assert reported == []
