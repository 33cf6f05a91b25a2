"""What bounds the server's file descriptors: its own limit, and what one peer may hold of it.

Every connection costs the server a descriptor from the moment gRPC accepts it, whether or not
it ever carries a stream, so no stream-level cap can stop a client from exhausting them. These
do (docs/protocol.md, "Limits"), with the sandbox's limits on what a bot can open at all:

- :func:`raise_open_files_limit`: the server's soft RLIMIT_NOFILE goes to its hard limit at
  start, so the usual soft 1024 is not what a thousand idle sockets take away;
- gRPC's handshake timeout (``rpc.SERVER_OPTIONS``) closes a connection that has not sent its
  HTTP/2 preface within seconds;
- :class:`ConnectionCensus`: gRPC core owns the sockets and Python never sees them, so a thread
  counts them in ``/proc/self/fd`` once a second, attributes each to its peer, and shuts down
  those a peer holds past its cap. A TCP address may hold :data:`MAX_IDLE_PER_ADDRESS`
  connections that carry neither a welcomed bot stream nor a spectator. On the Unix socket the
  connecting process (``SO_PEERCRED``) names the peer: its pid namespace when that is not the
  server's (a sandboxed bot, a container), else the process itself; each may hold
  :data:`MAX_CONNECTIONS_PER_BOT`, whatever they carry. Shutting down a duplicate of the
  descriptor ends the connection for gRPC as if the peer had (it then closes its own descriptor
  as usual); the duplicate lives microseconds.

A server out of descriptors is when the census matters most, and it then needs none: it holds
two for good and duplicates a socket onto one of them (``dup2``), and when it cannot list
``/proc/self/fd`` it reads each number below the limit (``readlink`` takes no descriptor).
"""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import math
import os
import resource
import socket
import struct
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import structlog

log = structlog.get_logger("arena.server")

#: Seconds between two counts of the server's connections.
CENSUS_INTERVAL_S = 1.0
#: Connections one TCP address may hold that carry neither a welcomed bot stream nor a
#: spectator, once older than :data:`IDLE_GRACE_S`. Connections that do carry one are never
#: closed here (the hub bounds those: a stream per token, lobby guests, spectators).
MAX_IDLE_PER_ADDRESS = 64
#: Seconds a connection may be open before it counts as idle: a bot says Hello as it connects.
IDLE_GRACE_S = 1.0
#: Connections one sandboxed bot, container or other process may hold on the Unix socket: a
#: bot needs one.
MAX_CONNECTIONS_PER_BOT = 16
#: Seconds between two warnings about the same peer (a bot that reconnects as fast as it is
#: shed would otherwise fill the log).
WARN_INTERVAL_S = 10.0

_PEERCRED = struct.Struct("3i")


def raise_open_files_limit() -> int:
    """Raise this process's soft RLIMIT_NOFILE to its hard limit; the soft limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard
    if hard == resource.RLIM_INFINITY:  # Linux caps descriptors at fs.nr_open whatever it says
        try:
            target = int(Path("/proc/sys/fs/nr_open").read_text())
        except (OSError, ValueError):
            return soft
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (OSError, ValueError) as err:
            log.debug("open files limit not raised", soft=soft, hard=hard, error=str(err))
            return soft
        log.debug("open files limit raised", was=soft, now=target)
        return target
    return soft


#: A TCP endpoint: address (IPv4-mapped IPv6 as IPv4) and port.
Endpoint = tuple[str, int]


def _address(host: str) -> str:
    ip = ipaddress.ip_address(host.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return str(ip)


def grpc_endpoint(peer: str) -> Endpoint | None:
    """The endpoint of gRPC's peer text (``ipv4:127.0.0.1:5000``, ``ipv6:%5B::1%5D:5000``);
    ``None`` for other transports (``unix:``)."""
    kind, _, rest = peer.partition(":")
    if kind not in ("ipv4", "ipv6"):
        return None
    host, _, port = urllib.parse.unquote(rest).rpartition(":")
    try:
        return _address(host.strip("[]")), int(port)
    except ValueError:
        return None


def peer_address(peer: str) -> str | None:
    """The network address of gRPC's peer text, without its port; ``None`` for ``unix:``."""
    endpoint = grpc_endpoint(peer)
    return None if endpoint is None else endpoint[0]


@dataclass(frozen=True, slots=True)
class _Held:
    """One connection the server holds: its descriptor, and whose it is."""

    fd: int
    inode: int
    #: When the census first saw it (monotonic clock).
    since: float
    #: TCP: the remote endpoint.
    remote: Endpoint | None
    #: Unix: the peer it counts against (:meth:`ConnectionCensus._unix_peer`; ``None``: none).
    unix_peer: str | None = None


