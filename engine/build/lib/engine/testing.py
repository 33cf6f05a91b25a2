"""What every game must satisfy, as plain functions anyone adding a game can call.

:func:`check_game` plays seeded random matches of a game and raises ``AssertionError``, naming the
game, the seed, the decision and the broken rule, on the first invariant that fails:

* random playouts end (within ``max_decisions``), and the result is well formed (ranks agree with
  scores, :meth:`~engine.core.MatchState.returns` is zero-sum and follows the ranks);
* a seat to move always has legal actions: distinct, well formed, cached, each in the game's
  action space at its :attr:`~engine.core.Action.index`, and :meth:`legal_mask` agrees;
* every legal action applies (tried on clones), and illegal ones raise and change nothing;
* observations are JSON-clean, render, and name only cards the seat was shown in its visible
  events; no seat sees another's hidden hand, in an observation or a private event;
* the same seed and decisions replay the same events and result;
* a clone is independent, equals a deep copy in value and shares only what never changes;
* when the state has ``determinize(seat, rng)``: re-dealing what a seat cannot see leaves that
  seat's observation, visible events and legal actions unchanged, and the original untouched.

Each check is also a function of its own (``check_playout`` …), which the engine's property tests
drive with hypothesis-drawn seeds. :func:`playthrough` writes a match as one text line per
decision, the golden playthroughs' format (tests/engine/playthroughs/, ``make playthroughs``).

Pure like the rest of the engine: no I/O, no clocks; every random choice from a seeded generator.
Checks raise ``AssertionError`` themselves rather than use ``assert``, so ``python -O`` keeps them.
"""

from __future__ import annotations

import copy
import json
import random
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, NoReturn

from engine.cards import CARD_TEXT
from engine.core import JSON, Action, Event, Game, MatchConfig, MatchState
from engine.errors import IllegalActionError, MatchOverError
from engine.options import OptionValue
from engine.registry import get_game

CARDS = frozenset(CARD_TEXT)

__all__ = [
    "check_clone",
    "check_clone_sharing",
    "check_game",
    "check_playout",
    "check_replay",
    "first_difference",
    "playthrough",
    "playthrough_difference",
    "playthrough_name",
    "read_playthrough_header",
]


# --- running the checks ---------------------------------------------------------------------------


def check_game(
    game: Game | str,
    players: int | None = None,
    options: Mapping[str, OptionValue] | None = None,
    *,
    seeds: Iterable[int] = (0, 1, 2),
    max_decisions: int = 100_000,
) -> MatchConfig:
    """Every check of this module on a match per seed of ``seeds``; the configuration checked.

    ``game`` is a :class:`~engine.core.Game` or a registered id; ``players`` and ``options`` are
    given to ``game.configure``. Raises ``AssertionError`` on the first failure.
    """
    g = get_game(game) if isinstance(game, str) else game
    config = g.configure(players, options)
    check_action_space(g, config)
    for seed in seeds:
        check_playout(g, config, seed, max_decisions=max_decisions)
        check_replay(g, config, seed, max_decisions=max_decisions)
        stop = random.Random(seed).randrange(300)
        check_clone(g, config, seed, stop, max_decisions=max_decisions)
        check_clone_sharing(g, config, seed, stop)
    return config


def _fail(where: str, message: str) -> NoReturn:
    raise AssertionError(f"{where}: {message}")


def _where(state: MatchState, seed: int) -> str:
    return (
        f"{state.game.id} ({state.config.players} players, options {dict(state.config.options)}, "
        f"seed {seed}) at decision {state.decisions}"
    )


# --- the action space -----------------------------------------------------------------------------


