"""``arena demo`` (``make demo``): a short tournament of the reference bots for every game.

Over the real server with one process per seat: ``arena bot random``, ``arena bot rules``,
``arena bot search`` (on a short budget) and,
when reference_bots/js and its node_modules are there and ``node`` runs, the Node bot. Sized to
finish in well under two minutes on two cores: few deals, short games through each game's
options, a fixed seed so the demo is reproducible. Output goes to ``out/demo`` (recreated).
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from arena.bots.sandbox import (
    Limits,
    SandboxRefused,
    SandboxUnavailable,
    check_available,
    default_limits,
)
from arena.errors import ArenaError
from arena.layout import LOGS_DIR, RECORDS_DIR, make_output_dir
from arena.sqlite import try_lock
from arena.tournament.config import TournamentConfig, check_config, node_bot_status
from arena.tournament.progress import feedback_for
from arena.tournament.runner import run_tournament
from arena.tournament.store import DB_NAME, LOCK_NAME, peek_config
from engine import EngineError, game_ids

#: Per game: players and options that keep a match short, and the deals per table.
DEMO_SETUP: dict[str, dict[str, Any]] = {
    "whist": {"players": 4, "options": {"points_to_win": 5, "games_per_rubber": 1}, "deals": 2},
    "forty_five": {"players": 4, "options": {"points_to_win": 15}, "deals": 2},
    "tennis": {"players": 2, "options": {"sets_to_win": 1}, "deals": 2},
    "tennis_whist": {"players": 3, "options": {"sets_to_win": 1}, "deals": 2},
    "spoil_five": {"players": 3, "options": {"rounds": 1}, "deals": 2},
}
#: The search bot's command in the demo: a short think per decision keeps the demo quick.
DEMO_SEARCH = "arena bot search --budget-ms 25"
#: The demo's tournament seed.
DEMO_SEED = 2024
#: Matches played at once (the machine the demo is sized for has two cores).
DEMO_CONCURRENCY = 3
#: Written into the demo's output directory: only a directory holding it (or a demo's output
#: from before it, see :func:`_is_unmarked_demo_output`) is ever emptied by a later demo. A
#: running demo holds a ``flock`` on it, so a second demo on the same directory is refused.
MARKER = ".arena-demo"
#: The marker's text.
MARKER_TEXT = b"output of `arena demo`: emptied by the next demo (which locks this file)\n"
#: The files a game's tournament leaves at the top of its directory: the results database, its
#: WAL journal files (left by a killed run) and its lock.
_GAME_FILES = frozenset({DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm", LOCK_NAME})


def demo_bots() -> tuple[list[dict[str, str]], str]:
    """The demo's participants, and a note when the Node bot is left out."""
    bots = [{"name": "random"}, {"name": "rules"}, {"name": "search", "command": DEMO_SEARCH}]
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
        # The reason alone: its way out, --no-sandbox, is not a flag of `arena demo`.
        return None, f"demo: reference bots run unsandboxed ({err.reason})"
    return default_limits(), ""


def demo_config(out: Path, game_id: str, bots: Sequence[dict[str, str]]) -> TournamentConfig:
    """The demo's tournament of ``game_id`` between ``bots``, written to ``out/<game_id>``."""
    setup = DEMO_SETUP.get(game_id, {"options": {}, "deals": 1})
    raw: dict[str, Any] = {
        "game": game_id,
        "bots": list(bots),
        "seed": DEMO_SEED,
        "concurrency": DEMO_CONCURRENCY,
        "output": str(out / game_id),
        "options": setup["options"],
        "duplicate": True,
    }
    if "players" in setup:
        raw["players"] = setup["players"]
    # Deals per table × rotations: check once without the count to learn the rotations.
    probe = check_config(raw, f"demo {game_id}", game_id)
    rotations = probe.matches_per_pairing
    return check_config(
        {**raw, "matches_per_pairing": rotations * setup["deals"]}, f"demo {game_id}", game_id
    )


def _is_unmarked_demo_output(game_dir: Path) -> bool:
    """Whether ``game_dir``, in an output directory without the marker, is exactly what a demo
    from before the marker wrote there: its game's tournament and nothing else.

    The marker came after the first version of the demo (git: "demo refuses to empty a
    directory that is not its own output"), whose output is otherwise the same. A game's name
    alone proves nothing (``arena tournament examples/whist.toml`` writes
    ``out/tournaments/whist``), so the directory must hold only a tournament's files, and its
    results database the demo's own tournament: its game, seed, bots, options, matches.
    """
    if game_dir.is_symlink() or not game_dir.is_dir():
        return False
    for entry in game_dir.iterdir():
        if entry.is_symlink():
            return False
        if entry.name in _GAME_FILES:
            if not entry.is_file():
                return False
        elif entry.name in (RECORDS_DIR, LOGS_DIR) and entry.is_dir():
            # Records (and temporary files of records being written), bot logs.
            endings = (".jsonl.gz", ".tmp") if entry.name == RECORDS_DIR else (".log",)
            for item in entry.iterdir():
                if item.is_symlink() or not item.is_file() or not item.name.endswith(endings):
                    return False
        else:
            return False
    stored = peek_config(game_dir / DB_NAME)
    if stored is None:
        return False
    names = [b.get("name") for b in stored.get("bots") or [] if isinstance(b, dict)]
    if names not in (["random", "rules"], ["random", "rules", "node"]):
        return False
    try:
        demo = demo_config(game_dir.parent, game_dir.name, [{"name": n} for n in names]).identity()
    except (ArenaError, EngineError):
        return False  # e.g. the Node bot cannot run here: refuse rather than guess
    # Bot commands and the game's version may differ between arena versions; all else is the
    # demo's fixed tournament, so deleting it loses nothing a demo does not play again.
    keys = set(demo) - {"game_version", "bots"}
    return all(stored.get(k) == demo[k] for k in keys)


