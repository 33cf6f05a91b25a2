"""The competition's HTTP JSON API (FastAPI: its OpenAPI schema is at ``/openapi.json``).

Anyone may read the status, the leaderboards, the bots and the finished matches; an author (with
``Authorization: Bearer TOKEN``) submits and retires their own versions and reads their own logs
and archives; the host (with the admin token in ``DIR/private/admin.token``) adds authors and
steers the ladder. Every error is ``{"detail": "one line"}`` with a 4xx status: a stranger's
mistake never shows a traceback. A match's record is public only once every rotation of its
deal has been played, so that no bot can read a deal it is still to play.
"""

from __future__ import annotations

from fastapi import FastAPI

import arena.host.api.admin as admin
import arena.host.api.analysis as analysis
import arena.host.api.authors as authors
import arena.host.api.bots as bots
import arena.host.api.challenges as challenges
import arena.host.api.events as events
import arena.host.api.exports as exports
import arena.host.api.health as health
import arena.host.api.live as live
import arena.host.api.matches as matches
import arena.host.api.seasons as seasons
import arena.host.api.status as status
import arena.host.api.submissions as submissions
from arena.host.api.challenges import is_challenge
from arena.host.api.deps import HostState
from arena.host.api.errors import add_error_handlers
from arena.host.api.forwarded import ForwardedFor
from arena.host.api.limits import RateLimit
from arena.host.metrics import CompetitionCollector, HostMetrics, ResponseCounter
from arena.host.store import NotFound
from arena.version import arena_version
from arena.web.pages import Site, add_pages

#: The routers, in the order their routes are listed in the schema.
ROUTERS = (
    status,
    bots,
    matches,
    authors,
    submissions,
    admin,
    health,
    seasons,
    exports,
    events,
    live,
    analysis,
    challenges,
)


def create_app(host: HostState) -> FastAPI:
    """The API over ``host``, and the web pages drawn from it."""
    app = FastAPI(
        title=f"Card Arena competition: {host.config.name}",
        version=arena_version(),
        description=__doc__,
        # FastAPI's /docs and /redoc pages load their scripts from a CDN: on a host without
        # internet (or for an author behind one) they are blank. The schema itself is served.
        docs_url=None,
        redoc_url=None,
    )
    app.state.host = host
    add_error_handlers(app)
    # Outermost: a request over its rate costs the host no route, no page, no store.
    app.add_middleware(RateLimit, throttle=host.throttle)
    # Outside that: the 429s are counted too.
    app.state.metrics = HostMetrics(CompetitionCollector(host.store, host.live_bots, host.parts))
    app.add_middleware(ResponseCounter, metrics=app.state.metrics)
    # Outermost: behind a trusted proxy, every part above sees the forwarded client.
    app.add_middleware(ForwardedFor, trusted=host.config.http.trusted_proxies)
    for module in ROUTERS:
        app.include_router(module.router)
    # A challenge's page (/play/SECRET/), passed through to its bridge.
    app.include_router(challenges.pages)
    # The web face: pages drawn from this API, at paths of their own (arena/web/pages.py).
    add_pages(app, host.config.name, _site(host))
    return app


def _site(host: HostState) -> Site:
    """The pages' questions to the store: is there a bot, a match, of that name (else 404)."""
    store = host.store

    def match_exists(match_id: str) -> bool:
        try:
            # A challenge's page too: a human match, labelled so.
            store.challenge(match_id) if is_challenge(match_id) else store.match(match_id)
        except NotFound:
            return False
        return True

    def bot_exists(name: str) -> bool:
        return any(b.name == name for b in store.bots())

    return Site(host.config.rules.game_id, bot_exists, match_exists)
