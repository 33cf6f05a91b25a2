"""The game interface's own behaviour: options, errors, registry, forfeits."""

from __future__ import annotations

import pytest

from engine import ConfigError, IllegalActionError, MatchOverError, UnknownGameError, get_game
from engine.cards import CARD_TEXT, cards_list, mask_of, parse_card, parse_suit
from engine.core import ranks_from_scores


def test_card_text_round_trip() -> None:
    assert [parse_card(t) for t in CARD_TEXT] == list(range(52))
    assert parse_card("10d") == parse_card("TD")
    with pytest.raises(ValueError, match="not a card"):
        parse_card("1X")
    assert parse_suit("hearts") == parse_suit("H") == 2


def test_masks() -> None:
    assert cards_list(mask_of([51, 0, 13])) == [0, 13, 51]


def test_unknown_game_names_known_ones() -> None:
    with pytest.raises(UnknownGameError, match="known games: whist"):
        get_game("bridge")


def test_bad_player_count_and_options() -> None:
    whist = get_game("whist")
    with pytest.raises(ConfigError, match="played by 4 players; got 3"):
        whist.configure(3)
    with pytest.raises(ConfigError, match="no option 'colour'"):
        whist.configure(4, {"colour": "red"})
    with pytest.raises(ConfigError, match="'points_to_win' must be an integer"):
        whist.configure(4, {"points_to_win": "seven"})
    with pytest.raises(ConfigError, match="between 1 and 50"):
        whist.configure(4, {"points_to_win": "0"})
    assert whist.configure(4, {"points_to_win": "5"}).option("points_to_win") == 5


def test_illegal_and_after_end() -> None:
    game = get_game("whist")
    state = game.new_match(game.configure(), seed=1)
    seat = state.to_move
    assert seat is not None
    hand = state.observation(seat).to_dict()["hand"]
    assert isinstance(hand, list)
    not_held = next(t for t in CARD_TEXT if t not in hand)
    with pytest.raises(IllegalActionError) as info:
        state.apply(f"play:{not_held}")
    assert info.value.seat == seat
    assert state.decisions == 0
    result = state.forfeit(seat, "timeout")
    assert result.reason == "forfeit"
    assert state.result() is result
    assert state.legal_actions() == ()
    # A whist forfeit loses for the whole side.
    assert result.ranks[seat] == result.ranks[(seat + 2) % 4] == 2
    with pytest.raises(MatchOverError):
        state.apply("play:2C")


def test_competition_ranks() -> None:
    assert ranks_from_scores([3, 5, 5, 1]) == (3, 1, 1, 4)


# --- quick_init: the faster __init__ of frozen observation dataclasses ---------------------------


def test_quick_init_keeps_the_generated_init_s_behaviour() -> None:
    import dataclasses

    from engine._fast import quick_init

    @quick_init
    @dataclasses.dataclass(frozen=True, slots=True)
    class Point:
        x: int
        y: int = 7
        label: str = ""

        def __post_init__(self) -> None:
            if self.x < 0:
                raise ValueError("negative")

    assert Point(1) == Point(x=1, y=7, label="")
    assert (Point(1, 2, "a").x, Point(1, 2, "a").y, Point(1, 2, "a").label) == (1, 2, "a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        Point(1).x = 2  # type: ignore[misc]
    with pytest.raises(ValueError, match="negative"):
        Point(-1)
    with pytest.raises(TypeError):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Point(1, z=3)  # type: ignore[call-arg]

    with pytest.raises(TypeError, match=r"does not handle field Bag\.items"):

        @quick_init
        @dataclasses.dataclass(frozen=True, slots=True)
        class Bag:
            items: list[int] = dataclasses.field(default_factory=list)