def _lock_games(out: Path) -> list[int]:
    """Take the tournament lock of every game directory in ``out`` that has one (the demo will
    delete them): the descriptors holding them; :class:`ArenaError` when one is held (a
    tournament runs there), with none of them kept."""
    held: list[int] = []
    try:
        for entry in sorted(out.iterdir()):
            if entry.is_symlink() or not entry.is_dir():
                continue
            try:
                fd = try_lock(entry / LOCK_NAME, create=False)
            except FileNotFoundError:
                continue  # never run as a tournament: no runner to disturb
            except OSError as err:
                raise ArenaError(
                    f"{entry / LOCK_NAME}: cannot check the tournament lock ({err.strerror})"
                ) from None
            if fd is None:
                raise ArenaError(
                    f"{entry}: an `arena tournament` is running on this directory and the demo "
                    "would delete it; wait for it or choose another --out"
                )
            held.append(fd)
    except BaseException:
        for fd in held:
            os.close(fd)
        raise
    return held


def _claim_output(out: Path) -> int:
    """:func:`demo_output`'s work: the descriptor holding the lock on ``out``'s marker."""
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise ArenaError(f"{out}: not a directory; choose another --out")
    marker = out / MARKER
    if out.is_dir() and not (marker.is_file() and not marker.is_symlink()):
        # Without the marker, only a demo's output from before the marker is emptied.
        games = set(game_ids())
        for entry in sorted(out.iterdir()):
            if entry.name not in games or not _is_unmarked_demo_output(entry):
                raise ArenaError(
                    f"{out} holds files that are not a demo's output ({entry.name}; no {MARKER} "
                    "file); choose another --out (the demo empties its output directory)"
                )
    make_output_dir(out)
    # The marker is the demo's lock, and it is never deleted: a lock file deleted and made
    # again would let a third demo lock the new one while the first still runs.
    try:
        fd = try_lock(marker)
    except OSError as err:
        raise ArenaError(f"{marker}: cannot open the demo's lock ({err.strerror})") from None
    if fd is None:
        raise ArenaError(
            f"{out}: another `arena demo` is running on this directory; wait for it or choose "
            "another --out"
        )
    try:
        # The game locks are held while their directories go, so a tournament starting there
        # meanwhile is refused rather than half deleted.
        held = _lock_games(out)
        try:
            for entry in out.iterdir():
                if entry.name == MARKER:
                    continue
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry)
                else:
                    entry.unlink()
        except OSError as err:
            raise ArenaError(f"{out}: cannot empty the demo's output ({err.strerror})") from None
        finally:
            for game_fd in held:
                os.close(game_fd)
        os.ftruncate(fd, 0)
        os.write(fd, MARKER_TEXT)
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextmanager
def demo_output(out: Path) -> Iterator[None]:
    """Make ``out`` an empty directory for the demo, removing a previous demo's output, and hold
    it for the demo until the block ends.

    ``--out`` names a directory the demo recreates, and a slip (``--out .``, ``--out ~``) must
    not delete anything else: raises :class:`ArenaError` for a file, or for a directory holding
    anything but a previous demo's output, before touching it; likewise while another demo or an
    ``arena tournament`` runs in it.
    """
    fd = _claim_output(out)
    try:
        yield
    finally:
        os.close(fd)


def prepare_output(out: Path) -> None:
    """:func:`demo_output` without holding ``out`` afterwards."""
    with demo_output(out):
        pass


def run_demo(out: Path, quiet: bool = False) -> int:
    """Run every game's demo tournament into ``out/<game>``; print the leaderboards."""
    t0 = time.monotonic()
    with demo_output(out):
        return _run_games(out, t0, quiet)


def _run_games(out: Path, t0: float, quiet: bool) -> int:
    """The demo proper, while :func:`run_demo` holds ``out``."""
    bots, note = demo_bots()
    if note:
        print(note, file=sys.stderr)
    sandbox, why = demo_sandbox()
    if why:
        print(why, file=sys.stderr)
    reports: list[str] = []
    failed: list[str] = []
    for game_id in game_ids():
        try:
            config = demo_config(out, game_id, bots)
            result = run_tournament(config, feedback_for(quiet=quiet), sandbox)
        except (ArenaError, EngineError) as err:
            said = err.reason if isinstance(err, SandboxRefused) else err  # no --no-sandbox here
            print(f"arena: error: demo {game_id}: {said}", file=sys.stderr)
            failed.append(game_id)
            continue
        title = f"{config.rules.game.title} ({config.rules.config.players} players)"
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
