"""``Observation.to_dict()`` walks an observation directly instead of ``dataclasses.asdict``'s
deep copy: it must give exactly what ``asdict`` gives (keys as text, tuples as lists), for every
game's every observation, and for the rare values it hands back to ``asdict``."""

from __future__ import annotations

import dataclasses
import random
from collections import OrderedDict, namedtuple
from dataclasses import dataclass
from typing import Any

import pytest

from engine import get_game
from engine.core import Observation, _jsonable
from tests.engine.test_presentation import CONFIGS, IDS


def reference(obs: Observation) -> Any:
    """The former ``to_dict()``: ``asdict`` then keys as text and tuples as lists."""
    return _jsonable(dataclasses.asdict(obs))


@pytest.mark.parametrize(("game_id", "players", "options"), CONFIGS, ids=IDS)
def test_every_observation_of_random_matches_is_asdicts(
    game_id: str, players: int, options: dict[str, str]
) -> None:
    game = get_game(game_id)
    seen = 0
    for seed in (1, 2, 3):
        state = game.new_match(game.configure(players, options), seed)
        rng = random.Random(seed)
        while state.to_move is not None:
            for seat in range(state.num_seats):
                obs = state.observation(seat)
                got = obs.to_dict()
                assert got == reference(obs)
                # Same types all the way down (== alone takes 1 for True and a tuple for a list
                # as different, but not 1.0 for 1).
                assert repr(got) == repr(reference(obs))
                seen += 1
            state.apply(rng.choice(state.legal_actions()))
    assert seen > 50


Pair = namedtuple("Pair", "a b")


@dataclass(frozen=True, slots=True)
class Inner:
    cards: tuple[str, ...]
    flag: bool


class Text(str):
    pass


@dataclass(frozen=True, slots=True)
class Odd(Observation):
    """Values no game's observation holds today, each converted as ``asdict`` converts it."""

    nested: tuple[Inner, ...]
    mixed: tuple[Any, ...]
    pair: Any
    table: Any
    keyed: dict[int, Any]
    text: Any
    ratio: float
    empty: tuple[()]
    maybe: Inner | None


def test_rare_values_are_converted_as_asdict_converts_them() -> None:
    obs = Odd(
        seat=1,
        nested=(Inner(("AS", "2C"), True), Inner((), False)),
        mixed=(1, "x", None, Inner(("KD",), True), [2, (3, 4)]),
        pair=Pair(Inner(("QH",), False), (5, 6)),
        table=OrderedDict([(2, [Inner(("TS",), True)]), ("k", {"z": (1,)})]),
        keyed={3: (7, 8), 4: {"deep": Inner(("9C",), False)}},
        text=Text("subclassed"),
        ratio=0.5,
        empty=(),
        maybe=None,
    )
    got = obs.to_dict()
    assert got == reference(obs)
    assert repr(got) == repr(reference(obs))
    assert got["nested"] == [{"cards": ["AS", "2C"], "flag": True}, {"cards": [], "flag": False}]
    assert got["keyed"] == {"3": [7, 8], "4": {"deep": {"cards": ["9C"], "flag": False}}}


def test_the_dict_is_fresh_each_time() -> None:
    """A bot may change the dict it was given: the next one must not see it."""
    obs = Odd(1, (Inner(("AS",), True),), (), None, None, {}, "", 0.0, (), None)
    first = obs.to_dict()
    first["nested"][0]["cards"].append("XX")
    assert obs.to_dict()["nested"][0]["cards"] == ["AS"]
