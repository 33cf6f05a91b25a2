"""The game interface every referee implements.

The split follows OpenSpiel: a :class:`Game` describes a game and validates a configuration, a
:class:`MatchState` is one match in progress, and a seat's view of it is an :class:`Observation`.
Everything here is pure and deterministic: no I/O, no clocks, no threads. All chance comes from a
``random.Random`` seeded by the referee, and every chance outcome is also written to the event
log, so ``config + seed + decisions`` reproduce a match exactly.

Seats are the deciding parties, numbered from 0 clockwise. Usually one seat is one player; in a
game where partners confer (tennis doubles by default) one seat controls a whole team.
"""

from __future__ import annotations

import dataclasses
import json
import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self, TypeAlias, cast

from engine._fast import cloned_attrs, quick_init, share_instances_of
from engine.errors import ConfigError, EngineError, IllegalActionError, MatchOverError
from engine.options import OptionSpec, OptionValue, resolve_options

#: A JSON-compatible value: what event data, observations and results are made of.
JSON: TypeAlias = bool | int | float | str | Sequence["JSON"] | Mapping[str, "JSON"] | None


@dataclass(frozen=True, slots=True)
class Action:
    """One choice a seat can make. Games intern their actions, so identity checks are cheap.

    The text form ``kind`` or ``kind:arg`` (``play:QS``, ``trump:H``, ``pass``) is stable across
    versions; it is what bots may send and what records store.
    """

    #: What sort of choice: ``play``, ``trump``, ``rob``, ``shot`` …
    kind: str
    #: The choice's argument (a card, a suit letter, a court move), or ``""``.
    arg: str = ""
    #: The canonical text form; derived from ``kind`` and ``arg``.
    text: str = field(default="", compare=False)
    #: Position in its game's action space (:meth:`Game.action_space`), set once by
    #: :func:`number_actions` when the game builds that space at import; -1 for an action made
    #: elsewhere (a decoded message: :meth:`MatchState.find_action` gives the game's own).
    #: Stored on the interned action, so reading it costs a slot read, not a look-up.
    index: int = field(default=-1, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", f"{self.kind}:{self.arg}" if self.arg else self.kind)

    def __str__(self) -> str:
        return self.text

    # Actions are immutable and interned: copies (clone() deep-copies states) keep identity.
    def __copy__(self) -> Action:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> Action:
        return self


def number_actions(*groups: Sequence[Action]) -> tuple[Action, ...]:
    """An action space: ``groups`` joined in order, each action's :attr:`Action.index` set to its
    position. Games intern their actions and several spaces share some (every trick game's
    ``play:`` actions come first, at 0..51), so an action already numbered must keep its number:
    anything else raises ``ValueError`` at import rather than mislabelling a mask."""
    space = tuple(a for group in groups for a in group)
    for i, action in enumerate(space):
        if action.index not in (-1, i):
            raise ValueError(f"{action.text} is action {action.index} elsewhere, not {i}")
        object.__setattr__(action, "index", i)
    return space


# Every decision makes an event: quick_init's __init__ fills the slots through their descriptors
# rather than calling object.__setattr__ per field as the generated frozen one does.
@quick_init
@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened in a match: a deal, a card played, a trick won, a score.

    ``to`` says who may see it: ``None`` for every seat (public), else the seats that may.
    Events are immutable facts, ``data`` included (never modify it: a game may intern an event
    and log the same object in many matches, as whist does with its ``play`` events).
    """

    #: What happened: ``deal``, ``play``, ``trick``, ``score`` …
    kind: str
    #: The details, JSON-compatible, cards in text form.
    data: Mapping[str, JSON]
    #: ``None`` when public; otherwise the seats allowed to see this event.
    to: tuple[int, ...] | None = None

    def visible_to(self, seat: int) -> bool:
        """Whether ``seat`` may see this event."""
        return self.to is None or seat in self.to

    def to_dict(self) -> dict[str, JSON]:
        """A JSON-ready form: ``{"kind": …, "to": …, **data}``."""
        return {"kind": self.kind, "to": None if self.to is None else list(self.to), **self.data}


@dataclass(frozen=True, slots=True)
class Observation:
    """Base of every game's observation: what one seat is allowed to know right now.

    Subclasses are frozen dataclasses whose fields hold only JSON-compatible values (cards as
    text, tuples for lists), each documented, so that one generic translation can turn them into
    protocol messages and records.
    """

    #: The seat this observation is for.
    seat: int

    def to_dict(self) -> dict[str, JSON]:
        """The observation as plain JSON-compatible data (tuples become lists): what
        ``dataclasses.asdict`` gives, keys as text, without its deep copy of every leaf
        (in-process play builds one per decision; tests/engine/test_observation_dict.py)."""
        data = _plain(self)
        assert isinstance(data, dict)
        return data

    def render(self) -> str:
        """A plain-text rendering for humans and simple bots."""
        return "\n".join(f"{k}: {v}" for k, v in self.to_dict().items())


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


#: Types :func:`_plain` returns as they are.
_LEAVES = frozenset({str, int, bool, float, type(None)})
_all_leaves = _LEAVES.issuperset
#: Per dataclass type, a function that gives its fields as a dict (each value through _plain).
_TO_DICT: dict[type, Callable[[Any], dict[str, Any]]] = {}


def _plain(value: Any) -> Any:
    """``_jsonable(dataclasses.asdict(value))`` for a dataclass ``value``: the exact types an
    observation holds (text, numbers, None, tuples, lists, dicts, nested dataclasses) are walked
    directly, anything else is converted as ``asdict`` converts it (a deep copy)."""
    kind = type(value)
    if kind in _LEAVES:
        return value
    if kind is tuple or kind is list:
        if _all_leaves(map(type, value)):
            return list(value)
        return [_plain(v) for v in value]
    if kind is dict:
        return {str(k): _plain(v) for k, v in value.items()}
    convert = _TO_DICT.get(kind)
    if convert is None:
        if not dataclasses.is_dataclass(value) or isinstance(value, type):
            return _jsonable(dataclasses.asdict(_Boxed(value)))["value"]
        convert = _TO_DICT[kind] = _dict_maker(kind)
    return convert(value)


def _dict_maker(kind: type) -> Callable[[Any], dict[str, Any]]:
    """A function building ``kind``'s dict field by field, leaves inline (a call per field is
    most of the cost of a generic walk)."""
    names = [f.name for f in dataclasses.fields(kind)]
    items = ", ".join(f"{n!r}: (v if type(v := o.{n}) in leaves else plain(v))" for n in names)
    scope: dict[str, Any] = {"leaves": _LEAVES, "plain": _plain}
    exec(f"def to_dict(o):\n    return {{{items}}}\n", scope)
    return cast(Callable[[Any], dict[str, Any]], scope["to_dict"])


@dataclass(frozen=True, slots=True)
class _Boxed:
    """A value that is not a dataclass, given to ``dataclasses.asdict`` as a field's value: the
    rare types :func:`_plain` does not walk are converted exactly as ``asdict`` converts them."""

    value: Any


@dataclass(frozen=True, slots=True)
class Result:
    """How a finished match came out, per seat."""

    #: Each seat's score in the game's own unit (points, sets, chips); higher is better.
    scores: tuple[float, ...]
    #: Each seat's rank, 1 = best; equal ranks are ties.
    ranks: tuple[int, ...]
    #: Why the match ended: ``normal``, or ``forfeit`` when a seat forfeited.
    reason: str = "normal"
    #: The forfeiting seat when ``reason`` is ``forfeit``.
    forfeited_by: int | None = None
    #: One line for people: ``N+S win the rubber 2-1``.
    summary: str = ""
    #: Counters the game keeps for statistics (summed by self-play), e.g. aces served.
    stats: Mapping[str, int] = field(default_factory=dict)

    @property
    def winners(self) -> tuple[int, ...]:
        """The seats ranked first."""
        return tuple(s for s, r in enumerate(self.ranks) if r == 1)

    def to_dict(self) -> dict[str, JSON]:
        """JSON-ready form."""
        return {
            "scores": list(self.scores),
            "ranks": list(self.ranks),
            "reason": self.reason,
            "forfeited_by": self.forfeited_by,
            "summary": self.summary,
            "stats": dict(self.stats),
        }


def ranks_from_scores(scores: Sequence[float]) -> tuple[int, ...]:
    """Competition ranking (1, 2, 2, 4): higher score is better, equal scores tie."""
    return tuple(1 + sum(1 for o in scores if o > s) for s in scores)


def rank_returns(
    ranks: Sequence[int], sides: Sequence[Sequence[int]] | None = None
) -> tuple[float, ...]:
    """Zero-sum utilities from ranks: seat ``i`` gets ``sum(sign(ranks[j] - ranks[i])) / k``
    over its opponents ``j`` (+1 for each it beat, -1 for each that beat it, 0 for a tie).

    Opponents are every other seat, or with ``sides`` the seats outside ``i``'s side (partners
    share a result, so they are not played against). ``k`` is the same for every seat, the most
    opponents any seat has (``n - 1``; ``n`` minus the smallest side), so the pairs cancel and the
    utilities sum to exactly 0, each in [-1, 1]: a whist rubber gives ±1, a five-player spoil
    five ranked 1 2 2 4 5 gives 1, 0.25, 0.25, -0.5, -1.
    """
    n = len(ranks)
    if n < 2:
        return (0.0,) * n
    side_of = {s: i for i, side in enumerate(sides or ()) for s in side}
    # A seat in no side plays alone: its own side (negative keys never clash with side numbers).
    team = [side_of.get(s, -1 - s) for s in range(n)]
    k = max(sum(1 for j in range(n) if team[j] != team[i]) for i in range(n))
    if k == 0:
        return (0.0,) * n
    return tuple(
        sum((ranks[j] > ranks[i]) - (ranks[j] < ranks[i]) for j in range(n) if team[j] != team[i])
        / k
        for i in range(n)
    )


@dataclass(frozen=True, slots=True)
class MatchConfig:
    """A validated configuration: the game, the number of players and every option's value."""

    #: The game's id, e.g. ``whist``.
    game_id: str
    #: Number of players at the table (not always the number of deciding seats).
    players: int
    #: Every option of the game, defaults filled in, sorted by name.
    options: tuple[tuple[str, OptionValue], ...]

    def option(self, name: str) -> OptionValue:
        """The value of option ``name``."""
        for key, value in self.options:
            if key == name:
                return value
        raise KeyError(name)

    def int_option(self, name: str) -> int:
        """The value of an ``int`` option."""
        value = self.option(name)
        assert isinstance(value, int)
        return value

    def to_dict(self) -> dict[str, JSON]:
        """JSON-ready form."""
        return {"game": self.game_id, "players": self.players, "options": dict(self.options)}


