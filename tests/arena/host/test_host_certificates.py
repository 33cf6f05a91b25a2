"""A host with TLS as docs/hosting.md sets one up: its own tools reach it whatever name its
certificate carries, and authors may name the certificate to trust in ``$ARENA_CA_CERT``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.arena.host.processes import Host, competition_config, make_certificate

ARENA = [sys.executable, "-m", "arena.cli"]


def _certificate_for(name: str, directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate that names ``name`` only (no address), as the page makes."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-keyout", str(key), "-out", str(cert), "-subj", f"/CN={name}"),
            *("-addext", f"subjectAltName=DNS:{name}"),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


def _remote(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``arena remote ARGS`` with ``env`` as its whole environment."""
    return subprocess.run(
        [*ARENA, "remote", *args], env=env, capture_output=True, text=True, check=False
    )


def _env(host: Host) -> dict[str, str]:
    """This process's environment without a certificate to trust, pointed at ``host``."""
    env = {k: v for k, v in os.environ.items() if k != "ARENA_CA_CERT"}
    return env | {"ARENA_SERVER": host.url}


def _host(tmp_path: Path, tls: tuple[Path, Path]) -> Host:
    config = tmp_path / "cup.toml"
    config.write_text(competition_config())
    host = Host(config, tmp_path / "cup", tls)
    host.start()
    return host


@contextmanager
def _an_author_of_a_tls_host(tmp_path: Path) -> Iterator[tuple[Host, dict[str, str]]]:
    """A host serving TLS on loopback, and an author's environment for it (server, token and
    the certificate to trust)."""
    host = _host(tmp_path, make_certificate(tmp_path))
    assert host.tls is not None
    env = _env(host) | {"ARENA_CA_CERT": str(host.tls[0])}
    try:
        env["ARENA_API_TOKEN"] = host.add_author("ann")
        yield host, env
    finally:
        host.stop()


@pytest.mark.slow
def test_add_author_reaches_its_running_host_whatever_name_the_certificate_carries(
    tmp_path: Path,
) -> None:
    host = _host(tmp_path, _certificate_for("arena.example.org", tmp_path))
    try:
        token = host.add_author("ann")  # the host holds the database: asked over its API
        assert token.startswith("cau_")
        # Everyone else still checks the name: the certificate does not name 127.0.0.1.
        with host.client(None) as anyone, pytest.raises(httpx.ConnectError, match=r"mismatch"):
            anyone.get("/api/v1/status")
    finally:
        host.stop()


@pytest.mark.slow
def test_arena_remote_trusts_the_certificate_named_in_arena_ca_cert(tmp_path: Path) -> None:
    host = _host(tmp_path, make_certificate(tmp_path))
    assert host.tls is not None
    env = _env(host)
    try:
        refused = _remote(env, "status")
        assert refused.returncode != 0 and "--cafile" in refused.stderr, refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
        env["ARENA_CA_CERT"] = str(host.tls[0])
        status = _remote(env, "status", "--json")
        assert status.returncode == 0, status.stderr
        assert json.loads(status.stdout)["name"] == "cup"
    finally:
        host.stop()


@pytest.mark.slow
def test_an_author_is_told_what_the_bot_and_the_upload_need(tmp_path: Path) -> None:
    with _an_author_of_a_tls_host(tmp_path) as (host, env):
        assert host.tls is not None

        def remote(*args: str) -> subprocess.CompletedProcess[str]:
            return _remote(env, *args)

        status = json.loads(remote("status", "--json").stdout)
        assert status["grpc_port"] == int(host.grpc.rsplit(":", 1)[1]) and status["tls"] is True
        assert status["protocol_version"] == 1
        assert status["upload_limits"]["max_upload_mib"] == 32
        live = remote("live", "wanderer")
        assert live.returncode == 0, live.stderr
        line = live.stdout.splitlines()[-1]
        assert f"ARENA_ADDRESS=127.0.0.1:{status['grpc_port']} ARENA_TOKEN=cal_" in line
        assert f"ARENA_CA_CERT={host.tls[0].resolve()}" in line
        # Over the host's limit: refused before a byte is sent, in one line.
        big = tmp_path / "big.tar.gz"
        big.write_bytes(os.urandom(33 << 20))
        refused = remote("submit", "mybot", str(big))
        assert refused.returncode != 0 and len(refused.stderr.strip().splitlines()) == 1
        assert "this host takes uploads of at most 32 MiB" in refused.stderr, refused.stderr


@pytest.mark.slow
def test_live_bots_are_told_the_advertised_grpc_address(tmp_path: Path) -> None:
    with _an_author_of_a_tls_host(tmp_path) as (host, env):
        # Listening on a specific address: that one.
        assert json.loads(_remote(env, "status", "--json").stdout)["grpc_address"] == host.grpc
        # On every address: the name the author reached the API by, never 0.0.0.0.
        host.stop()
        host.extra = ["--grpc", f"0.0.0.0:{host.grpc_port}"]
        host.start()
        env["ARENA_SERVER"] = host.url.replace("127.0.0.1", "localhost")
        status = json.loads(_remote(env, "status", "--json").stdout)
        assert status["grpc_address"] == f"localhost:{host.grpc_port}"
        # Behind a proxy or NAT: what --public-grpc says, in status and in live's environment.
        host.stop()
        host.extra = ["--public-grpc", "bots.example.org:443"]
        host.start()
        assert json.loads(_remote(env, "status", "--json").stdout)["grpc_address"] == (
            "bots.example.org:443"
        )
        live = _remote(env, "live", "wanderer")
        assert "ARENA_ADDRESS=bots.example.org:443 ARENA_TOKEN=cal_" in live.stdout, live.stderr


def test_a_public_grpc_address_must_name_a_host(tmp_path: Path) -> None:
    for wrong in ("0.0.0.0:50051", "bots.example.org", "bots.example.org:0"):
        done = subprocess.run(
            [*ARENA, "host", str(tmp_path / "cup.toml"), "--public-grpc", wrong],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 2 and "--public-grpc" in done.stderr, done.stderr
        assert f"{wrong!r}: give HOST:PORT" in done.stderr
