"""Properties every referee must have, checked over random playouts of every game.

Each test draws seeds with hypothesis; the seed fixes both the referee's chance and the random
choices, so a failure shrinks to a replayable seed. The table covers each game at several table
sizes.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Action, IllegalActionError, MatchOverError, MatchState, get_game
from engine.cards import CARD_TEXT, FULL_DECK_MASK
from engine.core import Game

#: (game id, players, most decisions a match may take). Whist: 3 games of at most 13 deals of
#: 52 plays. Tennis whist: at most n*(sets-1)+1 sets of 8 rounds, each round one nomination
#: plus n*(9-k) plays. The other games get a generous cap: they must simply end.
CONFIGS: list[tuple[str, int, int]] = [
    ("whist", 4, 3 * 13 * 52),
    ("tennis_whist", 2, (2 * 2 + 1) * (8 + 2 * 36)),
    ("tennis_whist", 4, (2 * 4 + 1) * (8 + 4 * 36)),
    ("tennis_whist", 6, (2 * 6 + 1) * (8 + 6 * 36)),
    ("spoil_five", 2, 50_000),
    ("spoil_five", 5, 50_000),
    ("spoil_five", 10, 50_000),
    ("forty_five", 2, 50_000),
    ("forty_five", 4, 50_000),
    ("tennis", 2, 50_000),
    ("tennis", 4, 50_000),
]
IDS = [f"{g}-{n}" for g, n, _ in CONFIGS]
#: The largest tables take about a second each to play out eight times: the slow tier.
LARGEST = {("tennis_whist", 6), ("spoil_five", 10)}
PLAYOUTS = [
    pytest.param(*c, id=i, marks=[pytest.mark.slow] if c[:2] in LARGEST else [])
    for c, i in zip(CONFIGS, IDS, strict=True)
]
SEEDS = st.integers(0, 2**31 - 1)
CARDS = frozenset(CARD_TEXT)


def new_match(game_id: str, players: int, seed: int) -> MatchState:
    game = get_game(game_id)
    return game.new_match(game.configure(players), seed)


def card_leaves(value: Any) -> Iterator[str]:
    """Every card text found anywhere in JSON-like ``value``."""
    if isinstance(value, str):
        if value in CARDS:
            yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from card_leaves(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from card_leaves(v)


def hand_cards(obs: dict[str, Any]) -> set[str]:
    """The cards of the seat's own hand (``hand``, or ``hands`` for a team seat)."""
    return set(card_leaves([obs.get("hand"), obs.get("hands")]))


def split_hand(obs: dict[str, Any]) -> tuple[set[str], set[str]]:
    """(cards in the seat's own hand, cards elsewhere in its observation)."""
    own = {k: v for k, v in obs.items() if k in ("hand", "hands")}
    rest = {k: v for k, v in obs.items() if k not in ("hand", "hands")}
    return set(card_leaves(own)), set(card_leaves(rest))


def snapshot(state: MatchState) -> tuple[Any, ...]:
    """What an action may change: the counters, the log and every seat's observation."""
    return (
        state.decisions,
        len(state.events),
        state.to_move,
        [a.text for a in state.legal_actions()],
        [state.observation(s) for s in range(state.num_seats)],
    )


def check_legal(state: MatchState) -> tuple[Action, ...]:
    legal = state.legal_actions()
    assert legal, "a seat to move must have a legal action"
    texts = [a.text for a in legal]
    assert len(set(texts)) == len(texts), "legal actions must be distinct"
    for a in legal:
        assert isinstance(a, Action)
        assert a.text == (f"{a.kind}:{a.arg}" if a.arg else a.kind)
    assert state.legal_actions() == legal
    return legal


def check_illegal(state: MatchState, legal: tuple[Action, ...], rng: random.Random) -> None:
    """Illegal texts raise IllegalActionError and change nothing."""
    texts = {a.text for a in legal}
    kind = legal[0].kind
    candidates = [f"{kind}:{c}" for c in CARD_TEXT if f"{kind}:{c}" not in texts]
    bad = ["play:XX", "bogus", "", *rng.sample(candidates, min(2, len(candidates)))]
    before = snapshot(state)
    for text in bad:
        with pytest.raises(IllegalActionError) as info:
            state.apply(text)
        assert info.value.seat == state.to_move
        assert snapshot(state) == before, f"illegal {text!r} changed the state"


def learn(state: MatchState, start: int, known: list[set[str]]) -> None:
    """Add the cards named in events from ``start`` on to what each seat was told."""
    for e in state.events[start:]:
        named = set(card_leaves(e.data))
        if not named:
            continue
        for s in range(state.num_seats) if e.to is None else e.to:
            known[s] |= named