class Game(ABC):
    """A game the arena can referee: its id, version, table sizes and options."""

    #: Stable id used everywhere (configs, protocol, records): ``whist``.
    id: ClassVar[str]
    #: Version of the rules implementation; bump it when a rule or a constant changes.
    version: ClassVar[str]
    #: Human title.
    title: ClassVar[str]
    #: The allowed numbers of players.
    player_counts: ClassVar[tuple[int, ...]]
    #: Players when none are asked for.
    default_players: ClassVar[int]
    #: The options this game accepts.
    options: ClassVar[tuple[OptionSpec, ...]] = ()

    def configure(
        self, players: int | None = None, options: Mapping[str, OptionValue] | None = None
    ) -> MatchConfig:
        """Validate a configuration; raises :class:`ConfigError` naming what is wrong."""
        n = self.default_players if players is None else players
        if n not in self.player_counts:
            allowed = _describe_counts(self.player_counts)
            raise ConfigError(f"{self.id} is played by {allowed} players; got {n}")
        resolved = resolve_options(self.id, self.options, options or {})
        config = MatchConfig(self.id, n, tuple(sorted(resolved.items())))
        self.check_config(config)
        return config

    def check_config(self, config: MatchConfig) -> None:
        """Cross-option checks a game may add; raise :class:`ConfigError`."""

    def action_space(self, config: MatchConfig) -> tuple[Action, ...]:
        """Every action the game can ever offer in ``config``, in a stable order: the fixed
        space that :attr:`Action.index` and :meth:`MatchState.legal_mask` refer to. Games build
        it once with :func:`number_actions`; the legal lists keep their own canonical order."""
        raise NotImplementedError(f"{self.id} has no action space")

    def num_seats(self, config: MatchConfig) -> int:
        """Number of deciding seats (bots) for ``config``; usually the number of players."""
        return config.players

    def seat_names(self, config: MatchConfig) -> tuple[str, ...]:
        """Names of the seats, e.g. ``N E S W``; by default ``P1`` … ``Pn``."""
        return tuple(f"P{i + 1}" for i in range(self.num_seats(config)))

    def sides(self, config: MatchConfig) -> tuple[tuple[int, ...], ...] | None:
        """The partnerships, as tuples of seats, or ``None`` when every seat plays alone."""
        return None

    def summarize_stats(self, totals: Mapping[str, int], matches: int) -> dict[str, float]:
        """Derived figures (rates) from statistics counters summed over ``matches``."""
        return {}

    # --- presentation: what a viewer shows, said by the game rather than guessed by the viewer

    #: Which drawing a viewer uses: ``trick_table`` (seats round a table, the tricks between
    #: them, each seat's ``hand``), ``tennis_court``, or ``fields`` (each field by name).
    presentation_kind: ClassVar[str] = "fields"
    #: Observation fields a viewer need not carry, because they repeat what it shows otherwise.
    undrawn_fields: ClassVar[tuple[str, ...]] = ()

    def present(self, config: MatchConfig, public: Mapping[str, JSON]) -> Presentation:
        """What a viewer shows of one moment of a match: labelled scores, facts and notes.

        ``public`` is an observation (``to_dict()`` form) with every part that differs between
        seats removed, so a presentation tells a seat nothing it could not see; a game must keep
        it that way, reading only parts every seat's observation shares. By default: each field
        by name, its value as JSON.
        """
        facts = tuple(
            (key.replace("_", " "), json.dumps(value))
            for key, value in public.items()
            if key not in ("seat", "tricks", "hand")
        )
        return Presentation(facts=facts)

    def holdings(
        self, config: MatchConfig, views: Sequence[Mapping[str, JSON]]
    ) -> tuple[Holding, ...] | None:
        """Every hand at one moment, for a view of the whole table, from every seat's observation
        (``views[seat]``, ``to_dict()`` form). ``None``, the default, means one hand per seat:
        the fields of its observation that differ between seats."""
        return None

    @abstractmethod
    def new_match(self, config: MatchConfig, seed: int) -> MatchState:
        """Start a match; all its chance comes from ``seed``."""

    # --- search from what a bot is sent ----------------------------------------------------

    #: Observation fields :meth:`restore` may not reproduce exactly (a window of recent events).
    restore_unchecked: ClassVar[frozenset[str]] = frozenset()

    def restore(
        self,
        config: MatchConfig,
        observation: Mapping[str, JSON],
        events: Sequence[Event] = (),
        rng: random.Random | None = None,
    ) -> MatchState:
        """A full state that shows ``observation`` to its seat: what a search bot builds from
        what the protocol sends it, having no referee's state to :meth:`MatchState.determinize`.

        ``observation`` is a seat's observation as plain data (``Observation.to_dict()``, the
        dict a Python bot is given); ``events`` are the events that seat has seen so far, oldest
        first, for what a game's observation does not hold (tennis's face-down discards). What
        neither shows is drawn from ``rng`` as :meth:`MatchState.determinize` draws it,
        respecting what they do show (voids, cards seen, hand sizes); the state draws its future
        chance from ``rng`` too. Determinize the result once per simulation to sample again.

        Raises :class:`EngineError` when the observation is not one this game could show (the
        state built from it would show the seat something else).
        """
        seat = observation.get("seat")
        if not isinstance(seat, int) or not 0 <= seat < self.num_seats(config):
            raise EngineError(f"{self.id}: the observation names no seat of this table: {seat!r}")
        rng = rng if rng is not None else random.Random(0)
        try:
            state = self._restore(config, observation, events, rng)
        except (KeyError, TypeError, ValueError, IndexError) as err:
            raise EngineError(f"{self.id}: cannot restore from this observation: {err!r}") from None
        state._legal = None
        state.events = list(events)
        if state.to_move is not None:
            state._redeal_hidden(seat, rng)
        shown = state.observation(seat).to_dict()
        for key in observation.keys() | shown.keys():
            if key not in self.restore_unchecked and shown.get(key) != observation.get(key):
                raise EngineError(
                    f"{self.id}: the observation is not one this game shows: {key!r} would be "
                    f"{shown.get(key)!r}, not {observation.get(key)!r}"
                )
        return state

    def _restore(
        self,
        config: MatchConfig,
        observation: Mapping[str, JSON],
        events: Sequence[Event],
        rng: random.Random,
    ) -> MatchState:
        """Hook for :meth:`restore`: a state with every part the observation shows set from it
        and the hidden parts filled in any way that has the right sizes (``restore`` then
        re-deals them with ``_redeal_hidden``). Start from :meth:`MatchState.bare`."""
        raise NotImplementedError(f"{self.id} cannot restore a state from an observation")


