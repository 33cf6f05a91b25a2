"""Who plays whom, in which seats, on which deal: a pure function of the config and the seed.

The unit of seating is a *place*: a partnership in a game with sides (whist, forty_five for 4,
tennis doubles with one bot per player), else a single seat. Every seat of a place is played by
the same bot, each seat by its own process (partners never share a process or a hand).

A *table* is an ordered choice of bots for the places. Tables are drawn so that every bot meets
every other one:

* at least as many bots as places: every combination of bots of the table's size
  (``round_robin``), or only the combinations that include the first bot (``gauntlet``);
* fewer bots than places (three bots at a five-player spoil_five table): one table where the
  bots fill the places cyclically, a bot taking several places.

Each table is played in every cyclic *rotation* of its places, so every bot sits in every
position equally often. With ``duplicate`` on, deal ``d`` of a table (its seed) is the same in
every rotation of that table, so the bots' luck with the cards cancels; each table has deals of
its own (so its deals' results are independent of other tables': honest intervals, and a bot
process needs no more seats on one deal than one table's rotations give it); with ``duplicate``
off every match gets its own seed. Each seat gets a seed (``MatchStart.bot_seed``) derived from
the match seed and its seat (:func:`arena.server.seat_seed`), so a tournament of seeded bots
reproduces end to end.

The schedule is built in memory, so its size is computed first (:func:`schedule_size`, by
arithmetic) and more than :data:`MAX_MATCHES` matches are refused before anything is built.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from arena.seeds import derive_seed
from engine import Game, MatchConfig


class Format(StrEnum):
    """Which tables a tournament plays."""

    #: Every combination of the bots, one per table.
    ROUND_ROBIN = "round_robin"
    #: Only the tables with the first bot: it against the field.
    GAUNTLET = "gauntlet"


#: The scheduling formats, in the order configs list them.
FORMATS = tuple(Format)

#: The most matches a schedule may have. A match takes about a second of a core (the demo: 48
#: matches in 17 s, 3 at once, on the 2-core development machine), so a million matches is days
#: of play on such a machine; building its schedule takes about 6 s and 350 MB (four seats), and
#: the store inserts it in one transaction. Past this a config is a mistake (two billion matches
#: per pairing, forty bots at ten-player tables), which would hang or exhaust memory.
MAX_MATCHES = 1_000_000


@dataclass(frozen=True, slots=True)
class MatchPlan:
    """One scheduled match: everything that fixes it, nothing about how it went."""

    #: Stable id, unique in the tournament: ``t02-d1-r0`` (table, deal, rotation).
    match_id: str
    #: Position in the schedule, from 0 (the order matches are started in).
    index: int
    #: Table number, from 0.
    table: int
    #: Deal number at that table, from 0.
    deal: int
    #: Rotation of the table's places, from 0.
    rotation: int
    #: The engine seed (shared by every rotation of a deal when duplicate is on).
    seed: int
    #: The bot playing each seat.
    seats: tuple[str, ...]


def places(game: Game, config: MatchConfig) -> tuple[tuple[int, ...], ...]:
    """The seats of each place: the game's sides, or one place per seat."""
    sides = game.sides(config)
    if sides is not None:
        return tuple(tuple(side) for side in sides)
    return tuple((seat,) for seat in range(game.num_seats(config)))


def table_count(n_bots: int, n_places: int, fmt: Format | str) -> int:
    """How many tables :func:`tables` draws, computed without drawing them."""
    fmt = Format(fmt)
    if n_bots < n_places:
        return 1
    if fmt is Format.GAUNTLET:
        return math.comb(n_bots - 1, n_places - 1)
    return math.comb(n_bots, n_places)


def schedule_size(n_bots: int, n_places: int, fmt: Format | str, matches_per_pairing: int) -> int:
    """How many matches :func:`build_schedule` would make: tables × matches per pairing."""
    return table_count(n_bots, n_places, fmt) * matches_per_pairing


