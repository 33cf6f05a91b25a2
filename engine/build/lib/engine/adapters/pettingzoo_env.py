"""Every engine game as a PettingZoo AEC environment (the ``rl`` extra).

``env("whist", players=4, seed=1, points_to_win=5)`` gives an ``AECEnv`` whose agents are the
deciding seats, ``seat_0`` … (the game's own names in ``seat_names``). An agent observes
``{"observation": float32 vector, "action_mask": int8 mask over game.action_space(config)}``;
its action is an index into that space. Rewards are ``state.returns()`` when the match ends
(zero-sum, 0 before); every agent terminates then, none is ever truncated.

The vector comes from one generic encoder (:class:`ObservationEncoder`) that reads the fields of
the observation's ``to_dict()`` form, with no code per game. Its layout is fixed per
configuration, learnt once from seeded random playouts (:func:`encoder_for`); the rules are in
docs/engine.md, "Reinforcement learning (PettingZoo)".
"""

from __future__ import annotations

import functools
import itertools
import math
import random
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from pettingzoo import AECEnv  # type: ignore[import-untyped]
from pettingzoo.utils import wrappers  # type: ignore[import-untyped]

from engine.cards import CARD_TEXT
from engine.core import JSON, Game, MatchConfig, MatchState, Observation
from engine.games.tennis_cards import PLAY_DECK_COUNTS, TYPE_TEXT
from engine.options import OptionValue
from engine.registry import get_game

FloatArray = npt.NDArray[np.float32]

#: Fields (at any depth) holding a seat or player number, -1 for nobody: one-hot encoded.
SEAT_FIELDS: Final = frozenset(
    {"seat", "seats", "dealer", "leader", "winner", "robbed_by", "announced_by", "jinxer"}
    | {"server", "controls"}
)
#: A text field with more distinct values than this (a log line) is left out of the vector.
MAX_CATEGORIES: Final = 32
#: Exploration: at least this many playouts and observations, at most this many playouts.
EXPLORE_PLAYOUTS: Final = 3
EXPLORE_OBSERVATIONS: Final = 3000
EXPLORE_MAX_PLAYOUTS: Final = 200
_MAX_DECISIONS: Final = 100_000


@dataclass(frozen=True, eq=False)
class Deck:
    """A card vocabulary: the text forms in canonical order and the copies of each."""

    name: str
    cards: tuple[str, ...]
    copies: tuple[int, ...]

    @functools.cached_property
    def index(self) -> dict[str, int]:
        return {card: i for i, card in enumerate(self.cards)}


#: The 52-card pack (``AH``, ``TD``) and the tennis Play Deck's 19 card types (``RF-LB``, ``OUT``).
DECKS: Final = (
    Deck("pack", CARD_TEXT, (1,) * len(CARD_TEXT)),
    Deck("tennis", TYPE_TEXT, PLAY_DECK_COUNTS),
)


# --- parts of a layout: each writes one value into a slice of the vector -------------------------


class _Part(ABC):
    size: int
    #: Whether all zeros already says "nothing here" (one-hot parts), so no presence bit is needed.
    one_hot = False

    @abstractmethod
    def bounds(self) -> tuple[list[float], list[float]]:
        """Lowest and highest value of each slot."""

    @abstractmethod
    def write(self, value: JSON, out: FloatArray, at: int) -> None:
        """Encode ``value`` into ``out[at : at + size]`` (zeros on entry)."""

    @abstractmethod
    def describe(self) -> str: ...


class _Flag(_Part):
    size = 1

    def bounds(self) -> tuple[list[float], list[float]]:
        return [0.0], [1.0]

    def write(self, value: JSON, out: FloatArray, at: int) -> None:
        out[at] = 1.0 if value else 0.0

    def describe(self) -> str:
        return "flag"


