"""The tennis rules bot: sensible choices in set positions, and it beats random play clearly."""

from __future__ import annotations

import random

import pytest

from engine.games.tennis import TennisState
from reference_bots.rules import RulesBot, strategy_for
from reference_bots.rules.tennis import choose, selfplay_stats
from tests.engine.test_tennis import new, position, set_hand


def pick(state: TennisState) -> str:
    seat = state.to_move
    assert seat is not None
    legal = state.legal_actions()
    i = choose(state.observation(seat).to_dict(), legal, random.Random(0))
    assert 0 <= i < len(legal)
    return legal[i].text


def test_registered_as_the_tennis_strategy() -> None:
    assert strategy_for("tennis") is choose


def test_answers_a_smash_with_a_kill() -> None:
    s = position(new(), hands={0: ["KILL", "OUT", "LB-RB"], 1: ["SMASH", "RF-RB"]}, serve=["IN"])
    s.apply("smash")
    assert pick(s) == "kill"


def test_keeps_its_only_kill_and_plays_a_shot_towards_the_back_court() -> None:
    s = position(new(), hands={1: ["KILL", "RF-RF", "RF-LF", "RF-LB", "OUT"]}, serve=["IN"])
    assert pick(s) == "shot:RF-LB"


def test_smashes_when_no_shot_and_keeps_a_single_kill_at_an_ordinary_point() -> None:
    s = position(new(), hands={1: ["SMASH", "KILL", "LB-LB"]}, serve=["IN"])
    assert pick(s) == "smash"
    t = position(new(), hands={1: ["KILL", "LB-LB", "OUT"]}, serve=["IN"])
    assert pick(t) == "pass:OUT"  # concedes, dropping the Out face down
    u = position(new(), points=(3, 0), hands={1: ["KILL", "LB-LB", "OUT"]}, serve=["IN"])
    assert pick(u) == "kill"  # but saves a game point


def test_concedes_with_a_discard_of_a_surplus_card_never_a_smash() -> None:
    s = position(new(), hands={1: ["LB-LB", "LB-LB", "LB-LB", "RB-LB"]}, serve=["IN"])
    assert pick(s) == "pass:LB-LB"
    t = position(new(), hands={1: ["SMASH"]}, serve=["IN"])
    assert pick(t) == "smash"
    s.apply("pass:LB-LB")
    u = position(new(), hands={1: []}, serve=["IN"])
    assert pick(u) == "pass"


def test_doubles_leaves_the_ball_to_a_partner_who_can_answer() -> None:
    s = new(4, 1, control="players")
    position(s, server=0, point_number=1, hands={1: ["LF-LB"], 3: ["OUT"]}, serve=["IN"])
    assert s.to_move == 3 and pick(s) == "pass:B2:OUT"  # B1 may not hit from B's LF either
    set_hand(s, 1, ["SMASH"])
    assert pick(s) == "leave"
    s.apply("leave")
    assert pick(s) == "smash:B1"


def test_doubles_exchange_moves_box_shots_to_the_right_player() -> None:
    s = new(4, 2)
    team = s.server % 2
    names = ("A1", "B1", "A2", "B2")
    right, left = names[team], names[team + 2]
    set_hand(s, team, ["LF-LB", "RF-LB", "RB-LB", "SMASH", "OUT", "OUT", "LB-RB"])
    set_hand(s, team + 2, ["RF-RB", "LF-RB", "LB-LB", "KILL", "OUT", "RB-RB", "LB-RB"])
    assert pick(s) == f"give:{right}:LF-LB"
    s.apply(pick(s))
    assert pick(s) == "done"
    s.apply("done")
    assert pick(s) == f"give:{left}:RF-RB"
    s.apply(pick(s))
    assert s.sizes[team] == s.sizes[team + 2] == 7


def play(players: int, seed: int, rules_side: int, **options: str) -> int:
    """One match, rules bot for ``rules_side`` against random; the winning side or -1."""
    s = new(players, seed, **options)
    bot = RulesBot(seed)
    rng = random.Random(seed + 99)
    while (seat := s.to_move) is not None:
        legal = s.legal_actions()
        if seat % 2 == rules_side:
            i = bot.choose("tennis", s.observation(seat).to_dict(), legal)
        else:
            i = rng.randrange(len(legal))
        s.apply(legal[i])
    result = s.result()
    assert result is not None
    winners = {w % 2 for w in result.winners}
    return winners.pop() if len(winners) == 1 else -1


@pytest.mark.parametrize(
    ("players", "options", "matches"),
    [(2, {}, 20), (4, {"control": "team"}, 8), (4, {"control": "players"}, 8)],
    ids=["singles", "doubles-team", "doubles-players"],
)
def test_beats_random_clearly(players: int, options: dict[str, str], matches: int) -> None:
    wins = sum(play(players, seed, seed % 2, **options) == seed % 2 for seed in range(matches))
    assert wins == matches  # not a single match lost to random play


@pytest.mark.slow
def test_selfplay_figures_measure_the_balance() -> None:
    figures = selfplay_stats(matches=10, seed=3)
    assert 0.5 < figures["server_point_win_rate"] < 0.8
    assert figures["opening_answerable_rate"] > 0.9
    assert selfplay_stats(matches=10, seed=3) == figures  # in-process and reproducible