def check_action_space(game: Game, config: MatchConfig) -> tuple[Action, ...]:
    """The action space is non-empty, stable, distinct, and each action's index is its place."""
    where = f"{game.id} ({config.players} players)"
    space = game.action_space(config)
    if not space:
        _fail(where, "action_space() is empty")
    if game.action_space(config) != space:
        _fail(where, "action_space() changes between calls")
    texts = [a.text for a in space]
    if len(set(texts)) != len(texts):
        _fail(where, "action_space() holds an action twice")
    for i, action in enumerate(space):
        if action.index != i:
            _fail(
                where, f"{action.text} is at {i} in action_space() but its index is {action.index}"
            )
    return space


# --- one random playout, checked at every step ------------------------------------------------


def _random_state(game: Game, config: MatchConfig, seed: int, stop: int) -> MatchState:
    state = game.new_match(config, seed)
    rng = random.Random(seed)
    while state.to_move is not None and state.decisions < stop:
        state.apply(rng.choice(state.legal_actions()))
    return state


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


def _hand_cards(obs: Mapping[str, Any]) -> set[str]:
    """The cards of the seat's own hand (``hand``, or ``hands`` for a team seat)."""
    return set(card_leaves([obs.get("hand"), obs.get("hands")]))


def _split_hand(obs: Mapping[str, Any]) -> tuple[set[str], set[str]]:
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


def check_legal(state: MatchState, where: str) -> tuple[Action, ...]:
    """The seat to move's legal actions: non-empty, distinct, well formed, cached, in the action
    space at their index, and the legal mask marks exactly them."""
    legal = state.legal_actions()
    if not legal:
        _fail(where, f"seat {state.to_move} is to move but has no legal action")
    texts = [a.text for a in legal]
    if len(set(texts)) != len(texts):
        _fail(where, f"legal actions repeat: {texts}")
    space = state.game.action_space(state.config)
    for a in legal:
        if not isinstance(a, Action):
            _fail(where, f"legal action {a!r} is not an Action")
        if a.text != (f"{a.kind}:{a.arg}" if a.arg else a.kind):
            _fail(where, f"{a!r} has text {a.text!r}")
        if not 0 <= a.index < len(space) or space[a.index] is not a:
            _fail(where, f"legal {a.text} is not action_space()[{a.index}]")
    if state.legal_actions() != legal:
        _fail(where, "legal_actions() changed between two calls")
    mask = state.legal_mask()
    marked = {i for i, bit in enumerate(mask) if bit}
    if len(mask) != len(space) or marked != {a.index for a in legal} or set(mask) - {0, 1}:
        _fail(where, f"legal_mask() marks {sorted(marked)}, the legal actions are {texts}")
    return legal


def check_illegal(
    state: MatchState, legal: tuple[Action, ...], rng: random.Random, where: str
) -> None:
    """Illegal texts raise IllegalActionError naming the seat, and change nothing."""
    texts = {a.text for a in legal}
    kind = legal[0].kind
    candidates = [f"{kind}:{c}" for c in CARD_TEXT if f"{kind}:{c}" not in texts]
    bad = ["play:XX", "bogus", "", *rng.sample(candidates, min(2, len(candidates)))]
    before = snapshot(state)
    for text in bad:
        try:
            state.apply(text)
        except IllegalActionError as err:
            if err.seat != state.to_move:
                _fail(where, f"illegal {text!r} blames seat {err.seat}, not {state.to_move}")
        else:
            _fail(where, f"illegal {text!r} was accepted")
        if snapshot(state) != before:
            _fail(where, f"illegal {text!r} changed the state")


def _learn(state: MatchState, start: int, known: list[set[str]]) -> None:
    """Add the cards named in events from ``start`` on to what each seat was told."""
    for e in state.events[start:]:
        named = set(card_leaves(e.data))
        if not named:
            continue
        for s in range(state.num_seats) if e.to is None else e.to:
            known[s] |= named


