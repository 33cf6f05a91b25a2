"""``$ARENA_RESOLVE``: reach a host by another address than its name resolves to, as curl's
``--connect-to`` does, keeping the name for TLS (the certificate is checked against it).

For split DNS, a host seen from its own network, or a test on loopback::

    ARENA_RESOLVE=arena.example.org:8443:127.0.0.1:18443,arena.example.org:50051:10.0.0.5

Each entry is ``NAME:PORT:ADDRESS[:PORT]`` (the port kept when the second is left out; an IPv6
address in brackets); entries are separated by commas or spaces. A bot's gRPC stream
(:func:`cardarena.run_bot`) and ``arena remote`` both read it.
"""

from __future__ import annotations

import re
from typing import Any, Final

#: The environment variable both the SDK and ``arena remote`` read.
RESOLVE_ENV: Final = "ARENA_RESOLVE"

_HOST = r"(\[[0-9A-Fa-f:.]+\]|[^\s:\[\],]+)"
_ENTRY = re.compile(rf"{_HOST}:(\d{{1,5}}):{_HOST}(?::(\d{{1,5}}))?")

#: ``(name, port)`` -> ``(address, port)``: where to connect instead.
Resolve = dict[tuple[str, int], tuple[str, int]]


class ResolveError(ValueError):
    """``$ARENA_RESOLVE`` is malformed; one line saying where."""


def parse_resolve(text: str) -> Resolve:
    """The entries of ``text`` (``$ARENA_RESOLVE``'s value); names compared in lower case."""
    mapping: Resolve = {}
    for entry in text.replace(",", " ").split():
        match = _ENTRY.fullmatch(entry)
        ports = [int(p) for p in match.group(2, 4) if p is not None] if match else []
        if match is None or not all(0 < p < 65536 for p in ports):
            raise ResolveError(
                f"{RESOLVE_ENV}: {entry!r} is not NAME:PORT:ADDRESS[:PORT] "
                "(arena.example.org:8443:127.0.0.1:18443)"
            )
        name, address = match.group(1).lower(), match.group(3)
        mapping[(name, ports[0])] = (address.strip("[]"), ports[-1])
    return mapping


def split_address(address: str) -> tuple[str, int] | None:
    """``host:port`` (``[v6]:port`` too) as its parts; ``None`` for anything else."""
    match = re.fullmatch(rf"{_HOST}:(\d{{1,5}})", address.strip())
    return None if match is None else (match.group(1).strip("[]").lower(), int(match.group(2)))


def grpc_target(address: str, resolve: Resolve) -> tuple[str, list[tuple[str, Any]]]:
    """The gRPC target for ``address`` and the channel options that keep its name: the
    mapped address, the name checked against the certificate and sent as ``:authority``."""
    parts = split_address(address)
    if parts is None or parts not in resolve:
        return address, []
    host, port = resolve[parts]
    target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    name = parts[0]
    return target, [
        ("grpc.ssl_target_name_override", name),
        ("grpc.default_authority", f"{name}:{parts[1]}"),
    ]
