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

from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, select_autoescape

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


def add_pages(app: FastAPI, competition: str) -> None:
    """Serve the pages of ``competition`` (its name, in titles) and ``/static`` on ``app``."""
    env = Environment(
        loader=FileSystemLoader(_package_dir("templates")),
        autoescape=select_autoescape(default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    template = env.get_template("page.html")
    app.mount("/static", StaticFiles(directory=static_dir()), name="static")

    def page(kind: str, title: str, args: dict[str, Any] | None = None) -> HTMLResponse:
        html = template.render(
            page=kind,
            title=title,
            competition=competition,
            args=args or {},
            viewer=kind == "match",
            built=(static_dir() / PAGES_SCRIPT).is_file(),
        )
        return HTMLResponse(html, headers=SECURITY_HEADERS)

    @app.get("/", include_in_schema=False)
    def home() -> Response:
        return RedirectResponse("/leaderboard", status_code=303)

    @app.get("/leaderboard", include_in_schema=False)
    def leaderboard() -> HTMLResponse:
        return page("leaderboard", "Leaderboard")

    @app.get("/bots/{name}", include_in_schema=False)
    def bot(name: str) -> HTMLResponse:
        return page("bot", name, {"name": name})

    @app.get("/matches", include_in_schema=False)
    def matches() -> HTMLResponse:
        return page("matches", "Matches")

    @app.get("/matches/{match_id}", include_in_schema=False)
    def match(match_id: str) -> HTMLResponse:
        return page("match", match_id, {"match_id": match_id})

    @app.get("/seasons", include_in_schema=False)
    def seasons() -> HTMLResponse:
        return page("seasons", "Seasons")

    @app.get("/seasons/{number}", include_in_schema=False)
    def season(number: int) -> HTMLResponse:
        return page("season", f"Season {number}", {"number": number})

    @app.get("/events", include_in_schema=False)
    def events() -> HTMLResponse:
        return page("events", "Events")

    @app.get("/events/{name}", include_in_schema=False)
    def event(name: str) -> HTMLResponse:
        return page("event", name, {"name": name})

    @app.get("/me", include_in_schema=False)
    def me(request: Request) -> HTMLResponse:
        return page("me", "Your bots")

    @app.get("/admin", include_in_schema=False)
    def admin() -> HTMLResponse:
        # The shell only: what it shows comes from /api/v1/admin with the admin token.
        return page("admin", "Admin")
