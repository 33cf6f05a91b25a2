"""Live versions' bots as they connect: whom a Hello's token belongs to, and the token of a
connected live version.

The arena's hub asks :meth:`LiveBots.owner` at every Hello that carries a token, from a thread of
its own (never on the loop that referees the matches), so a store held locked by the API or the
ladder delays only that Hello. The store keeps only the tokens' hashes: the tokens themselves are
learnt here as their bots say Hello.

An author's live bots connected at once are capped (``limits.live_bots_per_author``): one more
is rejected at its Hello with the quota in the message, before it is welcomed, so no match is
ever made with it and nothing is charged to any other bot. A bot reconnecting with its own
version's token is the same live bot, not one more.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from arena.host.store import CompetitionStore, Version
from arena.server import TokenRefused

#: Seconds a bot admitted here counts as connected before the hub has welcomed it (the two are
#: a hop apart): two Hellos at once cannot both take an author's last place.
WELCOME_GRACE_S = 5.0


class LiveBots:
    """Who a live token is, and which live versions are connected."""

    def __init__(
        self,
        store: CompetitionStore,
        connected: Callable[[str], bool],
        arrived: Callable[[], None],
        max_per_author: int = 0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``connected(token)``: whether a bot with that token is connected now;
        ``arrived()``: called (from a look-up thread) when a live version's bot says Hello;
        ``max_per_author``: an author's live bots connected at once (0: no limit)."""
        self._store = store
        self._connected = connected
        self._arrived = arrived
        self._max = max_per_author
        self._clock = clock
        self._tokens: dict[int, str] = {}
        #: Each admitted version's author and when it was admitted.
        self._admitted: dict[int, tuple[int, float]] = {}
        self._lock = threading.Lock()

    def owner(self, token: str) -> tuple[str, str] | None:
        """``(bot, version number)`` of the live version ``token`` connects, or ``None``."""
        version = self._store.version_for_live_token(token)
        # Welcome while it waits for its (immediate) validation too: refused now, it would
        # give up before the ladder could seat it.
        if version is not None and self._store.author_suspended(version.author_id):
            # Refused outright, saying why, not just unknown: a token still seated in a match
            # would otherwise resume its seats.
            raise TokenRefused("your author is suspended by the host")
        if version is None:
            return None
        if version.status in ("failed", "retired"):
            # The author's own token, not a guess: refused saying why, and not counted towards
            # the address's failed-auth lock-out (a retired bot that reconnects would lock out
            # its author's other bots).
            raise TokenRefused(f"{version.ref} is {version.status}: it plays no more matches")
        with self._lock:
            self._check_quota(version)
            self._tokens[version.id] = token
            self._admitted[version.id] = (version.author_id, self._clock())
        self._arrived()
        return version.bot, str(version.number)

    def _check_quota(self, version: Version) -> None:
        """:class:`TokenRefused` when ``version``'s author has their quota of live bots
        connected already (under the lock)."""
        if self._max <= 0:
            return
        now = self._clock()
        live = [
            vid
            for vid, (author, at) in self._admitted.items()
            if author == version.author_id
            and vid != version.id
            and (now - at < WELCOME_GRACE_S or self._connected(self._tokens[vid]))
        ]
        if len(live) >= self._max:
            refs = ", ".join(sorted(self._store.version_refs(live).values()))
            raise TokenRefused(
                f"quota: {self._max} live bots of one author connected at once "
                f"(limits.live_bots_per_author); yours connected: {refs}; stop one first"
            )

    def token(self, version_id: int) -> str | None:
        """The token of live version ``version_id``'s bot while it is connected."""
        with self._lock:
            token = self._tokens.get(version_id)
        return token if token is not None and self._connected(token) else None

    def connected_versions(self) -> set[int]:
        """The live versions whose bots are connected now."""
        with self._lock:
            tokens = list(self._tokens.items())
        return {v for v, t in tokens if self._connected(t)}

    def disconnect(self, version_ids: Sequence[int], drop: Callable[[str, str], bool]) -> int:
        """End the streams of those live versions' bots now (``drop(token, why)``: the
        server's); how many were connected."""
        with self._lock:
            tokens = [self._tokens[v] for v in version_ids if v in self._tokens]
        return sum(1 for t in tokens if drop(t, "disconnected by the host: author suspended"))

    def connected(self) -> int:
        """How many live versions' bots are connected now."""
        with self._lock:
            tokens = list(self._tokens.values())
        return sum(1 for t in tokens if self._connected(t))
