"""``arena demo`` (``make demo``): a short tournament of the reference bots for every game.

Over the real server with one process per seat: ``arena bot random``, ``arena bot rules`` and,
when reference_bots/js and its node_modules are there and ``node`` runs, the Node bot. Sized to
finish in well under two minutes on two cores: few deals, short games through each game's
options, a fixed seed so the demo is reproducible. Output goes to ``out/demo`` (recreated).
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.outdir import make_output_dir
from arena.sandbox import Limits, SandboxUnavailable, check_available, default_limits
from arena.tournament.config import check_config, node_bot_status
from arena.tournament.play import run_tournament
from arena.tournament.progress import feedback_for
from engine import EngineError, game_ids

#: Per game: players and options that keep a match short, and the deals per table.
DEMO_SETUP: dict[str, dict[str, Any]] = {
    "whist": {"players": 4, "options": {"points_to_win": 5, "games_per_rubber": 1}, "deals": 2},
    "forty_five": {"players": 4, "options": {"points_to_win": 15}, "deals": 2},
    "tennis": {"players": 2, "options": {"sets_to_win": 1}, "deals": 2},
    "tennis_whist": {"players": 3, "options": {"sets_to_win": 1}, "deals": 2},
    "spoil_five": {"players": 3, "options": {"rounds": 1}, "deals": 2},
}
#: The demo's tournament seed.
DEMO_SEED = 2024
#: Matches played at once (the machine the demo is sized for has two cores).
DEMO_CONCURRENCY = 3
#: Written into the demo's output directory: only a directory holding it (or nothing but
#: per-game directories, as demos made before it did) is ever deleted by a later demo.
MARKER = ".arena-demo"


def demo_bots() -> tuple[list[dict[str, str]], str]:
    """The demo's participants, and a note when the Node bot is left out."""
    bots = [{"name": "random"}, {"name": "rules"}]
    node, why = node_bot_status()
    if node is None:
        return bots, f"node bot skipped: {why}"
    bots.append({"name": "node"})
    return bots, ""


def demo_sandbox() -> tuple[Limits | None, str]:
    """Sandbox limits for the reference bots, or ``None`` and why they run unsandboxed: the demo
    boxes them where it can (it costs milliseconds), but they are trusted code, so a machine
    without bubblewrap still gets its demo."""
    try:
        check_available()
    except SandboxUnavailable as err:
        return None, f"demo: reference bots run unsandboxed ({err})"
    return default_limits(), ""


def prepare_output(out: Path) -> None:
    """Make ``out`` an empty directory for the demo, removing a previous demo's output.

    ``--out`` names a directory the demo recreates, and a slip (``--out .``, ``--out ~``) must
    not delete anything else: raises :class:`ArenaError` for a file, or for a directory holding
    anything but a previous demo's output, before touching it.
    """
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise ArenaError(f"{out}: not a directory; choose another --out")
    if out.is_dir():
        entries = list(out.iterdir())
        games = set(game_ids())
        ours = (out / MARKER).is_file() or all(
            e.is_dir() and not e.is_symlink() and e.name in games for e in entries
        )
        if entries and not ours:
            raise ArenaError(
                f"{out} holds files that are not a demo's output; choose another --out "
                "(the demo empties its output directory)"
            )
        shutil.rmtree(out)
    make_output_dir(out)
    (out / MARKER).write_text("output of `arena demo`: emptied by the next demo\n")


def run_demo(out: Path, quiet: bool = False) -> int:
    """Run every game's demo tournament into ``out/<game>``; print the leaderboards."""
    t0 = time.monotonic()
    prepare_output(out)
    bots, note = demo_bots()
    if note:
        print(note, file=sys.stderr)
    sandbox, why = demo_sandbox()
    if why:
        print(why, file=sys.stderr)
    reports: list[str] = []
    failed: list[str] = []
    for game_id in game_ids():
        setup = DEMO_SETUP.get(game_id, {"options": {}, "deals": 1})
        raw: dict[str, Any] = {
            "game": game_id,
            "bots": bots,
            "seed": DEMO_SEED,
            "concurrency": DEMO_CONCURRENCY,
            "output": str(out / game_id),
            "options": setup["options"],
            "duplicate": True,
        }
        if "players" in setup:
            raw["players"] = setup["players"]
        try:
            # Deals per table × rotations: check once without the count to learn the rotations.
            probe = check_config(raw, f"demo {game_id}", game_id)
            rotations = probe.matches_per_pairing
            config = check_config(
                {**raw, "matches_per_pairing": rotations * setup["deals"]},
                f"demo {game_id}",
                game_id,
            )
            result = run_tournament(config, feedback_for(quiet=quiet), sandbox)
        except (ArenaError, EngineError) as err:
            print(f"arena: error: demo {game_id}: {err}", file=sys.stderr)
            failed.append(game_id)
            continue
        title = f"{config.game.title} ({config.match_config.players} players)"
        reports.append(result.render(title))
    print()
    print("\n\n".join(reports))
    print()
    elapsed = time.monotonic() - t0
    summary = f"demo: {len(reports)} games in {elapsed:.0f} s; records and results in {out}/"
    if failed:
        summary += f"; FAILED: {', '.join(failed)}"
    print(summary)
    return 1 if failed else 0
