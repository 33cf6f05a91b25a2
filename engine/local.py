"""In-process play: SDK bots on the engine, in one process, refereed as the arena referees them.

::

    from cardarena import RandomBot
    from engine.local import duel, play

    matches = play("whist", [MyBot(), RandomBot(), MyBot(), RandomBot()], seed=7, deals=4)
    verdict = duel("tennis", MyBot(), RandomBot(), seed=7, units=50)

A breakpoint in ``choose`` stops the match right there: nothing waits on a clock or a socket.
Needs the SDK (``cardarena-sdk``) beside the engine, and nothing else: no grpc, no arena.

The arena's, here: each deal's seed (deal 1 plays ``seed``, deal k ``derive_seed(seed, "game",
k - 1)``, as ``arena match --games`` derives them), each bot's generator seeded from
:func:`engine.seeds.seat_seed` as MatchStart's ``bot_seed`` seeds it (unless the bot was given a
seed), the SDK's fallback (a ``choose`` that raises or returns a bad index plays the first legal
action, and the referee sees a legal answer), and the record format (:mod:`engine.records`:
``arena replay verify`` passes). What differs: there is no clock, so time controls are not
enforced (a record's ``time_control`` is null; each decision's time is measured and recorded as
its ``ms``), and there are no faults: a bot in process cannot time out, crash or send garbage.
"""

from __future__ import annotations

import logging
import os
import secrets
import tempfile
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cardarena.bot import Bot, RandomBot, Turn
from cardarena.messages import Action as SdkAction
from cardarena.messages import Result as SdkResult
from cardarena.messages import clean_note

from engine.core import JSON, Event, Game, MatchConfig, Result
from engine.core import Action as EngineAction
from engine.options import OptionValue, option_to_text
from engine.records import RECORD_SUFFIX, decision_entry, event_entry, match_header, record_bytes
from engine.registry import get_game
from engine.seeds import derive_seed, fresh_seed, seat_seed
from engine.sprt import SprtParams, SprtStatus, SprtTally, status

log = logging.getLogger("engine.local")

#: The fault policy a record names: nothing is ever charged in process (see the module's doc).
FAULT_POLICY = "lenient"


@dataclass(frozen=True, slots=True)
class LocalMatch:
    """One match played by :func:`play`."""

    #: Its id (``GAME-HEX``, ``-gN`` per deal when there are several, ``-rN`` per rotation).
    match_id: str
    #: The engine seed it was dealt from.
    seed: int
    #: Which rotation of the places it is (0 unless ``duplicate``).
    rotation: int
    #: The bot in each seat, by its name.
    bots: tuple[str, ...]
    #: The engine's result.
    result: Result
    #: Per seat, how many times ``choose`` raised or returned a bad index (the first legal
    #: action was played instead, as the SDK plays it over the wire).
    failures: tuple[int, ...]
    #: The record written, if ``out`` was given.
    record: Path | None = None
    #: The seats' bots (the objects), in seat order.
    seated: tuple[Bot, ...] = field(default=(), repr=False, compare=False)
    #: Decisions taken in the match, over every seat.
    decisions: int = 0