def check_observations(state: MatchState, known: list[set[str]], where: str) -> None:
    """JSON-clean observations that render, name only cards the seat was told about in its
    visible events (``known``), and show no seat another seat's hidden hand."""
    obs = [state.observation(s).to_dict() for s in range(state.num_seats)]
    for s, view in enumerate(obs):
        if view.get("seat") != s:
            _fail(where, f"seat {s}'s observation says seat {view.get('seat')}")
        try:
            json.dumps(view, allow_nan=False)
        except (TypeError, ValueError) as err:
            _fail(where, f"seat {s}'s observation is not JSON: {err}")
        if not state.observation(s).render():
            _fail(where, f"seat {s}'s observation renders as nothing")
        untold = set(card_leaves(view)) - known[s]
        if untold:
            _fail(where, f"seat {s}'s observation names {sorted(untold)}, never shown to it")
    split = [_split_hand(o) for o in obs]
    for s in range(state.num_seats):
        seen = set(card_leaves(obs[s]))
        for o in range(state.num_seats):
            if o == s:
                continue
            hand, shown_to_owner = split[o]
            # A card of o's hand may appear in s's view only as public information that o's own
            # view shows outside its hand too (a turn-up the dealer holds, a public draw).
            leaked = (seen & hand) - shown_to_owner
            if leaked:
                _fail(where, f"seat {s} sees {sorted(leaked)} of seat {o}'s hand")


def check_private_events(state: MatchState, start: int, where: str) -> None:
    """New private events go to real seats and show no recipient the hand of a seat outside its
    own side (in a game without sides, of any other seat)."""
    private = [e for e in state.events[start:] if e.to is not None]
    if not private:
        return
    sides = state.game.sides(state.config) or tuple((s,) for s in range(state.num_seats))
    side_of = {s: side for side in sides for s in side}
    hands: list[set[str]] = []
    for e in private:
        if not e.to or not all(0 <= s < state.num_seats for s in e.to):
            _fail(where, f"private {e.kind} event goes to {e.to}")
        mentioned = set(card_leaves(e.data))
        if not mentioned:
            continue
        if not hands:
            hands = [_hand_cards(state.observation(s).to_dict()) for s in range(state.num_seats)]
        for r in e.to:
            for o in range(state.num_seats):
                if o != r and o not in side_of[r]:
                    shown = mentioned & hands[o]
                    if shown:
                        _fail(where, f"{e.kind} to {e.to} shows seat {o}'s {sorted(shown)}")


def check_determinize(state: MatchState, rng: random.Random, where: str) -> None:
    """When the state can ``determinize(seat, rng)`` (a new state; a game without it raises
    ``NotImplementedError``, and the check is skipped): for every seat, re-dealing what it
    cannot see leaves its observation, its visible events and (when it moves) its legal actions
    as they were, and the original state untouched."""
    determinize = getattr(state, "determinize", None)
    if determinize is None:
        return
    before = snapshot(state)
    for seat in range(state.num_seats):
        try:
            det = determinize(seat, random.Random(rng.getrandbits(32)))
        except NotImplementedError:
            return
        if not isinstance(det, MatchState) or det is state:
            _fail(where, f"determinize({seat}) must return a new state")
        if state.observation(seat).to_dict() != det.observation(seat).to_dict():
            _fail(where, f"determinize({seat}) changed seat {seat}'s observation: a leak")
        if _event_dicts(state.visible_events(seat)) != _event_dicts(det.visible_events(seat)):
            _fail(where, f"determinize({seat}) changed the events seat {seat} saw")
        if det.to_move != state.to_move or det.decisions != state.decisions:
            _fail(where, f"determinize({seat}) changed who moves or the decision count")
        if state.to_move == seat and _texts(det.legal_actions()) != _texts(state.legal_actions()):
            _fail(where, f"determinize({seat}) changed seat {seat}'s legal actions")
    if snapshot(state) != before:
        _fail(where, "determinize changed the original state")


def _texts(actions: Sequence[Action]) -> list[str]:
    return [a.text for a in actions]


