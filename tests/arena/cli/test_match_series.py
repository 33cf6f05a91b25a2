"""``arena match --games N``: N matches on one long-lived process per seat (sandboxed, as by
default), each on a deal of its own; a process that crashes is charged in the match it was in
and replaced for the next one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from arena.records.format import read_record

pytestmark = pytest.mark.slow

ARENA = str(Path(sys.executable).parent / "arena")

TRACER = """\
import os
import sys
from cardarena import RandomBot, run_bot

class Tracer(RandomBot):
    starts = 0

    def start_match(self, game, seat, options):
        self.starts += 1
        if "crash" in sys.argv and self.starts == 2:
            os._exit(3)  # dies as its second match starts

bot = Tracer()
# A name of its own (a pid repeats in sandboxes: each has its own pid namespace); the
# records keep it per seat: which process sat there.
bot.version = os.urandom(6).hex()
run_bot(bot)
"""


def series(tmp_path: Path, *bots: str, status: int = 0) -> list[dict[str, object]]:
    done = subprocess.run(
        [
            ARENA,
            "match",
            "tennis",
            "--option",
            "sets_to_win=1",
            "--games",
            "4",
            "--out",
            str(tmp_path / "out"),
            *(a for b in bots for a in ("--bot", b)),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        check=False,
    )
    assert done.returncode == status, done.stderr
    assert "4 matches on one process per seat" in done.stdout, done.stdout
    return [read_record(p).header for p in sorted((tmp_path / "out").glob("*-g*.jsonl.gz"))]


def test_one_process_per_seat_plays_every_match_on_its_own_deal(tmp_path: Path) -> None:
    (tmp_path / "tracer.py").write_text(TRACER)
    headers = series(tmp_path, "python3 tracer.py", "python3 tracer.py")
    assert len(headers) == 4
    assert len({h["seed"] for h in headers}) == 4
    for seat in (0, 1):
        pids = {h["seats"][seat]["bot_version"] for h in headers}  # type: ignore[index]
        assert len(pids) == 1, pids
    logs = sorted(p.name for p in (tmp_path / "out" / "logs").iterdir())
    assert logs == ["seat0-p1.log", "seat1-p1.log"]


def test_a_crashed_process_is_charged_and_replaced(tmp_path: Path) -> None:
    (tmp_path / "tracer.py").write_text(TRACER)
    # Exit status 3: a seat faulted (arena match --allow-faults would make it 0).
    headers = series(tmp_path, "python3 tracer.py crash", "arena bot random", status=3)
    records = [read_record(p) for p in sorted((tmp_path / "out").glob("*-g*.jsonl.gz"))]
    faults = [[f["kind"] for f in r.result["faults"] if f["seat"] == 0] for r in records]
    assert faults[0] == [] and "crash" in faults[1], faults
    pids = [h["seats"][0]["bot_version"] for h in headers]  # type: ignore[index]
    assert pids[2] != pids[0]  # a fresh process after the crash
    assert "seat0-p2.log" in {p.name for p in (tmp_path / "out" / "logs").iterdir()}


SLOW_FINISHER = """\
import sys
import time
from cardarena import RandomBot, run_bot

class SlowFinisher(RandomBot):
    ended = 0

    def end_match(self, match_id, result):
        # Work after the last MatchEnd (saving what it learnt): the arena must wait for it.
        time.sleep(0.5)
        self.ended += 1
        print(f"finished match {self.ended}", file=sys.stderr, flush=True)

run_bot(SlowFinisher())
"""


def test_every_process_finishes_its_last_match_before_it_is_stopped(tmp_path: Path) -> None:
    (tmp_path / "slow.py").write_text(SLOW_FINISHER)
    series(tmp_path, "python3 slow.py", "python3 slow.py")
    for seat in (0, 1):
        log = (tmp_path / "out" / "logs" / f"seat{seat}-p1.log").read_text()
        assert "finished match 4" in log, log