def tables(bots: Sequence[str], n_places: int, fmt: Format | str) -> list[tuple[str, ...]]:
    """The tables (bots in place order) of a tournament, before rotation.

    ``ValueError`` for more than :data:`MAX_MATCHES` tables (each plays at least one match), counted
    before any is drawn: the config loader refuses such a config, this is the second line.
    """
    fmt = Format(fmt)  # a plain string from a caller: ValueError for an unknown one
    count = table_count(len(bots), n_places, fmt)
    if count > MAX_MATCHES:
        raise ValueError(f"{count:,} tables (at most {MAX_MATCHES:,})")
    if len(bots) < n_places:
        # Fewer bots than places: one table, the bots filling the places cyclically.
        return [tuple(bots[p % len(bots)] for p in range(n_places))]
    if fmt is Format.GAUNTLET:
        # The combinations that include the first bot, in the order (and so with the table
        # numbers) of filtering all combinations, without drawing the others.
        first = (bots[0],)
        return [first + rest for rest in itertools.combinations(bots[1:], n_places - 1)]
    return list(itertools.combinations(bots, n_places))


def rotations_per_table(n_bots: int, n_places: int) -> int:
    """How many distinct rotations put every bot of a table in every place once.

    With at least as many bots as places it is the number of places; with fewer bots the
    cyclic fill repeats after ``n_bots`` shifts, so that many suffice.
    """
    return n_places if n_bots >= n_places else n_bots


def rotate(table: tuple[str, ...], shift: int, period: int) -> tuple[str, ...]:
    """The table's bots shifted by ``shift`` places (cyclically, over ``period`` bots)."""
    if len(set(table)) == len(table):
        return table[shift:] + table[:shift]
    # Cyclic fill: shift which bot starts the cycle, so each bot reaches each place once.
    order = list(dict.fromkeys(table))
    return tuple(order[(p + shift) % period] for p in range(len(table)))


def build_schedule(
    game: Game,
    config: MatchConfig,
    bots: Sequence[str],
    fmt: Format | str,
    matches_per_pairing: int,
    duplicate: bool,
    seed: int,
) -> list[MatchPlan]:
    """Every match of the tournament, in the order they are started.

    ``matches_per_pairing`` must be a multiple of the rotations per table, and the schedule at
    most :data:`MAX_MATCHES` matches (both checked by the config loader; ``ValueError`` here,
    before anything is built); the deals per table are that number divided by the rotations.
    """
    seat_groups = places(game, config)
    n_places = len(seat_groups)
    n_seats = game.num_seats(config)
    period = rotations_per_table(len(bots), n_places)
    if matches_per_pairing % period:
        raise ValueError(f"matches per pairing must be a multiple of {period}")
    size = schedule_size(len(bots), n_places, fmt, matches_per_pairing)
    if size > MAX_MATCHES:
        raise ValueError(f"the schedule would have {size:,} matches (at most {MAX_MATCHES:,})")
    deals = matches_per_pairing // period
    drawn = tables(bots, n_places, fmt)
    width = len(str(max(len(drawn) - 1, 1)))
    plans: list[MatchPlan] = []
    # Deal-major order: every table plays deal 0 before any plays deal 1, so an interrupted or
    # still-running tournament has an even spread of results.
    for deal in range(deals):
        for t, table in enumerate(drawn):
            for r in range(period):
                by_place = rotate(table, r, period)
                seats = [""] * n_seats
                for place, group in enumerate(seat_groups):
                    for seat in group:
                        seats[seat] = by_place[place]
                match_id = f"t{t:0{width}d}-d{deal}-r{r}"
                match_seed = (
                    derive_seed(seed, "deal", t, deal)
                    if duplicate
                    else derive_seed(seed, "match", t, deal, r)
                )
                plans.append(
                    MatchPlan(
                        match_id=match_id,
                        index=len(plans),
                        table=t,
                        deal=deal,
                        rotation=r,
                        seed=match_seed,
                        seats=tuple(seats),
                    )
                )
    return plans