@dataclass(frozen=True, slots=True)
class Shed:
    """Connections of one peer closed by one count."""

    #: ``tcp 127.0.0.1``, ``bot pid:[4026532181]`` (a pid namespace) or ``process 1234``.
    peer: str
    #: What the peer held.
    held: int
    #: Its cap.
    cap: int
    #: How many were closed.
    closed: int


class ConnectionCensus:
    """Counts the server's connections per peer and shuts down those over a peer's cap.

    ``tcp_port`` and ``unix_path`` name the server's listeners (a connection accepted on one
    has it as its local address); ``in_use()`` returns the endpoints of TCP connections that
    carry a welcomed bot stream or a spectator (called from the census thread; ``None`` when it
    cannot say, and then no TCP connection is closed).
    """

    def __init__(
        self,
        tcp_port: int | None,
        unix_path: str | None,
        in_use: Callable[[], set[Endpoint] | None],
    ) -> None:
        self._tcp_port = tcp_port
        self._unix_path = unix_path
        self._in_use = in_use
        self._own_ns = _pid_namespace("self")
        #: Every socket the last count saw, by descriptor and inode, and whose connection it is
        #: (``None``: not one accepted by the server). A connection's peer never changes, so
        #: each socket is inspected once.
        self._known: dict[tuple[int, int], _Held | None] = {}
        self._warned: dict[str, float] = {}
        #: /dev/null, and the slot a socket is duplicated onto while it is looked at (dup2, so
        #: no new descriptor is needed); ``None`` until they could be opened.
        self._null: int | None = None
        self._slot: int | None = None
        self._open_slots()
        #: When the last failure of a count was logged.
        self._failed_at = -math.inf
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="arena-census", daemon=True)

    def start(self) -> None:
        """Count every :data:`CENSUS_INTERVAL_S` until :meth:`stop`."""
        self._thread.start()

    def stop(self) -> None:
        """Stop counting (blocking until the thread has)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5.0)
        if not self._thread.is_alive():
            for fd in (self._null, self._slot):
                if fd is not None:
                    os.close(fd)
            self._null = self._slot = None

    def _open_slots(self) -> None:
        try:
            if self._null is None:
                self._null = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
            if self._slot is None:
                self._slot = os.dup(self._null)
        except OSError:
            pass  # out of descriptors already: tried again at the next count

    def _run(self) -> None:
        while not self._stop.wait(CENSUS_INTERVAL_S):
            try:
                self.count()
            except Exception:
                # Whatever it is, it would recur at each count: logged once in a while.
                now = time.monotonic()
                if now - self._failed_at >= WARN_INTERVAL_S:
                    self._failed_at = now
                    log.exception("counting the server's connections")

    def count(self) -> list[Shed]:
        """Count once; close what is over the caps, warn, and say what was closed."""
        now = time.monotonic()
        held = self._held(now)
        shed = self._shed_tcp(held, now) + self._shed_unix(held)
        for s in shed:
            last = self._warned.get(s.peer)
            if last is None or now - last >= WARN_INTERVAL_S:
                self._warned[s.peer] = now
                log.warning(
                    "connections over the cap closed",
                    peer=s.peer,
                    held=s.held,
                    cap=s.cap,
                    closed=s.closed,
                )
        for peer in [p for p, t in self._warned.items() if now - t >= WARN_INTERVAL_S]:
            del self._warned[peer]
        return shed

    def _shed_tcp(self, held: list[_Held], now: float) -> list[Shed]:
        aged: dict[str, list[_Held]] = {}
        for h in held:
            if h.remote is not None and now - h.since >= IDLE_GRACE_S:
                aged.setdefault(h.remote[0], []).append(h)
        crowded = {a: hs for a, hs in aged.items() if len(hs) > MAX_IDLE_PER_ADDRESS}
        if not crowded:
            return []
        in_use = self._in_use()
        if in_use is None:
            return []
        out = []
        for address, hs in crowded.items():
            idle = [h for h in hs if h.remote not in in_use]
            if len(idle) <= MAX_IDLE_PER_ADDRESS:
                continue
            # The oldest first: they have waited longest for a stream that is not coming.
            idle.sort(key=lambda h: (h.since, h.inode))
            excess = idle[: len(idle) - MAX_IDLE_PER_ADDRESS]
            closed = sum(self._shut(h) for h in excess)
            out.append(Shed(f"tcp {address}", len(idle), MAX_IDLE_PER_ADDRESS, closed))
        return out

    def _shed_unix(self, held: list[_Held]) -> list[Shed]:
        peers: dict[str, list[_Held]] = {}
        for h in held:
            if h.unix_peer is not None:
                peers.setdefault(h.unix_peer, []).append(h)
        out = []
        for peer, hs in peers.items():
            if len(hs) <= MAX_CONNECTIONS_PER_BOT:
                continue
            # The newest first: a bot's own game connection is usually its first.
            hs.sort(key=lambda h: (h.since, h.inode))
            closed = sum(self._shut(h) for h in hs[MAX_CONNECTIONS_PER_BOT:])
            out.append(Shed(peer, len(hs), MAX_CONNECTIONS_PER_BOT, closed))
        return out

    def _held(self, now: float) -> list[_Held]:
        """Every connection accepted on the server's listeners, and whose it is."""
        self._open_slots()
        known = self._known
        current: dict[tuple[int, int], _Held | None] = {}
        namespaces: dict[int, str | None] = {}
        for key in _sockets():
            if key in known:
                current[key] = known[key]
                continue
            with self._pinned(*key) as sock:
                if sock is None:  # gone, or no descriptor to spare: seen again next time
                    continue
                try:
                    current[key] = self._inspect(sock, *key, now, namespaces)
                except OSError:  # no longer connected
                    current[key] = None
        self._known = current
        return [h for h in current.values() if h is not None]

    @contextlib.contextmanager
    def _pinned(self, fd: int, inode: int) -> Iterator[socket.socket | None]:
        """A socket object on the census's slot, duplicated from ``fd`` provided it is still the
        socket ``inode`` (gRPC may have closed ``fd`` and reused the number meanwhile);
        ``None`` otherwise, or without a slot."""
        null, slot = self._null, self._slot
        sock = None
        if null is not None and slot is not None:
            with contextlib.suppress(OSError):
                os.dup2(fd, slot, inheritable=False)
                if os.fstat(slot).st_ino == inode:
                    sock = socket.socket(fileno=slot)
        try:
            yield sock
        finally:
            if sock is not None:
                sock.detach()  # the slot stays the census's, not the socket object's
            if null is not None and slot is not None:
                os.dup2(null, slot, inheritable=False)  # lets go of the connection

    def _shut(self, h: _Held) -> bool:
        """End the connection ``h`` for both sides; whether it was still there to end."""
        with self._pinned(h.fd, h.inode) as sock:
            if sock is None:
                return False
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                return False
            return True

    def _inspect(
        self,
        sock: socket.socket,
        fd: int,
        inode: int,
        now: float,
        namespaces: dict[int, str | None],
    ) -> _Held | None:
        if sock.type != socket.SOCK_STREAM or sock.getsockopt(
            socket.SOL_SOCKET, socket.SO_ACCEPTCONN
        ):
            return None
        if sock.family == socket.AF_UNIX:
            if self._unix_path is None or sock.getsockname() != self._unix_path:
                return None
            pid = _PEERCRED.unpack(
                sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEERCRED.size)
            )[0]
            if pid not in namespaces:
                namespaces[pid] = self._unix_peer(pid)
            return _Held(fd, inode, now, None, namespaces[pid])
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            if sock.getsockname()[1] != self._tcp_port:
                return None
            host, port = sock.getpeername()[:2]
            return _Held(fd, inode, now, (_address(host), port))
        return None

    def _unix_peer(self, pid: int) -> str | None:
        """The peer a Unix connection from ``pid`` counts against: a pid namespace other than
        the server's (a sandboxed bot, a container), else the process itself (a bot run without
        a sandbox, or a connecting process gone since); ``None`` (not counted) for the server's
        own process and for a peer in a namespace the server cannot see into."""
        if pid <= 0 or pid == os.getpid():
            return None
        ns = _pid_namespace(str(pid))
        if ns is not None and ns != self._own_ns:
            return f"bot {ns}"
        return f"process {pid}"


def _sockets() -> Iterator[tuple[int, int]]:
    """The descriptor and inode of each socket this process holds. Listing ``/proc/self/fd``
    takes a descriptor; without one to spare, every number below the limit is looked at
    (``readlink`` takes none, and a process out of descriptors holds every one of them)."""
    try:
        numbers: Iterable[int] = [int(n) for n in os.listdir("/proc/self/fd")]
    except OSError as err:
        if err.errno not in (errno.EMFILE, errno.ENFILE):
            raise
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        numbers = range(soft if soft != resource.RLIM_INFINITY else 1 << 20)
    for fd in numbers:
        try:
            link = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed meanwhile, or never open
            continue
        if link.startswith("socket:["):
            yield fd, int(link[8:-1])


def _pid_namespace(pid: str) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None
