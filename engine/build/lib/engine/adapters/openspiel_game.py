"""Every engine game as an OpenSpiel python game (the ``rl`` extra).

Importing this module registers, for each game id, ``cardarena_<id>`` with ``pyspiel``, so
``pyspiel.load_game("cardarena_whist")`` or ``pyspiel.load_game("cardarena_tennis(players=4)")``
gives a ``pyspiel.Game`` on our rules. Its parameters are ``players`` (the table), ``seed``, the
game's own options (``points_to_win=5``) and ``max_game_length`` (-1: the game's bound).

- **Chance** is the engine's: every match draws its deals from its seeded generator, so the game
  is ``SAMPLED_STOCHASTIC`` and has no chance nodes. The ``n``-th initial state to be used plays
  match seed ``seed + n`` (a new deal per episode, the same run for the same program).
  ``state.clone()`` is exact: it replays the real future deals.
- **Actions** are indices into ``game.action_space(config)``; a state's legal actions are the
  engine's, sorted ascending as OpenSpiel wants.
- **Returns** are ``state.returns()``: zero-sum, in [-1, 1], at the end only.
- **Strings**: ``observation_string(p)`` is ``observation(p).render()``;
  ``information_state_string(p)`` (perfect recall) is every event ``p`` has seen as JSON lines,
  then that rendering. No tensors (the PettingZoo adapter has an observation vector).
- ``resample_from_infostate(p, sampler)`` is ``state.determinize(p, rng)``: a world consistent
  with what ``p`` has seen, for OpenSpiel's python ISMCTS (docs/engine.md, "OpenSpiel").
"""

from __future__ import annotations

import importlib
import itertools
import json
import random
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Final

from engine.core import Action, Game, MatchConfig, MatchState
from engine.errors import ConfigError
from engine.options import OptionValue
from engine.registry import game_ids, get_game

# No type stubs: the library is reached as a module of type Any (as arena/bots/docker.py does).
pyspiel: Any = importlib.import_module("pyspiel")

#: Short names are this prefix and the game id: ``cardarena_whist``.
PREFIX: Final = "cardarena_"
#: Parameters every game takes besides its options (``max_game_length`` -1: the game's bound).
BASE_PARAMETERS: Final = ("players", "seed", "max_game_length")


def short_name(game_id: str) -> str:
    """The name the game is registered under: ``cardarena_whist``."""
    return PREFIX + game_id


def default_max_game_length(config: MatchConfig) -> int:
    """A bound on a match's decisions, the game's ``max_game_length``.

    Whist's is exact: a deal is 52 plays and scores at least a point, so a game lasts at most
    ``2 × points_to_win - 1`` deals. The others grow with the table and the length options as
    the rules do, at four times or more the longest of 1000 random matches; a match that
    reaches the bound anyway ends there as a draw (all returns 0.0).
    """
    n = config.players
    match config.game_id:
        case "whist":
            return (
                52
                * config.int_option("games_per_rubber")
                * (2 * config.int_option("points_to_win") - 1)
            )
        case "tennis_whist":
            return 120 * n * n * config.int_option("sets_to_win")
        case "spoil_five":
            return 40 * n * n * config.int_option("rounds")
        case "forty_five":
            return 10 * n * config.int_option("points_to_win")
        case "tennis":
            return 3000 * n * config.int_option("sets_to_win")
    return 100_000


def _game_type(game: Game) -> Any:
    """The ``pyspiel.GameType`` of a game: one per game id, whatever the table."""
    seats: list[int] = []
    # Options that may change the seats (tennis's ``control``): every choice, every bool.
    varied = [o for o in game.options if o.kind != "int"]
    values: list[tuple[OptionValue, ...]] = [
        o.choices if o.kind == "choice" else (False, True) for o in varied
    ]
    for players in game.player_counts:
        for combo in itertools.product(*values):
            options = dict(zip((o.name for o in varied), combo, strict=True))
            try:
                config = game.configure(players, options)
            except ConfigError:
                continue
            seats.append(game.num_seats(config))
    spec: dict[str, OptionValue] = {
        "players": game.default_players,
        "seed": 0,
        "max_game_length": -1,
    }
    spec.update({o.name: o.default for o in game.options})
    return pyspiel.GameType(
        short_name=short_name(game.id),
        long_name=f"Card Arena {game.title}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=max(seats),
        min_num_players=min(seats),
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=False,
        parameter_specification=spec,
    )