def play(
    game: str,
    seats: Sequence[Bot | str],
    *,
    seed: int | None = None,
    deals: int = 1,
    duplicate: bool = False,
    players: int | None = None,
    options: Mapping[str, OptionValue] | None = None,
    out: str | os.PathLike[str] | None = None,
    match_id: str | None = None,
) -> list[LocalMatch]:
    """Play ``deals`` matches of ``game`` in process, one bot per seat (``"random"`` for the
    SDK's :class:`~cardarena.RandomBot`), and write each record under ``out`` if given.

    ``duplicate``: each deal is played once in every rotation of the table's places (its
    partnerships, else its seats) among the bots, on the same seed, so that luck cancels.
    Raises ``ConfigError`` for a bad table and ``ValueError`` for a bad argument.
    """
    if deals < 1:
        raise ValueError(f"deals must be at least 1, got {deals}")
    spec = get_game(game)
    config = spec.configure(players, options or {})
    bots = [RandomBot() if b == "random" else b for b in seats]
    for bot in bots:
        if not isinstance(bot, Bot):
            raise ValueError(f"a seat takes a cardarena Bot or 'random', not {bot!r}")
    n = spec.num_seats(config)
    if len(bots) != n:
        raise ValueError(f"{game} with {config.players} players has {n} seats; got {len(bots)}")
    seed = fresh_seed() if seed is None else seed
    base = match_id or f"{game}-{secrets.token_hex(4)}"
    seated = [b for b in bots if isinstance(b, Bot)]
    rotations = rotations_of(spec, config, seated) if duplicate else [tuple(seated)]
    played = []
    offers = _Offers()
    for deal in range(deals):
        deal_seed = seed if deal == 0 else derive_seed(seed, "game", deal)
        deal_id = base if deals == 1 else f"{base}-g{deal + 1}"
        for r, table in enumerate(rotations):
            mid = deal_id if len(rotations) == 1 else f"{deal_id}-r{r}"
            played.append(_play_one(spec, config, table, deal_seed, mid, r, out, offers))
    return played


def rotations_of(game: Game, config: MatchConfig, bots: Sequence[Bot]) -> list[tuple[Bot, ...]]:
    """The seatings of a duplicate deal: the bots of the table's places (a partnership's seats,
    else one seat) shifted by one place at a time, until each has sat in every place; a table
    of repeated places (two bots at three seats) shifts each place through the distinct ones
    only, so each bot meets each place once (the arena's units do the same for a cyclic fill)."""
    sides = game.sides(config)
    places = [tuple(s) for s in sides] if sides is not None else [(s,) for s in range(len(bots))]
    by_place = [tuple(bots[seat] for seat in group) for group in places]
    keys = [tuple(id(b) for b in place) for place in by_place]
    distinct = list(dict.fromkeys(keys))
    out = []
    for shift in range(len(distinct)):
        if len(distinct) == len(by_place):
            shifted = by_place[shift:] + by_place[:shift]
        else:
            first = {key: place for key, place in zip(keys, by_place, strict=True)}
            shifted = [
                first[distinct[(distinct.index(key) + shift) % len(distinct)]] for key in keys
            ]
        table: list[Bot] = list(bots)
        for group, place in zip(places, shifted, strict=True):
            for seat, bot in zip(group, place, strict=True):
                table[seat] = bot
        out.append(tuple(table))
    return out


class _Seats:
    """The bots of one match: which seats each plays, and the events each has been told."""

    def __init__(self, match_id: str, table: Sequence[Bot]) -> None:
        self.match_id = match_id
        self.table = table
        #: Each distinct bot and the seats it plays (the arena's connection and its seats).
        self.groups: list[tuple[Bot, tuple[int, ...]]] = []
        for bot in {id(b): b for b in table}.values():
            self.groups.append((bot, tuple(s for s, b in enumerate(table) if b is bot)))
        self.told = [0] * len(self.groups)
        #: Whether any bot has an event hook (else telling is nothing to do).
        self.listening = any(bot.wants_events() for bot, _ in self.groups)

    def tell(self, events: Sequence[Event], only: Bot | None = None) -> None:
        """Give each bot with an event hook the events it may see that it has not seen."""
        if not self.listening:
            return
        for g, (bot, seats) in enumerate(self.groups):
            if only is not None and bot is not only:
                continue
            if bot.wants_events():
                for event in events[self.told[g] :]:
                    if event.to is None or any(s in event.to for s in seats):
                        _safely(
                            bot.on_event,
                            self.match_id,
                            event.kind,
                            dict(event.data),
                            event.to is not None,
                        )
            self.told[g] = len(events)


