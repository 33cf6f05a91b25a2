"""``MatchState.determinize(seat, rng)`` and ``clone(rng)``, over random playouts of every game.

A determinized state must show ``seat`` exactly what the real one shows (observation, legal
actions), be consistent with all play (no void broken, no card in two places, every past play
legal in it), leave the real state alone and play on to the end; over many draws every card
must reach every hand it may be in.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import MatchState, get_game
from engine.cards import ACE, CARD_TEXT, FULL_DECK_MASK, SUIT_MASKS
from engine.games.spoil_rules import RULES, SpoilTableState
from engine.games.tennis import TennisState
from engine.games.tennis_cards import PLAY_DECK_COUNTS, SERVE_DECK_COUNTS, TYPE_INDEX
from engine.games.tennis_whist import TennisWhistState
from engine.games.tricks import deal_tricks
from engine.games.whist import WhistState

#: (game id, players, options): every game at its table sizes.
CONFIGS: list[tuple[str, int, dict[str, Any]]] = [
    ("whist", 4, {}),
    ("tennis_whist", 2, {}),
    ("tennis_whist", 4, {}),
    ("tennis_whist", 6, {}),
    ("spoil_five", 2, {}),
    ("spoil_five", 5, {}),
    ("spoil_five", 10, {}),
    ("spoil_five", 4, {"must_rob": True, "dealer_ace_in_trick_1": True}),
    ("forty_five", 2, {}),
    ("forty_five", 4, {}),
    ("tennis", 2, {}),
    ("tennis", 4, {}),
    ("tennis", 4, {"control": "players"}),
]
IDS = [f"{g}-{n}{'-' + '-'.join(o) if o else ''}" for g, n, o in CONFIGS]
CARD = {t: i for i, t in enumerate(CARD_TEXT)}
#: Decisions into a match a playout goes (late enough for voids, short enough to be quick).
DEPTH = 160


def new_match(game_id: str, players: int, options: dict[str, Any], seed: int) -> MatchState:
    game = get_game(game_id)
    return game.new_match(game.configure(players, options), seed)


def fingerprint(state: MatchState) -> tuple[Any, ...]:
    """Everything determinize() could disturb in the state it is called on."""
    hidden = tuple(
        repr(getattr(state, name, None))
        for name in ("hands", "stock", "dealt", "discards", "rob_discard", "hidden", "serve_deck")
    )
    return (
        state.rng.getstate(),
        len(state.events),
        state.to_move,
        hidden,
        [state.observation(s) for s in range(state.num_seats)],
    )


# --- consistency of a determinized state, game by game ----------------------------------------


def plays_of(state: Any) -> list[tuple[int, int, int, int]]:
    """This deal's plays in order: (trick number, led card, seat, card)."""
    out = []
    for k, (cards, seats) in enumerate(
        deal_tricks(state.finished_tricks, state.trick_cards, state.trick_seats)
    ):
        for c, s in zip(cards, seats, strict=True):
            out.append((k, cards[0], s, c))
    return out


