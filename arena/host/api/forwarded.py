"""The client behind a reverse proxy the host trusts (``[http] trusted_proxies``).

A request whose connection comes from a trusted proxy is the client that proxy names: the
rightmost address of ``X-Forwarded-For`` that is not itself a trusted proxy. Each proxy appends
the address it saw, so what lies left of that is whatever the client claimed and is never
believed; a header that does not parse leaves the request the proxy's. Every part inside this
one (the limits, the lock-outs, the logs) sees that address. With no trusted proxy (the default)
the header is ignored altogether.
"""

from __future__ import annotations

from collections.abc import Sequence
from ipaddress import IPv4Network, IPv6Network, ip_address

from starlette.types import ASGIApp, Receive, Scope, Send

Networks = Sequence[IPv4Network | IPv6Network]


def _trusted(address: str, networks: Networks) -> bool:
    try:
        ip = ip_address(address)
    except ValueError:
        return False
    return any(ip in net for net in networks)


def forwarded_client(header: str, networks: Networks) -> str | None:
    """The client ``header`` (an ``X-Forwarded-For`` value, every such header joined by commas)
    names behind the trusted ``networks``; ``None`` when it names none that parses."""
    hops = [h.strip() for h in header.split(",")]
    for hop in reversed(hops):
        try:
            address = str(ip_address(hop))
        except ValueError:
            return None
        if not _trusted(address, networks):
            return address
    # Every hop a trusted proxy: the first of them is the client.
    return str(ip_address(hops[0])) if hops and hops[0] else None


class ForwardedFor:
    """ASGI middleware: behind a trusted proxy, ``scope["client"]`` is the forwarded client."""

    def __init__(self, app: ASGIApp, trusted: Networks) -> None:
        self.app = app
        self.trusted = tuple(trusted)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        client = scope.get("client")
        if (
            scope["type"] == "http"
            and self.trusted
            and client
            and _trusted(client[0], self.trusted)
        ):
            values = [
                v.decode("latin-1") for k, v in scope.get("headers", ()) if k == b"x-forwarded-for"
            ]
            real = forwarded_client(",".join(values), self.trusted) if values else None
            if real is not None:
                scope = {**scope, "client": (real, 0)}
        await self.app(scope, receive, send)