class _MatchSlot:
    """A state's match, made on first use, and its events as JSON lines (each written once).

    OpenSpiel clones a python state by making a new initial state and deep-copying the old
    one's attributes: the new slot is replaced before it is used, so a clone draws no seed, and
    the copy is the engine's ``clone()``."""

    __slots__ = ("game", "lines", "match")

    def __init__(
        self, game: CardArenaGame, match: MatchState | None = None, lines: list[str] | None = None
    ) -> None:
        self.game = game
        self.match = match
        self.lines = lines or []

    def get(self) -> MatchState:
        if self.match is None:
            self.match = self.game.next_match()
        return self.match

    def seen_by(self, seat: int) -> list[str]:
        """The JSON lines of the events ``seat`` may see, in order."""
        events = self.get().events
        lines = self.lines
        lines.extend(_json(e.to_dict()) for e in events[len(lines) :])  # the log only grows
        return [line for e, line in zip(events, lines, strict=True) if e.to is None or seat in e.to]

    def __deepcopy__(self, memo: dict[int, object]) -> _MatchSlot:
        return _MatchSlot(self.game, self.get().clone(), self.lines.copy())


class CardArenaGame(pyspiel.Game):  # type: ignore[misc]
    """An engine game as a ``pyspiel.Game``; one subclass per game id sets ``engine_game``."""

    engine_game: ClassVar[Game]
    game_type: ClassVar[Any]

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        given = dict(params or {})
        game = self.engine_game
        players = int(given.pop("players", game.default_players))
        self.seed = int(given.pop("seed", 0))
        cap = int(given.pop("max_game_length", -1))
        self.config = game.configure(players, given)
        #: The fixed action space the indices refer to.
        self.space: tuple[Action, ...] = game.action_space(self.config)
        self.max_length = cap if cap > 0 else default_max_game_length(self.config)
        self.seats = game.num_seats(self.config)
        self._issued = 0
        info = pyspiel.GameInfo(
            num_distinct_actions=len(self.space),
            max_chance_outcomes=0,
            num_players=self.seats,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=self.max_length,
        )
        full: dict[str, OptionValue] = {"players": players, "seed": self.seed}
        full["max_game_length"] = cap
        full.update(dict(self.config.options))
        super().__init__(self.game_type, info, full)

    def next_match(self) -> MatchState:
        """A new match, seeds ``seed``, ``seed + 1`` … in the order initial states are used."""
        seed = self.seed + self._issued
        self._issued += 1
        return self.engine_game.new_match(self.config, seed)

    def new_initial_state(self, *args: Any) -> CardArenaState:
        """A state at the start of a match (its seed is drawn when it is first used)."""
        if args:
            raise ValueError("cardarena games are not deserialized")
        return CardArenaState(self)

    def state_of(self, match: MatchState) -> CardArenaState:
        """A state playing ``match`` (a match of this game's configuration)."""
        if match.config != self.config:
            raise ValueError(f"the match is {match.config}, not {self.config}")
        state = CardArenaState(self)
        state._slot = _MatchSlot(self, match)
        return state

    def make_py_observer(
        self, iig_obs_type: Any = None, params: Mapping[str, Any] | None = None
    ) -> CardArenaObserver:
        """A seat's own view: its observation, or with perfect recall its information state."""
        if params:
            raise ValueError(f"observation parameters are not supported; got {params}")
        if iig_obs_type is None:
            return CardArenaObserver(perfect_recall=False)
        if iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER:
            raise ValueError("cardarena games observe from one seat's view only")
        if not iig_obs_type.public_info:
            raise ValueError("cardarena observations include the public information")
        return CardArenaObserver(perfect_recall=bool(iig_obs_type.perfect_recall))


