"""The ``[http]`` limits (arena/host/guard.py) against real connections, over HTTP/1.1 and HTTP/2.

The API is the real one over a real store (tests/arena/host/serving.py), served over TLS by
the guarded server with limits lowered so that each test takes seconds; the attacker speaks raw
bytes (h1) or the h2 library's frames on its own socket. Each test also makes an honest call
(``GET /api/v1/status``) while the attack is under way and after it: answered, over a
connection of its own. A server that fell over would end the serving thread and fail it.
"""

from __future__ import annotations

import dataclasses
import socket
import ssl
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import h2.config
import h2.connection
import h2.errors
import h2.events
import httpx
import pytest

import arena.host.guard as guard
import arena.host.http as http
import tests.arena.host.serving as serving
from arena.host.config import CompetitionConfigError, HttpConfig, load_competition
from arena.host.http import guard_h2
from tests.arena.host.processes import make_certificate
from tests.helpers import captured_logs
from tests.waiting import wait_until

#: Limits low enough for a test: a stall is cut within a second or two.
FAST = HttpConfig(
    header_timeout_s=1.0,
    keep_alive_s=1.0,
    body_timeout_s=1.0,
    min_body_rate=200,
    max_connections_per_address=3,
    max_connections=64,
)
#: How long any wait of these tests may take before it fails (a bound, not a pause).
BOUND = 15.0
#: The same, but idle connections are left alone for longer than any test takes.
PATIENT = dataclasses.replace(FAST, header_timeout_s=4 * BOUND, keep_alive_s=4 * BOUND)


@pytest.fixture(scope="module")
def cert(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return make_certificate(tmp_path_factory.mktemp("tls"))


class Server:
    def __init__(self, url: str, cafile: Path) -> None:
        self.url, self.cafile = url, cafile
        self.port = int(url.rsplit(":", 1)[1])

    def context(self, alpn: str) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cafile=str(self.cafile))
        ctx.set_alpn_protocols([alpn])
        return ctx

    def connect(self, alpn: str = "http/1.1", source: str = "127.0.0.1") -> ssl.SSLSocket:
        """A TLS connection from ``source`` (any 127.x address on Linux), handshake done."""
        sock = socket.create_connection(("127.0.0.1", self.port), BOUND, (source, 0))
        return self.context(alpn).wrap_socket(sock, server_hostname="127.0.0.1")

    def honest(self, http2: bool = False) -> None:
        """An honest caller's status request: answered 200, in its own connection."""
        verify = ssl.create_default_context(cafile=str(self.cafile))
        with httpx.Client(verify=verify, http2=http2, timeout=BOUND) as client:
            response = client.get(self.url + "/api/v1/status")
        assert response.status_code == 200, response.text
        assert response.http_version == ("HTTP/2" if http2 else "HTTP/1.1")


def serve_with(limits: HttpConfig) -> Callable[..., Any]:
    """Hypercorn's ``serve`` as serving.py calls it, replaced by the guarded server."""

    async def serve(app: object, config: Any, **kw: Any) -> None:
        await guard.serve(app, config, limits, **kw)

    return serve


def _serving(
    limits: HttpConfig, tmp_path: Path, cert: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Server]:
    guard_h2()
    monkeypatch.setattr(serving, "serve", serve_with(limits))
    with serving.hosting(tmp_path, tls=cert, invite=True) as host:
        yield Server(host.url, cert[0])


@pytest.fixture
def server(
    tmp_path: Path, cert: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Server]:
    """A server whose idle connections wait: a test of other limits is not raced by them."""
    yield from _serving(PATIENT, tmp_path, cert, monkeypatch)


@pytest.fixture
def impatient(
    tmp_path: Path, cert: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Server]:
    """A server that closes an idle connection (headers not sent, or kept alive) after 1 s."""
    yield from _serving(FAST, tmp_path, cert, monkeypatch)


def closed_by_server(sock: ssl.SSLSocket) -> bytes:
    """Everything the server sends until it closes the connection (within :data:`BOUND`)."""
    sock.settimeout(BOUND)
    got = b""
    try:
        while chunk := sock.recv(65536):
            got += chunk
    except (ConnectionResetError, ssl.SSLError, BrokenPipeError):
        pass
    return got


def trickle(sock: ssl.SSLSocket, pace_s: float) -> bytes:
    """Send a byte of body every ``pace_s`` seconds until the server answers; its answer."""
    sock.settimeout(pace_s)
    deadline = time.monotonic() + BOUND
    while time.monotonic() < deadline:
        try:
            sock.sendall(b" ")
            answer = sock.recv(65536)
            return answer
        except TimeoutError:
            continue
    raise AssertionError("the server never answered the trickled body")


SLOW_POST = (
    b"POST /api/v1/authors HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"
)


# --- HTTP/1.1 -----------------------------------------------------------------------------------


