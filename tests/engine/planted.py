"""A planted blunder for the analyser's tests: whist played by the rules bot at every seat, until
N (seat 0), unable to follow suit, holds a plain ace and a low plain card of another suit. The
rules bot throws the low card; discarding the ace instead throws away a sure winner (about a
whole trick: the ace would take a trick later in nearly every world)."""

from __future__ import annotations

import random
from pathlib import Path

from arena.records.format import Recorder, match_header, write_record
from engine import Action, MatchState, get_game
from reference_bots.rules import strategy_for

#: A one-deal match.
OPTIONS = {"points_to_win": "1", "games_per_rubber": "1"}
#: A deal where N meets the position early (decision 6: the ace of diamonds against a club lead).
SEED = 18
#: The seat that blunders.
SEAT = 0


def _rules_move(state: MatchState, rng: random.Random) -> Action:
    legal = state.legal_actions()
    seat = state.to_move
    assert seat is not None
    return legal[strategy_for("whist")(state.observation(seat).to_dict(), legal, rng)]


def _the_ace(state: MatchState) -> Action | None:
    """The plain ace N could discard here, if this is the position."""
    if state.to_move != SEAT:
        return None
    obs = state.observation(SEAT).to_dict()
    tricks = obs["tricks"]
    if not tricks or tricks[-1]["winner"] != -1 or not tricks[-1]["cards"]:
        return None
    led, trump = tricks[-1]["cards"][0][1], obs["trump"]
    legal = state.legal_actions()
    if any(a.arg[1] == led for a in legal):
        return None
    aces = [a for a in legal if a.arg[0] == "A" and a.arg[1] != trump]
    lows = [a for a in legal if a.arg[1] not in (trump, *(x.arg[1] for x in aces))]
    low = [a for a in lows if a.arg[0] in "23456"]
    return aces[0] if aces and low else None


def blunder_position() -> tuple[MatchState, Action]:
    """The state at N's decision, and the ace that would be the blunder."""
    game = get_game("whist")
    state = game.new_match(game.configure(None, OPTIONS), SEED)
    rng = random.Random(SEED)
    while state.to_move is not None:
        ace = _the_ace(state)
        if ace is not None:
            return state, ace
        state.apply(_rules_move(state, rng))
    raise AssertionError(f"seed {SEED} never reaches the position")


def blunder_record(path: Path) -> tuple[int, str]:
    """Write the match with the blunder planted; the blunder's decision number and action."""
    game = get_game("whist")
    config = game.configure(None, OPTIONS)
    state = game.new_match(config, SEED)
    recorder = Recorder(state)
    rng = random.Random(SEED)
    planted: tuple[int, str] | None = None
    while (seat := state.to_move) is not None:
        ace = _the_ace(state) if planted is None else None
        if ace is not None:
            planted, action = (state.decisions, ace.text), ace
        else:
            action = _rules_move(state, rng)
        recorder.decision(seat, len(state.legal_actions()), action.text, 1.0)
        state.apply(action)
    recorder.sync()
    result = state.result()
    assert result is not None and planted is not None
    bots = [("rules", "1"), ("rules", "1"), ("rules", "1"), ("rules", "1")]
    header = match_header("planted-blunder", game, config, SEED, bots, None, "lenient")
    write_record(path, header, recorder.entries, {**result.to_dict(), "faults": []})
    return planted