def _play_one(
    game: Game,
    config: MatchConfig,
    table: Sequence[Bot],
    seed: int,
    match_id: str,
    rotation: int,
    out: str | os.PathLike[str] | None,
    offers: _Offers,
) -> LocalMatch:
    n = len(table)
    options = {k: option_to_text(v) for k, v in config.options}
    seats = _Seats(match_id, table)
    for bot, group in seats.groups:
        if not bot.seeded:
            # MatchStart's bot_seed: a bot playing several seats gets its first seat's.
            bot.rng.seed(seat_seed(seed, group[0]))
        for first in group:
            bot.start_match(game.id, first, dict(options))
    state = game.new_match(config, seed)
    entries: list[dict[str, JSON]] = []
    failures = [0] * n
    recorded = decisions = 0
    while (seat := state.to_move) is not None:
        bot = table[seat]
        seats.tell(state.events, only=bot)
        legal = state.legal_actions()
        offered = offers.of(legal)
        observation = state.observation(seat).to_dict() if reads_observation(bot) else {}
        started = time.monotonic()
        bot.turn = Turn(match_id, seat, n, options, 0, 0, started)
        index, why = _choose(bot, game.id, observation, offered, match_id)
        ms = (time.monotonic() - started) * 1000.0
        if index is None:
            failures[seat] += 1
            index = 0  # the SDK's fallback: the referee sees a legal answer
        if out is not None:
            entries.extend(event_entry(event) for event in state.events[recorded:])
            recorded = len(state.events)
            # Marked as the SDK marks it over the wire (Action.sdk_fallback), so records agree.
            fallback = why and clean_note(why)
            entries.append(
                decision_entry(seat, len(legal), legal[index].text, ms, False, "", fallback)
            )
        state.apply(legal[index])
        decisions += 1
    if out is not None:
        entries.extend(event_entry(e) for e in state.events[recorded:])
    seats.tell(state.events)
    result = state.result()
    assert result is not None
    plain = SdkResult(
        result.scores, result.ranks, result.reason, result.forfeited_by, result.summary
    )
    for bot, _group in seats.groups:
        _safely(bot.end_match, match_id, plain)
    path = None
    if out is not None:
        header = match_header(
            match_id, game, config, seed, [(b.name, b.version) for b in table], None, FAULT_POLICY
        )
        path = Path(out) / f"{match_id}{RECORD_SUFFIX}"
        _write(path, record_bytes(header, entries, {**result.to_dict(), "faults": []}))
    return LocalMatch(
        match_id,
        seed,
        rotation,
        tuple(b.name for b in table),
        result,
        tuple(failures),
        path,
        tuple(table),
        decisions,
    )


class _Offers:
    """The SDK's action for each engine action offered, made once per :func:`play` call: the
    engine interns its actions and the SDK's are frozen, so one serves every decision. Found by
    identity (an engine action's hash is computed from its fields at every call)."""

    def __init__(self) -> None:
        self._by_id: dict[int, SdkAction] = {}
        self._kept: list[EngineAction] = []  # alive while their ids are keys

    def of(self, legal: Sequence[EngineAction]) -> list[SdkAction]:
        by_id = self._by_id
        return [by_id.get(id(a)) or self._make(a) for a in legal]

    def _make(self, a: EngineAction) -> SdkAction:
        self._kept.append(a)
        made = self._by_id[id(a)] = SdkAction(a.kind, a.arg)
        return made


def reads_observation(bot: Bot) -> bool:
    """Whether ``bot``'s ``choose`` may read its observation: all but the SDK's own
    ``RandomBot.choose`` (which draws an index from ``legal`` alone; a subclass that overrides
    it, or an instance given another ``choose``, is asked with the observation). The one that
    does not is given an empty dict: building an observation costs more than the engine's own
    move (docs/performance.md, "Transports")."""
    return getattr(bot.choose, "__func__", None) is not RandomBot.choose


