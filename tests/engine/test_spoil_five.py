"""Spoil Five: the rule scenarios of scenarios.md, our decisions, and invariants over playouts."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable, Mapping, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import ConfigError, Event, OptionValue, get_game
from engine.cards import CARD_TEXT, cards_list, parse_card
from engine.games.spoil_five import SpoilFiveState
from engine.games.spoil_rules import (
    ACE_OF_HEARTS,
    SpoilTableState,
    legal_play_mask,
    trick_winner,
)

# --- helpers (also used by test_forty_five.py) ------------------------------------------------


def mask(text: str) -> int:
    """The bit mask of space-separated card texts."""
    m = 0
    for t in text.split():
        m |= 1 << parse_card(t)
    return m


def texts(actions: Sequence[object]) -> list[str]:
    """Text forms of actions."""
    return [str(a) for a in actions]


def arranged(
    hands: Sequence[str],
    turn_up: str,
    dealer: int | None = None,
    game_id: str = "spoil_five",
    options: Mapping[str, OptionValue] | None = None,
) -> SpoilTableState:
    """A match whose current deal is replaced by ``hands`` (one string per seat)."""
    game = get_game(game_id)
    state = game.new_match(game.configure(len(hands), options or {}), seed=0)
    assert isinstance(state, SpoilTableState)
    seat_dealer = len(hands) - 1 if dealer is None else dealer
    state.arrange_deal(seat_dealer, [mask(h) for h in hands], parse_card(turn_up))
    return state


def filled_trick(
    turn_up: str, trick: Sequence[str], game_id: str = "spoil_five"
) -> SpoilTableState:
    """Seat i holds ``trick[i]`` plus harmless fillers (neither trumps nor of the suit led);
    seat 0 leads, the last seat deals."""
    trump = parse_card(turn_up) // 13
    led = parse_card(trick[0])
    led_suit = trump if led == ACE_OF_HEARTS else led // 13
    used = {parse_card(t) for t in trick} | {parse_card(turn_up)}
    fillers = [
        c
        for c in range(52)
        if c // 13 not in (trump, led_suit) and c != ACE_OF_HEARTS and c not in used
    ]
    hands = [" ".join([t] + [CARD_TEXT[fillers.pop(0)] for _ in range(4)]) for t in trick]
    return arranged(hands, turn_up, game_id=game_id)


def play(state: SpoilTableState, *actions: str) -> list[Event]:
    """Apply actions in turn; return every event they produced."""
    events: list[Event] = []
    for a in actions:
        events += state.apply(a)
    return events


def play_tricks(state: SpoilTableState, tricks: Sequence[str]) -> list[Event]:
    """Play whole tricks, each given as its cards in play order."""
    events: list[Event] = []
    for trick in tricks:
        for c in trick.split():
            events += state.apply(f"play:{c}")
    return events


def trick_won_by(events: Sequence[Event]) -> int:
    """Winner of the last trick among ``events``."""
    return int(str([e for e in events if e.kind == "trick"][-1].data["winner"]))


def winner_of(turn_up: str, trick: Sequence[str]) -> int:
    """Play ``trick`` through the referee (seat i plays trick[i]) and return the winning seat."""
    state = filled_trick(turn_up, trick)
    return trick_won_by(play(state, *(f"play:{c}" for c in trick)))


def legal_after_lead(turn_up: str, lead: str, hand: str) -> list[str]:
    """Seat 1's legal actions holding ``hand`` when seat 0 has led ``lead`` (a late position)."""
    state = arranged([lead, hand], turn_up, dealer=1)
    state.apply(f"play:{lead}")
    assert state.to_move == 1
    return texts(state.legal_actions())


def chips_total(state: SpoilFiveState) -> int:
    return sum(state.balances) + state.pool


def playout(
    game_id: str,
    players: int,
    seed: int,
    options: Mapping[str, OptionValue] | None = None,
    check: Callable[[SpoilTableState], None] | None = None,
) -> SpoilTableState:
    """A match of random legal actions; ``check`` runs before every decision and at the end."""
    game = get_game(game_id)
    state = game.new_match(game.configure(players, options or {}), seed)
    assert isinstance(state, SpoilTableState)
    rng = random.Random(seed)
    while state.to_move is not None:
        if check:
            check(state)
        state.apply(rng.choice(state.legal_actions()))
    if check:
        check(state)
    return state


