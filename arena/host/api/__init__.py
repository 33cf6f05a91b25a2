"""The competition's HTTP JSON API (FastAPI), one router per resource.

``app`` builds it (:func:`create_app`); ``deps`` holds what routes depend on (the
:class:`HostState` they serve, who is asking); ``errors`` answers every error in one line;
``views`` turns the store's rows into the bodies of :mod:`arena.host.apitypes`; the routers are
``status`` (status, leaderboard), ``bots`` (bots and versions), ``submissions`` (new versions),
``matches`` (matches, records, seat logs), ``authors`` and ``admin``.
"""

from arena.host.api.app import create_app
from arena.host.api.deps import HostState

__all__ = ["HostState", "create_app"]