def test_h1_slow_headers_are_cut_and_honest_calls_answered(impatient: Server) -> None:
    with impatient.connect() as sock:
        sock.sendall(b"GET /api/v1/sta")
        started = time.monotonic()
        impatient.honest()  # during the stall
        assert closed_by_server(sock) == b""
        assert time.monotonic() - started >= 0.5  # the timeout, not a refusal
    impatient.honest()


def test_a_silent_tls_handshake_is_cut(impatient: Server) -> None:
    with socket.create_connection(("127.0.0.1", impatient.port), BOUND) as sock:
        started = time.monotonic()
        impatient.honest()
        assert sock.recv(1) == b""  # nothing sent, not even a ClientHello: closed
        assert time.monotonic() - started >= 0.5
    impatient.honest()


def test_h1_an_idle_connection_is_closed_after_keep_alive(impatient: Server) -> None:
    with impatient.connect() as sock:
        sock.sendall(b"GET /api/v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        answer = closed_by_server(sock)  # the answer, then the end after keep_alive_s
        assert answer.startswith(b"HTTP/1.1 200"), answer
        assert b"connection: close" not in answer.lower()  # kept alive, then cut for idling
    impatient.honest()


def test_h1_a_trickled_body_gets_408_and_its_connection_closed(server: Server) -> None:
    with server.connect() as sock:
        sock.sendall(SLOW_POST)
        answer = trickle(sock, 0.1)  # 10 bytes/s, under the 200 bytes/s minimum
        assert answer.startswith(b"HTTP/1.1 408"), answer
        server.honest()
        closed_by_server(sock)
    server.honest()


def test_h1_a_stalled_body_gets_408_after_the_body_timeout(server: Server) -> None:
    with server.connect() as sock:
        sock.sendall(SLOW_POST)
        started = time.monotonic()
        server.honest()
        answer = closed_by_server(sock)
        assert answer.startswith(b"HTTP/1.1 408"), answer
        assert b"came too slowly" in answer
        assert time.monotonic() - started >= 0.5
    server.honest()


def test_an_honest_body_is_read_whole(server: Server) -> None:
    verify = ssl.create_default_context(cafile=str(server.cafile))
    body = {"name": "alice", "invite_code": serving.INVITE}
    with httpx.Client(verify=verify, timeout=BOUND) as client:
        response = client.post(server.url + "/api/v1/authors", json=body)
    assert response.status_code == 201, response.text


def test_connections_beyond_the_cap_of_one_address_are_refused_at_once(server: Server) -> None:
    cap = FAST.max_connections_per_address
    with ExitStack() as held:
        for _ in range(cap):  # each handshake done: admitted
            held.enter_context(server.connect(source="127.0.0.2"))
        with pytest.raises((ssl.SSLError, ConnectionError)):  # closed, not left waiting
            server.connect(source="127.0.0.2")
        server.honest()  # another address is not held back, over either protocol
        server.honest(http2=True)
    # Once the others close, the address is welcome again.
    wait_until(lambda: _connects(server, "127.0.0.2"), BOUND, what="127.0.0.2 admitted again")


def _connects(server: Server, source: str) -> bool:
    try:
        server.connect(source=source).close()
    except (ssl.SSLError, OSError):
        return False
    return True


# --- HTTP/2 -------------------------------------------------------------------------------------


class H2:
    """An HTTP/2 client on a raw TLS socket, driven frame by frame."""

    def __init__(self, server: Server, source: str = "127.0.0.1") -> None:
        self.sock = server.connect("h2", source)
        assert self.sock.selected_alpn_protocol() == "h2"
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        self.conn.initiate_connection()
        self.flush()

    def flush(self) -> None:
        self.sock.sendall(self.conn.data_to_send())

    def request(self, method: str, path: str, length: int | None = None) -> int:
        stream = self.conn.get_next_available_stream_id()
        headers = [(":method", method), (":path", path), (":scheme", "https")]
        headers += [(":authority", "127.0.0.1")]
        if length is not None:
            headers += [("content-type", "application/json"), ("content-length", str(length))]
        self.conn.send_headers(stream, headers, end_stream=length is None)
        self.flush()
        return stream

    def status(self, stream: int) -> int:
        """The status the server answers on ``stream`` (within :data:`BOUND`)."""
        self.sock.settimeout(BOUND)
        deadline = time.monotonic() + BOUND
        while time.monotonic() < deadline:
            data = self.sock.recv(65536)
            assert data, "the server closed the connection"
            for event in self.conn.receive_data(data):
                if isinstance(event, h2.events.ResponseReceived) and event.stream_id == stream:
                    return int(dict(event.headers)[b":status"])
                if isinstance(event, h2.events.DataReceived):
                    self.conn.acknowledge_received_data(
                        event.flow_controlled_length, event.stream_id
                    )
            self.flush()
        raise AssertionError(f"no answer on stream {stream}")

    def close(self) -> None:
        self.sock.close()


def test_h2_slow_headers_are_cut(impatient: Server) -> None:
    with impatient.connect("h2") as sock:
        sock.sendall(b"PRI * HTTP/2.0\r\n")  # half the connection preface, then nothing
        impatient.honest(http2=True)
        closed_by_server(sock)
    impatient.honest(http2=True)


def test_h2_a_stalled_body_gets_408_while_its_connection_serves_on(server: Server) -> None:
    client = H2(server)
    try:
        slow = client.request("POST", "/api/v1/authors", length=100_000)
        client.conn.send_data(slow, b"{")
        client.flush()
        assert client.status(client.request("GET", "/api/v1/status")) == 200  # during
        server.honest(http2=True)
        assert client.status(slow) == 408
        assert client.status(client.request("GET", "/api/v1/status")) == 200
    finally:
        client.close()


def test_h2_streams_reset_mid_upload_leave_the_connection_serving(server: Server) -> None:
    client = H2(server)
    try:
        for _ in range(50):
            stream = client.request("POST", "/api/v1/authors", length=1_000_000)
            client.conn.send_data(stream, b"x" * 1000)
            client.conn.reset_stream(stream)
        client.flush()
        server.honest(http2=True)
        assert client.status(client.request("GET", "/api/v1/status")) == 200
    finally:
        client.close()


def test_h2_a_ping_flood_leaves_the_host_answering(server: Server) -> None:
    client = H2(server, source="127.0.0.2")
    try:
        for i in range(20_000):
            client.conn.ping(i.to_bytes(8, "big"))
            if i % 1000 == 0:
                client.flush()
        client.flush()
        server.honest(http2=True)  # while the acks are still unread
        server.honest()
        assert client.status(client.request("GET", "/api/v1/status")) == 200
    finally:
        client.close()


def test_h2_a_flood_of_reset_streams_closes_its_connection(server: Server) -> None:
    client = H2(server, source="127.0.0.2")
    try:
        for _ in range(http.MAX_RESETS + 1):
            # Each stream still waits for its body when its reset comes: the server has started
            # a request it must drop (a GET it has already answered costs it nothing more).
            stream = client.request("POST", "/api/v1/authors", length=1000)
            client.conn.reset_stream(stream)
        client.flush()
        server.honest(http2=True)  # the flood came from another address
        # Closed within BOUND (its idle connections wait longer): a GOAWAY saying why, unless
        # the kernel's reset (the server closed with frames of ours unread) overtook it.
        events = client.conn.receive_data(closed_by_server(client.sock))
        codes = {e.error_code for e in events if isinstance(e, h2.events.ConnectionTerminated)}
        assert codes <= {h2.errors.ErrorCodes.ENHANCE_YOUR_CALM}, codes
    finally:
        client.close()
    server.honest(http2=True)
    server.honest()


# --- the pieces ---------------------------------------------------------------------------------


def test_the_caps_count_per_address_ipv6_per_64_and_in_all() -> None:
    connections = guard.Connections(per_address=2, total=3)
    with ExitStack() as held, captured_logs() as logs:
        for address in ("2001:db8::1", "2001:db8::2"):
            assert held.enter_context(connections.admit(address))
        with connections.admit("2001:db8::ffff:1") as admitted:
            assert not admitted  # the same /64
        assert held.enter_context(connections.admit("192.0.2.1"))
        with connections.admit("192.0.2.2") as admitted:
            assert not admitted  # 3 in all
    assert [(e["event"], e["address"]) for e in logs if e["log_level"] == "warning"] == [
        ("refusing HTTP connections beyond the [http] caps", "2001:db8::/64")
    ]  # the second refusal, within the minute, is not logged again
    assert not connections.open
    assert guard.address_key("::ffff:192.0.2.7") == "192.0.2.7"


def test_the_http_section_has_defaults_and_checks_each_key(tmp_path: Path) -> None:
    base = 'game = "whist"\n'
    path = tmp_path / "cup.toml"
    path.write_text(base)
    assert load_competition(path).http == HttpConfig()
    path.write_text(base + "[http]\nheader_timeout_s = 2\nmax_connections_per_address = 4\n")
    http = load_competition(path).http
    assert (http.header_timeout_s, http.max_connections_per_address) == (2.0, 4)
    for line, expected in [
        ("body_timeout_s = 0", "http.body_timeout_s: must be above 0 and at most 3600; got 0"),
        ("keep_alive_s = 'x'", "http.keep_alive_s: must be a number of seconds; got 'x'"),
        ("min_body_rate = -1", "http.min_body_rate: must be at least 0; got -1"),
        ("max_connections = 0", "http.max_connections: must be at least 1; got 0"),
        ("rate = 1", "http.rate: unknown key (known: header_timeout_s,"),
    ]:
        path.write_text(base + "[http]\n" + line + "\n")
        with pytest.raises(CompetitionConfigError) as err:
            load_competition(path)
        assert str(err.value).startswith(f"{path}: {expected}"), str(err.value)
        assert "\n" not in str(err.value)