# --- scenarios.md: spoil_five / forty_five ----------------------------------------------------


def test_scenario_1_black_plain_order() -> None:
    # Trumps diamonds. Lead 2S, then AS, TS, QS -> QS wins.
    assert winner_of("3D", ["2S", "AS", "TS", "QS"]) == 3
    # Without the QS: AS beats 2S, 2S beats TS.
    assert winner_of("3D", ["2S", "AS", "TS"]) == 1
    assert winner_of("3D", ["2S", "TS"]) == 0


def test_scenario_2_ace_lowest_in_plain_diamonds() -> None:
    # Trumps clubs. Lead AD, then 2D -> 2D wins.
    assert winner_of("3C", ["AD", "2D"]) == 1


def test_scenario_3_ace_of_hearts_is_third_trump() -> None:
    # Trumps diamonds. Lead KS, then 2D, then AH -> AH wins; a later JD would beat it.
    assert winner_of("3D", ["KS", "2D", "AH"]) == 2
    assert winner_of("3D", ["KS", "2D", "AH", "JD"]) == 3


def test_scenario_4_plain_lead_follow_suit_or_trump() -> None:
    # Trumps clubs, lead 7D. A hand 9D, KS, 3C may play 9D or 3C only.
    assert legal_after_lead("4C", "7D", "9D KS 3C") == ["play:3C", "play:9D"]


def test_scenario_5_renege_jack_to_lower_trump() -> None:
    # Trumps spades, lead 4S. Hand JS, KH, 8D -> any card (renege).
    assert legal_after_lead("3S", "4S", "JS KH 8D") == ["play:8D", "play:KH", "play:JS"]
    # Hand JS, 6S, 8D -> JS or 6S.
    assert legal_after_lead("3S", "4S", "JS 6S 8D") == ["play:6S", "play:JS"]


def test_scenario_6_privilege_compares_with_card_led() -> None:
    # Trumps spades, lead JS. Hand AH + clubs -> must play AH.
    assert legal_after_lead("3S", "JS", "AH 2C 7C") == ["play:AH"]
    # Hand 5S + clubs -> any card.
    assert legal_after_lead("3S", "JS", "5S 2C 7C") == ["play:2C", "play:7C", "play:5S"]
    # With 5S led, everyone holding a trump must play one.
    state = arranged(["5S 9D", "JS 2C", "AH 3C", "2S 4C"], "3S", dealer=3)
    state.apply("play:5S")
    for seat, trump in ((1, "JS"), (2, "AH"), (3, "2S")):
        assert state.to_move == seat
        assert texts(state.legal_actions()) == [f"play:{trump}"]
        state.apply(f"play:{trump}")


def _scenario_7_state() -> SpoilTableState:
    # Four players, P4 deals, P1 leads; turn-up 7D and P3 (seat 2) holds AD.
    return arranged(["KH 2C 3C 4C 2D", "2H 3H 4H 5H 6H", "AD KC 8S 9S TS", "7H 8H 9H TH JH"], "7D")


def test_scenario_7_holder_robs_at_first_turn_discard_hidden() -> None:
    state = _scenario_7_state()
    assert texts(state.legal_actions())[0] == "play:2C"  # P1 just plays: no decision for it
    play(state, "play:KH", "play:2H")
    assert state.to_move == 2
    legal = texts(state.legal_actions())
    assert legal == ["announce", "rob:KC", "rob:AD", "rob:8S", "rob:9S", "rob:TS", "silent"]
    events = play(state, "rob:KC")
    rob = next(e for e in events if e.kind == "rob")
    assert rob.to is None and rob.data["seat"] == 2 and rob.data["card"] == "7D"
    discard = next(e for e in events if e.kind == "rob_discard")
    assert discard.to == (2,) and discard.data["card"] == "KC"
    # P3 may play the turn-up at once.
    assert "play:7D" in texts(state.legal_actions())
    assert state.observation(2).to_dict()["rob_discard"] == "KC"
    for seat in (0, 1, 3):
        obs = state.observation(seat).to_dict()
        assert obs["robbed_by"] == 2 and obs["rob_discard"] == ""
        assert "KC" not in json.dumps(obs)
        events = state.visible_events(seat)
        assert events and all("KC" not in json.dumps(e.to_dict()) for e in events)
    events = play(state, "play:7D", "play:7H")
    assert trick_won_by(events) == 2