class _Number(_Part):
    size = 1

    def bounds(self) -> tuple[list[float], list[float]]:
        return [-math.inf], [math.inf]

    def write(self, value: JSON, out: FloatArray, at: int) -> None:
        if isinstance(value, int | float):
            out[at] = value

    def describe(self) -> str:
        return "number"


class _Seat(_Part):
    one_hot = True

    def __init__(self, width: int) -> None:
        self.size = width

    def bounds(self) -> tuple[list[float], list[float]]:
        return [0.0] * self.size, [1.0] * self.size

    def write(self, value: JSON, out: FloatArray, at: int) -> None:
        if isinstance(value, int) and 0 <= value < self.size:  # -1 (nobody): all zeros
            out[at + value] = 1.0

    def describe(self) -> str:
        return f"seat one-hot {self.size}"


class _OneOf(_Part):
    one_hot = True

    def __init__(self, choices: Sequence[str], label: str) -> None:
        self.choices = tuple(choices)
        self.index = {c: i for i, c in enumerate(self.choices)}
        self.size = len(self.choices)
        self.label = label

    def bounds(self) -> tuple[list[float], list[float]]:
        return [0.0] * self.size, [1.0] * self.size

    def write(self, value: JSON, out: FloatArray, at: int) -> None:
        i = self.index.get(value) if isinstance(value, str) else None
        if i is not None:  # "" (no card) and values exploration never saw: all zeros
            out[at + i] = 1.0

    def describe(self) -> str:
        return self.label


class _Counts(_Part):
    def __init__(self, deck: Deck) -> None:
        self.deck = deck
        self.size = len(deck.cards)

    def bounds(self) -> tuple[list[float], list[float]]:
        return [0.0] * self.size, [float(c) for c in self.deck.copies]

    def write(self, value: JSON, out: FloatArray, at: int) -> None:
        if not isinstance(value, list | tuple):
            return
        index, copies = self.deck.index, self.deck.copies
        for card in value:
            i = index.get(card) if isinstance(card, str) else None
            if i is not None and out[at + i] < copies[i]:
                out[at + i] += 1.0

    def describe(self) -> str:
        return f"card counts ({self.deck.name})"


class _Padded(_Part):
    def __init__(self, item: _Part, length: int, presence: bool) -> None:
        self.item, self.length, self.presence = item, length, int(presence)
        self.stride = item.size + self.presence
        self.size = length * self.stride

    def bounds(self) -> tuple[list[float], list[float]]:
        low, high = self.item.bounds()
        if self.presence:
            low, high = [0.0, *low], [1.0, *high]
        return low * self.length, high * self.length

    def write(self, value: JSON, out: FloatArray, at: int) -> None:
        if not isinstance(value, list | tuple):
            return
        for k, item in enumerate(value[: self.length]):  # longer than exploration saw: cut
            base = at + k * self.stride
            if self.presence:
                out[base] = 1.0
            self.item.write(item, out, base + self.presence)

    def describe(self) -> str:
        present = "present, " if self.presence else ""
        return f"{self.length} x [{present}{self.item.describe()}]"


class _Record(_Part):
    def __init__(self, fields: Sequence[tuple[str, _Part]]) -> None:
        self.fields = tuple(fields)
        self.offsets = []
        at = 0
        for _, part in self.fields:
            self.offsets.append(at)
            at += part.size
        self.size = at

    def bounds(self) -> tuple[list[float], list[float]]:
        low: list[float] = []
        high: list[float] = []
        for _, part in self.fields:
            lo, hi = part.bounds()
            low += lo
            high += hi
        return low, high

    def write(self, value: JSON, out: FloatArray, at: int) -> None:
        if not isinstance(value, Mapping):
            return
        for (name, part), offset in zip(self.fields, self.offsets, strict=True):
            if name in value:
                part.write(value[name], out, at + offset)

    def describe(self) -> str:
        return "{" + ", ".join(f"{n}: {p.describe()}" for n, p in self.fields) + "}"


# --- exploration: what the observations hold, and the layout made from it ------------------------


