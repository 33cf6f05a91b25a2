"""The golden playthroughs (tests/engine/playthroughs/, written by scripts/playthroughs.py) still
read line for line as the engine plays them now; a failure names the first line that differs.

If the rules meant the change: ``make playthroughs``, and say why in the commit.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from engine.testing import playthrough, playthrough_difference, read_playthrough_header

ROOT = Path(__file__).resolve().parents[2]
DIR = ROOT / "tests" / "engine" / "playthroughs"
FILES = sorted(DIR.glob("*.txt"))


def _script() -> ModuleType:
    # The script holds the one list of cases; it is no package, so it is loaded by path.
    spec = importlib.util.spec_from_file_location(
        "playthroughs_script", ROOT / "scripts" / "playthroughs.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_files_are_the_scripts_cases() -> None:
    expected = {name for name, *_ in _script().cases()}
    present = {p.name for p in FILES}
    assert present == expected, (
        f"missing: {sorted(expected - present)}, not written by the script: "
        f"{sorted(present - expected)}; run `make playthroughs`"
    )


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_a_playthrough_reads_as_it_did(path: Path) -> None:
    expected = path.read_text(encoding="utf-8").splitlines()
    game_id, players, options, seed = read_playthrough_header(expected)
    got = playthrough(game_id, players, options, seed)
    problem = playthrough_difference(str(path.relative_to(ROOT)), expected, got)
    if problem:
        pytest.fail(
            f"{problem}\nIf the rules meant it: `make playthroughs`, and say why in the commit.",
            pytrace=False,
        )