def check_observations(state: MatchState, known: list[set[str]]) -> None:
    """JSON-ready observations that name only cards the seat was told about in its visible
    events, and show no seat another seat's hidden hand."""
    obs = [state.observation(s).to_dict() for s in range(state.num_seats)]
    for s, view in enumerate(obs):
        assert view["seat"] == s
        json.dumps(view)
        assert state.observation(s).render()
        untold = set(card_leaves(view)) - known[s]
        assert not untold, f"seat {s}'s observation names {sorted(untold)}, never shown to it"
    split = [split_hand(o) for o in obs]
    for s in range(state.num_seats):
        seen = set(card_leaves(obs[s]))
        for o in range(state.num_seats):
            if o == s:
                continue
            hand, shown_to_owner = split[o]
            # A card of o's hand may appear in s's view only as public information that o's own
            # view shows outside its hand too (a turn-up the dealer holds, a public draw).
            leaked = (seen & hand) - shown_to_owner
            assert not leaked, f"seat {s} sees {sorted(leaked)} of seat {o}'s hand"


def check_private_events(state: MatchState, start: int) -> None:
    """New private events are addressed to real seats and show no recipient the hand of a seat
    outside its own side (in a game without sides, of any other seat)."""
    new = state.events[start:]
    private = [e for e in new if e.to is not None]
    if not private:
        return
    sides = state.game.sides(state.config) or tuple((s,) for s in range(state.num_seats))
    side_of = {s: side for side in sides for s in side}
    hands: list[set[str]] = []
    for e in private:
        assert e.to, "a private event needs a recipient"
        assert all(0 <= s < state.num_seats for s in e.to)
        mentioned = set(card_leaves(e.data))
        if not mentioned:
            continue
        if not hands:
            hands = [hand_cards(state.observation(s).to_dict()) for s in range(state.num_seats)]
        for r in e.to:
            for o in range(state.num_seats):
                if o != r and o not in side_of[r]:
                    shown = mentioned & hands[o]
                    assert not shown, f"{e.kind} to {e.to} shows seat {o}'s {sorted(shown)}"


def check_result(state: MatchState) -> None:
    assert state.is_over() and state.to_move is None
    assert state.legal_actions() == ()
    result = state.result()
    assert result is not None and state.result() is result
    n = state.num_seats
    assert len(result.scores) == len(result.ranks) == n
    assert min(result.ranks) == 1 and all(r >= 1 for r in result.ranks)
    for a in range(n):
        for b in range(n):
            if result.scores[a] > result.scores[b]:
                assert result.ranks[a] < result.ranks[b], result
            if result.ranks[a] == result.ranks[b]:
                assert result.scores[a] == result.scores[b], result
    assert result.reason == "normal" and result.summary
    assert all(isinstance(v, int) for v in result.stats.values())
    json.dumps(result.to_dict())
    with pytest.raises(MatchOverError):
        state.apply("play:2C")


def play_out(state: MatchState, rng: random.Random, bound: int) -> list[str]:
    """Random legal play to the end; the decisions' texts."""
    texts = []
    while state.to_move is not None:
        assert state.decisions < bound, "the match must end within its bound"
        action = rng.choice(state.legal_actions())
        texts.append(action.text)
        state.apply(action)
    return texts


@pytest.mark.parametrize(("game_id", "players", "bound"), PLAYOUTS)
@settings(max_examples=8, deadline=None)
@given(seed=SEEDS)
def test_random_playout_keeps_every_invariant(
    game_id: str, players: int, bound: int, seed: int
) -> None:
    state = new_match(game_id, players, seed)
    rng = random.Random(seed)
    known: list[set[str]] = [set() for _ in range(state.num_seats)]
    learn(state, 0, known)
    check_private_events(state, 0)
    check_observations(state, known)
    kinds_tried: set[frozenset[str]] = set()
    while state.to_move is not None:
        assert state.decisions < bound, "the match must end within its bound"
        assert 0 <= state.to_move < state.num_seats
        legal = check_legal(state)
        kinds = frozenset(a.kind for a in legal)
        if kinds not in kinds_tried and len(kinds_tried) < 3:
            # Every legal action applies: tried on copies, at the first decision of a few sorts.
            kinds_tried.add(kinds)
            for a in legal:
                probe = state.clone()
                probe.apply(a.text)
                assert probe.decisions == state.decisions + 1
        if rng.random() < 0.05:
            check_illegal(state, legal, rng)
        if rng.random() < 0.05:
            check_observations(state, known)
        start = len(state.events)
        state.apply(rng.choice(legal))
        learn(state, start, known)
        check_private_events(state, start)
    check_observations(state, known)
    check_result(state)


@pytest.mark.parametrize(("game_id", "players", "bound"), CONFIGS, ids=IDS)
@settings(max_examples=4, deadline=None)
@given(seed=SEEDS)
def test_same_seed_and_decisions_replay_identically(
    game_id: str, players: int, bound: int, seed: int
) -> None:
    first = new_match(game_id, players, seed)
    texts = play_out(first, random.Random(seed ^ 1), bound)
    second = new_match(game_id, players, seed)
    for text in texts:
        second.apply(text)
    assert [e.to_dict() for e in second.events] == [e.to_dict() for e in first.events]
    r1, r2 = first.result(), second.result()
    assert r1 is not None and r2 is not None and r1.to_dict() == r2.to_dict()