class _Seen:
    """What exploration saw at one place of the observations: a field, or a list's items."""

    def __init__(self) -> None:
        self.kinds: set[str] = set()
        #: Distinct strings (more than MAX_CATEGORIES: free text).
        self.strings: set[str] = set()
        #: Decks some non-empty string seen here is not a card of.
        self.outside: set[str] = set()
        self.min_len = math.inf
        self.max_len = 0
        self.items: _Seen | None = None
        #: Decks in which some list of cards seen here was out of canonical order.
        self.unsorted: set[str] = set()
        self.fields: dict[str, _Seen] = {}

    def see(self, value: JSON) -> None:
        if isinstance(value, str):
            self.kinds.add("str")
            if value not in self.strings:
                self.strings.add(value)
                if value:
                    self.outside.update(d.name for d in DECKS if value not in d.index)
        elif isinstance(value, list | tuple):
            self.kinds.add("list")
            self.min_len = min(self.min_len, len(value))
            self.max_len = max(self.max_len, len(value))
            if value:
                items = self.items = self.items or _Seen()
                for item in value:
                    items.see(item)
                if isinstance(value[0], str):
                    self._check_order(value)
        elif isinstance(value, Mapping):
            self.kinds.add("record")
            for key, item in value.items():
                field = self.fields.get(key)
                if field is None:
                    field = self.fields[key] = _Seen()
                field.see(item)
        elif value is None:
            self.kinds.add("none")
        elif isinstance(value, bool):
            self.kinds.add("bool")
        elif isinstance(value, int | float):
            self.kinds.add("number")
        else:
            raise TypeError(f"not a JSON value: {value!r}")

    def _check_order(self, cards: Sequence[JSON]) -> None:
        for deck in DECKS:
            if deck.name not in self.unsorted:
                at = [deck.index.get(c, -1) if isinstance(c, str) else -1 for c in cards]
                if any(a > b for a, b in itertools.pairwise(at)):
                    self.unsorted.add(deck.name)

    def deck(self) -> Deck | None:
        """The deck holding every non-empty string seen here, if there was any."""
        if not self.strings - {""}:
            return None
        return next((d for d in DECKS if d.name not in self.outside), None)


@dataclass(frozen=True)
class _Context:
    where: str
    #: One-hot width of seat fields: seats or players, whichever is more.
    seats: int


def _compile(name: str, seen: _Seen, ctx: _Context) -> _Part | None:
    """The part encoding field ``name`` as ``seen``; ``None`` leaves it out."""
    kinds = seen.kinds - {"none"}
    if not kinds:
        return None
    if kinds == {"bool"}:
        return _Flag()
    if kinds <= {"bool", "number"}:
        return _Seat(ctx.seats) if name in SEAT_FIELDS else _Number()
    if kinds == {"str"}:
        if seen.strings <= {""}:
            return None  # only ever empty: a constant
        deck = seen.deck()
        if deck is not None:
            return _OneOf(deck.cards, f"card ({deck.name})")
        if len(seen.strings) <= MAX_CATEGORIES:
            choices = sorted(seen.strings)
            return _OneOf(choices, "one of " + " ".join(repr(c) for c in choices))
        return None  # free text: render() shows it
    if kinds == {"list"}:
        items = seen.items
        if items is None:
            return None  # always empty in exploration
        deck = items.deck() if items.kinds == {"str"} else None
        if deck is not None and deck.name not in seen.unsorted:
            return _Counts(deck)  # kept in canonical order: a holding, order carries nothing
        part = _compile(name, items, ctx)
        if part is None:
            return None
        assert isinstance(seen.min_len, int)
        varies = seen.min_len != seen.max_len
        return _Padded(part, seen.max_len, presence=varies and not part.one_hot)
    if kinds == {"record"}:
        parts = [(k, p) for k, s in seen.fields.items() if (p := _compile(k, s, ctx)) is not None]
        return _Record(parts) if parts else None
    raise ValueError(f"{ctx.where}: field {name!r} holds values of several kinds {sorted(kinds)}")


