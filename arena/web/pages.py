"""The competition's web pages, served by ``arena host`` beside its API.

Each page is one Jinja2 template (``templates/page.html``, autoescaped: names come from
strangers) that names what it shows; the script (``static/pages.js``, built from ``web/src`` with
its chart library by ``make web``) draws it from the public JSON API (``/api/v1``), so the pages
show nothing the API does not. An author signs in by pasting their API token, which stays in the
browser's storage and goes only to this host, as ``Authorization: Bearer``; their seat logs,
validation reasons and tokens come from the API's author calls with it.

Nothing is loaded from elsewhere: every script, style and font is served from ``/static``, and
the Content-Security-Policy says so to the browser too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.exceptions import HTTPException as StarletteHTTPException

from arena.web.assets import PROTO_NAME, Text, proto_text, rules_texts, starter_archive

#: The API's paths: their errors stay JSON.
API_PREFIX = "/api/"
#: The bundle ``make web`` builds; the pages say so when it is missing.
PAGES_SCRIPT = "pages.js"
#: Everything from this host, nothing inline but styles (the charts set style attributes).
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; "
        "form-action 'self'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def _package_dir(name: str) -> Path:
    return Path(str(resources.files("arena.web").joinpath(name)))


def static_dir() -> Path:
    """The pages' scripts and styles."""
    return _package_dir("static")


@dataclass(frozen=True, slots=True)
class Site:
    """What the pages know of the competition beyond its API: its game (for its rules and its
    starter bot), and whether a bot or a match of that name exists (an unknown one is a 404)."""

    game: str = ""
    bot_exists: Callable[[str], bool] = lambda name: True
    match_exists: Callable[[str], bool] = lambda match_id: True


#: ``(path, page kind, title)`` of each page whose shell takes nothing from its address.
SHELLS: tuple[tuple[str, str, str], ...] = (
    ("/leaderboard", "leaderboard", "Leaderboard"),
    ("/bots", "bots", "Bots"),
    ("/matches", "matches", "Matches"),
    ("/seasons", "seasons", "Seasons"),
    ("/events", "events", "Events"),
    ("/live", "live", "Playing now"),
    ("/me", "me", "Your bots"),
    ("/admin", "admin", "Admin"),
)


def add_pages(app: FastAPI, competition: str, site: Site | None = None) -> None:
    """Serve the pages of ``competition`` (its name, in titles) and ``/static`` on ``app``."""
    site = site or Site()
    env = Environment(
        loader=FileSystemLoader(_package_dir("templates")),
        autoescape=select_autoescape(default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    template = env.get_template("page.html")
    app.mount("/static", StaticFiles(directory=static_dir()), name="static")

    def page(
        kind: str,
        title: str,
        args: dict[str, Any] | None = None,
        *,
        status: int = 200,
        texts: Sequence[Text] = (),
        note: str = "",
    ) -> HTMLResponse:
        html = template.render(
            page=kind,
            title=title,
            competition=competition,
            args=args or {},
            viewer=kind == "match",
            built=(static_dir() / PAGES_SCRIPT).is_file(),
            texts=texts,
            note=note,
        )
        return HTMLResponse(html, status_code=status, headers=SECURITY_HEADERS)

    def not_found(what: str) -> HTMLResponse:
        return page("notfound", "Not found", status=404, note=what)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, err: StarletteHTTPException) -> Response:
        # The API's clients read JSON; a person who mistyped a page's address reads a page.
        if err.status_code != 404 or request.url.path.startswith(API_PREFIX):
            return await http_exception_handler(request, err)
        return not_found(f"There is no page at {request.url.path}.")

    @app.get("/", include_in_schema=False)
    def home() -> Response:
        return RedirectResponse("/leaderboard", status_code=303)

    def shell(kind: str, title: str) -> Callable[[], HTMLResponse]:
        def handler() -> HTMLResponse:
            return page(kind, title)

        return handler

    # Pages whose shell takes nothing from the address: they draw themselves from the API
    # (/admin from /api/v1/admin, with the admin token).
    for path, kind, title in SHELLS:
        app.add_api_route(path, shell(kind, title), include_in_schema=False)

    @app.get("/bots/{name}", include_in_schema=False)
    def bot(name: str) -> HTMLResponse:
        if not site.bot_exists(name):
            return not_found(f"No bot called {name}.")
        return page("bot", name, {"name": name})

    @app.get("/matches/{match_id}", include_in_schema=False)
    def match(match_id: str) -> HTMLResponse:
        if not site.match_exists(match_id):
            return not_found(f"No match {match_id}.")
        return page("match", match_id, {"match_id": match_id})

    @app.get("/seasons/{number}", include_in_schema=False)
    def season(number: int) -> HTMLResponse:
        return page("season", f"Season {number}", {"number": number})

    @app.get("/events/{name}", include_in_schema=False)
    def event(name: str) -> HTMLResponse:
        return page("event", name, {"name": name})

    add_author_pages(app, page, not_found, competition, site.game)


def add_author_pages(
    app: FastAPI,
    page: Callable[..., HTMLResponse],
    not_found: Callable[[str], HTMLResponse],
    competition: str,
    game: str,
) -> None:
    """What an author needs to write a bot: the game's rules, the protocol, a starter bot."""

    @app.get("/rules", include_in_schema=False)
    def rules() -> HTMLResponse:
        texts = rules_texts(game)
        if not texts:
            return not_found(f"This installation has no rules page for {game}.")
        return page("text", f"The rules of {game}", texts=texts)

    @app.get("/protocol", include_in_schema=False)
    def protocol() -> HTMLResponse:
        proto = proto_text()
        if proto is None:
            return not_found("This installation has no copy of the protocol.")
        note = "Bots talk to the arena over gRPC with these messages (the SDKs wrap them)."
        return page("text", "The protocol", texts=[proto], note=note)

    @app.get(f"/{PROTO_NAME}", include_in_schema=False)
    def proto_file() -> Response:
        proto = proto_text()
        if proto is None:
            return not_found("This installation has no copy of the protocol.")
        return PlainTextResponse(proto.text, headers=SECURITY_HEADERS)

    @app.get("/starter.tar.gz", include_in_schema=False)
    def starter(request: Request) -> Response:
        origin = str(request.base_url).rstrip("/")
        return Response(
            starter_archive(competition, game, origin),
            media_type="application/gzip",
            headers={
                **SECURITY_HEADERS,
                "Content-Disposition": 'attachment; filename="starter.tar.gz"',
            },
        )