@dataclass(frozen=True, slots=True)
class ScoreRow:
    """One labelled line of a score: a value per side or per seat."""

    #: What the values are: ``Tricks this deal``.
    label: str
    #: ``(who, value)`` per side or seat, both as text: ``("N+S", "3")``.
    cells: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class Holding:
    """One hand in a view of the whole table: whose, its cards, and which seats may see them."""

    #: Whose hand: a seat or player name, with its role if it has one (``A1 (R)``).
    label: str
    #: The cards, in text form.
    cards: tuple[str, ...]
    #: The seats whose observation shows these cards.
    seen_by: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Presentation:
    """What a viewer shows of one moment of a match besides the board (:meth:`Game.present`)."""

    #: Scores per side or seat.
    rows: tuple[ScoreRow, ...] = ()
    #: ``(label, value)`` pairs: ``("Deal", "2 of 5")``.
    facts: tuple[tuple[str, str], ...] = ()
    #: Sentences about the deal that field values would say badly: ``N robbed the turn-up``.
    notes: tuple[str, ...] = ()
    #: What the drawing of the game's :attr:`Game.presentation_kind` reads besides the fields,
    #: by the viewer document's key (tennis: ``tennis``, its scoreboard as said on court).
    drawing: Mapping[str, JSON] = field(default_factory=dict)
    #: A plain-text picture for text views (the tennis court), or ``""``.
    sketch: str = ""

    def to_dict(self) -> dict[str, JSON]:
        """JSON-ready form: rows ``{label, cells: [{who, value}]}``, facts ``{label, value}``."""
        rows: list[JSON] = [
            {"label": r.label, "cells": [{"who": w, "value": v} for w, v in r.cells]}
            for r in self.rows
        ]
        return {
            "rows": rows,
            "facts": [{"label": label, "value": value} for label, value in self.facts],
            "notes": list(self.notes),
            "drawing": _jsonable(dict(self.drawing)),
            "sketch": self.sketch,
        }