def test_scenario_7_silent_holder_ace_becomes_lowest_trump() -> None:
    state = _scenario_7_state()
    play(state, "play:KH", "play:2H")
    events = play(state, "silent")
    assert [e.to for e in events] == [(2,)]  # silence is known only to the holder
    assert state.observation(2).to_dict()["ace_demoted"] is True
    assert state.observation(0).to_dict()["ace_demoted"] is False
    assert trick_won_by(play(state, "play:8S", "play:7H")) == 0
    # Trick 2: P1 leads 2D; P3's only trump is the demoted AD, which it must play.
    state.apply("play:2D")
    state.apply("play:3H")
    assert texts(state.legal_actions()) == ["play:AD"]
    events = play(state, "play:AD", "play:8H")
    ace_play = next(e for e in events if e.kind == "play" and e.data["card"] == "AD")
    assert ace_play.to is None and ace_play.data.get("demoted") is True
    assert trick_won_by(events) == 0  # 2D beats the demoted AD
    assert state.observation(1).to_dict()["demoted_played"] == "AD"


def _scenario_8_hands() -> list[str]:
    # Four players, P4 (seat 3) deals and the turn-up is AC.
    return ["KH 2H 3H 4H 5H", "6H 7H 8H 9H TH", "2D 3D 4D 5D 6D", "9D QC 2S 3S 4S"]


def test_scenario_8_dealer_robs_turned_ace_joins_after_trick_1() -> None:
    state = arranged(_scenario_8_hands(), "AC")
    assert state.to_move == 3  # the dealer decides before the lead
    assert texts(state.legal_actions()) == [
        "decline",
        "rob:QC",
        "rob:9D",
        "rob:2S",
        "rob:3S",
        "rob:4S",
    ]
    events = play(state, "rob:9D")
    assert {e.kind: e.to for e in events} == {"rob": None, "rob_discard": (3,)}
    assert state.to_move == 0
    play(state, "play:KH", "play:6H", "play:2D")
    # The dealer plays trick 1 from the 4 other cards.
    assert texts(state.legal_actions()) == ["play:QC", "play:2S", "play:3S", "play:4S"]
    assert state.observation(3).to_dict()["pending_ace"] == "AC"
    events = play(state, "play:2S")
    assert [e.kind for e in events][-1] == "ace_joins"
    obs = state.observation(3).to_dict()
    assert isinstance(obs["hand"], list) and "AC" in obs["hand"]
    assert obs["pending_ace"] == ""


def test_scenario_8_dealer_ace_in_trick_1_option() -> None:
    state = arranged(_scenario_8_hands(), "AC", options={"dealer_ace_in_trick_1": True})
    play(state, "rob:9D", "play:KH", "play:6H", "play:2D")
    assert "play:AC" in texts(state.legal_actions())
    assert trick_won_by(play(state, "play:AC")) == 3


def _scenario_9_state(p1_hand: str) -> SpoilFiveState:
    # Five players, P5 deals, P1 leads; trumps spades (turn-up 2S, AS in the stock); pool 7.
    others = ["2D 3D 4D 5D 6D", "7D 8D 9D TD JD", "2H 3H 4H 5H 6H", "7H 8H 9H TH KC"]
    state = arranged([p1_hand, *others], "2S")
    assert isinstance(state, SpoilFiveState)
    state.pool, state.stakes, state.balances = 7, [3, 1, 1, 1, 1], [-3, -1, -1, -1, -1]
    return state


def _win_tricks_1_to_3(state: SpoilFiveState) -> None:
    # Nobody else holds a trump, so P1's top trumps take tricks 1-3.
    play_tricks(state, ["5S 2D 7D 2H 7H", "JS 3D 8D 3H 8H", "AH 4D 9D 4H 9H"])
    assert state.tricks_won[0] == 3 and state.to_move == 0
    assert texts(state.legal_actions()) == ["claim", "jinx"]


def test_scenario_9_claim_takes_the_pool() -> None:
    state = _scenario_9_state("5S JS AH KS QS")
    _win_tricks_1_to_3(state)
    events = play(state, "claim")
    won = next(e for e in events if e.kind == "pool_won")
    assert won.data["seat"] == 0 and won.data["chips"] == 7 and won.data["jinx_bonus"] == 0
    assert won.data["balances"] == [4, -1, -1, -1, -1]  # P1: -3 + 7
    assert state.deal_number == 2 and state.pool == 5  # hand over; a fresh pool is anted
    assert chips_total(state) == 0