def _event_dicts(events: Sequence[Event]) -> list[dict[str, JSON]]:
    return [e.to_dict() for e in events]


def check_result(state: MatchState, where: str) -> None:
    """A finished match: no legal action, a stable well-formed result, zero-sum returns."""
    if not state.is_over() or not state.is_terminal or state.to_move is not None:
        _fail(where, "the match should be over")
    if state.legal_actions() != () or any(state.legal_mask()):
        _fail(where, "a finished match still offers actions")
    result = state.result()
    if result is None or state.result() is not result:
        _fail(where, "result() is missing or changes")
    n = state.num_seats
    if not len(result.scores) == len(result.ranks) == n:
        _fail(where, f"the result has {len(result.scores)} scores, {len(result.ranks)} ranks")
    if min(result.ranks) != 1 or any(r < 1 for r in result.ranks):
        _fail(where, f"ranks {result.ranks} do not start at 1")
    for a in range(n):
        for b in range(n):
            if result.scores[a] > result.scores[b] and not result.ranks[a] < result.ranks[b]:
                _fail(
                    where, f"seat {a} scored more than seat {b} but does not rank above: {result}"
                )
            if result.ranks[a] == result.ranks[b] and result.scores[a] != result.scores[b]:
                _fail(where, f"seats {a} and {b} tie on rank but not on score: {result}")
    if result.reason != "normal" or not result.summary:
        _fail(where, f"reason {result.reason!r}, summary {result.summary!r}")
    if not all(isinstance(v, int) for v in result.stats.values()):
        _fail(where, f"stats must be integers: {result.stats}")
    json.dumps(result.to_dict())
    returns = state.returns()
    if len(returns) != n or abs(sum(returns)) > 1e-9 or any(abs(u) > 1 for u in returns):
        _fail(where, f"returns {returns} are not {n} zero-sum utilities in [-1, 1]")
    for a in range(n):
        for b in range(n):
            if result.ranks[a] < result.ranks[b] and returns[a] < returns[b]:
                _fail(where, f"seat {a} ranks above seat {b} but returns less: {returns}")
    try:
        state.apply("play:2C")
    except MatchOverError:
        pass
    else:
        _fail(where, "an action applied after the end")


def check_playout(
    game: Game, config: MatchConfig, seed: int, *, max_decisions: int = 100_000
) -> MatchState:
    """One random playout (choices and samples from ``random.Random(seed)``) with every step
    checked: legal actions, a few illegal ones, observations, private events, determinize when
    present, and the result. Returns the finished state."""
    state = game.new_match(config, seed)
    rng = random.Random(seed)
    known: list[set[str]] = [set() for _ in range(state.num_seats)]
    _learn(state, 0, known)
    check_private_events(state, 0, _where(state, seed))
    check_observations(state, known, _where(state, seed))
    check_determinize(state, rng, _where(state, seed))
    kinds_tried: set[frozenset[str]] = set()
    while state.to_move is not None:
        where = _where(state, seed)
        if state.decisions >= max_decisions:
            _fail(where, f"the match did not end within {max_decisions} decisions")
        if not 0 <= state.to_move < state.num_seats:
            _fail(where, f"to_move {state.to_move} is not a seat")
        if state.is_terminal or any(state.returns()):
            _fail(where, "an unfinished match is terminal or has returns")
        legal = check_legal(state, where)
        kinds = frozenset(a.kind for a in legal)
        if kinds not in kinds_tried and len(kinds_tried) < 3:
            # Every legal action applies: tried on clones, at the first decision of a few sorts.
            kinds_tried.add(kinds)
            for a in legal:
                probe = state.clone()
                probe.apply(a.text)
                if probe.decisions != state.decisions + 1:
                    _fail(where, f"{a.text} applied on a clone did not count a decision")
        if rng.random() < 0.05:
            check_illegal(state, legal, rng, where)
        if rng.random() < 0.05:
            check_observations(state, known, where)
            check_determinize(state, rng, where)
        start = len(state.events)
        state.apply(rng.choice(legal))
        _learn(state, start, known)
        check_private_events(state, start, where)
    where = _where(state, seed)
    check_observations(state, known, where)
    check_result(state, where)
    return state


