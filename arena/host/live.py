"""Live versions' bots as they connect: whom a Hello's token belongs to, and the token of a
connected live version.

The arena's hub asks :meth:`LiveBots.owner` at every Hello that carries a token, from a thread of
its own (never on the loop that referees the matches), so a store held locked by the API or the
ladder delays only that Hello. The store keeps only the tokens' hashes: the tokens themselves are
learnt here as their bots say Hello.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from arena.host.store import CompetitionStore


class LiveBots:
    """Who a live token is, and which live versions are connected."""

    def __init__(
        self,
        store: CompetitionStore,
        connected: Callable[[str], bool],
        arrived: Callable[[], None],
    ) -> None:
        """``connected(token)``: whether a bot with that token is connected now;
        ``arrived()``: called (from a look-up thread) when a live version's bot says Hello."""
        self._store = store
        self._connected = connected
        self._arrived = arrived
        self._tokens: dict[int, str] = {}
        self._lock = threading.Lock()

    def owner(self, token: str) -> tuple[str, str] | None:
        """``(bot, version number)`` of the live version ``token`` connects, or ``None``."""
        version = self._store.version_for_live_token(token)
        # Welcome while it waits for its (immediate) validation too: refused now, it would
        # give up before the ladder could seat it.
        if version is None or version.status in ("failed", "retired"):
            return None
        with self._lock:
            self._tokens[version.id] = token
        self._arrived()
        return version.bot, str(version.number)

    def token(self, version_id: int) -> str | None:
        """The token of live version ``version_id``'s bot while it is connected."""
        with self._lock:
            token = self._tokens.get(version_id)
        return token if token is not None and self._connected(token) else None
