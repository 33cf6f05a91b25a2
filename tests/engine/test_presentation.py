"""The presentation interface (``Game.present``, ``Game.holdings``): what a viewer shows of a
match, said by each game. Checked over random playouts of every game: JSON-clean, labelled, and
built only from what every seat shares, so a seat's presentation tells it nothing private."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from engine import JSON, Game, MatchConfig, MatchState, Presentation, game_ids, get_game
from engine.games.tennis_cards import POINT_NAMES, TYPE_TEXT

#: (game id, players, options): small matches of every game, tennis doubles both ways.
CONFIGS: list[tuple[str, int, dict[str, str]]] = [
    ("whist", 4, {"points_to_win": "1", "games_per_rubber": "1"}),
    ("tennis_whist", 2, {"sets_to_win": "1"}),
    ("tennis_whist", 4, {"sets_to_win": "1"}),
    ("spoil_five", 2, {}),
    ("spoil_five", 5, {}),
    ("forty_five", 2, {"points_to_win": "15"}),
    ("forty_five", 4, {"points_to_win": "15"}),
    ("tennis", 2, {}),
    ("tennis", 4, {"control": "team"}),
    ("tennis", 4, {"control": "players"}),
]
IDS = [f"{g}-{n}-{'-'.join(o.values()) or 'default'}" for g, n, o in CONFIGS]
SEEDS = (1, 2)
KINDS = {"trick_table", "tennis_court", "fields"}
CARD = re.compile(r"^(?:[2-9TJQKA][CDHS]|(?:RF|LF|RB|LB)-(?:RF|LF|RB|LB)|SMASH|KILL|OUT)$")
#: Marks a part of an observation that differs between seats.
_PRIVATE = object()


def playout(game_id: str, players: int, options: dict[str, str], seed: int) -> Iterator[MatchState]:
    """A random match, yielding the state before each decision and once at the end."""
    game = get_game(game_id)
    state = game.new_match(game.configure(players, options), seed)
    rng = random.Random(seed)
    while state.to_move is not None:
        yield state
        state.apply(rng.choice(state.legal_actions()))
    yield state


def views_of(state: MatchState) -> list[dict[str, Any]]:
    """Every seat's observation, as plain data."""
    return [state.observation(s).to_dict() for s in range(state.num_seats)]


def shared(values: list[Any]) -> Any:
    """What every seat's value shares: equal values, or the shared keys of objects (and of
    lists of objects) as deep as they agree; ``_PRIVATE`` where they differ."""
    first = values[0]
    if all(v == first for v in values[1:]):
        return first
    if all(isinstance(v, dict) and v.keys() == first.keys() for v in values):
        inner = {k: shared([v[k] for v in values]) for k in first}
        return {k: v for k, v in inner.items() if v is not _PRIVATE}
    if all(isinstance(v, list) and len(v) == len(first) for v in values):
        items = [shared(list(column)) for column in zip(*values, strict=True)]
        if all(isinstance(i, dict) for i in items):
            return items
    return _PRIVATE


def public_of(views: list[dict[str, Any]]) -> dict[str, Any]:
    data = shared(views)
    assert isinstance(data, dict)
    data.pop("seat", None)
    return data


def tokens(data: Any) -> set[str]:
    return {t for t in re.split(r"[\s,;:=()\[\]\"'*]+", json.dumps(data)) if CARD.match(t)}


def check_labelled(shown: Presentation) -> None:
    for row in shown.rows:
        assert row.label and row.cells
        assert all(who and isinstance(value, str) for who, value in row.cells)
    assert all(label and isinstance(value, str) for label, value in shown.facts)
    assert all(note.strip() for note in shown.notes)


@pytest.mark.parametrize(("game_id", "players", "options"), CONFIGS, ids=IDS)
def test_presentation_is_json_clean_labelled_and_public(
    game_id: str, players: int, options: dict[str, str]
) -> None:
    game = get_game(game_id)
    assert game.presentation_kind in KINDS
    for seed in SEEDS:
        for state in playout(game_id, players, options, seed):
            views = views_of(state)
            public = public_of(views)
            shown = game.present(state.config, public)
            data = shown.to_dict()
            assert json.loads(json.dumps(data)) == data  # JSON-clean: no tuples, no objects
            check_labelled(shown)
            # Given any seat's whole observation, a game reads only what all seats share: the
            # same presentation for every seat, the same as from the shared part alone.
            for view in views:
                assert game.present(state.config, view) == shown, (seed, state.decisions)
            # No card in it that the shared part does not show (tennis: face-up discards).
            allowed = tokens(public)
            if game_id == "tennis":
                allowed |= {t for t, n in zip(TYPE_TEXT, public["discards_seen"], strict=True) if n}
            assert tokens(data) <= allowed, (seed, state.decisions)


