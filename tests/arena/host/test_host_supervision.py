"""A real host in this process (``run_host`` on loopback: HTTP, gRPC, validation and ladder with
real bot processes) whose parts fail on purpose: each failure is logged with its traceback and
only that part starts again, while HTTP answers and the gRPC arena goes on refereeing. The
supervisor's own timing is tests/arena/host/test_supervise.py."""

from __future__ import annotations

import functools
import sqlite3
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
import trio
from cardarena._pb import arena_pb2 as pb

import arena.host.service as service
import arena.server.service as grpc_service
from arena.errors import one_error
from arena.host.config import check_competition
from arena.host.ladder import Ladder, Wakeup
from arena.host.service import HostOptions, Listening, run_host
from arena.host.store import CompetitionStore, CompetitionStoreError, Version
from arena.host.supervise import supervised
from arena.protocol import codec
from arena.server.limits import Endpoint
from tests.arena.host.processes import GOOD_BOT, bot_archive
from tests.helpers import captured_logs
from tests.waiting import async_wait_until

CONFIG = {
    "game": "whist",
    "options": {"points_to_win": 1, "games_per_rubber": 1},
    "time_control": {"move_ms": 2000, "bank_ms": 4000},
    "ladder": {"concurrency": 2},
}


def _done_matches(directory: Path) -> int:
    con = sqlite3.connect(f"file:{directory / 'competition.sqlite'}?mode=ro", uri=True)
    try:
        (n,) = con.execute("SELECT COUNT(*) FROM matches WHERE state = 'done'").fetchone()
    finally:
        con.close()
    return int(n)


def _status(directory: Path, version: int) -> str:
    con = sqlite3.connect(f"file:{directory / 'competition.sqlite'}?mode=ro", uri=True)
    try:
        (status,) = con.execute("SELECT status FROM versions WHERE id = ?", (version,)).fetchone()
    finally:
        con.close()
    return str(status)


def _raw_stream(address: str, chunk: bytes) -> pb.ServerMessage | grpc.StatusCode | None:
    """One Arena.Play stream that sends ``chunk``: the server's first reply, the status the
    stream failed with, or ``None`` when it ended with neither."""
    sent = threading.Event()

    def requests() -> Iterator[bytes]:
        yield chunk
        sent.wait(10)  # the stream stays open until the reply is in

    with grpc.insecure_channel(address) as channel:
        play = channel.stream_stream(
            "/cardarena.v1.Arena/Play", response_deserializer=pb.ServerMessage.FromString
        )
        call = play(requests(), timeout=10)
        try:
            reply: pb.ServerMessage | None = next(iter(call), None)
            return reply
        except grpc.RpcError as err:
            code: grpc.StatusCode = err.code()  # type: ignore[attr-defined]
            return code
        finally:
            sent.set()
            call.cancel()


def _failing_once(
    original: Callable[..., Awaitable[Any]], when: Callable[[], bool], what: str
) -> Callable[..., Awaitable[Any]]:
    """``original``, except that its first call once ``when()`` holds raises."""
    failed: list[bool] = []

    async def flaky(*args: Any) -> Any:
        if not failed and when():
            failed.append(True)
            raise RuntimeError(f"injected {what} failure")
        return await original(*args)

    return flaky


def submit_two(http: httpx.Client) -> list[int]:
    """Two authors, alpha and beta, each submitting a good bot (``http`` holds the admin's
    token); the versions' ids."""
    ids = []
    for name in ("alpha", "beta"):
        token = http.post("/api/v1/admin/authors", json={"name": name}).json()["token"]
        made = http.put(
            f"/api/v1/bots/{name}/versions",
            content=bot_archive(GOOD_BOT + f"# {name}\n".encode()),
            headers={
                "Content-Type": "application/octet-stream",
                "Authorization": f"Bearer {token}",
            },
        )
        assert made.status_code == 201, made.text
        ids.append(made.json()["id"])
    return ids


#: Bytes whose reading raises once the test makes it so.
POISON = b"poison"


def reading_fails_on(poison: bytes) -> Callable[[bytes], Any]:
    read = codec.bot_bytes_to_plain

    def reading(raw: bytes) -> Any:
        if raw == poison:
            raise RuntimeError("injected failure reading a bot's message")
        return read(raw)

    return reading


