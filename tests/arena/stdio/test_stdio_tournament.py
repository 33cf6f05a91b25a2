"""Stdio bots (``protocol = "stdio"``) in a tournament beside gRPC bots: pooled long-lived
processes and a fresh process per match, over the real server, real SQLite and real bots."""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

from arena.records.format import read_record
from arena.tournament.store import DB_NAME
from tests.arena.run_arena import arena_error, played_tournament

ROOT = Path(__file__).resolve().parents[3]
NODE = shutil.which("node")


def bots(go: Path) -> str:
    py = f"{sys.executable} {ROOT / 'reference_bots/stdio/random_bot.py'}"
    text = f'[[bots]]\nname = "py"\nprotocol = "stdio"\ncommand = "{py}"\n'
    text += f'[[bots]]\nname = "go"\nprotocol = "stdio"\ncommand = "{go}"\n'
    text += '[[bots]]\nname = "random"\n[[bots]]\nname = "rules"\n'
    if NODE is not None:
        js = f"{NODE} {ROOT / 'reference_bots/stdio/random_bot.js'}"
        text += f'[[bots]]\nname = "js"\nprotocol = "stdio"\ncommand = "{js}"\n'
    return text


@pytest.mark.slow
@pytest.mark.parametrize("restart", ["on_failure", "per_match"])
def test_stdio_bots_play_a_tournament_beside_grpc_bots(
    tmp_path: Path, restart: str, go_stdio_bot: Path
) -> None:
    config = (
        f'game = "tennis"\nplayers = 2\nseed = 3\nconcurrency = 2\noutput = "out"\n'
        f'restart = "{restart}"\n[options]\nsets_to_win = 1\n{bots(go_stdio_bot)}'
    )
    played_tournament(tmp_path, config)
    out = tmp_path / "out"
    with sqlite3.connect(out / DB_NAME) as con:
        rows = con.execute("SELECT match_id, seats, status FROM matches").fetchall()
    played = {name for _, seats, _ in rows for name in json.loads(seats)}
    assert played == ({"py", "go", "random", "rules"} | ({"js"} if NODE else set()))
    for match_id, _, status in rows:
        assert status == "done"
        record = read_record(out / "records" / f"{match_id}.jsonl.gz")
        faults = [e for e in record.entries if e.get("type") == "fault"]
        assert faults == [], (match_id, faults)
        assert record.result["forfeited_by"] is None


def test_an_unknown_protocol_is_one_line(tmp_path: Path) -> None:
    config = 'game = "tennis"\nseed = 3\n[[bots]]\nname = "random"\nprotocol = "carrier-pigeon"\n'
    (tmp_path / "t.toml").write_text(config + '[[bots]]\nname = "rules"\n')
    error = arena_error("tournament", "t.toml", "--no-sandbox", cwd=tmp_path)
    assert "bots[0].protocol: must be one of grpc, stdio; got 'carrier-pigeon'" in error
