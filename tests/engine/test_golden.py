"""Every golden playthrough (tests/engine/golden.py) still shows exactly what it showed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.engine.golden import CONFIGS, PATH, SEEDS, playthrough

ENTRIES: list[dict[str, Any]] = json.loads(PATH.read_text())["playthroughs"]


def test_the_file_covers_every_configuration_and_seed() -> None:
    stored = [(e["game"], e["players"], e["options"], e["seed"]) for e in ENTRIES]
    assert stored == [(g, n, opts, s) for g, n, opts in CONFIGS for s in SEEDS]


@pytest.mark.parametrize(
    "entry",
    ENTRIES,
    ids=[f"{e['game']}-{e['players']}-{'-'.join(map(str, e['options'].values()))}-{e['seed']}"
         for e in ENTRIES],
)  # fmt: skip
def test_a_playthrough_shows_what_it_showed(entry: dict[str, Any]) -> None:
    got = playthrough(entry["game"], entry["players"], entry["options"], entry["seed"])
    assert got == entry, (
        "the engine now shows something else in this playout (legal actions, an observation, "
        "an event or the result); if the rules meant it, regenerate with "
        "`python -m tests.engine.golden` and say why in the commit"
    )
