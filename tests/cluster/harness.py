"""A real Dask cluster for the tests: a ``dask scheduler`` process and ``arena worker``
processes, each a process group of its own (so kill -9 takes a worker and its bots).

Where the machine allows it (root, iproute2), each worker runs in a network namespace of its
own, as a separate host would: a bridge in the test's namespace carries the scheduler's address
(``10.213.N.1``), each worker has its own (``10.213.N.2`` …) and its own loopback, where its
arena server and its bots' connections live. Elsewhere everything is on loopback.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from distributed import Client
from distributed.security import Security

from tests.helpers import free_port
from tests.waiting import wait_until

BIN = Path(sys.executable).parent
ARENA = str(BIN / "arena")
DASK = str(BIN / "dask")
#: Seconds a scheduler or a worker may take to come up on a loaded 2-core machine.
START_S = 60.0


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


@dataclass
class Network:
    """A bridge and one network namespace per worker (see the module's docstring)."""

    tag: str = field(default_factory=lambda: secrets.token_hex(3))
    subnet: int = field(default_factory=lambda: 1 + secrets.randbelow(250))
    namespaces: list[str] = field(default_factory=list)

    @property
    def bridge(self) -> str:
        return f"cab{self.tag}"

    @property
    def host(self) -> str:
        return f"10.213.{self.subnet}.1"

    def open(self) -> None:
        _ip("link", "add", self.bridge, "type", "bridge")
        _ip("addr", "add", f"{self.host}/24", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")

    def add(self) -> str:
        """A new namespace on the bridge; its name."""
        k = len(self.namespaces) + 1
        ns, outer = f"ca{self.tag}w{k}", f"cav{self.tag}{k}"
        _ip("netns", "add", ns)
        self.namespaces.append(ns)
        _ip("link", "add", outer, "type", "veth", "peer", "name", "eth0", "netns", ns)
        _ip("link", "set", outer, "master", self.bridge)
        _ip("link", "set", outer, "up")
        _ip("-n", ns, "addr", "add", f"10.213.{self.subnet}.{k + 1}/24", "dev", "eth0")
        _ip("-n", ns, "link", "set", "eth0", "up")
        _ip("-n", ns, "link", "set", "lo", "up")
        return ns

    def close(self) -> None:
        for ns in self.namespaces:
            with contextlib.suppress(subprocess.CalledProcessError):
                _ip("netns", "del", ns)
        with contextlib.suppress(subprocess.CalledProcessError):
            _ip("link", "del", self.bridge)


def network() -> Network | None:
    """Separate network namespaces for the workers, or ``None`` where the machine has none."""
    if os.geteuid() != 0 or shutil.which("ip") is None:
        return None
    net = Network()
    try:
        net.open()
    except (subprocess.CalledProcessError, OSError):
        net.close()
        return None
    return net


@dataclass
class Cluster:
    """The processes of one test's cluster, stopped by :meth:`close`."""

    directory: Path
    port: int = field(default_factory=free_port)
    scheduler: subprocess.Popen[bytes] | None = None
    workers: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    #: The workers' namespaces, or ``None``: all on loopback.
    net: Network | None = None
    namespace: dict[str, str] = field(default_factory=dict)
    #: ``(ca, cert, key)`` PEM files: every link speaks TLS with them (``None``: plain TCP).
    tls: tuple[Path, Path, Path] | None = None
    #: Dask settings for the scheduler (``DASK_…`` variables).
    scheduler_env: dict[str, str] = field(default_factory=dict)

    @property
    def host(self) -> str:
        return self.net.host if self.net is not None else "127.0.0.1"

    @property
    def address(self) -> str:
        scheme = "tls" if self.tls is not None else "tcp"
        return f"{scheme}://{self.host}:{self.port}"

    def _tls_args(self) -> list[str]:
        if self.tls is None:
            return []
        ca, cert, key = self.tls
        return ["--tls-ca-file", str(ca), "--tls-cert", str(cert), "--tls-key", str(key)]

    def client_env(self) -> dict[str, str]:
        """The environment a coordinator reads Dask's TLS settings from."""
        if self.tls is None:
            return {}
        ca, cert, key = self.tls
        return {
            "DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION": "true",
            "DASK_DISTRIBUTED__COMM__TLS__CA_FILE": str(ca),
            "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": str(cert),
            "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": str(key),
        }

    def start_scheduler(self) -> None:
        log = open(self.directory / "scheduler.log", "ab")  # noqa: SIM115 (the process keeps it)
        self.scheduler = subprocess.Popen(
            [DASK, "scheduler", "--host", self.host, "--port", str(self.port), "--no-dashboard"]
            + (["--protocol", "tls", *self._tls_args()] if self.tls is not None else []),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, **self.scheduler_env},
        )
        log.close()

    def start_worker(self, name: str, *extra: str, slots: int = 1) -> None:
        """Start worker ``name`` (again: in the namespace it had)."""
        inside: list[str] = []
        if self.net is not None:
            if name not in self.namespace:
                self.namespace[name] = self.net.add()
            inside = ["ip", "netns", "exec", self.namespace[name]]
        log = open(self.directory / f"{name}.log", "ab")  # noqa: SIM115
        self.workers[name] = subprocess.Popen(
            [
                *inside,
                ARENA,
                "worker",
                "--scheduler",
                self.address,
                "--name",
                name,
                "--slots",
                str(slots),
                "--dir",
                str(self.directory / name),
                *self._tls_args(),
                *extra,
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()

    def worker_log(self, name: str) -> str:
        return (self.directory / f"{name}.log").read_text(errors="replace")

    def client(self) -> Client:
        """A client of the scheduler (the caller closes it)."""
        security = Security()
        if self.tls is not None:
            ca, cert, key = self.tls
            security = Security(
                tls_ca_file=str(ca),
                tls_client_cert=str(cert),
                tls_client_key=str(key),
                require_encryption=True,
            )
        return Client(self.address, timeout=5, set_as_default=False, security=security)

    def kill_mid_match(self, name: str) -> None:
        """kill -9 worker ``name`` (and its bots) while the scheduler has it playing a match."""
        with self.client() as c:

            def playing() -> bool:
                busy = c.processing()
                return any(
                    keys and str(info.get("name")) == name
                    for addr, keys in busy.items()
                    for info in [c.scheduler_info(n_workers=-1)["workers"].get(addr, {})]
                )

            group = self.workers[name].pid

            def frozen_playing() -> bool:
                # Frozen first, then asked: a match that ended between the scheduler's answer
                # and the kill would leave nothing to kill (the test then races the match).
                if not playing():
                    return False
                os.killpg(group, signal.SIGSTOP)
                if playing():
                    return True
                os.killpg(group, signal.SIGCONT)
                return False

            wait_until(frozen_playing, 120, interval=0.01, what=f"worker {name} to be playing")
            self.kill(self.workers[name])

    def wait_for_workers(self, names: list[str]) -> None:
        """Until every named worker has joined the scheduler (a fresh client looks)."""

        def joined() -> bool:
            for name in names:
                proc = self.workers[name]
                assert proc.poll() is None, f"worker {name} exited:\n{self.worker_log(name)}"
            try:
                with self.client() as c:
                    info = c.scheduler_info(n_workers=-1)
            except OSError:
                return False
            have = {str(w["name"]) for w in info["workers"].values()}
            return set(names) <= have

        wait_until(joined, START_S, interval=0.2, what=f"workers {names} to join")

    def kill(self, proc: subprocess.Popen[bytes]) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

    def close(self) -> None:
        for proc in self.workers.values():
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.workers.values():
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill(proc)
        if self.scheduler is not None:
            self.kill(self.scheduler)
        if self.net is not None:
            self.net.close()


@contextlib.contextmanager
def running_cluster(
    directory: Path,
    workers: int = 2,
    *extra: str,
    tls: tuple[Path, Path, Path] | None = None,
    scheduler_env: dict[str, str] | None = None,
) -> Iterator[Cluster]:
    """A scheduler and ``workers`` arena workers (``w1``, ``w2``, …), joined."""
    directory.mkdir(parents=True, exist_ok=True)
    cluster = Cluster(directory, net=network(), tls=tls, scheduler_env=scheduler_env or {})
    try:
        cluster.start_scheduler()
        names = [f"w{i + 1}" for i in range(workers)]
        for name in names:
            cluster.start_worker(name, *extra)
        cluster.wait_for_workers(names)
        yield cluster
    finally:
        cluster.close()


def run_arena(
    *args: str, cwd: Path, timeout: float = 600, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ARENA, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env={**os.environ, **env} if env else None,
    )


def certificates(directory: Path) -> tuple[Path, Path, Path]:
    """A certificate authority and one certificate it signed (every role uses it), by openssl."""
    directory.mkdir(parents=True, exist_ok=True)
    ca, ca_key = directory / "ca.pem", directory / "ca-key.pem"
    cert, key, csr = directory / "cert.pem", directory / "key.pem", directory / "cert.csr"

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)

    openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=test-ca",
        "-keyout",
        str(ca_key),
        "-out",
        str(ca),
    )
    openssl(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=arena",
        "-keyout",
        str(key),
        "-out",
        str(csr),
    )
    ext = directory / "ext.cnf"
    ext.write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    openssl(
        "x509",
        "-req",
        "-in",
        str(csr),
        "-CA",
        str(ca),
        "-CAkey",
        str(ca_key),
        "-CAcreateserial",
        "-days",
        "2",
        "-out",
        str(cert),
        "-extfile",
        str(ext),
    )
    return ca, cert, key


def ratings_json(out: Path, cwd: Path) -> dict[str, object]:
    done = run_arena("ratings", str(out), "--json", cwd=cwd)
    assert done.returncode == 0, done.stderr
    table: dict[str, object] = json.loads(done.stdout)
    return table
