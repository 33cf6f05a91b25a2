"""The Spoil Five and Forty-Five rules bots: sensible single decisions, and clearly better than
random over fixed seeds (in-process, no arena)."""

from __future__ import annotations

import random

import pytest

from engine import get_game
from engine.games.spoil_rules import SpoilTableState
from reference_bots.rules import strategy_for
from tests.engine.test_spoil_five import arranged, play, play_tricks, texts

spoil_five_bot = strategy_for("spoil_five")
forty_five_bot = strategy_for("forty_five")


def _choice(state: SpoilTableState, game_id: str = "spoil_five") -> str:
    """The rules bot's choice for the seat to move."""
    assert state.to_move is not None
    bot = spoil_five_bot if game_id == "spoil_five" else forty_five_bot
    legal = state.legal_actions()
    obs = state.observation(state.to_move).to_dict()
    return legal[bot(obs, legal, random.Random(0))].text


def test_robs_discarding_the_weakest_card() -> None:
    # Trumps spades; the holder of AS discards its lowest plain card (ace is low in diamonds).
    state = arranged(["AS KH AD 9C 2S", "6H 7H 8H 9H TH"], "7S")
    assert _choice(state) == "rob:AD"
    state = arranged(["2H 3H 4H 5H 6H", "KD QD 2C JS TC"], "AS")  # dealer robs a turned ace
    assert _choice(state) == "rob:TC"


def test_jinx_only_with_sure_winners() -> None:
    others = ["2D 3D 4D 5D 6D", "7D 8D 9D TD JD", "2H 3H 4H 5H 6H", "7H 8H 9H TH KC"]
    tricks = ["5S 2D 7D 2H 7H", "JS 3D 8D 3H 8H", "AH 4D 9D 4H 9H"]
    # AS and KS are the best trumps left once 5S, JS, AH are out: jinx.
    state = arranged(["5S JS AH AS KS", *others], "2S")
    play(state, "announce")
    play_tricks(state, tricks)
    assert texts(state.legal_actions()) == ["claim", "jinx"]
    assert _choice(state) == "jinx"
    # KS and QS with AS unseen: claim.
    state = arranged(["5S JS AH KS QS", *others], "2S")
    play_tricks(state, tricks)
    assert _choice(state) == "claim"


def test_wins_cheaply_and_leaves_partner_tricks() -> None:
    # Trumps spades; N led KH, E played 2H: S may win with 3S or KS, and takes it with 3S.
    state = arranged(["KH 2C", "2H 3C", "3S KS 4C", "5H 5C"], "9S", dealer=3)
    play(state, "play:KH", "play:2H")
    assert _choice(state) == "play:3S"  # spoil five: every trick counts for oneself
    state = arranged(["KH 2C", "2H 3C", "3S KS 4C", "5H 5C"], "9S", 3, game_id="forty_five")
    play(state, "play:KH", "play:2H")
    assert _choice(state, "forty_five") == "play:4C"  # partner N is winning: throw the cheapest


def test_leads_plain_cards_keeping_trumps_that_are_not_the_best() -> None:
    # Trumps spades; seat 0 leads holding KS and 3S, with 5S, JS, AH and AS unseen.
    hand = "KS 3S QD 9H 4C"
    others = ["2D 3D 4D 5D 6D", "7D 8D 9D TD JD", "2H 3H 4H 5H 6H"]
    # Alone, it gives the lead away with its lowest plain card (clubs: K Q J A 2 3 4 ...).
    state = arranged([hand, *others, "7H 8H TH JH 2C"], "7S")
    assert _choice(state) == "play:4C"
    # With a partner, its highest plain card, which the partner may follow up.
    state = arranged([hand, *others], "7S", game_id="forty_five")
    assert _choice(state, "forty_five") == "play:QD"
    # A trump that is the best left is led (cheaply) either way.
    state = arranged(["5S 3S QD 9H 4C", *others, "7H 8H TH JH 2C"], "7S")
    assert _choice(state) == "play:5S"


def _tournament(game_id: str, players: int, matches: int, rules_seats: int) -> tuple[float, float]:
    """Mean score of the rules seats and of the random seats; the rules seats rotate."""
    game = get_game(game_id)
    bot = strategy_for(game_id)
    config = game.configure(players)
    rules_total = random_total = 0.0
    for i in range(matches):
        rules = {(i + k * (players // rules_seats)) % players for k in range(rules_seats)}
        state = game.new_match(config, seed=500 + i)
        rng = random.Random(i)
        while (seat := state.to_move) is not None:
            legal = state.legal_actions()
            if seat in rules:
                state.apply(legal[bot(state.observation(seat).to_dict(), legal, rng)])
            else:
                state.apply(rng.choice(legal))
        result = state.result()
        assert result is not None
        rules_total += sum(1 for s in rules if result.ranks[s] == 1) / len(rules)
        random_total += sum(1 for s in range(players) if s not in rules and result.ranks[s] == 1)
    n_random = players - rules_seats
    return rules_total / matches, random_total / (matches * n_random)


@pytest.mark.slow
def test_spoil_five_rules_bot_beats_random() -> None:
    game = get_game("spoil_five")
    bot = strategy_for("spoil_five")
    chips_rules = chips_random = 0
    firsts = 0
    matches = 150
    for i in range(matches):
        me = i % 5
        state = game.new_match(game.configure(5), seed=700 + i)
        rng = random.Random(i)
        while (seat := state.to_move) is not None:
            legal = state.legal_actions()
            if seat == me:
                state.apply(legal[bot(state.observation(seat).to_dict(), legal, rng)])
            else:
                state.apply(rng.choice(legal))
        result = state.result()
        assert result is not None
        chips_rules += int(result.scores[me])
        chips_random += sum(int(result.scores[s]) for s in range(5) if s != me)
        firsts += result.ranks[me] == 1
    # Chips are zero-sum: the rules bot's gain is the random players' loss.
    assert chips_rules + chips_random == 0
    assert chips_rules / matches > 1.5  # random seats average about -0.4 per match
    assert firsts / matches > 0.35  # a random seat is first (or shares it) about 1 time in 5


@pytest.mark.slow
def test_forty_five_rules_side_beats_random() -> None:
    rules_rate, random_rate = _tournament("forty_five", 4, 60, 2)
    assert rules_rate > 0.85 and random_rate < 0.15


@pytest.mark.slow
def test_forty_five_heads_up_rules_bot_beats_random() -> None:
    rules_rate, random_rate = _tournament("forty_five", 2, 60, 1)
    assert rules_rate > 0.75 and random_rate < 0.25