def test_scenario_9_jinx_won_takes_pool_and_a_chip_from_each() -> None:
    state = _scenario_9_state("5S JS AH KS QS")
    _win_tricks_1_to_3(state)
    play(state, "jinx")
    assert state.to_move == 0 and state.jinxer == 0
    events = play_tricks(state, ["KS 5D TD 5H TH", "QS 6D JD 6H KC"])
    won = next(e for e in events if e.kind == "pool_won")
    assert won.data["chips"] == 7 and won.data["jinx_bonus"] == 4
    assert won.data["balances"] == [8, -2, -2, -2, -2]  # +7 and +1 from each of the other 4
    assert chips_total(state) == 0


def test_scenario_9_jinx_lost_is_a_spoil() -> None:
    state = _scenario_9_state("5S JS AH 2C 3C")
    _win_tricks_1_to_3(state)
    events = play(state, "jinx", "play:2C", "play:5D", "play:TD", "play:5H", "play:KC")
    assert trick_won_by(events) == 4
    spoil = next(e for e in events if e.kind == "spoil")
    assert spoil.data["pool"] == 7 and spoil.data["why"] == "jinx lost"
    # The pool stays 7 and the next dealer (P1) adds 1, making 8.
    assert state.deal_number == 2 and state.dealer == 0 and state.pool == 8
    assert state.balances == [-4, -1, -1, -1, -1]


def _scenario_10_state() -> SpoilFiveState:
    # No trumps in any hand (trumps spades, turn-up 2S); tricks go P1 P1 P2 P2 P3.
    hands = [
        "KC QC 2D 4H 5H",
        "3D 4D KD KH 3H",
        "6H 7H 8H JH QH",
        "2H 9H TH 5D 6D",
        "2C 3C 7D 8D 9D",
    ]
    state = arranged(hands, "2S")
    assert isinstance(state, SpoilFiveState)
    return state


_SCENARIO_10_PLAYS = (
    "KC 3D 6H 5D 2C",  # P1 leads
    "QC 4D 7H 6D 3C",  # P1
    "2D KD 8H 2H 7D",  # P1 leads, P2 wins
    "KH JH 9H 8D 4H",  # P2 leads
    "3H QH TH 9D 5H",  # P2 leads, P3 wins
)


def test_scenario_10_tricks_2_2_1_spoil() -> None:
    state = _scenario_10_state()
    events = play_tricks(state, _SCENARIO_10_PLAYS)
    assert [e.data["winner"] for e in events if e.kind == "trick"] == [0, 0, 1, 1, 2]
    spoil = next(e for e in events if e.kind == "spoil")
    assert spoil.data["tricks"] == [2, 2, 1, 0, 0]
    assert not any(e.kind == "pool_won" for e in events)
    assert state.deal_number == 2 and state.pool == 6  # carried over, the new dealer adds 1


# --- decisions of docs/rules/spoil_five.md ------------------------------------------------------


def test_fresh_pool_takes_a_chip_from_everyone() -> None:
    state = get_game("spoil_five").new_match(get_game("spoil_five").configure(), seed=4)
    assert isinstance(state, SpoilFiveState)
    assert state.pool == 5 and state.balances == [-1] * 5 and state.stakes == [1] * 5
    ante = next(e for e in state.events if e.kind == "ante")
    assert ante.data == {"seats": [0, 1, 2, 3, 4], "pool": 5}


def test_third_trick_at_trick_4_wins_at_once() -> None:
    # P1 wins tricks 1, 2 and 4 (P2 takes trick 3): the pool goes at once; no trick 5.
    hands = [
        "5S JS 2C KS QS",
        "KC 2D 3D 4D 5D",
        "6D 7D 8D 9D TD",
        "2H 3H 4H 5H 6H",
        "7H 8H 9H TH JD",
    ]
    state = arranged(hands, "2S")
    assert isinstance(state, SpoilFiveState)
    tricks = ["5S 2D 6D 2H 7H", "JS 3D 7D 3H 8H", "2C KC 8D 4H 9H", "4D 9D 5H JD KS"]
    events = play_tricks(state, tricks)
    assert [e.data["winner"] for e in events if e.kind == "trick"] == [0, 0, 1, 0]
    won = next(e for e in events if e.kind == "pool_won")
    assert won.data["seat"] == 0 and won.data["chips"] == 5
    assert state.deal_number == 2