def check_follow_suit(state: Any) -> None:
    """Whist, tennis whist: who failed to follow a suit holds none of it now."""
    for _, led, s, c in plays_of(state):
        if c // 13 != led // 13:
            assert not state.hands[s] & SUIT_MASKS[led // 13], f"seat {s} broke a void"


def check_trick_game(state: Any, real: Any) -> None:
    parts = [*state.hands]
    played = 0
    for _, _, _, c in plays_of(state):
        played |= 1 << c
    if isinstance(state, WhistState):
        parts.append(played)
    else:
        # Tennis whist: the stock and the round-1 turn-up; earlier tricks of the round only.
        parts += [played, state.stock, (1 << state.turn_up) if state.turn_up >= 0 else 0]
    union = 0
    for p in parts:
        assert not union & p, "a card in two places"
        union |= p
    if isinstance(state, WhistState):
        assert union == FULL_DECK_MASK
        for s in range(4):
            mine = sum(1 << c for _, _, who, c in plays_of(state) if who == s)
            assert state.dealt[s] == state.hands[s] | mine
    else:
        assert union.bit_count() == 52
    assert [h.bit_count() for h in state.hands] == [h.bit_count() for h in real.hands]
    check_follow_suit(state)


def check_spoil(state: SpoilTableState, real: SpoilTableState) -> None:
    """Every card in one place, and every play of the deal legal in the determinized world."""
    assert state.card_count() == 52
    assert [h.bit_count() for h in state.hands] == [h.bit_count() for h in real.hands]
    plays = plays_of(state)
    ace = RULES[state.trump][0].ace
    silent_from = next((i for i, p in enumerate(plays) if p[2] == state.silent_seat), None)
    pending_joined = state.robbed_by == state.dealer and state.turn_up % 13 == ACE
    for i, (k, led, s, c) in enumerate(plays):
        later = sum(1 << x for _, _, who, x in plays[i:] if who == s)
        hand = state.hands[s] | later
        if pending_joined and s == state.dealer and k == 0 and not state.ace_in_trick_1:
            hand &= ~(1 << state.turn_up)  # the robbed ace joined after trick 1
        demoted = silent_from is not None and i >= silent_from
        lead = -1 if i == 0 or plays[i - 1][0] != k else led
        allowed = RULES[state.trump][demoted].legal_mask(hand, lead)
        assert allowed >> c & 1, f"seat {s}'s play of {CARD_TEXT[c]} is illegal here"
    # The ace of trumps where the robbing rules put it.
    holder = next((s for s in range(state.n) if state.hands[s] >> ace & 1), -1)
    played_seats = {s for _, _, s, _ in plays}
    if state.ace_wait >= 0:
        assert holder == state.ace_wait and state.ace_wait not in played_seats
    if holder >= 0 and holder in played_seats and state.turn_up % 13 != ACE:
        assert holder in (state.silent_seat, state.announced_by, state.robbed_by)


def check_tennis(state: TennisState, real: TennisState, seat: int) -> None:
    for t in range(len(PLAY_DECK_COUNTS)):
        total = sum(h[t] for h in state.hands) + state.stock.count(t)
        assert total + state.seen[t] + state.hidden[t] == PLAY_DECK_COUNTS[t]
    assert [sum(h) for h in state.hands] == state.sizes == real.sizes
    assert len(state.stock) == len(real.stock) and sum(state.hidden) == sum(real.hidden)
    for c in range(3):
        assert state.serve_deck.count(c) + state.serve_pile[c] == SERVE_DECK_COUNTS[c]
    for p in range(state.n):
        if seat in state.hand_seats[p]:
            assert state.hands[p] == real.hands[p]


def check_consistent(state: MatchState, real: MatchState, seat: int) -> None:
    if isinstance(state, SpoilTableState):
        assert isinstance(real, SpoilTableState)
        check_spoil(state, real)
    elif isinstance(state, TennisState):
        assert isinstance(real, TennisState)
        check_tennis(state, real, seat)
    else:
        check_trick_game(state, real)


def play_on(state: MatchState, rng: random.Random, bound: int = 20_000) -> None:
    for _ in range(bound):
        if state.to_move is None:
            break
        state.apply(rng.choice(state.legal_actions()))
    assert state.to_move is None and state.result() is not None


# --- the properties ----------------------------------------------------------------------------


@pytest.mark.parametrize(("game_id", "players", "options"), CONFIGS, ids=IDS)
@settings(max_examples=3, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_a_determinized_state_keeps_what_the_seat_knows(
    game_id: str, players: int, options: dict[str, Any], seed: int
) -> None:
    state = new_match(game_id, players, options, seed)
    rng = random.Random(seed)
    played_on = 0
    while state.to_move is not None and state.decisions < DEPTH:
        if rng.random() < 0.2:
            for seat in range(state.num_seats):
                before = fingerprint(state)
                d = state.determinize(seat, random.Random(rng.random()))
                assert fingerprint(state) == before, "determinize changed the real state"
                assert type(d) is type(state) and d.to_move == state.to_move
                assert d.observation(seat) == state.observation(seat)
                if state.to_move == seat:
                    assert d.legal_actions() == state.legal_actions()
                assert all(e.to is None or seat in e.to for e in d.events)
                check_consistent(d, state, seat)
                if played_on < 2 and rng.random() < 0.2:
                    played_on += 1
                    play_on(d, random.Random(seed + played_on))
                    assert fingerprint(state) == before
        state.apply(rng.choice(state.legal_actions()))


def late_position(game_id: str, players: int, seed: int, cards_left: int) -> MatchState | None:
    """A position of a trick game where every hand holds at most ``cards_left`` cards."""
    state: Any = new_match(game_id, players, {}, seed)
    rng = random.Random(seed)
    for _ in range(3000):
        if state.to_move is None:
            return None
        if max(h.bit_count() for h in state.hands) <= cards_left and getattr(state, "phase", 0) in (
            "play",
            0,
        ):
            return state
        state.apply(rng.choice(state.legal_actions()))
    return None


def possible_placements(state: Any, seat: int) -> set[tuple[int, int]]:
    """Every (card, seat) with the card in that seat's hand in some deal consistent with the
    play, by brute force over the other hands (whist, tennis whist: follow suit only)."""
    others = [s for s in range(len(state.hands)) if s != seat and state.hands[s]]
    stock = getattr(state, "stock", 0)
    pool = [c for c in range(52) if (stock | sum(state.hands[s] for s in others)) >> c & 1]
    sizes = [state.hands[s].bit_count() for s in others]
    void = [0] * len(state.hands)
    for _, led, s, c in plays_of(state):
        if c // 13 != led // 13:
            void[s] |= SUIT_MASKS[led // 13]
    return _splits(pool, others, sizes, void)


def _splits(
    cards: list[int], others: list[int], sizes: list[int], void: list[int]
) -> set[tuple[int, int]]:
    if not others:
        return set()
    s, k = others[0], sizes[0]
    out: set[tuple[int, int]] = set()
    for hand in itertools.combinations(cards, k):
        if any(void[s] >> c & 1 for c in hand):
            continue
        rest = [c for c in cards if c not in hand]
        if len(others) == 1:
            out |= {(c, s) for c in hand}
            continue
        below = _splits(rest, others[1:], sizes[1:], void)
        if below:
            out |= {(c, s) for c in hand} | below
    return out


@pytest.mark.parametrize(("game_id", "players"), [("whist", 4), ("tennis_whist", 3)])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_consistent_placement_of_a_card_occurs(game_id: str, players: int, seed: int) -> None:
    state: Any = late_position(game_id, players, seed, 3)
    assert state is not None
    seat = state.to_move
    assert seat is not None
    if isinstance(state, TennisWhistState):
        state.stock = 0  # only the hands, then: the brute force stays small
    possible = possible_placements(state, seat)
    seen: set[tuple[int, int]] = set()
    rng = random.Random(seed)
    for _ in range(400):
        d = state.determinize(seat, rng)
        for s, h in enumerate(d.hands):
            if s != seat:
                seen |= {(c, s) for c in range(52) if h >> c & 1}
    assert seen <= possible, "a card was placed where the play says it cannot be"
    assert seen == possible, f"never placed: {sorted(possible - seen)}"


@pytest.mark.parametrize("game_id", ["spoil_five", "forty_five"])
@pytest.mark.parametrize("seed", [4, 5])
def test_spoil_cards_reach_every_hand_the_play_allows(game_id: str, seed: int) -> None:
    # An independent oracle: card c may be in seat s's hand when every play s made this deal
    # stays legal with c added (the game's own legal_mask), the ace of trumps left aside.
    players = 4 if game_id == "forty_five" else 3
    state = late_position(game_id, players, seed, 2)
    assert isinstance(state, SpoilTableState) and state.to_move is not None
    seat = state.to_move
    normal = RULES[state.trump][0]
    plays = plays_of(state)
    pending = state.robbed_by == state.dealer and state.turn_up % 13 == ACE
    pending = pending and not state.ace_in_trick_1
    unseen = state.stock | state.discards * (state.robbed_by not in (-1, seat))
    for s in range(state.n):
        if s != seat:
            unseen |= state.hands[s] & ~(1 << state.turn_up)
    unseen &= ~(1 << normal.ace)
    possible: set[tuple[int, int]] = set()
    for s in range(state.n):
        if s == seat or not state.hands[s]:
            continue
        for c in range(52):
            if not unseen >> c & 1:
                continue
            ok = True
            for i, (k, led, who, x) in enumerate(plays):
                if who != s or i == 0 or plays[i - 1][0] != k:
                    continue  # leads show nothing
                later = sum(1 << y for _, _, w, y in plays[i:] if w == s)
                if k == 0 and s == state.dealer and state.pending_ace < 0 and pending:
                    later &= ~(1 << state.turn_up)  # a robbed turned ace joined after trick 1
                if not normal.legal_mask(later | 1 << c, led) >> x & 1:
                    ok = False
            if ok:
                possible.add((c, s))
    seen: set[tuple[int, int]] = set()
    rng = random.Random(seed)
    for _ in range(1500):
        d = state.determinize(seat, rng)
        for s, h in enumerate(d.hands):
            if s != seat:
                seen |= {(c, s) for c in range(52) if h >> c & 1 and unseen >> c & 1}
    assert seen <= possible, "a card was placed where the play says it cannot be"
    assert seen == possible, f"never placed: {sorted(possible - seen)}"


def test_tennis_unseen_cards_reach_the_other_hand() -> None:
    state = new_match("tennis", 2, {}, 9)
    rng = random.Random(9)
    for _ in range(40):
        state.apply(rng.choice(state.legal_actions()))
    assert isinstance(state, TennisState) and state.to_move is not None
    seat = state.to_move
    other = 1 - seat
    # Face-down discards seat made since the Play Deck was last shuffled are known to it.
    known = [0] * len(PLAY_DECK_COUNTS)
    for e in reversed(state.visible_events(seat)):
        if e.kind == "play_shuffle":
            break
        if e.kind == "discard":
            known[TYPE_INDEX[str(e.data["card"])]] += 1
    unseen_types = {
        t
        for t in range(len(PLAY_DECK_COUNTS))
        if state.hands[other][t] or state.stock.count(t) or state.hidden[t] > known[t]
    }
    seen: set[int] = set()
    orders = set()
    for _ in range(300):
        d = state.determinize(seat, rng)
        assert isinstance(d, TennisState)
        seen |= {t for t, k in enumerate(d.hands[other]) if k}
        orders.add(tuple(d.serve_deck))
    assert seen == unseen_types
    assert len(orders) > 1, "the Serve Deck's order is redrawn"


# --- clone(rng) -------------------------------------------------------------------------------


@pytest.mark.parametrize(("game_id", "players", "options"), CONFIGS, ids=IDS)
def test_clone_with_a_generator_draws_from_it_and_copies_none(
    game_id: str, players: int, options: dict[str, Any]
) -> None:
    state = new_match(game_id, players, options, 11)
    rng = random.Random(11)
    while state.to_move is not None and state.decisions < 3:  # chance still to come
        state.apply(rng.choice(state.legal_actions()))
    before = state.rng.getstate()
    given = random.Random(5)
    copy = state.clone(given)
    assert copy.rng is given and state.rng is not given
    assert copy.observation(0) == state.observation(0)
    assert copy.legal_actions() == state.legal_actions()
    play_on(copy, random.Random(1))
    assert state.rng.getstate() == before, "the clone drew from the original's generator"
    assert given.getstate() != random.Random(5).getstate(), "the clone drew its chance elsewhere"
    exact = state.clone()
    assert exact.rng is not state.rng and exact.rng.getstate() == before


def test_determinize_rejects_a_seat_not_at_the_table() -> None:
    state = new_match("whist", 4, {}, 1)
    with pytest.raises(ValueError, match="no seat 4"):
        state.determinize(4, random.Random(1))
