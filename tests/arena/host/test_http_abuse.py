"""What a stranger's HTTP requests may do to a host: nothing that stops it (arena/host/http.py).

The reproduction is issue 41's: over HTTP/2, a large body sent to a stream the server has already
answered (a POST to a route that refuses it at once) made hypercorn raise ``KeyError`` out of its
connection task, and the whole host (ladder, arena, live bots) exited.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio
import trio.testing
from hypercorn.config import Config as HypercornConfig

import arena.host.http as http
from arena.errors import ArenaError
from tests.arena.host.processes import Host, competition_config, make_certificate

#: Bigger than every flow-control window the server opens, so DATA frames keep coming after
#: the answer.
BODY_BYTES = 40 * 1024 * 1024


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    config = tmp_path / "cup.toml"
    config.write_text(competition_config())
    h = Host(config, tmp_path / "cup", make_certificate(tmp_path))
    h.start()
    try:
        yield h
    finally:
        h.stop()


def _curl(host: Host, *args: str) -> str:
    """What curl says of one request: the status and the HTTP version."""
    assert host.tls is not None
    out = subprocess.run(
        [
            *("curl", "-s", "-o", "/dev/null", "-w", "%{http_code} %{http_version}"),
            *("--cacert", str(host.tls[0]), "--max-time", "60", *args),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    return out.stdout


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl (HTTP/2 client)")
def test_a_body_sent_after_the_answer_over_http2_does_not_stop_the_host(
    host: Host, tmp_path: Path
) -> None:
    body = tmp_path / "body.bin"
    with body.open("wb") as f:
        f.truncate(BODY_BYTES)
    for path in ("/api/v1/status", "/api/v1/authors", "/api/v1/bots/b/versions"):
        for _ in range(3):
            said = _curl(
                host, "--http2", "-X", "POST", "--data-binary", f"@{body}", host.url + path
            )
            assert said.endswith(" 2"), said  # answered over HTTP/2, whatever the status
            assert host.proc is not None and host.proc.poll() is None, "the host stopped"
    # Honest calls are still answered, over both protocols.
    assert _curl(host, "--http2", host.url + "/api/v1/status") == "200 2"
    assert _curl(host, "--http1.1", host.url + "/api/v1/status") == "200 1.1"


def test_a_server_that_fails_while_serving_is_logged_and_served_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    starts: list[int] = []

    async def failing_serve(
        app: object,
        config: HypercornConfig,
        limits: object,
        *,
        shutdown_trigger: object,
        task_status: object,
    ) -> None:
        starts.append(1)
        task_status.started(["http://127.0.0.1:1"])  # type: ignore[attr-defined]
        if len(starts) < 3:
            raise ExceptionGroup("a connection failed", [KeyError(1)])
        await shutdown_trigger()  # type: ignore[operator]

    monkeypatch.setattr(http, "serve", failing_serve)
    config = HypercornConfig()
    config.bind = ["127.0.0.1:1"]

    async def main() -> None:
        stop = trio.Event()
        async with trio.open_nursery() as nursery:
            binds = await nursery.start(http.serve_http, object(), config, stop)
            assert binds == ["http://127.0.0.1:1"]
            await trio.sleep(10 * http.RESTART_PAUSE_S)  # virtual time: two restarts' pauses
            assert len(starts) == 3
            stop.set()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    assert len(starts) == 3


def test_a_port_it_cannot_listen_on_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    async def refused(app: object, config: HypercornConfig, limits: object, **kw: object) -> None:
        raise OSError(98, "Address already in use")

    monkeypatch.setattr(http, "serve", refused)
    config = HypercornConfig()
    config.bind = ["127.0.0.1:80"]

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            with pytest.raises(ArenaError, match=r"^cannot serve HTTP on 127.0.0.1:80: Address"):
                await nursery.start(http.serve_http, object(), config, trio.Event())

    trio.run(main)