def _play_out(state: MatchState, rng: random.Random, max_decisions: int, seed: int) -> list[str]:
    """Random legal play to the end; the decisions' texts."""
    texts = []
    while state.to_move is not None:
        if state.decisions >= max_decisions:
            _fail(_where(state, seed), f"the match did not end within {max_decisions} decisions")
        action = rng.choice(state.legal_actions())
        texts.append(action.text)
        state.apply(action)
    return texts


def check_replay(
    game: Game, config: MatchConfig, seed: int, *, max_decisions: int = 100_000
) -> None:
    """The same seed and the same decisions (as text) give the same events and result."""
    first = game.new_match(config, seed)
    texts = _play_out(first, random.Random(seed ^ 1), max_decisions, seed)
    second = game.new_match(config, seed)
    for text in texts:
        second.apply(text)
    where = _where(second, seed)
    if _event_dicts(second.events) != _event_dicts(first.events):
        _fail(where, "replaying the same decisions gave other events")
    r1, r2 = first.result(), second.result()
    if r1 is None or r2 is None or r1.to_dict() != r2.to_dict():
        _fail(where, f"replaying the same decisions gave another result: {r1} vs {r2}")


def check_clone(
    game: Game, config: MatchConfig, seed: int, stop: int, *, max_decisions: int = 100_000
) -> None:
    """A clone taken after ``stop`` random decisions is independent: playing it to the end
    leaves the original untouched, and the original then plays to the very same end."""
    state = _random_state(game, config, seed, stop)
    where = _where(state, seed)
    clone = state.clone()
    before = snapshot(state) if state.to_move is not None else None
    rng_state = state.rng.getstate()
    events = _event_dicts(state.events)
    _play_out(clone, random.Random(seed + 1), max_decisions, seed)
    if _event_dicts(state.events) != events or state.rng.getstate() != rng_state:
        _fail(where, "playing a clone changed the original's events or generator")
    if before is not None and snapshot(state) != before:
        _fail(where, "playing a clone changed the original")
    _play_out(state, random.Random(seed + 1), max_decisions, seed)
    if _event_dicts(state.events) != _event_dicts(clone.events):
        _fail(where, "the original and its clone, given the same decisions, ended differently")
    r1, r2 = state.result(), clone.result()
    if r1 is None or r2 is None or r1.to_dict() != r2.to_dict():
        _fail(where, f"the original and its clone have different results: {r1} vs {r2}")


def check_clone_sharing(game: Game, config: MatchConfig, seed: int, stop: int) -> None:
    """A clone after ``stop`` random decisions equals ``copy.deepcopy`` in value and shares no
    list, dict, set or generator with the original, at any depth."""
    state = _random_state(game, config, seed, stop)
    where = _where(state, seed)
    if state.to_move is not None:
        state.legal_actions()  # the cache, filled
    clone, deep = state.clone(), copy.deepcopy(state)
    if type(clone) is not type(state) or set(vars(clone)) != set(vars(state)):
        _fail(where, "a clone has another type or other attributes")
    for name, value in vars(state).items():
        _same_value_no_shared_mutables(value, vars(clone)[name], vars(deep)[name], name, where)


