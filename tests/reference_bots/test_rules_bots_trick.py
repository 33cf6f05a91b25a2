"""The rule-based whist and tennis whist bots: sensible single decisions, and clearly better
than random play over many matches."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from engine import get_game
from engine.core import MatchState
from engine.games.tricks import TrickView
from engine.games.whist import WhistObservation
from reference_bots.rules import strategy_for
from reference_bots.rules.tennis_whist import nominate
from reference_bots.rules.whist import choose_play

WHIST = strategy_for("whist")
TENNIS_WHIST = strategy_for("tennis_whist")


def plain(observation: Any) -> dict[str, Any]:
    """The observation as a bot receives it over the wire: JSON data."""
    data = json.loads(json.dumps(observation.to_dict()))
    assert isinstance(data, dict)
    return data


def whist_obs(
    seat: int, hand: str, trick: list[tuple[int, str]], trump: str = "H"
) -> dict[str, Any]:
    current = (
        (TrickView(trick[0][0], tuple(c for _, c in trick), tuple(s for s, _ in trick), -1),)
        if trick
        else ()
    )
    obs = WhistObservation(
        seat=seat,
        hand=tuple(hand.split()),
        dealer=3,
        turn_up="2" + trump,
        turn_up_in_hand=False,
        trump=trump,
        tricks=current,
        tricks_won=(0, 0),
        score=(0, 0),
        games=(0, 0),
        deal_number=1,
    )
    return plain(obs)


def test_whist_ducks_when_partner_wins() -> None:
    # W (seat 3) is last and partner E's king wins: throw the lowest card.
    obs = whist_obs(3, "3S 9S AS", [(0, "QS"), (1, "KS"), (2, "2S")])
    assert choose_play(obs, ["3S", "9S", "AS"], 4, 1) == "3S"
    # S (seat 2) is third; partner N led the ace, a master: no need to spend the king.
    obs = whist_obs(2, "3S KS", [(0, "AS"), (1, "4S")])
    assert choose_play(obs, ["3S", "KS"], 4, 0) == "3S"


def test_whist_wins_cheaply_when_last() -> None:
    obs = whist_obs(3, "3S TS KS AS", [(0, "9S"), (1, "4S"), (2, "2S")])
    assert choose_play(obs, ["3S", "TS", "KS", "AS"], 4, 1) == "TS"


def test_whist_trumps_cheaply_when_void_and_discards_low_when_beaten() -> None:
    obs = whist_obs(3, "4H 9H 5D KD", [(0, "9S"), (1, "4S"), (2, "2S")], trump="H")
    assert choose_play(obs, ["4H", "9H", "5D", "KD"], 4, 1) == "4H"
    obs = whist_obs(3, "7D 5C", [(0, "9S"), (1, "4S"), (2, "3H")], trump="H")
    assert choose_play(obs, ["7D", "5C"], 4, 1) == "5C"


def test_whist_leads_a_master_card() -> None:
    obs = whist_obs(0, "AS 4S 5D 7C", [], trump="H")
    assert choose_play(obs, ["7C", "5D", "4S", "AS"], 4, 2) == "AS"


def test_tennis_whist_nominates_the_longest_suit_then_the_strongest() -> None:
    assert nominate(["2C", "3C", "4C", "AS", "KS", "5D"], "CDHS") == "C"
    assert nominate(["2C", "3C", "AS", "KS", "5D"], "CDHS") == "S"


def _play(state: MatchState, rules_seats: set[int], rules: Any, rng: random.Random) -> None:
    while (seat := state.to_move) is not None:
        legal = state.legal_actions()
        if seat in rules_seats:
            pick = rules(plain(state.observation(seat)), legal, rng)
        else:
            pick = rng.randrange(len(legal))
        assert 0 <= pick < len(legal)
        state.apply(legal[pick])


@pytest.mark.slow
def test_whist_rules_partnership_beats_random_partnership() -> None:
    game = get_game("whist")
    config = game.configure()
    wins = 0
    rubbers = 60
    for i in range(rubbers):
        state = game.new_match(config, 1000 + i)
        _play(state, {0, 2}, WHIST, random.Random(i))
        result = state.result()
        assert result is not None
        wins += result.ranks[0] == 1
    assert wins / rubbers >= 0.8, wins


@pytest.mark.slow
def test_tennis_whist_rules_bot_beats_three_random_bots() -> None:
    game = get_game("tennis_whist")
    config = game.configure(4)
    wins = 0
    matches = 40
    for i in range(matches):
        state = game.new_match(config, 2000 + i)
        me = i % 4
        _play(state, {me}, TENNIS_WHIST, random.Random(i))
        result = state.result()
        assert result is not None
        wins += result.ranks[me] == 1
    assert wins / matches >= 0.6, wins  # a random seat wins a quarter of the time