@pytest.mark.parametrize(("game_id", "players", "options"), CONFIGS, ids=IDS)
def test_undrawn_fields_are_observation_fields(
    game_id: str, players: int, options: dict[str, str]
) -> None:
    game = get_game(game_id)
    state = game.new_match(game.configure(players, options), 1)
    assert set(game.undrawn_fields) <= set(state.observation(0).to_dict())


def test_every_game_is_covered() -> None:
    assert {g for g, _, _ in CONFIGS} == set(game_ids())


@pytest.mark.parametrize("players", [2, 4])
def test_tennis_score_is_said_as_on_court(players: int) -> None:
    said: set[str] = set()
    for state in playout("tennis", players, {}, 5):
        public = public_of(views_of(state))
        shown = get_game("tennis").present(state.config, public)
        tennis: Any = shown.to_dict()["drawing"]
        tennis = tennis["tennis"]
        points = tennis["score"]["points"]
        if public["phase"] == "over":
            assert points == ["–", "–"]
        else:
            assert points == [("0", "15", "30", "40")[p] for p in public["points"]]
        said.update(points)
        rows = {r.label: [v for _, v in r.cells] for r in shown.rows}
        assert rows["Points"] == points
        assert rows["Games (this set)"] == [str(g) for g in public["games"]]
        assert [who for who, _ in shown.rows[0].cells] == (
            ["P1", "P2"] if players == 2 else ["A", "B"]
        )
        # Hand sizes are for everyone; the hands are not in it.
        assert all(set(p) == {"name", "side", "role", "hand_size"} for p in tennis["players"])
        assert "court (" in shown.sketch and " net" in shown.sketch
    assert {"15", "30", "40"} <= said


def test_tennis_names_face_up_discards_in_card_order() -> None:
    game = get_game("tennis")
    seen = [0] * len(TYPE_TEXT)
    seen[0], seen[16], seen[18] = 2, 1, 3
    shown = game.present(game.configure(2), {"discards_seen": seen, "points": [1, 2]})
    tennis = shown.drawing["tennis"]
    assert isinstance(tennis, Mapping)
    assert tennis["discards_seen"] == [
        {"card": "RF-RF", "count": 2},
        {"card": "SMASH", "count": 1},
        {"card": "OUT", "count": 3},
    ]
    assert POINT_NAMES == ("0", "15", "30", "40")
    assert tennis["score"] == {
        "points": ["15", "30"],
        "games": [0, 0],
        "sets": [0, 0],
        "set_scores": [],
    }


@pytest.mark.parametrize("control", ["team", "players"])
def test_tennis_holdings_show_each_hand_to_the_seats_that_see_it(control: str) -> None:
    game = get_game("tennis")
    for state in playout("tennis", 4, {"control": control}, 3):
        views = views_of(state)
        held = game.holdings(state.config, views)
        assert held is not None and len(held) == 4
        for p, holding in enumerate(held):
            seers = tuple(s for s, v in enumerate(views) if v["players"][p]["visible"])
            assert holding.seen_by == seers and seers
            assert list(holding.cards) == views[seers[0]]["players"][p]["hand"]
            assert holding.label.startswith(views[0]["players"][p]["name"])


def test_card_games_hold_one_hand_per_seat_by_default() -> None:
    for game_id in ("whist", "tennis_whist", "spoil_five", "forty_five"):
        game = get_game(game_id)
        state = game.new_match(game.configure(), 1)
        views = views_of(state)
        assert game.holdings(state.config, views) is None


def test_spoil_five_tells_the_turn_up_story_in_sentences() -> None:
    game = get_game("spoil_five")
    config = game.configure(4)
    shown = game.present(
        config,
        {"robbed_by": 2, "announced_by": -1, "dealer_declined": False, "demoted_played": "AH"},
    )
    assert shown.notes == ("P3 robbed the turn-up", "AH was played as the lowest trump")
    assert game.present(config, {"robbed_by": -1, "announced_by": -1}).notes == ()


class _Plain(Game):
    """A game with no presentation of its own."""

    id = "plain"
    version = "0"
    title = "Plain"
    player_counts = (2,)
    default_players = 2

    def new_match(self, config: MatchConfig, seed: int) -> MatchState:
        raise NotImplementedError


def test_the_default_presentation_lists_fields_by_name() -> None:
    game = _Plain()
    config = game.configure()
    public: dict[str, JSON] = {"seat": 0, "hand": ["AS"], "tricks": [], "pot_size": 3, "who": [1]}
    shown = game.present(config, public)
    assert game.presentation_kind == "fields"
    assert shown.facts == (("pot size", "3"), ("who", "[1]"))
    assert shown.rows == () and shown.notes == () and shown.sketch == ""
    assert json.loads(json.dumps(shown.to_dict())) == shown.to_dict()
    assert game.holdings(config, [public, public]) is None
    assert game.undrawn_fields == ()