def test_spoil_as_soon_as_nobody_can_reach_three() -> None:
    # Trumps spades, none in play: P1, P2, P3, P4 win one trick each; no trick 5 is played.
    hands = [
        "KC 2H 3H 4H 5H",
        "KH 2D 6H 7H 8H",
        "KD 3C 4C 9H TH",
        "QC 5C QH 3D JH",
        "6C 7C 4D 5D TD",
    ]
    state = arranged(hands, "6S")
    assert isinstance(state, SpoilFiveState)
    tricks = ["KC 6H 4C 5C 6C", "2H KH 9H QH 4D", "2D KD 3D 5D 3H", "3C QC 7C 4H 7H"]
    events = play_tricks(state, tricks)
    assert [e.data["winner"] for e in events if e.kind == "trick"] == [0, 1, 2, 3]
    spoil = next(e for e in events if e.kind == "spoil")
    assert spoil.data["why"] == "nobody can take three tricks"
    assert state.deal_number == 2


def test_jinx_lost_at_trick_5_is_a_spoil() -> None:
    state = _scenario_9_state("5S JS AH KS 2C")
    _win_tricks_1_to_3(state)
    play(state, "jinx")
    events = play_tricks(state, ["KS 5D TD 5H TH", "2C 6D JD 6H KC"])
    assert trick_won_by(events) == 4
    assert any(e.kind == "spoil" for e in events) and state.pool == 8


def test_ace_holder_who_leads_decides_before_leading() -> None:
    state = arranged(["AS 2H 3H 4H 5H", "6H 7H 8H 9H TH", "2D 3D 4D 5D 6D"], "7S")
    assert state.to_move == 0
    assert texts(state.legal_actions())[:2] == ["announce", "rob:2H"]
    events = play(state, "announce")
    assert events[0].kind == "announce" and events[0].to is None
    assert state.observation(1).to_dict()["announced_by"] == 0
    assert texts(state.legal_actions())[0] == "play:2H"  # now it plays


def test_dealer_holding_the_ace_decides_at_its_turn() -> None:
    state = arranged(["2H 3H 4H 5H 6H", "7H 8H 9H TH JH", "AS 2D 3D 4D 5D"], "7S")
    play(state, "play:2H", "play:7H")
    assert state.to_move == 2 and texts(state.legal_actions())[0] == "announce"


def test_no_decision_when_the_ace_of_trumps_is_in_the_stock() -> None:
    state = arranged(["2H 3H 4H 5H 6H", "7H 8H 9H TH JH", "2D 3D 4D 5D 6D"], "7S")
    seen: set[str] = set()
    while not state.finished_tricks:
        seen |= {a.kind for a in state.legal_actions()}
        state.apply(state.legal_actions()[0])
    assert seen == {"play"}


def test_must_rob_removes_silent_and_decline() -> None:
    options = {"must_rob": True}
    state = arranged(["AS 2H 3H 4H 5H", "6H 7H 8H 9H TH"], "7S", options=options)
    assert texts(state.legal_actions()) == [
        "announce",
        "rob:2H",
        "rob:3H",
        "rob:4H",
        "rob:5H",
        "rob:AS",
    ]
    state = arranged(["2H 3H 4H 5H 6H", "7H 8H 9H TH JH"], "AS", options=options)
    assert texts(state.legal_actions()) == ["rob:7H", "rob:8H", "rob:9H", "rob:TH", "rob:JH"]


def test_dealer_declines_turned_ace() -> None:
    state = arranged(["2H 3H 4H 5H 6H", "7H 8H 9H TH JH"], "AS")
    events = play(state, "decline")
    assert events[0].kind == "decline" and events[0].to is None
    assert state.observation(0).to_dict()["dealer_declined"] is True
    assert state.to_move == 0 and state.turn_up_on_stock
    assert state.card_count() == 52