def name_of(names: Sequence[str], seat: JSON) -> str | None:
    """``names[seat]`` when ``seat`` is a seat number, else ``None`` (fields say -1 for nobody)."""
    if isinstance(seat, int) and not isinstance(seat, bool) and 0 <= seat < len(names):
        return names[seat]
    return None


def seat_row(game: Game, config: MatchConfig, label: str, values: JSON) -> ScoreRow | None:
    """A row of one value per seat, named as the game names seats; ``None`` unless a list."""
    if not isinstance(values, list | tuple):
        return None
    return _row(label, game.seat_names(config), values)


def side_row(game: Game, config: MatchConfig, label: str, values: JSON) -> ScoreRow | None:
    """A row of one value per side: partnerships joined (``N+S``), else the seats' names (or
    ``side 1`` …); ``None`` unless ``values`` is a list."""
    if not isinstance(values, list | tuple):
        return None
    names = game.seat_names(config)
    sides = game.sides(config)
    if sides and len(sides) == len(values):
        who: Sequence[str] = ["+".join(names[s] for s in side) for side in sides]
    elif len(values) == len(names):
        who = names
    else:
        who = [f"side {i + 1}" for i in range(len(values))]
    return _row(label, who, values)


def _row(label: str, who: Sequence[str], values: Sequence[JSON]) -> ScoreRow:
    return ScoreRow(label, tuple((w, str(v)) for w, v in zip(who, values, strict=False)))


