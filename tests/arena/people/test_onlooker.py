"""A spectator's table (arena/people/onlooker.py) followed from a whole match's public events
alone, the match played here by the engine: at every position the page is given, the public
part agrees with the true match's, the hand sizes are the true ones, someone to move is the
true one, and no card appears that the public events had not named by then. A spectator's desk
publishes those steps between the events."""

from __future__ import annotations

import json
import random

import pytest
from cardarena import messages

from arena.people.desk import Desk
from arena.people.onlooker import Onlooker
from arena.people.spectate import SPECTATOR
from arena.records.view import FieldPath, differing_paths, without_paths
from engine import MatchState, get_game
from tests.arena.replay_truth import card_tokens


def _public(state: MatchState, private: set[FieldPath]) -> dict[str, object]:
    views = [state.observation(s).to_dict() for s in range(state.num_seats)]
    private |= differing_paths(views)
    return without_paths(views[0], frozenset(private))


@pytest.mark.parametrize(
    ("game_id", "players", "options", "seed"),
    [
        ("whist", 4, {}, 3),
        ("tennis", 2, {}, 1),
        *(
            pytest.param(*case, marks=pytest.mark.slow)
            for case in [
                ("forty_five", 4, {}, 2),
                ("spoil_five", 6, {}, 5),
                ("spoil_five", 2, {}, 5),
                ("tennis", 4, {}, 3),
                ("tennis", 4, {"control": "players"}, 3),
            ]
        ),
    ],
)
def test_the_onlooker_draws_the_true_public_table_from_public_events(
    game_id: str, players: int, options: dict[str, object], seed: int
) -> None:
    game = get_game(game_id)
    config = game.configure(players, options)  # type: ignore[arg-type]
    state = game.new_match(config, seed)
    onlooker = Onlooker(game, config)
    rng = random.Random(seed)
    true_private: set[FieldPath] = set()
    named: set[str] = set()
    steps = start = 0
    while True:
        drawn = heard = False
        for event in state.events[start:]:
            if event.to is None:
                heard = True
                # A Kill or a Smash is named by its event's kind.
                named |= set(card_tokens(f"{event.kind.upper()} {json.dumps(event.data)}"))
                drawn = onlooker.take(event.kind, event.data)
        start = len(state.events)
        if state.to_move is None:
            break
        truth = _public(state, true_private)
        if not heard:  # an action no spectator hears of (a card robbed, a private exchange)
            state.apply(rng.choice(state.legal_actions()))
            continue
        assert drawn, f"no table drawn after event {start} of {game_id}"
        step = onlooker.step(steps, [])
        assert step is not None
        steps += 1
        assert step["seat"] == state.to_move
        shown = step["public"]
        hidden = {p[0] for p in true_private | onlooker.private if p}
        common = (set(truth) & set(shown)) - hidden
        assert common and {k: shown[k] for k in common} == {k: truth[k] for k in common}
        if step["hand_sizes"] is not None:
            hands = [state.observation(s).to_dict().get("hand") for s in range(state.num_seats)]
            assert step["hand_sizes"] == [len(h) for h in hands if isinstance(h, list)]
        assert all(p == {} for p in step["private"])
        leaked = set(card_tokens(json.dumps(step))) - named
        assert not leaked, leaked
        state.apply(rng.choice(state.legal_actions()))
    assert steps > 10 and not onlooker.lost


def test_a_spectators_desk_publishes_the_table_between_public_events() -> None:
    game = get_game("whist")
    config = game.configure(4, {})
    state = game.new_match(config, 4)
    for _ in range(9):
        state.apply(state.legal_actions()[0])
    desk = Desk(SPECTATOR, "s")
    names = tuple(messages.PlayerInfo(s, "", f"b{s}", "1") for s in range(4))
    tc = messages.TimeControl()
    desk.take(messages.MatchStart("m1", "whist", "", {}, (), names, tc, "", 0))
    for seq, event in enumerate(state.events):
        if event.to is None:
            desk.take(messages.EventInfo("m1", seq, event.kind, dict(event.data), False))
    views = [m["step"] for m in desk.feed if m["type"] == "view"]
    assert len(views) == 10  # the start, then each of the nine plays
    last = views[-1]
    sizes = [len(state.observation(s).to_dict()["hand"]) for s in range(4)]
    assert last["seat"] == state.to_move and last["hand_sizes"] == sizes == [10, 11, 11, 11]
    assert last["public"]["tricks"] == state.observation(0).to_dict()["tricks"]
    assert all(p == {} for p in last["private"])


def test_a_spectators_desk_says_once_when_the_events_no_longer_fit_the_rules() -> None:
    game = get_game("whist")
    state = game.new_match(game.configure(4, {}), 4)
    for _ in range(6):
        state.apply(state.legal_actions()[0])
    desk = Desk(SPECTATOR, "s")
    names = tuple(messages.PlayerInfo(s, "", f"b{s}", "1") for s in range(4))
    desk.take(messages.MatchStart("m1", "whist", "", {}, (), names, messages.TimeControl(), "", 0))
    public = [e for e in state.events if e.to is None]
    played = next(e for e in public if e.kind == "play")
    # A card played twice: no legal play makes that event.
    for seq, event in enumerate([*public, played, played]):
        desk.take(messages.EventInfo("m1", seq, event.kind, dict(event.data), False))
    said = [m["message"] for m in desk.feed if m["type"] == "error"]
    assert len(said) == 1 and said[0].startswith("the table stops here")
    assert desk.feed[-1]["type"] == "event"  # the events still come, the table no more
