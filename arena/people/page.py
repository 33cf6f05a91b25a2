"""A person's page and its feed: a Starlette app, served on loopback by the bridge.

Every route sits under a seat's secret (``/play/SECRET/``): the page, its feed of page messages
as Server-Sent Events (``/play/SECRET/feed``), and the person's answers (``POST
/play/SECRET/answer``, ``{"request_id": R, "index": I}``). Anything else, a wrong secret
included, is a 404. The page is one document: the replay viewer's script and styles
(arena/web/static) and this package's own, inlined, so it fetches nothing but its feed, and its
Content-Security-Policy lets it reach nothing else.
"""

from __future__ import annotations

import asyncio
import hmac
import html
import json
from collections.abc import AsyncIterator, Sequence
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from arena.people.desk import Desk

#: The browser may load nothing but this page and its feed.
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
        "img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'"
    ),
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
#: A comment line on an idle feed this often (seconds), so a proxy or the browser keeps it open.
KEEPALIVE_S = 15.0
#: The largest answer body read.
MAX_BODY = 1024


def _asset(package: str, name: str, inlined: bool = True) -> str:
    text = resources.files(package).joinpath(name).read_text(encoding="utf-8")
    # Our own files: a closing tag inside one would end its element early, a bug to report.
    if inlined and ("</script" in text.lower() or "</style" in text.lower()):
        raise RuntimeError(f"{name} cannot be inlined")
    return text


def render(desk: Desk) -> str:
    """The page of ``desk``'s seat."""
    page = _asset("arena.people", "static/play.html", inlined=False)
    parts = {
        # A spectator's desk (arena watch) sits at no seat.
        "__TITLE__": html.escape(
            f"Card Arena · seat {desk.seat}" if desk.seat >= 0 else "Card Arena · watching"
        ),
        "__VIEWER_CSS__": _asset("arena.web", "static/viewer.css"),
        "__PLAY_CSS__": _asset("arena.people", "static/play.css"),
        "__VIEWER_JS__": _asset("arena.web", "static/viewer.js"),
        "__PLAY_JS__": _asset("arena.people", "static/play.js"),
    }
    for key, value in parts.items():
        page = page.replace(key, value, 1)
    return page


def people_app(desks: Sequence[Desk]) -> Starlette:
    """The app serving each desk's page, feed and answers under its secret."""

    def desk_of(request: Request) -> Desk | None:
        given = str(request.path_params.get("secret", ""))
        for desk in desks:
            if hmac.compare_digest(given.encode(), desk.secret.encode()):
                return desk
        return None

    def missing() -> Response:
        return JSONResponse({"error": "not found"}, status_code=404, headers=HEADERS)

    async def page(request: Request) -> Response:
        desk = desk_of(request)
        if desk is None:
            return missing()
        return HTMLResponse(render(desk), headers=HEADERS)

    async def feed(request: Request) -> Response:
        desk = desk_of(request)
        if desk is None:
            return missing()
        return StreamingResponse(_events(desk), media_type="text/event-stream", headers=HEADERS)

    async def answer(request: Request) -> Response:
        desk = desk_of(request)
        if desk is None:
            return missing()
        body = await request.body()
        try:
            data: Any = json.loads(body) if len(body) <= MAX_BODY else {}
            request_id, index = int(data["request_id"]), int(data["index"])
        except (ValueError, TypeError, KeyError):
            return JSONResponse(
                {"error": 'expected {"request_id": R, "index": I}'}, 400, headers=HEADERS
            )
        why = desk.answer(request_id, index)
        if why:
            return JSONResponse({"error": why}, 409, headers=HEADERS)
        return Response(status_code=204, headers=HEADERS)

    routes = [
        Route("/play/{secret}/", page),
        Route("/play/{secret}/feed", feed),
        Route("/play/{secret}/answer", answer, methods=["POST"]),
    ]
    return Starlette(routes=routes)


async def _events(desk: Desk) -> AsyncIterator[str]:
    """The desk's feed as Server-Sent Events: what it said so far, then each new message."""
    queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    desk.listeners.add(queue)
    try:
        for message in list(desk.feed):
            yield _sse(message)
        while True:
            try:
                message = await asyncio.wait_for(queue.get(), KEEPALIVE_S)
            except TimeoutError:
                yield ": keep-alive\n\n"
                continue
            yield _sse(message)
    finally:
        desk.listeners.discard(queue)


def _sse(message: dict[str, Any]) -> str:
    return "data: " + json.dumps(message, separators=(",", ":")) + "\n\n"
