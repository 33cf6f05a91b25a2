"""What in-process play leaves out for speed changes nothing a bot or a record can see: the SDK's
RandomBot (whose ``choose`` reads only ``legal``) is given no observation, every other bot its
observation as the engine's ``to_dict()`` gives it; the SDK actions offered are shared between
decisions; a match counts its decisions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cardarena import Action, RandomBot

from arena.records.format import read_record
from arena.records.replay import verify
from engine.local import play, reads_observation

SHORT = {"points_to_win": 1}


class Watching(RandomBot):
    """RandomBot's draw in a ``choose`` of its own: keeps what it was given."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[dict[str, Any], list[str]]] = []
        self.chosen: list[str] = []

    def choose(self, game: str, observation: Mapping[str, Any], legal: Sequence[Action]) -> int:
        assert all(a.text == (f"{a.kind}:{a.arg}" if a.arg else a.kind) for a in legal)
        self.seen.append((dict(observation), [a.text for a in legal]))
        index = self.rng.randrange(len(legal))
        self.chosen.append(legal[index].text)
        return index


def test_only_randombots_own_choose_goes_without_its_observation() -> None:
    assert not reads_observation(RandomBot())
    assert reads_observation(Watching())
    patched = RandomBot()
    patched.choose = lambda game, observation, legal: 0  # type: ignore[method-assign]
    assert reads_observation(patched)


def test_a_bot_given_observations_plays_as_randombot_and_sees_the_engines(tmp_path: Path) -> None:
    watchers = [Watching() for _ in range(4)]
    randoms = [RandomBot() for _ in range(4)]
    seen = play("whist", watchers, seed=5, deals=2, options=SHORT, out=tmp_path / "w")
    blind = play("whist", randoms, seed=5, deals=2, options=SHORT, out=tmp_path / "r")
    # The same draws from the same seeds: the observation left out changed no move.
    for a, b in zip(seen, blind, strict=True):
        assert a.record is not None and b.record is not None
        assert verify(a.record) > 0 and verify(b.record) > 0
        moves = [(e["seat"], e["action"]) for _, e in read_record(a.record).decisions()]
        assert moves == [(e["seat"], e["action"]) for _, e in read_record(b.record).decisions()]
        assert a.decisions == len(moves) > 0
    # Each watcher was given its seat's observation, and the legal actions of that decision.
    first = watchers[0].seen[0]
    assert first[0]["seat"] == 0 and len(first[0]["hand"]) == 13
    assert all(obs and legal for w in watchers for obs, legal in w.seen)
    assert sum(len(w.seen) for w in watchers) == sum(m.decisions for m in seen)


def test_the_actions_offered_are_the_engines(tmp_path: Path) -> None:
    """The SDK actions are made once per engine action and shared between decisions: each
    decision's list still names the engine's legal actions (the record's count, and the action
    the engine played is the one the bot picked)."""
    watcher = Watching()
    played = play(
        "tennis", [watcher, RandomBot()], seed=4, options={"sets_to_win": 1}, out=tmp_path
    )
    assert played[0].record is not None
    mine = [e for _, e in read_record(played[0].record).decisions() if e["seat"] == 0]
    assert len(mine) == len(watcher.seen) > 0
    for entry, (_obs, texts), chosen in zip(mine, watcher.seen, watcher.chosen, strict=True):
        assert entry["legal"] == len(texts) == len(set(texts))
        assert entry["action"] == chosen
