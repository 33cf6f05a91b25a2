"""Tournaments on long-lived bot processes, for real: each bot process names itself at random
(its Hello's version, which the records keep per seat), so the records show which process
played which seat of which deal. No process played a deal twice, partners never shared one,
processes were reused, and the results are those of fresh processes per match."""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from pathlib import Path

import pytest

from arena.records.format import read_record
from tests.arena.tournament.test_tournament_e2e import run_cli

pytestmark = pytest.mark.slow

TRACER = """\
import os
from cardarena import RandomBot, run_bot
bot = RandomBot()
# A name of its own (a pid repeats in sandboxes: each has its own pid namespace); the
# records keep it per seat: which process sat there.
bot.version = os.urandom(6).hex()
run_bot(bot)
"""


def config(tmp_path: Path, restart: str, out: str) -> Path:
    (tmp_path / "tracer.py").write_text(TRACER)
    bots = "".join(
        f'[[bots]]\nname = "{n}"\ncommand = "python3 {tmp_path / "tracer.py"}"\n'
        for n in ("north", "east", "south")
    )
    path = tmp_path / f"{out}.toml"
    path.write_text(
        f'game = "whist"\nseed = 5\nconcurrency = 2\nmatches_per_pairing = 6\n'
        f'restart = "{restart}"\noutput = "{tmp_path / out}"\n'
        f"[options]\npoints_to_win = 1\ngames_per_rubber = 1\n{bots}"
    )
    return path


def results(out: Path) -> dict[str, str]:
    with sqlite3.connect(out / "results.sqlite") as con:
        return {m: r for m, r in con.execute("SELECT match_id, result FROM matches")}


def test_processes_are_reused_never_on_a_deal_twice_and_play_as_fresh_ones(
    tmp_path: Path,
) -> None:
    done = run_cli(
        "tournament",
        str(config(tmp_path, "on_failure", "pooled")),
        "--quiet",
        "--no-sandbox",
        cwd=tmp_path,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    seats = 0
    deals_of: dict[str, list[int]] = defaultdict(list)
    records = sorted((tmp_path / "pooled" / "records").glob("*.jsonl.gz"))
    assert len(records) == 3 * 6  # three tables of two bots, six matches each
    for path in records:
        header = read_record(path).header
        pids = [s["bot_version"] for s in header["seats"]]
        seats += len(pids)
        # Partners (and opponents) on distinct processes.
        assert len(set(pids)) == len(pids), (path.name, pids)
        for pid in pids:
            deals_of[pid].append(header["seed"])
    for pid, deals in deals_of.items():
        assert len(deals) == len(set(deals)), f"process {pid} played a deal twice: {deals}"
    # Reused: each process played several matches.
    assert len(deals_of) < seats / 2, (len(deals_of), seats)
    assert max(len(d) for d in deals_of.values()) > 1
    # One log per process, none per seat.
    logs = sorted(p.name for p in (tmp_path / "pooled" / "logs").iterdir())
    assert len(logs) == len(deals_of) and all("-p" in name for name in logs), logs

    # Fresh processes per match, same seed: the same results, match by match (each match
    # reseeds the bots' generators from its own bot_seed).
    again = run_cli(
        "tournament",
        str(config(tmp_path, "per_match", "fresh")),
        "--quiet",
        "--no-sandbox",
        cwd=tmp_path,
        timeout=300,
    )
    assert again.returncode == 0, again.stderr
    pooled, fresh = results(tmp_path / "pooled"), results(tmp_path / "fresh")
    assert pooled.keys() == fresh.keys()
    for match_id in pooled:
        assert json.loads(pooled[match_id]) == json.loads(fresh[match_id]), match_id
    fresh_pids = {
        s["bot_version"]
        for path in (tmp_path / "fresh" / "records").glob("*.jsonl.gz")
        for s in read_record(path).header["seats"]
    }
    assert len(fresh_pids) == seats  # one process per seat of every match
