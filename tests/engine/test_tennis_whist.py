"""Tennis whist: the scenarios of rules/scenarios.md, one test each, and our rules decisions."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import ConfigError, IllegalActionError, Result, get_game
from engine.cards import CARD_TEXT, mask_of, parse_card
from engine.games.tennis_whist import PHASE_PLAY, PHASE_TRUMP, TennisWhistState, draw_key

A, B, C, D = 0, 1, 2, 3
GAME = get_game("tennis_whist")


class RiggedRandom(random.Random):
    """A seeded generator whose next draws from the pack start with chosen cards.

    The referee takes the top cards of a freshly shuffled pack with ``sample``; this fixes the
    outcome of a tie-break or dealer draw. Later draws are ordinary.
    """

    def __init__(self, seed: int, tops: list[list[str]]) -> None:
        super().__init__(seed)
        self.tops = [[parse_card(t) for t in top] for top in tops]

    def sample(self, population: Sequence[Any], k: int, **kwargs: Any) -> list[Any]:
        if not self.tops:
            return super().sample(population, k, **kwargs)
        top = self.tops.pop(0)
        rest = [c for c in population if c not in top]
        return (top + super().sample(rest, max(0, k - len(top))))[:k]


def new_state(players: int = 4, seed: int = 1, **options: int) -> TennisWhistState:
    state = GAME.new_match(GAME.configure(players, dict(options)), seed)
    assert isinstance(state, TennisWhistState)
    return state


def set_position(
    state: TennisWhistState,
    hands: dict[int, str],
    *,
    trump: str,
    leader: int,
    dealer: int,
    round_number: int = 1,
    tricks_won: dict[int, int] | None = None,
) -> None:
    """Put ``state`` mid-round: only the seats in ``hands`` survive; ``leader`` leads next."""
    n = state.n
    state.alive = [s in hands for s in range(n)]
    state.n_alive = len(hands)
    state.hands = [mask_of(parse_card(t) for t in hands.get(s, "").split()) for s in range(n)]
    state.dealt = list(state.hands)
    state.round_number = round_number
    state.hand_size = 9 - round_number
    state.dealer = dealer
    state.trump = "CDHS".index(trump)
    state.turn_up = -1
    state.phase = PHASE_PLAY
    state.tricks_won = [0] * n
    for s, t in (tricks_won or {}).items():
        state.tricks_won[s] = t
    state.finished_tricks = []
    state.trick_cards, state.trick_seats = [], []
    state.trick_leader = leader
    state.to_move = leader
    state._legal = None


def play(state: TennisWhistState, *cards: str) -> None:
    for c in cards:
        state.apply(f"play:{c}")


def kinds_since(state: TennisWhistState, start: int) -> list[str]:
    return [e.kind for e in state.events[start:]]


def events_of(state: TennisWhistState, kind: str, start: int = 0) -> list[dict[str, Any]]:
    return [e.to_dict() for e in state.events[start:] if e.kind == kind]


# --- the scenarios of rules/scenarios.md ---------------------------------------------------


def test_scenario_1_elimination_tie_break_and_next_round() -> None:
    # A match whose dealer draw makes A (seat 0) the first dealer: B then leads round 1.
    state = next(m for m in (new_state(seed=s) for s in range(100)) if m.dealer == A)
    assert state.dealer == A and state.round_number == 1
    assert state.to_move == B
    # The last trick of round 1: A 3, B 3, C 1, D 0 so far; C leads and wins it -> C 2.
    set_position(
        state,
        {A: "3S", B: "4S", C: "AS", D: "2S"},
        trump="H",
        leader=C,
        dealer=A,
        tricks_won={A: 3, B: 3, C: 1},
    )
    # Tied A and B draw clockwise from the dealer's left: B first, then A (the dealer).
    state.rng = RiggedRandom(99, [["8S", "8H"]])
    start = len(state.events)
    play(state, "AS", "2S", "3S", "4S")
    assert state.tricks_won == [0, 0, 0, 0]  # a new round has started
    end = events_of(state, "round_end", start)[0]
    assert end["tricks"] == [3, 3, 2, 0] and end["out"] == [D]
    (draw,) = events_of(state, "tie_break", start)
    assert draw["to"] is None and draw["round"] == 1
    assert draw["seats"] == [B, A] and draw["cards"] == ["8S", "8H"] and draw["winner"] == B
    assert events_of(state, "round_won", start)[0]["seat"] == B
    # B deals 7 cards each to A, B and C (D is out and gets none), then nominates trumps.
    assert state.round_number == 2 and state.dealer == B and state.hand_size == 7
    assert [h.bit_count() for h in state.hands] == [7, 7, 7, 0]
    assert sorted(e["seat"] for e in events_of(state, "deal", start)) == [A, B, C]
    assert state.phase == PHASE_TRUMP and state.to_move == B
    assert state.observation(D).eliminated == (False, False, False, True)
    state.apply("trump:S")
    assert state.to_move == C  # first surviving player clockwise from B


def test_scenario_2_tie_break_rank_before_suit() -> None:
    assert draw_key(parse_card("KC")) > draw_key(parse_card("QS"))
    state = new_state(seed=4)
    # Round 2 (7 tricks), D already out: A 1, B 3, C 2 so far; C wins the last trick -> 3-3.
    set_position(
        state,
        {A: "2H", B: "3H", C: "AH"},
        trump="D",
        leader=C,
        dealer=A,
        round_number=2,
        tricks_won={A: 1, B: 3, C: 2},
    )
    # Tied B and C draw clockwise from the dealer's left: B gets KC, C gets QS.
    state.rng = RiggedRandom(5, [["KC", "QS"]])
    start = len(state.events)
    play(state, "AH", "2H", "3H")
    (draw,) = events_of(state, "tie_break", start)
    assert draw["seats"] == [B, C] and draw["cards"] == ["KC", "QS"]
    assert draw["winner"] == B  # king of clubs beats queen of spades: rank before suit
    assert state.dealer == B and state.round_number == 3


def test_scenario_3_sweep_of_round_1_wins_the_set_at_once() -> None:
    state = new_state(seed=2)
    start = len(state.events)
    # A holds the eight highest spades, spades are trumps: A wins every trick.
    set_position(
        state,
        {
            A: "7S 8S 9S TS JS QS KS AS",
            B: "2H 3H 4H 5H 6H 7H 8H 9H",
            C: "2D 3D 4D 5D 6D 7D 8D 9D",
            D: "2C 3C 4C 5C 6C 7C 8C 9C",
        },
        trump="S",
        leader=B,
        dealer=A,
    )
    rounds_before = len(events_of(state, "round"))
    while state.round_number == 1 and state.set_number == 1:
        state.apply(state.legal_actions()[0])
    assert [e["winner"] for e in events_of(state, "trick", start)] == [A] * 8
    assert events_of(state, "round_end", start)[0]["out"] == [B, C, D]
    assert events_of(state, "set_won", start)[0]["seat"] == A
    assert state.sets_won == [1, 0, 0, 0]
    # No round 2: the next "round" event is round 1 of set 2, after a new dealer draw.
    new_rounds = events_of(state, "round")[rounds_before:]
    assert [(r["set"], r["round"]) for r in new_rounds] == [(2, 1)]
    assert kinds_since(state, start).index("dealer_draw") > kinds_since(state, start).index(
        "set_won"
    )
    assert state.set_number == 2 and state.alive == [True] * 4


def test_scenario_4_one_card_round_ends_the_set() -> None:
    state = new_state(seed=3)
    state.rounds_survived = [7, 7, 7, 3]
    set_position(state, {A: "4H", B: "QH", C: "2C"}, trump="C", leader=A, dealer=C, round_number=8)
    start = len(state.events)
    play(state, "4H", "QH", "2C")  # C trumps with the 2 of clubs
    assert events_of(state, "round_end", start)[0]["out"] == [A, B]
    assert events_of(state, "set_won", start)[0]["seat"] == C
    assert state.sets_won == [0, 0, 1, 0]
    assert state.rounds_survived == [7, 7, 8, 3]
    assert state.set_number == 2 and state.round_number == 1


def test_scenario_5_no_trump_is_rejected() -> None:
    state = new_state(seed=5)
    rng = random.Random(0)
    while state.phase != PHASE_TRUMP:
        state.apply(rng.choice(state.legal_actions()))
    dealer = state.dealer
    assert state.to_move == dealer
    assert [a.text for a in state.legal_actions()] == ["trump:C", "trump:D", "trump:H", "trump:S"]
    decisions, events = state.decisions, len(state.events)
    for bad in ("trump:NT", "trump:N", "notrump", "trump:", "pass"):
        with pytest.raises(IllegalActionError, match="no-trump is not offered"):
            state.apply(bad)
    assert (state.decisions, len(state.events), state.trump) == (decisions, events, -1)
    assert state.observation(dealer).trump == ""


def test_scenario_6_seven_players_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"^tennis_whist is played by 2 to 6 players; got 7$"):
        GAME.configure(7)
    with pytest.raises(ConfigError, match="got 1"):
        GAME.configure(1)
    assert GAME.configure().players == 4


def test_scenario_7_discard_when_void_and_higher_trump_wins() -> None:
    state = new_state(seed=6)
    set_position(
        state,
        {A: "KC AC", B: "7H 3D", C: "5S 6S", D: "9D 2S"},
        trump="D",
        leader=A,
        dealer=D,
    )
    state.apply("play:KC")
    # B is void in clubs: any card, a heart discard included.
    assert [a.text for a in state.legal_actions()] == ["play:3D", "play:7H"]
    state.apply("play:7H")
    start = len(state.events)
    play(state, "5S", "9D")
    assert events_of(state, "trick", start)[0]["winner"] == D  # D trumped; nobody else did
    # Again with both trumps: 3D and then 9D -> 9D wins.
    set_position(
        state, {A: "2C", B: "3D", C: "4C", D: "9D"}, trump="D", leader=A, dealer=D, round_number=8
    )
    start = len(state.events)
    play(state, "2C", "3D", "4C", "9D")
    assert events_of(state, "trick", start)[0]["winner"] == D


def test_scenario_8_four_all_tie_breaks_and_nobody_with_a_trick_is_out() -> None:
    state = new_state(players=2, seed=7)
    set_position(state, {A: "2H", B: "AH"}, trump="S", leader=A, dealer=A, tricks_won={A: 4, B: 3})
    start = len(state.events)
    play(state, "2H", "AH")
    assert events_of(state, "round_end", start)[0]["tricks"] == [4, 4]
    assert events_of(state, "round_end", start)[0]["out"] == []
    assert len(events_of(state, "tie_break", start)) == 1
    assert state.alive == [True, True]
    assert state.round_number == 2 and state.set_number == 1
    assert [h.bit_count() for h in state.hands] == [7, 7]


def test_scenario_9_third_set_wins_the_match() -> None:
    state = new_state(seed=8)
    state.sets_won = [2, 2, 1, 0]
    state.set_number = 6
    set_position(state, {A: "AS", B: "KS"}, trump="H", leader=B, dealer=A, round_number=8)
    start = len(state.events)
    play(state, "KS", "AS")
    assert kinds_since(state, start)[-2:] == ["set_won", "match_won"]
    assert state.is_over() and state.legal_actions() == ()
    result = state.result()
    assert result is not None
    assert result.scores == (3.0, 2.0, 1.0, 0.0)
    assert result.ranks == (1, 2, 3, 4)
    assert result.winners == (A,)
    assert result.summary == "P1 wins the match with 3 sets (P2 2, P3 1, P4 0)"


# --- our rules decisions (docs/rules/tennis_whist.md) ----------------------------------------


def test_dealer_draw_is_public_and_ties_break_by_suit() -> None:
    for seed in range(30):
        state = new_state(players=6, seed=seed)
        (draw,) = events_of(state, "dealer_draw")
        assert draw["to"] is None and draw["set"] == 1
        keys = [draw_key(parse_card(t)) for t in draw["cards"]]
        assert len(set(draw["cards"])) == 6
        assert draw["dealer"] == state.dealer == keys.index(max(keys))
        assert state.observation(0).dealer_draw == tuple(draw["cards"])


def test_new_set_redraws_dealer_and_everyone_plays_again() -> None:
    state = new_state(seed=9)
    set_position(state, {A: "AS", C: "KS"}, trump="S", leader=C, dealer=A, round_number=5)
    state.rng = RiggedRandom(1, [["8H", "8S", "5C", "8D"]])  # the next set's dealer draw
    start = len(state.events)
    play(state, "KS", "AS")
    (draw,) = events_of(state, "dealer_draw", start)
    assert draw["cards"] == ["8H", "8S", "5C", "8D"] and draw["dealer"] == B
    assert state.set_number == 2 and state.round_number == 1 and state.alive == [True] * 4
    assert state.to_move == C and state.tie_breaks == []
    assert [h.bit_count() for h in state.hands] == [8, 8, 8, 8]


def test_round_1_turn_up_belongs_to_nobody_and_is_public() -> None:
    state = new_state(players=6, seed=10)
    up = state.turn_up
    assert all(not (h >> up & 1) for h in state.hands)
    assert [h.bit_count() for h in state.hands] == [8] * 6
    assert state.stock.bit_count() == 52 - 49
    (event,) = events_of(state, "turn_up")
    assert event["to"] is None and event["card"] == CARD_TEXT[up]
    for seat in range(6):
        obs = state.observation(seat)
        assert obs.turn_up == CARD_TEXT[up] and obs.trump == CARD_TEXT[up][1]


def test_eliminated_players_are_skipped_in_deal_lead_and_play() -> None:
    state = new_state(players=5, seed=11)
    # Dealer A; B and D are out. Trick order: C, E, A.
    set_position(state, {A: "2H 5D", C: "3H 4D", 4: "4H 3D"}, trump="C", leader=C, dealer=A)
    seen = []
    while state.round_number == 1:
        seen.append(state.to_move)
        state.apply(state.legal_actions()[0])
    assert seen[:3] == [C, 4, A]
    assert B not in seen and D not in seen
    # Round 2: only the survivors got cards; the dealer names trumps, then leads go clockwise.
    assert state.hands[B] == state.hands[D] == 0
    assert state.observation(B).hand == () and state.observation(B).eliminated[B]


def test_trump_nomination_sets_trumps_for_the_round() -> None:
    state = new_state(seed=12)
    rng = random.Random(1)
    while state.phase != PHASE_TRUMP:
        state.apply(rng.choice(state.legal_actions()))
    start = len(state.events)
    state.apply("trump:H")
    assert events_of(state, "trump", start)[0]["suit"] == "H"
    assert all(state.observation(s).trump == "H" for s in range(4))
    assert state.turn_up == -1 and state.observation(0).turn_up == ""


def test_standings_order_sets_then_rounds_survived_then_tricks() -> None:
    state = new_state(players=5, seed=13)
    state.sets_won = [1, 1, 1, 0, 1]
    state.rounds_survived = [9, 9, 10, 20, 9]
    state.total_tricks = [30, 31, 5, 99, 30]
    assert state.standing() == (3, 2, 1, 5, 3)
    assert state.observation(4).standing == (3, 2, 1, 5, 3)


def test_sets_to_win_option() -> None:
    state = new_state(players=3, seed=14, sets_to_win=1)
    rng = random.Random(2)
    while not state.is_over():
        state.apply(rng.choice(state.legal_actions()))
    result = state.result()
    assert result is not None and sorted(result.scores) == [0.0, 0.0, 1.0]
    assert result.stats["sets"] == 1
    with pytest.raises(ConfigError, match="between 1 and 9"):
        GAME.configure(4, {"sets_to_win": 0})


def test_illegal_play_messages() -> None:
    state = new_state(seed=15)
    set_position(state, {A: "2H 5D", B: "3H 4D"}, trump="C", leader=A, dealer=B)
    state.apply("play:2H")
    with pytest.raises(IllegalActionError, match="must follow suit H"):
        state.apply("play:4D")
    with pytest.raises(IllegalActionError, match="not in your hand"):
        state.apply("play:AS")
    with pytest.raises(IllegalActionError, match="legal: play:3H"):
        state.apply("trump:S")
    with pytest.raises(IllegalActionError, match="write the card as 3H"):
        state.apply("play:3h")


def _swap_hidden(state: TennisWhistState, seat: int, rng: random.Random) -> bool:
    """Exchange random cards between two surviving seats other than ``seat``; False if none."""
    others = [s for s in range(state.n) if s != seat and state.hands[s]]
    if len(others) < 2:
        return False
    o1, o2 = rng.sample(others, 2)
    h1, h2 = state.hands[o1], state.hands[o2]
    k = rng.randint(1, min(h1.bit_count(), h2.bit_count()))
    give1 = mask_of(rng.sample([c for c in range(52) if h1 >> c & 1], k))
    give2 = mask_of(rng.sample([c for c in range(52) if h2 >> c & 1], k))
    state.hands[o1] = h1 ^ give1 | give2
    state.hands[o2] = h2 ^ give2 | give1
    state.dealt[o1] = state.dealt[o1] & ~give1 | give2
    state.dealt[o2] = state.dealt[o2] & ~give2 | give1
    return True


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32), st.sampled_from([3, 4, 6]))
def test_no_leak_other_seats_hidden_cards_never_change_an_observation(
    seed: int, players: int
) -> None:
    state = new_state(players=players, seed=seed)
    rng = random.Random(seed)
    swaps = 0
    while not state.is_over() and state.decisions < 600:
        if rng.random() < 0.3:
            seat = rng.randrange(players)
            before = state.observation(seat)
            hands, dealt = list(state.hands), list(state.dealt)
            if _swap_hidden(state, seat, rng):
                swaps += 1
                assert state.hands != hands
                assert state.observation(seat) == before
                assert state.observation(seat).to_dict() == before.to_dict()
            state.hands, state.dealt = hands, dealt  # undo, so play goes on from the real deal
        state.apply(rng.choice(state.legal_actions()))
    assert swaps > 0


def test_summary_names_each_players_sets() -> None:
    # "P2 wins the match 1 set to 0-0" left the other players' sets unnamed.
    result = played_out(new_state(players=3, seed=14, sets_to_win=1), seed=2)
    names = ["P1", "P2", "P3"]
    winner = result.ranks.index(1)
    others = ", ".join(f"{names[s]} 0" for s in range(3) if s != winner)
    assert result.summary == f"{names[winner]} wins the match with 1 set ({others})"


def test_heads_up_summary() -> None:
    result = played_out(new_state(players=2, seed=3, sets_to_win=1), seed=3)
    assert result.summary == f"P{result.ranks.index(1) + 1} wins the match 1 set to 0"


def played_out(state: TennisWhistState, seed: int) -> Result:
    """``state`` played to its end at random; its result."""
    rng = random.Random(seed)
    while not state.is_over():
        state.apply(rng.choice(state.legal_actions()))
    result = state.result()
    assert result is not None
    return result