@pytest.mark.parametrize(("game_id", "players", "bound"), CONFIGS, ids=IDS)
@settings(max_examples=4, deadline=None)
@given(seed=SEEDS, stop=st.integers(0, 300))
def test_clone_is_independent(game_id: str, players: int, bound: int, seed: int, stop: int) -> None:
    state = new_match(game_id, players, seed)
    rng = random.Random(seed)
    while state.to_move is not None and state.decisions < stop:
        state.apply(rng.choice(state.legal_actions()))
    copy = state.clone()
    before = snapshot(state) if state.to_move is not None else None
    rng_state = state.rng.getstate()
    events = [e.to_dict() for e in state.events]
    play_out(copy, random.Random(seed + 1), bound)
    # Playing the copy to its end left the original untouched ...
    assert [e.to_dict() for e in state.events] == events
    assert state.rng.getstate() == rng_state
    if before is not None:
        assert snapshot(state) == before
    # ... and the original, given the same decisions, reaches the very same end.
    play_out(state, random.Random(seed + 1), bound)
    assert [e.to_dict() for e in state.events] == [e.to_dict() for e in copy.events]
    r1, r2 = state.result(), copy.result()
    assert r1 is not None and r2 is not None and r1.to_dict() == r2.to_dict()


def _same_value_no_shared_mutables(original: Any, copied: Any, deep: Any, path: str) -> None:
    """``copied`` (from clone()) equals ``deep`` (from copy.deepcopy) in value, and shares no
    list, dict, set or generator with ``original``, at any depth."""
    if isinstance(original, random.Random):
        assert copied is not original, path
        assert copied.getstate() == deep.getstate(), path
    elif isinstance(original, (list, dict, set)):
        assert copied is not original, f"{path} is shared with the original"
        assert type(copied) is type(original) and len(copied) == len(original), path
        if isinstance(original, list):
            for i, (o, c, d) in enumerate(zip(original, copied, deep, strict=True)):
                _same_value_no_shared_mutables(o, c, d, f"{path}[{i}]")
        elif isinstance(original, dict):
            for k in original:
                _same_value_no_shared_mutables(original[k], copied[k], deep[k], f"{path}[{k!r}]")
        else:
            assert copied == deep, path
    elif isinstance(original, Game):
        assert copied is original, path  # one game object serves every match
    else:
        assert copied == deep, path


@pytest.mark.parametrize(("game_id", "players", "bound"), CONFIGS, ids=IDS)
@settings(max_examples=4, deadline=None)
@given(seed=SEEDS, stop=st.integers(0, 300))
def test_a_clone_is_a_deep_copy_in_value_sharing_only_what_never_changes(
    game_id: str, players: int, bound: int, seed: int, stop: int
) -> None:
    state = new_match(game_id, players, seed)
    rng = random.Random(seed)
    while state.to_move is not None and state.decisions < stop:
        state.apply(rng.choice(state.legal_actions()))
    state.legal_actions() if state.to_move is not None else None  # the cache, filled
    clone, deep = state.clone(), copy.deepcopy(state)
    assert type(clone) is type(state) and set(vars(clone)) == set(vars(state))
    for name, value in vars(state).items():
        _same_value_no_shared_mutables(value, vars(clone)[name], vars(deep)[name], name)


# --- whist and tennis whist: the pack is conserved ------------------------------------------


def _played_mask(state: Any) -> int:
    mask = 0
    for trick in state.finished_tricks:
        for t in trick.cards:
            mask |= 1 << CARD_TEXT.index(t)
    for c in state.trick_cards:
        mask |= 1 << c
    return mask


def _assert_partition(parts: list[int]) -> None:
    total = 0
    for p in parts:
        assert not total & p, "a card is in two places"
        total |= p
    assert total == FULL_DECK_MASK, "a card went missing"


@settings(max_examples=10, deadline=None)
@given(seed=SEEDS)
def test_whist_conserves_the_pack(seed: int) -> None:
    state: Any = new_match("whist", 4, seed)
    rng = random.Random(seed)
    while state.to_move is not None:
        _assert_partition([*state.hands, _played_mask(state)])
        assert state.turn_up_in_hand == bool(state.hands[state.dealer] >> state.turn_up & 1)
        state.apply(rng.choice(state.legal_actions()))


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
@settings(max_examples=6, deadline=None)
@given(seed=SEEDS)
def test_tennis_whist_conserves_the_pack(players: int, seed: int) -> None:
    state: Any = new_match("tennis_whist", players, seed)
    rng = random.Random(seed)
    while state.to_move is not None:
        turn_up = 1 << state.turn_up if state.turn_up >= 0 else 0
        _assert_partition([*state.hands, _played_mask(state), state.stock, turn_up])
        assert (state.turn_up >= 0) == (state.round_number == 1)
        # Only survivors hold cards, and all of them the same number of cards.
        sizes = {h.bit_count() for h, alive in zip(state.hands, state.alive, strict=True) if alive}
        assert len(sizes) <= 2 and all(
            not h for h, a in zip(state.hands, state.alive, strict=True) if not a
        )
        assert state.alive[state.to_move], "an eliminated player never decides"
        state.apply(rng.choice(state.legal_actions()))
