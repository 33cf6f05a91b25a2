"""In-process play (engine.local): records the arena verifies, the arena's seeding and the SDK's
fallback, duplicate rotations, and duel's SPRT."""

from __future__ import annotations

import logging
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from cardarena import Action, Bot, RandomBot

from arena.records.format import read_record
from arena.records.replay import verify
from engine.local import duel, play, rotations_of
from engine.registry import get_game
from engine.seeds import seat_seed
from engine.sprt import SprtParams
from reference_bots.catalog import make_bot

SHORT = {"points_to_win": 1}


class Raises(Bot):
    """Every third decision raises; the others play the last legal action."""

    name = "raises"

    def __init__(self) -> None:
        super().__init__()
        self.asked = 0

    def choose(self, game: str, observation: Mapping[str, Any], legal: Sequence[Action]) -> int:
        self.asked += 1
        if self.asked % 3 == 0:
            raise RuntimeError("a bug in the strategy")
        return len(legal) - 1


class BadIndex(Bot):
    name = "bad-index"

    def choose(self, game: str, observation: Mapping[str, Any], legal: Sequence[Action]) -> int:
        return len(legal)  # one past the end


def _actions(path: Path) -> list[tuple[int, str]]:
    return [(e["seat"], e["action"]) for _, e in read_record(path).decisions()]


def test_play_writes_records_that_replay_verify_passes(tmp_path: Path) -> None:
    bots = [make_bot("rules", None), RandomBot(), make_bot("rules", None), "random"]
    played = play("whist", bots, seed=11, deals=2, options=SHORT, out=tmp_path, match_id="w")
    assert [m.match_id for m in played] == ["w-g1", "w-g2"]
    for m in played:
        assert m.record is not None and verify(m.record) > 0
        header = read_record(m.record).header
        # No clock in process: the record says no time control was enforced.
        assert (header["seed"], header["time_control"]) == (m.seed, None)
        assert [s["bot_name"] for s in header["seats"]] == ["rules", "random", "rules", "random"]
    assert played[0].seed == 11 and played[1].seed != 11


def test_the_same_seed_plays_the_same_matches(tmp_path: Path) -> None:
    def run(out: Path) -> list[list[tuple[int, str]]]:
        bots = [make_bot("rules", None) for _ in range(4)]
        played = play("whist", bots, seed=3, deals=2, options=SHORT, out=out, match_id="s")
        return [_actions(m.record) for m in played if m.record is not None]

    assert run(tmp_path / "a") == run(tmp_path / "b")


def test_bots_are_seeded_as_match_start_seeds_them() -> None:
    seen: list[int] = []

    class Draws(RandomBot):
        def start_match(self, game: str, seat: int, options: Mapping[str, str]) -> None:
            seen.append(self.rng.getrandbits(32))

    play("tennis", [Draws(), Draws()], seed=9)
    expected = [random.Random(seat_seed(9, s)).getrandbits(32) for s in (0, 1)]
    assert seen == expected


def test_a_bot_that_raises_gets_the_sdks_fallback(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="engine.local"):
        played = play("tennis", [Raises(), BadIndex()], seed=4, out=tmp_path, match_id="f")
    (m,) = played
    assert m.record is not None and verify(m.record) > 0
    record = read_record(m.record)
    asked = {0: 0, 1: 0}
    for _, entry in record.decisions():
        seat = entry["seat"]
        asked[seat] += 1
        if seat == 1 or asked[seat] % 3 == 0:
            # The first legal action, as the SDK plays it: a legal answer, no fault, the
            # referee's fallback flag unset (the referee never saw a problem); marked as the
            # SDK's fallback, with why, as the SDK marks it over the wire.
            assert entry["fallback"] is False
            why = "bad index" if seat == 1 else "a bug in the strategy"
            assert why in entry["sdk_fallback"], entry
        else:
            assert "sdk_fallback" not in entry
    assert m.failures == (asked[0] // 3, asked[1])
    assert record.result["faults"] == []
    assert "bot.choose failed" in caplog.text and "a bug in the strategy" in caplog.text
    assert "bad index" in caplog.text


def test_a_fallback_plays_the_first_legal_action(tmp_path: Path) -> None:
    first: list[str] = []

    class Spy(BadIndex):
        def choose(self, game: str, observation: Mapping[str, Any], legal: Sequence[Action]) -> int:
            first.append(legal[0].text)
            return super().choose(game, observation, legal)

    m = play("tennis", [Spy(), RandomBot()], seed=2, out=tmp_path)[0]
    assert m.record is not None
    assert [a for seat, a in _actions(m.record) if seat == 0] == first
    assert m.failures[0] == len(first) > 0


def test_duplicate_plays_each_deal_in_every_rotation(tmp_path: Path) -> None:
    a, b = make_bot("rules", None), RandomBot()
    played = play("whist", [a, b, a, b], seed=6, duplicate=True, options=SHORT, match_id="d")
    assert [m.match_id for m in played] == ["d-r0", "d-r1"]
    assert played[0].seed == played[1].seed
    assert [m.seated for m in played] == [(a, b, a, b), (b, a, b, a)]
    game = get_game("spoil_five")
    x, y, z = RandomBot(), RandomBot(), RandomBot()
    rotations = rotations_of(game, game.configure(3, {}), [x, y, z])
    assert rotations == [(x, y, z), (y, z, x), (z, x, y)]
    # Two bots at three seats: each shifts through the places their cycle fills.
    assert rotations_of(game, game.configure(3, {}), [x, y, x]) == [(x, y, x), (y, x, y)]
    # Four bots at whist: each partnership's pair moves to the other side, seat for seat.
    whist = get_game("whist")
    a2, b2 = RandomBot(), RandomBot()
    rotations = rotations_of(whist, whist.configure(None, {}), [a, b, a2, b2])
    assert rotations == [(a, b, a2, b2), (b, a, b2, a2)]


def test_duel_reaches_a_verdict_on_duplicate_deals() -> None:
    strong, weak = make_bot("rules", None), RandomBot()
    result = duel("tennis", strong, weak, seed=1, units=40, sprt=SprtParams(0.0, 50.0))
    assert result.status.verdict == "H1"
    assert result.status.units * 2 == len(result.matches) == result.status.matches
    # Each unit: the same deal, the candidate in each place once.
    one, two = result.matches[:2]
    assert one.seed == two.seed and one.seated == (strong, weak) and two.seated == (weak, strong)


def test_bad_arguments_are_one_line_errors() -> None:
    with pytest.raises(ValueError, match="has 4 seats; got 2"):
        play("whist", [RandomBot(), RandomBot()])
    with pytest.raises(ValueError, match="a cardarena Bot or 'random'"):
        play("tennis", [RandomBot(), "rules"])
    with pytest.raises(ValueError, match="two places"):
        duel("spoil_five", RandomBot(), RandomBot(), players=3)