def test_holder_may_discard_the_ace_itself() -> None:
    state = arranged(["AS 2H 3H 4H 5H", "6H 7H 8H 9H TH"], "7S")
    play(state, "rob:AS")
    assert texts(state.legal_actions()) == ["play:2H", "play:3H", "play:4H", "play:5H", "play:7S"]
    assert state.card_count() == 52


def test_demoted_ace_of_hearts_loses_its_privilege() -> None:
    # Hearts trumps; the holder of AH stayed silent: to a lead of 2H it must play AH.
    state = arranged(["2H 2C 3C 4C 5C", "AH 6C 7C 8C 9C"], "3H", dealer=1)
    play(state, "play:2H")
    assert texts(state.legal_actions())[0] == "announce"
    play(state, "silent")
    assert texts(state.legal_actions()) == ["play:AH"]
    # Without the silence AH would be privileged (it outranks the 2H led).
    assert legal_play_mask(mask("AH 6C"), parse_card("2H"), 2) == mask("AH 6C")
    assert trick_winner([parse_card("2H"), parse_card("AH")], 2, demoted=True) == 0


def test_session_length_and_leftover_pool_returned() -> None:
    # The last allowed extra deal spoils: the pool goes back to those who put it in.
    state = _scenario_10_state()
    n = state.n
    state.deal_number = state.scheduled + n
    state.pool, state.stakes, state.balances = 7, [3, 2, 1, 1, 0], [-5, -2, -1, -1, 2]
    events = play_tricks(state, _SCENARIO_10_PLAYS)
    kinds = [e.kind for e in events]
    assert kinds[-3:] == ["spoil", "pool_returned", "session_over"]
    assert events[-2].data["chips"] == [3, 2, 1, 1, 0]
    assert state.is_over() and state.pool == 0 and state.balances == [-2, 0, 0, 0, 2]
    result = state.result()
    assert result is not None and result.ranks == (5, 2, 2, 2, 1)


def test_session_is_rounds_times_players_deals_plus_extras() -> None:
    for seed in range(30):
        state = playout("spoil_five", 4, seed, {"rounds": 2})
        assert isinstance(state, SpoilFiveState)
        deals = state.deal_number
        assert 8 <= deals <= 12
        last_spoiled = state.stats["pools_returned"] == 1
        if deals < 12:
            assert not last_spoiled
        assert state.stats["extra_deals"] == deals - 8


def test_config_errors() -> None:
    game = get_game("spoil_five")
    with pytest.raises(ConfigError, match="2 to 10 players; got 11"):
        game.configure(11)
    with pytest.raises(ConfigError, match="'rounds' must be between 1 and 20"):
        game.configure(5, {"rounds": 0})
    assert game.configure().players == 5


def test_illegal_play_explains_the_rule() -> None:
    state = arranged(["7D 2C", "9D KS 3C"], "4C", dealer=1)
    state.apply("play:7D")
    with pytest.raises(Exception, match="follow the suit led or trump"):
        state.apply("play:KS")


def test_render_mentions_hand_and_pool() -> None:
    state = _scenario_9_state("5S JS AH KS QS")
    text = state.observation(0).render()
    assert "Hand: AH 5S JS QS KS" in text and "pool 7" in text


# --- invariants over random playouts -----------------------------------------------------------

_OPTIONS = st.fixed_dictionaries(
    {"must_rob": st.booleans(), "dealer_ace_in_trick_1": st.booleans()}
)


def _conserved(state: SpoilTableState) -> None:
    assert state.card_count() == 52
    assert isinstance(state, SpoilFiveState)
    assert chips_total(state) == 0


@given(seed=st.integers(0, 2**31), players=st.integers(2, 10), options=_OPTIONS)
@settings(max_examples=150, deadline=None)
def test_cards_and_chips_conserved(seed: int, players: int, options: dict[str, bool]) -> None:
    state = playout("spoil_five", players, seed, options, _conserved)
    assert isinstance(state, SpoilFiveState)
    assert state.pool == 0 and sum(state.balances) == 0


@given(seed=st.integers(0, 2**31), players=st.integers(2, 10))
@settings(max_examples=40, deadline=None)
def test_deterministic(seed: int, players: int) -> None:
    a = playout("spoil_five", players, seed)
    b = playout("spoil_five", players, seed)
    assert [e.to_dict() for e in a.events] == [e.to_dict() for e in b.events]
    ra, rb = a.result(), b.result()
    assert ra is not None and rb is not None and ra.to_dict() == rb.to_dict()


