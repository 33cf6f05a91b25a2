"""``arena demo --out DIR`` empties DIR first, so it must only ever delete what a demo wrote: a
directory is a demo's output when it holds the demo's marker, or (demos from before the marker)
when every entry is a game's directory holding exactly that game's demo tournament. A real
tournament's results in a game-named directory are refused in one line, and left as they were.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from arena.errors import ArenaError
from arena.tournament.demo import MARKER, demo_config, prepare_output
from arena.tournament.progress import feedback_for
from arena.tournament.runner import run_tournament
from arena.tournament.store import DB_NAME

ARENA = str(Path(sys.executable).parent / "arena")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ARENA, *args], capture_output=True, text=True, timeout=120, check=False)


def snapshot(root: Path) -> dict[str, tuple[int, bytes]]:
    """Every file under ``root``: inode (a file made again changes it) and content."""
    return {
        str(p.relative_to(root)): (p.stat().st_ino, p.read_bytes())
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def real_tournament(out: Path, *extra: str) -> None:
    """``arena tournament`` of tennis into ``out``: a user's results, not a demo's."""
    done = run(
        "tournament", "--game", "tennis", "--option", "sets_to_win=1", "--matches", "2",
        "--bot", "random", "--bot", "rules", "--out", str(out), "--no-sandbox", "--quiet",
        *extra,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (out / DB_NAME).is_file()


def unmarked_demo_output(out: Path, game: str = "tennis") -> None:
    """What a demo from before the marker wrote: the demo's own tournament of ``game`` in
    ``out/<game>`` and no marker (the tournament is the same one today's demo plays)."""
    config = demo_config(out, game, [{"name": "random"}, {"name": "rules"}])
    run_tournament(config, feedback_for(quiet=True), None)
    assert (out / game / DB_NAME).is_file() and not (out / MARKER).exists()


def assert_refused(done: subprocess.CompletedProcess[str], out: Path) -> None:
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena: error: "), done.stderr
    assert f"{out} holds files that are not a demo's output" in lines[0], lines[0]


@pytest.mark.slow
def test_a_real_tournament_in_a_game_named_directory_survives_the_demo(tmp_path: Path) -> None:
    # The audit's case: `arena tournament examples/whist.toml` writes out/tournaments/whist,
    # and `arena demo --out out/tournaments` replaced its results.
    tours = tmp_path / "tours"
    real_tournament(tours / "tennis")
    before = snapshot(tours)
    assert_refused(run("demo", "--out", str(tours), "--quiet"), tours)
    assert snapshot(tours) == before
    assert not (tours / MARKER).exists()


@pytest.mark.slow
def test_a_tournament_with_the_demos_game_and_seed_but_other_bots_survives(
    tmp_path: Path,
) -> None:
    tours = tmp_path / "tours"
    real_tournament(tours / "tennis", "--seed", "2024")
    before = snapshot(tours)
    assert_refused(run("demo", "--out", str(tours), "--quiet"), tours)
    assert snapshot(tours) == before


@pytest.mark.slow
def test_an_old_demo_next_to_a_real_tournament_is_refused_whole(tmp_path: Path) -> None:
    # Nothing is deleted, not even the part that is a demo's.
    out = tmp_path / "out"
    unmarked_demo_output(out, "tennis")
    real_tournament(out / "whist")
    before = snapshot(out)
    assert_refused(run("demo", "--out", str(out), "--quiet"), out)
    assert snapshot(out) == before


@pytest.mark.slow
def test_an_old_demo_output_with_a_users_file_in_it_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    unmarked_demo_output(out)
    (out / "tennis" / "analysis.ipynb").write_text("my notes")
    before = snapshot(out)
    with pytest.raises(ArenaError, match="not a demo's output"):
        prepare_output(out)
    assert snapshot(out) == before


def test_a_game_directory_with_a_fake_results_file_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "whist").mkdir(parents=True)
    (out / "whist" / DB_NAME).write_text("not a database")
    with pytest.raises(ArenaError, match="not a demo's output"):
        prepare_output(out)
    assert (out / "whist" / DB_NAME).read_text() == "not a database"


@pytest.mark.slow
def test_a_demo_output_from_before_the_marker_is_still_replaced(tmp_path: Path) -> None:
    # The upgrade path: an unmarked output that is exactly a demo's is emptied and marked.
    out = tmp_path / "out"
    unmarked_demo_output(out, "tennis")
    unmarked_demo_output(out, "spoil_five")
    prepare_output(out)
    assert [p.name for p in out.iterdir()] == [MARKER]


@pytest.mark.slow
def test_reading_an_old_demo_output_leaves_no_files_behind(tmp_path: Path) -> None:
    # Checking the results database must not write next to it (no -wal/-shm) before refusing.
    out = tmp_path / "out"
    unmarked_demo_output(out, "tennis")
    (out / "whist").mkdir()  # checked after tennis, whose database is read first
    (out / "whist" / "notes.txt").write_text("mine")
    before = snapshot(out)
    with pytest.raises(ArenaError, match="not a demo's output"):
        prepare_output(out)
    assert snapshot(out) == before