def _same_value_no_shared_mutables(
    original: Any, copied: Any, deep: Any, path: str, where: str
) -> None:
    if isinstance(original, random.Random):
        if copied is original or copied.getstate() != deep.getstate():
            _fail(where, f"clone's {path} is the original's generator or another state")
    elif isinstance(original, list | dict | set):
        if copied is original:
            _fail(where, f"clone's {path} is shared with the original")
        if type(copied) is not type(original) or len(copied) != len(original):
            _fail(where, f"clone's {path} differs in type or length")
        if isinstance(original, list):
            for i, (o, c, d) in enumerate(zip(original, copied, deep, strict=True)):
                _same_value_no_shared_mutables(o, c, d, f"{path}[{i}]", where)
        elif isinstance(original, dict):
            pairs: Any = (copied, deep)  # Any again: the type test above narrowed both
            for k, v in original.items():
                _same_value_no_shared_mutables(v, pairs[0][k], pairs[1][k], f"{path}[{k!r}]", where)
        elif copied != deep:
            _fail(where, f"clone's {path} differs from a deep copy")
    elif isinstance(original, Game):
        if copied is not original:
            _fail(where, f"clone's {path} copied the game (one game object serves every match)")
    elif copied != deep:
        _fail(where, f"clone's {path} differs from a deep copy")


# --- golden playthroughs --------------------------------------------------------------------------

#: Header lines of a playthrough, in order, before the decisions.
HEADER_KEYS = ("game", "version", "players", "options", "seed", "seats", "action_space")
_BARE = re.compile(r"[A-Za-z0-9_:+\-.*/]+")


def _text(value: Any) -> str:
    """A compact, unambiguous one-line form of JSON-like ``value``: ``[2C 5C]``, ``{seat=0}``;
    strings bare unless they would read as another value."""
    if isinstance(value, str):
        if _BARE.fullmatch(value) and value not in ("true", "false", "null"):
            try:
                float(value)
            except ValueError:
                return value
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping):
        return "{" + " ".join(f"{k}={_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + " ".join(_text(v) for v in value) + "]"
    return json.dumps(value)


def _changes(path: str, old: Any, new: Any) -> list[str]:
    """How the value at ``path`` changed, briefly: records field by field (``players[1].hand=``),
    appended items (``tricks+=``), a window of lines shifted by ``s`` then appended to
    (``recent<<s+=``), else the new value (``path=value``); nothing when unchanged."""
    if old == new:
        return []
    if isinstance(old, Mapping) and isinstance(new, Mapping) and old.keys() == new.keys():
        return [c for k, v in new.items() for c in _changes(f"{path}.{k}", old[k], v)]
    if isinstance(old, list) and isinstance(new, list) and old:
        n = len(old)
        if len(new) >= n and all(isinstance(v, Mapping | list) for v in (*old, *new)):
            # Records (tricks, players): each kept one's changes, then any new ones.
            out = [c for i in range(n) for c in _changes(f"{path}[{i}]", old[i], new[i])]
            return out + ([f"{path}+={_text(new[n:])}"] if len(new) > n else [])
        if len(new) > n and new[:n] == old:
            return [f"{path}+={_text(new[n:])}"]
        if len(new) >= n and all(isinstance(v, str) for v in new):
            for s in range(1, n):
                if old[s:] == new[: n - s]:
                    return [f"{path}<<{s}+={_text(new[n - s :])}"]
    return [f"{path}={_text(new)}"]


def _event_text(event: Event) -> str:
    to = "" if event.to is None else "@" + ",".join(map(str, event.to))
    return f"{event.kind}{to}{_text(dict(event.data))}"


def playthrough_name(
    game_id: str, players: int, options: Mapping[str, OptionValue], seed: int
) -> str:
    """The file name of a playthrough: ``whist-4-1.txt``, ``tennis-4-control=players-1.txt``."""
    opts = "".join(f"-{k}={_text(v)}" for k, v in sorted(options.items()))
    return f"{game_id}-{players}{opts}-{seed}.txt"