@dataclass(frozen=True)
class FieldSlot:
    """Where one observation field sits in the vector."""

    name: str
    offset: int
    size: int
    kind: str


class ObservationEncoder:
    """One configuration's observations as vectors of a fixed length (:func:`encoder_for`)."""

    def __init__(self, config: MatchConfig, seen: _Seen, seats: int) -> None:
        self.config = config
        ctx = _Context(f"{config.game_id} ({config.players} players)", seats)
        root = _compile("", seen, ctx)
        if not isinstance(root, _Record):
            raise ValueError(f"{ctx.where}: observations encode to nothing")
        self._root = root
        #: Length of the vector.
        self.size = root.size
        low, high = root.bounds()
        #: Each slot's bounds (the observation space's Box).
        self.low = np.array(low, dtype=np.float32)
        self.high = np.array(high, dtype=np.float32)
        #: The fields encoded, in order; fields left out are absent.
        self.fields = tuple(
            FieldSlot(name, offset, part.size, part.describe())
            for (name, part), offset in zip(root.fields, root.offsets, strict=True)
        )

    def encode(self, observation: Observation | Mapping[str, JSON]) -> FloatArray:
        """The vector of ``observation`` (or of its ``to_dict()`` form)."""
        data = observation.to_dict() if isinstance(observation, Observation) else observation
        out = np.zeros(self.size, dtype=np.float32)
        self._root.write(data, out, 0)
        return out

    def describe(self) -> str:
        """One line per field: offset, size, name and encoding."""
        return "\n".join(f"{f.offset:5d} {f.size:5d} {f.name}: {f.kind}" for f in self.fields)


@functools.cache
def encoder_for(config: MatchConfig) -> ObservationEncoder:
    """The encoder of ``config``, learnt from seeded random playouts (the same every time):
    seeds 0, 1, … each played with ``random.Random(seed)``'s uniform choices, every seat's
    observation at the start and the end and the mover's at every decision, until at least
    :data:`EXPLORE_PLAYOUTS` playouts and :data:`EXPLORE_OBSERVATIONS` observations (at most
    :data:`EXPLORE_MAX_PLAYOUTS` playouts). Cached per configuration."""
    game = get_game(config.game_id)
    seen = _Seen()
    observed = 0
    for seed in range(EXPLORE_MAX_PLAYOUTS):
        if seed >= EXPLORE_PLAYOUTS and observed >= EXPLORE_OBSERVATIONS:
            break
        state = game.new_match(config, seed)
        rng = random.Random(seed)
        for seat in range(state.num_seats):
            seen.see(state.observation(seat).to_dict())
        while state.to_move is not None and state.decisions < _MAX_DECISIONS:
            state.apply(rng.choice(state.legal_actions()))
            if state.to_move is not None:
                seen.see(state.observation(state.to_move).to_dict())
                observed += 1
        for seat in range(state.num_seats):
            seen.see(state.observation(seat).to_dict())
    seats = max(game.num_seats(config), config.players)
    return ObservationEncoder(config, seen, seats)


# --- the environment ---------------------------------------------------------------------------


