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
position equally often. With ``duplicate`` on, deal ``d`` (its seed) is the same at every table
and in every rotation, so the bots' luck with the cards cancels; with it off every match gets
its own seed. Each bot process gets a seed (``ARENA_SEED``) derived from the match seed and its
seat (:func:`arena.server.seat_seed`), so a tournament of seeded bots reproduces end to end.
"""

from __future__ import annotations

import itertools
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


def tables(bots: Sequence[str], n_places: int, fmt: Format | str) -> list[tuple[str, ...]]:
    """The tables (bots in place order) of a tournament, before rotation."""
    fmt = Format(fmt)  # a plain string from a caller: ValueError for an unknown one
    if len(bots) < n_places:
        # Fewer bots than places: one table, the bots filling the places cyclically.
        return [tuple(bots[p % len(bots)] for p in range(n_places))]
    combos = list(itertools.combinations(bots, n_places))
    if fmt is Format.GAUNTLET:
        combos = [c for c in combos if bots[0] in c]
    return combos


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

    ``matches_per_pairing`` must be a multiple of the rotations per table (checked by the
    config loader); the deals per table are that number divided by the rotations.
    """
    seat_groups = places(game, config)
    n_places = len(seat_groups)
    n_seats = game.num_seats(config)
    period = rotations_per_table(len(bots), n_places)
    if matches_per_pairing % period:
        raise ValueError(f"matches per pairing must be a multiple of {period}")
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
                    derive_seed(seed, "deal", deal)
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
