"""The ladder's par (``[ladder] par``; docs/ratings.md, "Par: luck-adjusted scores"), kept up
to date by a part of its own, off the request path.

Every :data:`PAR_INTERVAL_S` seconds the keeper reads the finished ladder matches, replays in
process (in a worker thread) the deals whose reference scores are not yet cached, and keeps the
resulting table for the API: a request only reads :attr:`ParKeeper.table`. The cache is
``private/par.sqlite`` (it holds the units' seeds, as secret as the cards), a file of its own
beside the competition's database: derived data, safe to delete, and no change to the
database's schema. Par counts the matches the ladder's leaderboard fits: the current season's
with ``[seasons] ratings = "reset"``, else every finished ladder match to date.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import structlog
import trio

from arena.host.config import CompetitionConfig
from arena.host.seasons import fitted_season
from arena.host.store import CompetitionStore
from arena.layout import PRIVATE_DIR
from arena.par import ParTable, Reference
from arena.tournament.par import PAR_NAME, Played, par_over

log = structlog.get_logger("arena.host")

#: Seconds between two looks at the finished matches.
PAR_INTERVAL_S: Final = 30.0


class ParKeeper:
    """The ladder's par against one reference, refreshed in the background."""

    def __init__(
        self,
        store: CompetitionStore,
        config: CompetitionConfig,
        reference: Reference,
        directory: Path,
        interval_s: float | None = None,
    ) -> None:
        """``interval_s``: seconds between two refreshes (default :data:`PAR_INTERVAL_S`)."""
        self._store = store
        self._config = config
        self._identity = config.rules.identity()
        self._reference = reference
        self._cache = directory / PRIVATE_DIR / PAR_NAME
        self._interval_s = PAR_INTERVAL_S if interval_s is None else interval_s
        #: The latest table; ``None`` until the first refresh ends.
        self.table: ParTable | None = None

    def refresh(self) -> ParTable:
        """Par over the matches of the ladder's finished units that its leaderboard fits, now
        (blocking: the replays run here)."""
        store = self._store
        season = fitted_season(self._config, store.current_season().number)
        filters = {"phase": "ladder", "season": season}
        refs = {v.id: v.ref for v in store.versions()}
        count = store.finished_matches_count(filters)
        page = store.finished_matches_page(limit=max(count, 1), filters=filters)
        finished = [
            Played(m.match_id, m.seed, tuple(refs[v] for v in m.seats), m.result)
            for m, unit_state in reversed(page)  # oldest first
            if unit_state == "done" and m.result is not None
        ]
        self._cache.parent.mkdir(mode=0o700, exist_ok=True)  # as the admin token's
        self.table = par_over(self._identity, finished, self._reference, self._cache)
        return self.table

    async def run(self) -> None:
        """Refresh, in a worker thread, every ``interval_s`` seconds, forever."""
        while True:
            table = await trio.to_thread.run_sync(self.refresh)
            log.debug("par refreshed", matches=len(table.matches), reference=table.reference)
            await trio.sleep(self._interval_s)