def test_a_part_that_fails_is_logged_and_restarted_while_the_others_serve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = tmp_path / "cup"
    config = check_competition(CONFIG, "t", "cup")
    # The validator's first validation, the ladder's first look after a match is stored, and
    # the handler of the first bot stream each fail once.
    monkeypatch.setattr(service, "validate", _failing_once(service.validate, lambda: True, "v"))
    played = lambda: _done_matches(directory) > 0  # noqa: E731
    monkeypatch.setattr(Ladder, "_start_unit", _failing_once(Ladder._start_unit, played, "l"))
    endpoint = grpc_service.grpc_endpoint
    handler_failed: list[bool] = []

    def endpoint_failing_once(peer: str) -> Endpoint | None:
        if not handler_failed:
            handler_failed.append(True)
            raise RuntimeError("injected gRPC handler failure")
        return endpoint(peer)

    monkeypatch.setattr(grpc_service, "grpc_endpoint", endpoint_failing_once)
    options = HostOptions(http="127.0.0.1:0", grpc="127.0.0.1:0", no_sandbox=True)

    async def main(logs: list[Any]) -> None:
        def failed(part: str) -> bool:
            return any(e["event"] == "part failed; restarting" and e["part"] == part for e in logs)

        async with trio.open_nursery() as nursery:
            where: Listening = await nursery.start(run_host, config, directory, options)
            http = httpx.Client(
                base_url=where.http_url,
                timeout=30,
                headers={"Authorization": f"Bearer {where.admin_token}"},
            )

            def get(path: str) -> httpx.Response:
                return http.get(path)

            # The gRPC arena: a stream whose handler raises ends alone, with gRPC's UNKNOWN;
            # the next stream (garbage for a Hello) is refereed as usual.
            ended = await trio.to_thread.run_sync(_raw_stream, where.grpc_address, b"\xff\xff")
            assert ended == grpc.StatusCode.UNKNOWN
            reply = await trio.to_thread.run_sync(_raw_stream, where.grpc_address, b"\xff\xff")
            assert isinstance(reply, pb.ServerMessage)
            assert reply.rejected.reason == "the first message must be Hello"

            ids = await trio.to_thread.run_sync(submit_two, http)

            def validated() -> bool:
                statuses = {_status(directory, v) for v in ids}
                assert "failed" not in statuses, statuses
                return statuses == {"validated"}

            await async_wait_until(lambda: failed("validator"), 60, what="the validator to fail")
            # Restarted, the validator validates both versions all the same.
            await async_wait_until(validated, 120, what="both versions validated")
            await async_wait_until(lambda: failed("ladder"), 120, what="the ladder to fail")
            after = _done_matches(directory)
            status = await trio.to_thread.run_sync(get, "/api/v1/status")
            assert status.status_code == 200  # HTTP answered throughout
            await async_wait_until(
                lambda: _done_matches(directory) >= after + 2, 120, what="the ladder to play on"
            )
            # Mid-ladder, a stream whose message handling raises ends alone (it is logged) and
            # the matches being played go on.
            monkeypatch.setattr(codec, "bot_bytes_to_plain", reading_fails_on(POISON))
            ended = await trio.to_thread.run_sync(_raw_stream, where.grpc_address, POISON)
            assert ended is None
            after = _done_matches(directory)
            await async_wait_until(
                lambda: _done_matches(directory) >= after + 2, 120, what="the matches to go on"
            )
            http.close()
            nursery.cancel_scope.cancel()

    with captured_logs() as logs:
        trio.run(main, logs)
    failures = [e for e in logs if e["event"] == "part failed; restarting"]
    assert sorted(e["part"] for e in failures) == ["ladder", "validator"]
    assert all(e["exc_info"] is True and e["log_level"] == "error" for e in failures)


def test_a_store_that_cannot_be_used_still_stops_the_host_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    error = CompetitionStoreError(
        f"{tmp_path}/cup/competition.sqlite: the database is locked by another process"
    )

    async def locked(self: Ladder) -> None:
        raise error

    monkeypatch.setattr(Ladder, "refit", locked)
    options = HostOptions(http="127.0.0.1:0", grpc="127.0.0.1:0", no_sandbox=True)
    config = check_competition(CONFIG, "t", "cup")

    async def main() -> None:
        with trio.fail_after(60):  # a host that restarted its ladder forever would fail here
            await run_host(config, tmp_path / "cup", options)

    with captured_logs() as logs, pytest.raises(BaseExceptionGroup) as info:
        trio.run(main)
    assert one_error(info.value) is error  # what the CLI prints, as one line
    assert not [e for e in logs if e["event"] == "part failed; restarting"]


def test_a_version_whose_validation_fails_the_validator_holds_up_no_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = check_competition(CONFIG, "t", "cup")
    store = CompetitionStore(tmp_path / "cup", config)
    author, _ = store.add_author("alice")
    poison, *others = (
        store.add_version(author.id, f"b{n}", "archive", f"{n:064x}", {"command": "x"})
        for n in range(1, 4)
    )

    async def validate(
        store: CompetitionStore, player: object, config: object, version: Version
    ) -> Version:
        if version.id == poison.id:  # a bug this submission meets, every time
            raise RuntimeError("injected validation failure")
        store.set_status(version.id, "validating")
        return store.set_status(version.id, "validated")

    monkeypatch.setattr(service, "validate", validate)
    ladder = Ladder(store, config, None, lambda version_id: None)  # type: ignore[arg-type]
    validator = functools.partial(service._validator, store, None, config, ladder, Wakeup(), set())

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(functools.partial(supervised, "validator", validator, pause_s=0.01))
            await async_wait_until(
                lambda: all(store.version(v.id).status == "validated" for v in others),
                30,
                what="the other versions validated",
            )
            nursery.cancel_scope.cancel()

    with captured_logs() as logs:
        trio.run(main)
    assert store.version(poison.id).status == "pending"
    assert any(e["event"] == "part failed; restarting" for e in logs)
    store.close()