def _choose(
    bot: Bot, game: str, observation: Mapping[str, JSON], legal: Sequence[SdkAction], match: str
) -> tuple[int | None, str]:
    """The bot's index, or ``None`` when ``choose`` raised or gave a bad index (logged, with the
    traceback, as the SDK logs it), and why in the SDK's words (``""``: it did not)."""
    try:
        index = bot.choose(game, observation, legal)
    except Exception as err:
        log.warning(
            "bot.choose failed; playing the first legal action: %s: %s (match %s)\n%s",
            type(err).__name__,
            err,
            match,
            traceback.format_exc(),
        )
        return None, f"{type(err).__name__}: {err}"
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(legal):
        log.warning(
            "bot.choose returned a bad index (%r); playing the first legal action (match %s)",
            index,
            match,
        )
        return None, f"bad index: {index!r}"
    return index, ""


def _safely(hook: Callable[..., object], *args: object) -> None:
    """A bot's optional hook (events, match end): a failure is logged and costs nothing else."""
    try:
        hook(*args)
    except Exception as err:
        log.warning("a bot's hook failed: %s: %s", type(err).__name__, err)


def _write(path: Path, data: bytes) -> None:
    """Write a record atomically (a temporary file beside it, renamed over it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@dataclass(frozen=True, slots=True)
class Duel:
    """What :func:`duel` played, and where its SPRT stands."""

    #: The SPRT's status after the last unit (verdict ``None``: no verdict within ``units``).
    status: SprtStatus
    #: Every match played, unit by unit.
    matches: tuple[LocalMatch, ...]


def duel(
    game: str,
    candidate: Bot,
    baseline: Bot,
    *,
    seed: int | None = None,
    units: int = 100,
    sprt: SprtParams | None = None,
    players: int | None = None,
    options: Mapping[str, OptionValue] | None = None,
    out: str | os.PathLike[str] | None = None,
) -> Duel:
    """Duplicate deals between ``candidate`` and ``baseline`` until the SPRT (default: H0 0 Elo,
    H1 10 Elo) decides or ``units`` deals are played. A unit is one deal in both rotations; its
    score is the candidate's mean match score (1 a win, 0 a loss, 1/2 a tie), as the arena's
    SPRT runs score it. The table must have two places (two seats, or two partnerships)."""
    params = sprt or SprtParams(0.0, 10.0)
    spec = get_game(game)
    config = spec.configure(players, options or {})
    sides = spec.sides(config)
    places = list(sides) if sides is not None else [(s,) for s in range(spec.num_seats(config))]
    if len(places) != 2:
        raise ValueError(f"a duel needs a table of two places; {game} has {len(places)} here")
    table: list[Bot] = [candidate] * spec.num_seats(config)
    for seat in places[1]:
        table[seat] = baseline
    seed = fresh_seed() if seed is None else seed
    tally = SprtTally()
    played: list[LocalMatch] = []
    now = status(tally, params)
    base = f"{game}-duel-{secrets.token_hex(4)}"
    for unit in range(units):
        matches = play(
            game,
            table,
            seed=derive_seed(seed, "unit", unit),
            duplicate=True,
            players=players,
            options=options,
            out=out,
            match_id=f"{base}-u{unit + 1}",
        )
        played.extend(matches)
        tally.add(sum(_score(m, candidate) for m in matches) / len(matches), len(matches))
        now = status(tally, params)
        if now.verdict is not None:
            break
    return Duel(now, tuple(played))


def _score(match: LocalMatch, candidate: Bot) -> float:
    """The candidate's score in a two-place match: 1 ranked first alone, 0 last, 1/2 a tie."""
    ranks = match.result.ranks
    mine = {ranks[s] for s, b in enumerate(match.seated) if b is candidate}
    theirs = {ranks[s] for s, b in enumerate(match.seated) if b is not candidate}
    if min(mine) < min(theirs):
        return 1.0
    if min(mine) > min(theirs):
        return 0.0
    return 0.5
