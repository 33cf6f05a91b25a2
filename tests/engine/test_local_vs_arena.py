"""In-process play against a real ``arena match`` process: for the same seeds and deterministic
bots (the reference bots, seeded from each match's bot seed), the same matches, line for line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cardarena import Bot, RandomBot

from arena.records.format import read_record
from engine.local import play
from reference_bots.catalog import make_bot

ARENA = str(Path(sys.executable).parent / "arena")
pytestmark = pytest.mark.slow

CASES = [
    ("whist", ["rules", "random", "rules", "random"], ["--option", "points_to_win=1"]),
    ("tennis", ["rules", "random"], []),
    # The search bot: events (its belief), the Turn (its table) and a fixed iteration count.
    ("spoil_five", ["search --iterations 30", "rules", "random"], ["--players", "3"]),
]


def _bot(spec: str) -> Bot:
    """The bot ``arena bot SPEC`` runs."""
    name, *rest = spec.split()
    if name == "random":
        return RandomBot()
    return make_bot(name, None, iterations=int(rest[1]) if rest else None)


def _without_times(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k not in ("ms", "prev")} for e in entries]


@pytest.mark.parametrize(("game", "bots", "extra"), CASES, ids=[c[0] for c in CASES])
def test_play_equals_arena_match(
    tmp_path: Path, game: str, bots: list[str], extra: list[str]
) -> None:
    seed, deals = 21, 2
    command = [ARENA, "match", game, "--seed", str(seed), "--games", str(deals), "--json"]
    for name in bots:
        command += ["--bot", f"{ARENA} bot {name}"]
    arena_out = tmp_path / "arena"
    done = subprocess.run(
        [*command, *extra, "--out", str(arena_out), "--no-sandbox"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    flags = dict(zip(extra[::2], extra[1::2], strict=True))
    key, _, value = flags.get("--option", "").partition("=")
    local = play(
        game,
        [_bot(n) for n in bots],
        seed=seed,
        deals=deals,
        players=int(flags["--players"]) if "--players" in flags else None,
        options={key: int(value)} if key else None,
        out=tmp_path / "local",
    )
    assert len(summary["matches"]) == len(local) == deals
    for theirs, ours in zip(summary["matches"], local, strict=True):
        assert theirs["seed"] == ours.seed
        assert theirs["result"] == ours.result.to_dict()
        assert ours.record is not None
        arena_record = read_record(arena_out / f"{theirs['match_id']}.jsonl.gz")
        local_record = read_record(ours.record)
        # Every event and every decision, in order (times aside: the clocks differ).
        assert _without_times(local_record.entries) == _without_times(arena_record.entries)
        assert local_record.result == arena_record.result