def playthrough(
    game: Game | str,
    players: int | None = None,
    options: Mapping[str, OptionValue] | None = None,
    seed: int = 0,
) -> list[str]:
    """A match of uniformly random choices (``random.Random(seed)``), one line per decision.

    The header names the configuration; then ``start`` with the events before the first
    decision; then per decision ``<n> <seat name>(<seat>) | obs <what changed in that seat's
    observation since it last moved (all of it the first time)> | legal <actions> | play
    <choice> | events <events it caused>``, events as ``kind{key=value …}`` (``kind@0{…}`` when
    only seat 0 sees it); then ``result`` and ``returns``. Everything the old SHA-256 digests
    pinned (each legal list, the mover's observation, every event, the result) is in the text.
    """
    g = get_game(game) if isinstance(game, str) else game
    config = g.configure(players, options)
    state = g.new_match(config, seed)
    rng = random.Random(seed)
    names = g.seat_names(config)
    header = {
        "game": g.id,
        "version": g.version,
        "players": str(config.players),
        "options": json.dumps(dict(config.options), sort_keys=True),
        "seed": str(seed),
        "seats": " ".join(names),
        "action_space": str(len(g.action_space(config))),
    }
    lines = [f"{key} {header[key]}" for key in HEADER_KEYS]
    lines.append("start | events " + " ".join(_event_text(e) for e in state.events))
    last: dict[int, dict[str, JSON]] = {}
    while (seat := state.to_move) is not None:
        view = state.observation(seat).to_dict()
        old = last.get(seat)
        changes = [
            c
            for k, v in view.items()
            if k != "seat"
            for c in _changes(k, None if old is None else old.get(k, None), v)
        ]
        last[seat] = view
        legal = state.legal_actions()
        choice = legal[rng.randrange(len(legal))]
        events = state.apply(choice)
        lines.append(
            f"{state.decisions} {names[seat]}({seat}) | obs {' '.join(changes) or '-'}"
            f" | legal {' '.join(_texts(legal))} | play {choice.text}"
            f" | events {' '.join(_event_text(e) for e in events)}"
        )
    result = state.result()
    assert result is not None  # the loop ends only when the match does
    lines.append(f"result {_text(result.to_dict())}")
    lines.append(f"returns {_text([round(u, 6) for u in state.returns()])}")
    return lines


def read_playthrough_header(
    lines: Sequence[str],
) -> tuple[str, int, dict[str, OptionValue], int]:
    """(game id, players, options, seed) from a playthrough's header, to play it again."""
    fields = dict(line.split(" ", 1) for line in lines[: len(HEADER_KEYS)])
    if tuple(fields) != HEADER_KEYS:
        raise ValueError(f"not a playthrough header: {list(lines[: len(HEADER_KEYS)])}")
    options = json.loads(fields["options"])
    return fields["game"], int(fields["players"]), options, int(fields["seed"])


def first_difference(expected: Sequence[str], got: Sequence[str]) -> tuple[int, str, str] | None:
    """(line number from 1, expected line, got line) where two texts first differ, else
    ``None``; a missing line reads as ``<end of file>``."""
    for i in range(max(len(expected), len(got))):
        e = expected[i] if i < len(expected) else "<end of file>"
        g = got[i] if i < len(got) else "<end of file>"
        if e != g:
            return i + 1, e, g
    return None


def playthrough_difference(name: str, expected: Sequence[str], got: Sequence[str]) -> str | None:
    """``None`` when the texts agree, else a message naming the file, the first differing line
    and both versions of it, cut around the first differing character (lines run long)."""
    diff = first_difference(expected, got)
    if diff is None:
        return None
    line, e, g = diff
    col = next(
        (i for i, (a, b) in enumerate(zip(e, g, strict=False)) if a != b), min(len(e), len(g))
    )
    lo = max(0, col - 80)

    def cut(text: str) -> str:
        return ("…" if lo else "") + text[lo : col + 120] + ("…" if len(text) > col + 120 else "")

    return (
        f"{name}:{line}: the playthrough differs from here (column {col + 1})\n"
        f"  expected: {cut(e)}\n"
        f"  got:      {cut(g)}"
    )
