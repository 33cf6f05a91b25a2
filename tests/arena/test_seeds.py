"""Seeds are as secret as the cards: the engines are public and deterministic, so a bot that
could learn or guess its match's seed could deal every hand itself. A match, lobby or tournament
given no seed draws one nobody can guess, and nothing a bot is sent names the seed."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from arena.records.format import read_record
from arena.rules import MatchRules
from arena.seeds import derive_seed, fresh_seed
from arena.server import open_arena_server
from arena.server.lobby import LobbyConfig
from arena.tournament.schedule import build_schedule
from arena.tournament.store import DB_NAME
from engine import get_game
from tests.arena.server.test_lobby import SHORT_WHIST, play_in_lobby

ARENA = str(Path(sys.executable).parent / "arena")
#: Games short enough for a test; "short" whist: one game of one point.
WHIST_OPTIONS = ["--option", "points_to_win=1", "--option", "games_per_rubber=1"]


def run_arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ARENA, *args], capture_output=True, text=True, cwd=cwd, timeout=180, check=False
    )


def test_fresh_seeds_are_63_bit_and_never_repeat() -> None:
    seeds = {fresh_seed() for _ in range(1000)}
    assert len(seeds) == 1000
    assert all(0 <= s < 2**63 for s in seeds)
    # A guessable generator (time, a counter) would crowd the small numbers.
    assert sum(s < 2**53 for s in seeds) < 10


@pytest.mark.slow
def test_arena_match_without_a_seed_deals_from_a_secret_one(tmp_path: Path) -> None:
    seeds, ids = [], []
    for _ in range(2):
        proc = run_arena(
            "match", "whist", *WHIST_OPTIONS, *["--bot", "arena bot random"] * 4,
            "--no-sandbox", "--out", str(tmp_path), cwd=tmp_path,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        path = next(line for line in proc.stdout.splitlines() if line.startswith("record: "))
        record = read_record(Path(path.removeprefix("record: ")))
        seeds.append(record.header["seed"])
        ids.append(record.header["match_id"])
        assert f"(seed {record.header['seed']})" in proc.stdout  # the host can replay it
    assert seeds[0] != seeds[1]
    assert all(s >= 2**32 for s in seeds)  # not 0, not a small number a bot could try
    assert all(str(s) not in i for s, i in zip(seeds, ids, strict=True))


def test_lobby_seeds_are_one_way_and_its_match_ids_do_not_name_them(tmp_path: Path) -> None:
    headers: dict[int | None, list[dict[str, object]]] = {}

    async def main(seed: int | None) -> None:
        out = tmp_path / str(seed)
        async with open_arena_server() as server:
            await play_in_lobby(
                server, LobbyConfig(MatchRules.of("whist", options=SHORT_WHIST), seed=seed, out=out)
            )
        headers[seed] = [read_record(p).header for p in sorted(out.glob("*.jsonl.gz"))]

    trio.run(main, 7)
    trio.run(main, None)
    # A host's seed reproduces the lobby's deals; one match's seed tells nothing of the next's.
    assert sorted(int(str(h["seed"])) for h in headers[7]) == sorted(
        derive_seed(7, "lobby", n) for n in range(2)
    )
    secret = [int(str(h["seed"])) for h in headers[None]]
    assert len(secret) == 2 and all(s >= 2**32 for s in secret)
    assert not set(secret) & {derive_seed(0, "lobby", n) for n in range(2)}
    for h in headers[7] + headers[None]:
        assert str(h["seed"]) not in str(h["match_id"])


def stored_seed(out: Path) -> int:
    with sqlite3.connect(out / DB_NAME) as con:
        (config,) = con.execute("SELECT value FROM meta WHERE key='config'").fetchone()
    seed = json.loads(config)["seed"]
    assert isinstance(seed, int)
    return seed


@pytest.mark.slow
def test_a_tournament_without_a_seed_draws_a_secret_one_and_resumes_with_it(
    tmp_path: Path,
) -> None:
    config = (
        'game = "tennis"\nconcurrency = 2\n[options]\nsets_to_win = 1\n'
        '[[bots]]\nname = "random"\n[[bots]]\nname = "rules"\n'
    )
    (tmp_path / "t.toml").write_text(config)
    first = run_arena("tournament", "t.toml", "--out", "a", "--quiet", "--no-sandbox", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    seed = stored_seed(tmp_path / "a")
    assert seed >= 2**32
    # Every match was dealt from the stored seed's schedule.
    game = get_game("tennis")
    plans = build_schedule(game, game.configure(None, {"sets_to_win": 1}),
                           ["random", "rules"], "round_robin", 2, True, seed)  # fmt: skip
    records = {p.name: read_record(p).header for p in (tmp_path / "a" / "records").glob("*.gz")}
    assert sorted(int(str(h["seed"])) for h in records.values()) == sorted(p.seed for p in plans)
    # Run again: the same tournament (nothing to play, same table), not a new seed's.
    again = run_arena("tournament", "t.toml", "--out", "a", "--quiet", "--no-sandbox", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert again.stdout == first.stdout
    assert stored_seed(tmp_path / "a") == seed
    # A new tournament from the same config gets a seed of its own.
    other = run_arena("tournament", "t.toml", "--out", "b", "--quiet", "--no-sandbox", cwd=tmp_path)
    assert other.returncode == 0, other.stderr
    assert stored_seed(tmp_path / "b") not in (seed, 0)