class CardArenaEnv(AECEnv):  # type: ignore[misc]
    """One engine game as a PettingZoo AEC environment (use :func:`env` or :func:`raw_env`)."""

    metadata: dict[str, Any] = {
        "render_modes": ["ansi"],
        "name": "card_arena_v0",
        "is_parallelizable": False,
    }

    def __init__(
        self,
        game_id: str,
        players: int | None = None,
        seed: int | None = None,
        **options: OptionValue,
    ) -> None:
        super().__init__()
        self.game: Game = get_game(game_id)
        self.config: MatchConfig = self.game.configure(players, options)
        self.metadata = {**self.metadata, "name": f"card_arena_{game_id}_v0"}
        self.render_mode = "ansi"
        self.encoder = encoder_for(self.config)
        self.actions = self.game.action_space(self.config)
        seats = self.game.num_seats(self.config)
        self.possible_agents: list[str] = [f"seat_{i}" for i in range(seats)]
        #: The game's name of each agent's seat (``N``, ``P1``, ``A`` …).
        names = self.game.seat_names(self.config)
        self.seat_names = dict(zip(self.possible_agents, names, strict=True))
        self._seat = {agent: i for i, agent in enumerate(self.possible_agents)}
        low, high = self.encoder.low, self.encoder.high
        self.observation_spaces = {
            agent: spaces.Dict(
                {
                    "observation": spaces.Box(low, high, dtype=np.float32),
                    "action_mask": spaces.MultiBinary(len(self.actions)),
                }
            )
            for agent in self.possible_agents
        }
        self.action_spaces = {a: spaces.Discrete(len(self.actions)) for a in self.possible_agents}
        self._seeds = random.Random(seed)
        self._pending_seed = seed
        self._match: MatchState | None = None
        self.agents: list[str] = []

    @property
    def match(self) -> MatchState:
        """The match in progress (after :meth:`reset`)."""
        if self._match is None:
            raise RuntimeError("call reset() first")
        return self._match

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new match. ``seed`` is its seed (and seeds the later ones); without it the seed
        given to the constructor serves the first match, and the next ones draw their seeds
        from it. ``options`` is ignored (game options are fixed at construction)."""
        if seed is not None:
            self._seeds = random.Random(seed)
            match_seed = seed
        elif self._pending_seed is not None:
            match_seed = self._pending_seed
        else:
            match_seed = self._seeds.randrange(2**63)
        self._pending_seed = None
        self._match = self.game.new_match(self.config, match_seed)
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self.agent_selection = self.possible_agents[self._match.to_move or 0]
        self._end_if_over()

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None or not 0 <= int(action) < len(self.actions):
            raise ValueError(f"{agent}: action {action!r} is not in 0..{len(self.actions) - 1}")
        match = self.match
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        match.apply(self.actions[int(action)])  # IllegalActionError unless the mask allows it
        if match.to_move is not None:
            self.agent_selection = self.possible_agents[match.to_move]
        self._end_if_over()
        self._accumulate_rewards()

    def _end_if_over(self) -> None:
        if self.match.is_terminal:
            for agent, value in zip(self.possible_agents, self.match.returns(), strict=True):
                self.rewards[agent] = value
                self.terminations[agent] = True

    def observe(self, agent: str) -> dict[str, npt.NDArray[Any]]:
        seat = self._seat[agent]
        match = self.match
        if match.to_move == seat:
            mask = np.frombuffer(match.legal_mask(), dtype=np.int8).copy()
        else:
            mask = np.zeros(len(self.actions), dtype=np.int8)
        return {"observation": self.encoder.encode(match.observation(seat)), "action_mask": mask}

    def render(self) -> str:
        """The observation of the agent to act (the last one to act once over), as text."""
        if self._match is None:
            return ""
        seat = self._seat[self.agent_selection]
        header = f"{self.agent_selection} ({self.seat_names[self.agent_selection]})"
        return f"{header}\n{self._match.observation(seat).render()}"

    def close(self) -> None:
        pass


def raw_env(
    game_id: str, players: int | None = None, seed: int | None = None, **options: OptionValue
) -> CardArenaEnv:
    """The environment without PettingZoo's checking wrappers."""
    return CardArenaEnv(game_id, players, seed, **options)


def env(
    game_id: str, players: int | None = None, seed: int | None = None, **options: OptionValue
) -> AECEnv:
    """``game_id`` (with ``players`` and game ``options``) as a PettingZoo AEC environment,
    wrapped to check actions and call order. ``seed`` seeds the first match (and those after)."""
    wrapped = wrappers.AssertOutOfBoundsWrapper(raw_env(game_id, players, seed, **options))
    return wrappers.OrderEnforcingWrapper(wrapped)
