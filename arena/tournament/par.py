"""A tournament's par (arena/par.py; docs/ratings.md, "Par: luck-adjusted scores"), with the
reference's scores cached beside the results in ``par.sqlite``.

The cache is derived data, so it lives in a file of its own rather than in ``results.sqlite``:
``arena ratings`` keeps reading the results file read-only (a running tournament's, or one whose
write lock another process holds), the results file's schema and the older arenas that read it
stay as they are, and deleting ``par.sqlite`` costs only the time to replay the deals again. A
row is keyed by the reference's label and the arena's version (a new reference bot plays other
moves), the table (game, its version, players, options) and the match seed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from arena.par import MatchPar, ParTable, Reference, match_par, reference_scores, summarize
from arena.sqlite import SQLiteStore, serialized
from arena.tournament.store import Store, StoreError
from arena.version import arena_version
from engine import EngineError, get_game

#: The cache's file name, beside ``results.sqlite``.
PAR_NAME: Final = "par.sqlite"

_SCHEMA = """
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE reference_scores (
    reference TEXT NOT NULL,     -- the reference's label and the arena's version: 'rules 1.2.0'
    setup     TEXT NOT NULL,     -- JSON: game, game_version, players, options
    seed      INTEGER NOT NULL,  -- the match seed
    scores    TEXT NOT NULL,     -- JSON list: each seat's score with the reference at every seat
    PRIMARY KEY (reference, setup, seed)
);
"""

# Schema 1. Released migrations are never edited: a change is a new entry.
MIGRATIONS: Final[tuple[str, ...]] = (_SCHEMA,)

#: Reference scores are committed this many deals at a time (an interrupted run keeps them).
BATCH: Final = 32


class ParCache(SQLiteStore):
    """``par.sqlite``: the reference's scores per match seed."""

    ERROR = StoreError
    LOCKED = StoreError
    FILE = "par cache (delete it: it is recomputed)"
    SCHEMA = "par cache"

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self._open(MIGRATIONS)

    @serialized
    def scores(self, reference: str, setup: str) -> dict[int, tuple[float, ...]]:
        """Every cached seed's scores for this reference and table."""
        return dict(
            self._rows(
                "the reference_scores table",
                "SELECT seed, scores FROM reference_scores WHERE reference=? AND setup=?",
                (reference, setup),
                lambda row: "a row of cached scores",
                _cached_row,
            )
        )

    @serialized
    def put(self, reference: str, setup: str, rows: Sequence[tuple[int, Sequence[float]]]) -> None:
        with self._transaction() as db:
            db.executemany(
                "INSERT OR REPLACE INTO reference_scores (reference, setup, seed, scores) "
                "VALUES (?, ?, ?, ?)",
                [(reference, setup, seed, json.dumps(list(s))) for seed, s in rows],
            )


def _cached_row(row: Sequence[Any]) -> tuple[int, tuple[float, ...]]:
    scores = json.loads(row[1])
    if not isinstance(scores, list) or not all(_is_number(s) for s in scores):
        raise ValueError("scores must be a list of numbers")
    return int(row[0]), tuple(float(s) for s in scores)


def _is_number(x: object) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def _setup(identity: Mapping[str, Any]) -> tuple[str, int, dict[str, Any], str]:
    """Game, players and options of the stored table (a tournament's or a competition's
    identity), checked against this engine, and the cache key of that table. A game whose rules
    changed since cannot replay the deals."""
    game = str(identity["game"])
    try:
        spec = get_game(game)
        spec.configure(int(identity["players"]), dict(identity["options"]))
    except EngineError as err:
        raise StoreError(f"par: the table cannot be replayed here ({err})") from None
    stored = identity.get("game_version")
    if stored is not None and stored != spec.version:
        raise StoreError(
            f"par: the matches were played with {game} version {stored}, this engine has "
            f"version {spec.version}: their deals cannot be replayed"
        )
    table = {k: identity.get(k) for k in ("game", "game_version", "players", "options")}
    key = json.dumps(table, sort_keys=True)
    return game, int(identity["players"]), dict(identity["options"]), key


@dataclass(frozen=True, slots=True)
class Played:
    """A finished match as par reads it."""

    match_id: str
    #: Its engine seed (secret: never shown).
    seed: int
    #: The bot (or version) of each seat.
    seats: tuple[str, ...]
    #: ``Result.to_dict()``.
    result: Mapping[str, Any]


def _scores(m: Played) -> list[float]:
    scores = m.result.get("scores")
    if not isinstance(scores, list) or len(scores) != len(m.seats):
        raise StoreError(f"match {m.match_id!r}: its result's scores are damaged")
    if not all(_is_number(s) for s in scores):
        raise StoreError(f"match {m.match_id!r}: its result's scores are damaged")
    return [float(s) for s in scores]


def par_over(
    identity: Mapping[str, Any],
    finished: Sequence[Played],
    reference: Reference,
    cache_path: Path,
    progress: Callable[[int, int], None] = lambda done, total: None,
) -> ParTable:
    """Par per match and per bot over ``finished`` not ended by a forfeit (a forfeit's scores
    are 1 and 0, not the game's units), on the table of ``identity`` (game, game_version,
    players, options). Reference scores missing from the cache at ``cache_path`` are computed
    in process and cached; ``progress(done, total)`` after each of those deals. ``StoreError``
    (one line) for a table that cannot be replayed or a damaged cache."""
    game, players, options, setup = _setup(identity)
    played = [m for m in finished if m.result.get("reason") != "forfeit"]
    key = f"{reference.label} {arena_version()}"
    with ParCache(cache_path) as cache:
        known = cache.scores(key, setup)
        # A deal's first match names it in messages (seeds are as secret as the cards).
        missing = {m.seed: m.match_id for m in played if m.seed not in known}
        seeds = list(missing)
        for start in range(0, len(seeds), BATCH):
            batch = []
            for seed in seeds[start : start + BATCH]:
                try:
                    known[seed] = reference_scores(game, players, options, seed, reference)
                except EngineError as err:
                    raise StoreError(
                        f"par: the deal of match {missing[seed]!r} cannot be replayed ({err})"
                    ) from None
                batch.append((seed, known[seed]))
                progress(start + len(batch), len(missing))
            cache.put(key, setup, batch)
    matches = []
    for m in played:
        ref = known[m.seed]
        if len(ref) != len(m.seats):
            raise StoreError(f"{PAR_NAME}: the cached scores of match {m.match_id!r} are damaged")
        matches.append(MatchPar(m.match_id, m.seed, match_par(m.seats, _scores(m), ref)))
    return summarize(reference.label, matches, len(finished) - len(played))


def tournament_par(
    store: Store,
    reference: Reference,
    progress: Callable[[int, int], None] = lambda done, total: None,
) -> ParTable:
    """:func:`par_over` the finished matches of a tournament, cached beside its results."""
    identity = store.stored_config()
    assert identity is not None
    finished = [
        Played(m.match_id, m.seed, m.seats, m.result)
        for m in store.matches("done")
        if m.result is not None
    ]
    return par_over(identity, finished, reference, store.path.with_name(PAR_NAME), progress)