class CardArenaState(pyspiel.State):  # type: ignore[misc]
    """A match in progress as a ``pyspiel.State``; the engine's state is :attr:`match`."""

    def __init__(self, game: CardArenaGame) -> None:
        super().__init__(game)
        # The only attribute: OpenSpiel's clone() deep-copies every one.
        self._slot = _MatchSlot(game)

    @property
    def match(self) -> MatchState:
        """The engine's state."""
        return self._slot.get()

    @property
    def _truncated(self) -> bool:
        match = self.match
        return not match.is_terminal and match.decisions >= self._slot.game.max_length

    def current_player(self) -> int:
        match = self.match
        if match.to_move is None or self._truncated:
            return int(pyspiel.PlayerId.TERMINAL)
        return match.to_move

    def _legal_actions(self, player: int) -> list[int]:
        match = self.match
        if player != match.to_move:
            return []
        return sorted(a.index for a in match.legal_actions())

    def _apply_action(self, action: int) -> None:
        self.match.apply(self._slot.game.space[action])

    def _action_to_string(self, player: int, action: int) -> str:
        return self._slot.game.space[action].text

    def is_terminal(self) -> bool:
        return self.match.is_terminal or self._truncated

    def returns(self) -> list[float]:
        # A truncated match is not over: returns() is all 0.0, a draw.
        return list(self.match.returns())

    def resample_from_infostate(
        self, player_id: int, probability_sampler: Callable[[], float]
    ) -> CardArenaState:
        """A state consistent with what ``player_id`` has seen (``determinize``), its hidden
        cards and future chance from a generator seeded by ``probability_sampler()`` (OpenSpiel's
        sampler, a uniform draw in [0, 1)). Its OpenSpiel ``history()`` starts empty."""
        rng = random.Random(int(probability_sampler() * 2**53))
        return self._slot.game.state_of(self.match.determinize(player_id, rng))

    def __str__(self) -> str:
        match = self.match
        head = (
            f"{match.config.game_id} seed {match.seed}, decision {match.decisions}, "
            f"to move {match.to_move}"
        )
        views = (match.observation(s).render() for s in range(match.num_seats))
        return "\n\n".join((head, *views))


class CardArenaObserver:
    """OpenSpiel's python observer interface: strings only (``tensor`` is ``None``)."""

    def __init__(self, perfect_recall: bool) -> None:
        self.perfect_recall = perfect_recall
        self.tensor = None
        self.dict: dict[str, Any] = {}

    def set_from(self, state: CardArenaState, player: int) -> None:
        """No tensor to fill."""

    def string_from(self, state: CardArenaState, player: int) -> str:
        now = state.match.observation(player).render()
        if not self.perfect_recall:
            return now
        # Everything the seat has seen in order, then what it knows now: equal in every world
        # determinize(player, ...) makes, different for histories the seat can tell apart.
        return "\n".join((f"seat {player}", *state._slot.seen_by(player), now))


def _json(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _register() -> dict[str, type[CardArenaGame]]:
    classes: dict[str, type[CardArenaGame]] = {}
    for game_id in game_ids():
        game = get_game(game_id)
        name = "CardArena" + "".join(w.title() for w in game_id.split("_")) + "Game"
        attrs = {"engine_game": game, "game_type": _game_type(game)}
        cls: type[CardArenaGame] = type(name, (CardArenaGame,), attrs)
        pyspiel.register_game(attrs["game_type"], cls)
        classes[game_id] = cls
    return classes


#: The registered game classes, by game id.
GAME_CLASSES: Final = _register()