def _describe_counts(counts: tuple[int, ...]) -> str:
    if len(counts) == 1:
        return str(counts[0])
    if counts == tuple(range(counts[0], counts[-1] + 1)):
        return f"{counts[0]} to {counts[-1]}"
    return ", ".join(map(str, counts[:-1])) + f" or {counts[-1]}"


share_instances_of(Game)  # a match state refers to its game; clone() never copies it


class MatchState(ABC):
    """One match in progress. Subclasses implement the ``_``-prefixed hooks.

    The protocol for a driver (the arena, self-play, a search bot)::

        while (seat := state.to_move) is not None:
            actions = state.legal_actions()
            state.apply(choose(state.observation(seat), actions))
        state.result()
    """

    def __init__(self, game: Game, config: MatchConfig, seed: int) -> None:
        #: The game being played.
        self.game = game
        #: The match's validated configuration.
        self.config = config
        #: The seed every chance outcome derives from.
        self.seed = seed
        #: Number of deciding seats.
        self.num_seats = game.num_seats(config)
        #: The referee's generator: the only source of chance.
        self.rng = random.Random(seed)
        #: Every event so far, in order.
        self.events: list[Event] = []
        #: Decisions applied so far.
        self.decisions = 0
        #: The seat that must decide now, or ``None`` once the match is over. Games keep it
        #: current (a plain attribute, not a property: drivers read it on every decision).
        self.to_move: int | None = None
        self._legal: tuple[Action, ...] | None = None
        self._result: Result | None = None

    @classmethod
    def bare(cls, game: Game, config: MatchConfig, rng: random.Random) -> Self:
        """A state with only the base attributes set and no chance drawn (``__init__`` deals):
        what :meth:`Game._restore` fills in from an observation."""
        new = object.__new__(cls)
        new.game = game
        new.config = config
        new.seed = 0
        new.num_seats = game.num_seats(config)
        new.rng = rng
        new.events = []
        new.decisions = 0
        new.to_move = None
        new._legal = None
        new._result = None
        return new

    # --- the hooks a game implements ---------------------------------------------------------

    @abstractmethod
    def _legal_actions(self) -> tuple[Action, ...]:
        """The legal actions of the seat to move, in canonical order (never empty)."""

    @abstractmethod
    def _apply(self, action: Action) -> None:
        """Apply a legal action, emit its events and run any chance that follows."""

    @abstractmethod
    def observation(self, seat: int) -> Observation:
        """What ``seat`` may know: public information and its own private information only."""

    @abstractmethod
    def _final_result(self) -> Result:
        """The result of a match that ended normally."""

    # --- the driver's interface ----------------------------------------------------------------

    def legal_actions(self) -> tuple[Action, ...]:
        """Legal actions of the seat to move in canonical order; empty once the match is over."""
        if self._legal is None:
            self._legal = () if self.to_move is None else self._legal_actions()
        return self._legal

    def fallback_action(self) -> Action:
        """What the referee plays for a seat that faulted (timeout, illegal, crash).

        The rules say: the first legal action in canonical order; a game may override it (tennis
        passes without a discard).
        """
        return self.legal_actions()[0]

    def is_over(self) -> bool:
        """Whether the match has ended."""
        return self.to_move is None

    @property
    def is_terminal(self) -> bool:
        """Whether the match has ended (OpenSpiel's word for :meth:`is_over`)."""
        return self.to_move is None

    def legal_mask(self) -> bytes:
        """The legal actions as a mask over the game's :meth:`Game.action_space`: one byte per
        action, 1 when legal, else 0 (all 0 once the match is over). Bytes are immutable and
        compact, and ``numpy.frombuffer(mask, dtype=bool)`` reads them without a copy."""
        mask = bytearray(len(self.game.action_space(self.config)))
        for action in self.legal_actions():
            if action.index < 0:  # mask[-1] would silently mark the last action
                raise ValueError(f"{action.text} is not in {self.game.id}'s action space")
            mask[action.index] = 1
        return bytes(mask)

    def returns(self) -> tuple[float, ...]:
        """Each seat's zero-sum utility: :func:`rank_returns` of the result's ranks and the
        game's sides (forfeits included); all 0.0 until the match is over, as in OpenSpiel."""
        result = self.result()
        if result is None:
            return (0.0,) * self.num_seats
        return rank_returns(result.ranks, self.game.sides(self.config))

    def find_action(self, action: Action | str) -> Action:
        """The legal action equal to ``action`` (or with that text form); else raise."""
        seat = self.to_move
        if seat is None:
            raise MatchOverError("the match is over; no action can be applied")
        legal = self.legal_actions()
        if isinstance(action, Action):
            # Identity first: actions are interned, and dataclass ``==`` costs a call per miss.
            for a in legal:
                if a is action:
                    return a
            for a in legal:
                if a == action:
                    return a
            text = action.text
        else:
            text = action.strip()
            for a in legal:
                if a.text == text:
                    return a
        raise IllegalActionError(seat, text, self._why_illegal(text))

    def _why_illegal(self, text: str) -> str:
        """Explain a rejection; games may give the rule that forbids it."""
        shown = ", ".join(a.text for a in self.legal_actions()[:20])
        return f"not a legal action now (legal: {shown})"

    def apply(self, action: Action | str) -> list[Event]:
        """Apply the seat to move's ``action`` and return the events it produced."""
        # Hot path (self-play, search): the interned action offered by legal_actions() itself.
        legal = self._legal
        if legal is not None:
            for chosen in legal:
                if chosen is action:
                    break
            else:
                chosen = self.find_action(action)
        else:
            chosen = self.find_action(action)
        start = len(self.events)
        self._legal = None
        self.decisions += 1
        self._apply(chosen)
        return self.events[start:]

    def result(self) -> Result | None:
        """The result once the match is over, else ``None``."""
        if self._result is None and self.to_move is None:
            self._result = self._final_result()
        return self._result

    def forfeit(self, seat: int, why: str) -> Result:
        """End the match now with ``seat`` forfeiting: it ranks last, its side loses."""
        sides = self.game.sides(self.config)
        if sides is None:
            losers: tuple[int, ...] = (seat,)
        else:
            losers = next(side for side in sides if seat in side)
        # Dense ranks: everyone else shares first place, the forfeiting seat (or side) is last.
        scores = tuple(0.0 if s in losers else 1.0 for s in range(self.num_seats))
        self._result = Result(
            scores=scores,
            ranks=tuple(2 if s in losers else 1 for s in range(self.num_seats)),
            reason="forfeit",
            forfeited_by=seat,
            summary=f"{self.game.seat_names(self.config)[seat]} forfeits: {why}",
        )
        self._emit("forfeit", seat=seat, why=why)
        self.to_move = None
        self._legal = ()
        return self._result

    def visible_events(self, seat: int, start: int = 0) -> list[Event]:
        """The events from index ``start`` on that ``seat`` may see."""
        return [e for e in self.events[start:] if e.to is None or seat in e.to]

    #: Lists that hold only values that never change (ints, strings, events, frozen tricks),
    #: named by attribute: clone() copies them with one ``list.copy()`` without looking inside.
    #: A game adds its own; a list of lists (or of anything mutable) must not be named here.
    _flat_lists: ClassVar[frozenset[str]] = frozenset({"events"})

    def clone(self, rng: random.Random | None = None) -> Self:
        """An independent copy (for search bots).

        Without ``rng`` the copy is exact: its generator is a copy of this one's, so it draws the
        very chance this match would (the real future deals). With ``rng`` the copy draws its
        future chance from ``rng`` itself (shared, not copied), so a search does not replay the
        real future, and copying no generator makes the clone several times cheaper.

        What never changes is shared, not copied: numbers, strings, tuples, frozen dataclasses
        (actions, events, tricks, the configuration) and the game itself; lists, dicts and sets
        are copied as deep as they nest, anything else with ``copy.deepcopy``. A game's state must
        therefore keep no mutable object inside a tuple or a frozen dataclass. Search bots clone
        once per simulation, hence the sharing: a deep copy of the whole state would copy every
        event of the log (docs/performance.md has the figures).
        """
        new = object.__new__(type(self))
        new.__dict__ = cloned_attrs(self.__dict__, self._flat_lists, rng)
        return new

    def determinize(self, seat: int, rng: random.Random) -> Self:
        """A full state consistent with everything ``seat`` has seen, the rest drawn from ``rng``.

        ``seat``'s observation and legal actions are the same as here; every card it cannot see
        is dealt at random among the places it may be (other hands, a stock, a face-down
        discard), respecting what play has shown (a player who failed to follow suit holds none
        of it), and hidden deck orders are reshuffled. The copy draws its future chance from
        ``rng`` (:meth:`clone`), its log keeps only the events ``seat`` may see (the others
        would tell the true hidden cards), and this state is left unchanged. For search over
        information sets (ISMCTS, PIMC): determinize once per simulation, then play on.
        """
        if not 0 <= seat < self.num_seats:
            raise ValueError(f"no seat {seat}: the match has {self.num_seats} seats")
        new = self.clone(rng)
        new.events = [e for e in self.events if e.to is None or seat in e.to]
        new._legal = None
        if new.to_move is not None:
            new._redeal_hidden(seat, rng)
        return new

    def _redeal_hidden(self, seat: int, rng: random.Random) -> None:
        """Hook for :meth:`determinize`, called on the copy: replace everything ``seat`` cannot
        see (where the game's hidden cards are is rules knowledge, so it lives in the game)."""
        raise NotImplementedError(f"{self.game.id} does not support determinize()")

    # --- helpers for games -----------------------------------------------------------------------

    def _emit(self, kind: str, to: tuple[int, ...] | None = None, **data: JSON) -> None:
        """Record an event; ``to`` limits who sees it."""
        self.events.append(Event(kind, data, to))
