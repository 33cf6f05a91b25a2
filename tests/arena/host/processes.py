"""A real ``arena host`` process for tests (the service's own, the cluster's and the browser
tests), the bots they submit, and a certificate the test makes."""

from __future__ import annotations

import io
import json
import os
import signal
import ssl
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.helpers import free_port
from tests.waiting import wait_until

GOOD_BOT = b"from cardarena import RandomBot, run_bot\nrun_bot(RandomBot())\n"
BROKEN_BOT = b"import sys\nprint('cannot start: no model file', file=sys.stderr)\nsys.exit(3)\n"


#: The tests poll the API as fast as they can look: no request rates (the other limits stay).
UNTHROTTLED = "address_requests_per_minute = 0\ntoken_requests_per_minute = 0\n"


def competition_config(name: str = "cup", extra: str = "", limits: str = UNTHROTTLED) -> str:
    """A competition of one-deal whist matches, ``[limits]``, a ladder two matches at a time,
    then ``extra`` (more ``[ladder]`` keys, or more TOML sections: a final, workers)."""
    return (
        f'name = "{name}"\ngame = "whist"\n'
        "[options]\npoints_to_win = 1\ngames_per_rubber = 1\n"
        "[time_control]\nmove_ms = 2000\nbank_ms = 4000\n"
        f"[limits]\n{limits}"
        "[ladder]\nconcurrency = 2\n" + extra
    )


def archive(files: dict[str, bytes]) -> bytes:
    """A ``.tar.gz`` of ``files``."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def bot_archive(code: bytes, command: str = "python3 bot.py") -> bytes:
    """A Python bot's archive: its manifest and ``bot.py``."""
    manifest = f'command = "{command}"\nruntime = "python3"\n'.encode()
    return archive({"cardarena.toml": manifest, "bot.py": code})


def make_certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost, and its key."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2"),
            *("-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost"),
            *("-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


def arena_host(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """``arena host ARGS…`` (a chore: backup, restore, prune) run to its end, its output kept."""
    return subprocess.run(
        [sys.executable, "-m", "arena.cli", "host", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
    )


class Host:
    """One ``arena host`` process on fixed ports (a restart listens where the first did); HTTPS
    with ``tls``, else plain HTTP on loopback."""

    def __init__(self, config: Path, directory: Path, tls: tuple[Path, Path] | None) -> None:
        self.config, self.directory, self.tls = config, directory, tls
        self.http_port, self.grpc_port = free_port(), free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.http_port}"
        self.grpc = f"127.0.0.1:{self.grpc_port}"
        #: More options for ``arena host`` (a later one overrides an earlier one).
        self.extra: list[str] = []

    def start(self) -> None:
        info = self.directory / "private" / "host.json"
        info.unlink(missing_ok=True)
        tls = ["--tls-cert", str(self.tls[0]), "--tls-key", str(self.tls[1])] if self.tls else []
        self.proc = subprocess.Popen(
            [
                *(sys.executable, "-m", "arena.cli", "host", str(self.config)),
                *("--dir", str(self.directory), "--http", f"127.0.0.1:{self.http_port}"),
                *("--grpc", self.grpc, *tls, "--log-level", "warning", *self.extra),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        proc = self.proc
        wait_until(lambda: info.is_file() or proc.poll() is not None, 60, what="the host to start")
        assert proc.poll() is None, proc.stdout.read().decode() if proc.stdout else ""

    @contextmanager
    def running(self) -> Iterator[Host]:
        """The host started, and stopped however the test ends."""
        self.start()
        try:
            yield self
        finally:
            self.stop()

    def kill(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def terminate(self) -> str:
        """SIGTERM, as systemd or ``kill`` stops it: a clean exit (0); its output."""
        assert self.proc is not None and self.proc.stdout is not None
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(30) == 0
        return self.proc.stdout.read().decode()

    def stop(self) -> None:
        """Ctrl-C; a host still running 30 s later is killed (its bots die with it) and the
        test fails, rather than leaving it to play on after the tests."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.kill()
                raise AssertionError("the host did not stop within 30 s of a Ctrl-C") from None

    def interrupt(self) -> str:
        """Ctrl-C (SIGINT): the CLI's exit status for an interrupt (130); its output."""
        assert self.proc is not None and self.proc.stdout is not None
        self.proc.send_signal(signal.SIGINT)
        assert self.proc.wait(30) == 130
        return self.proc.stdout.read().decode()

    def client(self, token: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        verify: ssl.SSLContext | bool = True
        if self.tls is not None:
            verify = ssl.create_default_context(cafile=str(self.tls[0]))
        return httpx.Client(base_url=self.url, verify=verify, headers=headers, timeout=30)

    def submit_as_new_author(self, name: str, code: bytes) -> None:
        """A new author ``name`` submits ``code`` as their bot ``NAME-bot`` (a comment naming
        them makes each author's snapshot their own)."""
        with self.client(self.add_author(name)) as api:
            put = api.put(
                f"/api/v1/bots/{name}-bot/versions",
                content=bot_archive(code + f"# {name}\n".encode()),
                headers={"Content-Type": "application/octet-stream"},
            )
            assert put.status_code == 201, put.text

    def submit(self, token: str, bot: str, code: bytes) -> None:
        """A new version of ``bot`` (a Python bot of ``code``), as its author uploads it."""
        octet = {"Content-Type": "application/octet-stream"}
        with self.client(token) as c:
            r = c.put(f"/api/v1/bots/{bot}/versions", content=bot_archive(code), headers=octet)
            assert r.status_code == 201, r.text

    def add_author(self, name: str) -> str:
        out = subprocess.run(
            [
                *(sys.executable, "-m", "arena.cli", "host", "add-author", str(self.config)),
                *(name, "--dir", str(self.directory), "--json"),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        token: str = json.loads(out.stdout)["token"]
        return token


def host_in(where: Path, name: str, extra: str = "") -> Host:
    """A host of ``competition_config(name, extra)`` in ``where`` (its config written there),
    plain HTTP on loopback; not started."""
    config = where / f"{name}.toml"
    config.write_text(competition_config(name, extra))
    return Host(config, where / name, tls=None)