def scramble_hidden(state: SpoilTableState, seat: int, rng: random.Random) -> SpoilTableState:
    """A copy where every card ``seat`` may not see is dealt anew among the same places, other
    seats' rob discards included, and another seat's silence is moved."""
    # A shallow copy is enough: only these lists and plain attributes are replaced below.
    other = copy.copy(state)
    other.hands, other.rob_discard = list(state.hands), list(state.rob_discard)
    places: list[tuple[str, int, int]] = []  # (kind, seat, size)
    pool: list[int] = []
    for s in range(other.n):
        if s != seat:
            pool += cards_list(other.hands[s])
            places.append(("hand", s, len(cards_list(other.hands[s]))))
            if other.rob_discard[s] >= 0:
                pool.append(other.rob_discard[s])
                places.append(("discard", s, 1))
    pool += cards_list(other.stock)
    places.append(("stock", -1, len(cards_list(other.stock))))
    rng.shuffle(pool)
    for kind, s, size in places:
        chunk, pool = pool[:size], pool[size:]
        m = sum(1 << c for c in chunk)
        if kind == "hand":
            other.hands[s] = m
        elif kind == "discard":
            other.rob_discard[s] = chunk[0]
        else:
            other.stock = m
    if other.silent_seat != seat:
        other.silent_seat = rng.choice([-1, *(s for s in range(other.n) if s != seat)])
    return other


@given(seed=st.integers(0, 2**31), players=st.integers(2, 7))
@settings(max_examples=60, deadline=None)
def test_no_leak_of_hidden_cards_or_rob_discards(seed: int, players: int) -> None:
    rng = random.Random(seed)

    def check(state: SpoilTableState) -> None:
        if rng.random() < 0.5:
            seat = rng.randrange(state.n)
            before = state.observation(seat)
            assert scramble_hidden(state, seat, rng).observation(seat) == before

    playout("spoil_five", players, seed, {"must_rob": seed % 3 == 0}, check)


@given(seed=st.integers(0, 2**31), players=st.integers(2, 10))
@settings(max_examples=40, deadline=None)
def test_private_events_and_observations(seed: int, players: int) -> None:
    def check(state: SpoilTableState) -> None:
        seat = state.to_move
        if seat is None:
            return
        legal = texts(state.legal_actions())
        assert legal and len(set(legal)) == len(legal)
        plays = [parse_card(t[5:]) for t in legal if t.startswith("play:")]
        assert plays == sorted(plays)
        obs = state.observation(seat)
        json.dumps(obs.to_dict())
        if plays:  # the referee's legal plays agree with the rule function
            led = state.trick_cards[0] if state.trick_cards else -1
            assert sum(1 << c for c in plays) == state.rules.legal_mask(state.hands[seat], led)

    state = playout("spoil_five", players, seed, None, check)
    for e in state.events:
        if e.to is not None:
            assert e.kind in ("deal", "rob_discard", "silent")
            assert e.to == (e.data["seat"],)
    result = state.result()
    assert result is not None and len(result.ranks) == players
    assert result.stats["deals"] == state.deal_number


def test_clone_applies_every_decision_kind() -> None:
    """Clones (search bots) accept rob, announce, silent, decline, claim and jinx by text."""
    state = _scenario_7_state()
    play(state, "play:KH", "play:2H")
    state.legal_actions()  # cached, then deep-copied by clone()
    for text in ("announce", "silent", "rob:KC"):
        probe = state.clone()
        probe.apply(text)
        assert probe.to_move == 2 and probe.legal_actions()[0].kind == "play"
    assert state.clone().observation(2) == state.observation(2)
    dealer = arranged(_scenario_8_hands(), "AC")
    dealer.legal_actions()
    probe = dealer.clone()
    assert isinstance(probe, SpoilTableState)
    probe.apply("decline")
    assert probe.dealer_declined and not dealer.dealer_declined
    claim = _scenario_9_state("5S JS AH KS QS")
    _win_tricks_1_to_3(claim)
    probe = claim.clone()
    assert isinstance(probe, SpoilFiveState)
    probe.apply("claim")
    assert probe.deal_number == 2
    probe = claim.clone()
    assert isinstance(probe, SpoilFiveState)
    probe.apply("jinx")
    assert probe.jinxer == 0 and claim.jinxer == -1
