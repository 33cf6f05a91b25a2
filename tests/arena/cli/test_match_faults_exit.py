"""``arena match``'s exit status 3 for a seat that faulted or forfeited (``--allow-faults``: 0),
``--json``, and answer-time figures that count a timeout at its full wait: real bot processes
(unsandboxed, so the tests run where bubblewrap is missing too)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from arena.cli.main import main
from arena.cli.match import answer_times
from arena.server.referee import LiveMatch
from engine import JSON

ARENA = str(Path(sys.executable).parent / "arena")

#: Sleeps past its deadline at its first decision, then plays at random.
SLEEPER = """\
import time
from cardarena import RandomBot, run_bot

class Sleeper(RandomBot):
    slept = False

    def choose(self, game, observation, legal):
        if not self.slept:
            self.slept = True
            time.sleep(0.8)
        return super().choose(game, observation, legal)

run_bot(Sleeper())
"""


def match(tmp_path: Path, *args: str, second: str = "exit 3") -> subprocess.CompletedProcess[str]:
    """A short tennis match, ``arena bot random`` against ``second``."""
    return subprocess.run(
        [
            ARENA,
            "match",
            "tennis",
            "--option",
            "sets_to_win=1",
            "--seed",
            "5",
            "--no-sandbox",
            "--out",
            str(tmp_path / "out"),
            "--bot",
            "arena bot random",
            "--bot",
            second,
            *args,
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )


@pytest.mark.slow
def test_a_crashing_bot_exits_3_and_json_holds_its_fault(tmp_path: Path) -> None:
    done = match(tmp_path, "--json")
    assert done.returncode == 3, done.stderr
    assert "exit status 3" in done.stderr
    data = json.loads(done.stdout)  # the whole of stdout is the one object
    crashed = data["seats"][1]
    assert crashed["faults"] and {f["kind"] for f in crashed["faults"]} <= {"crash", "disconnect"}
    assert crashed["forfeited"] is True and data["result"]["forfeited_by"] == 1
    assert data["seats"][0]["faults"] == [] and data["seats"][0]["forfeited"] is False
    assert data["answer_time"]["decisions"] >= 1
    assert Path(data["record"]).exists()


@pytest.mark.slow
def test_allow_faults_keeps_exit_status_0(tmp_path: Path) -> None:
    done = match(tmp_path, "--allow-faults")
    assert done.returncode == 0, done.stderr
    assert "faults:" in done.stdout and "exit status 3" not in done.stderr


@pytest.mark.slow
def test_a_timeout_is_in_the_answer_time_figures(tmp_path: Path) -> None:
    (tmp_path / "sleeper.py").write_text(SLEEPER)
    timing = ("--move-ms", "300", "--bank-ms", "0")
    done = match(tmp_path, *timing, "--json", second="python3 sleeper.py")
    assert done.returncode == 3, done.stderr  # the timeout is a fault
    data = json.loads(done.stdout)
    sleeper = data["seats"][1]
    timeouts = sum(f["kind"] == "timeout" for f in sleeper["faults"])
    # While it sleeps its next request may expire too: each is one timeout.
    assert timeouts >= 1
    times = sleeper["answer_time"]
    assert times["timeouts"] == timeouts
    # Counted at its full wait (the 300 ms deadline), not left out of the figures.
    assert times["max_ms"] >= 300.0
    assert data["answer_time"]["timeouts"] == timeouts
    assert data["answer_time"]["max_ms"] >= 300.0
    text = match(tmp_path, *timing, "--allow-faults", second="python3 sleeper.py")
    assert text.returncode == 0, text.stderr
    line = next(ln for ln in text.stdout.splitlines() if ln.startswith("decisions: "))
    assert "timeout(s), each counted as its full wait" in line, line
    assert float(line.split("max ")[1].split(" ms")[0]) >= 300.0, line


def test_answer_times_count_timeouts_not_other_fallbacks() -> None:
    entries: list[dict[str, JSON]] = [
        {"type": "decision", "seat": 0, "ms": 5.0, "fallback": False},
        {"type": "fault", "seat": 1, "kind": "timeout", "detail": "no answer within 1000 ms"},
        {"type": "decision", "seat": 1, "ms": 1000.5, "fallback": True},
        {"type": "fault", "seat": 1, "kind": "illegal", "detail": "index 9 is out of range"},
        {"type": "decision", "seat": 1, "ms": 2.0, "fallback": True},
        {"type": "decision", "seat": 1, "ms": 3.0, "fallback": False},
    ]
    every = answer_times(entries)
    assert (every.decisions, every.by_referee, every.timeouts) == (4, 2, 1)
    assert every.timed == (5.0, 1000.5, 3.0)
    assert every.to_dict()["max_ms"] == 1000.5 and every.to_dict()["answers"] == 2
    assert answer_times(entries, 0).to_dict() == {
        "decisions": 1,
        "by_referee": 0,
        "timeouts": 0,
        "answers": 1,
        "mean_ms": 5.0,
        "max_ms": 5.0,
    }
    assert answer_times([], 0).to_dict()["mean_ms"] is None


#: Too slow for every decision: forfeited under --strict, then its SDK finds its seat gone.
LAGGARD = """\
import time
from cardarena import RandomBot, run_bot

class Laggard(RandomBot):
    def choose(self, game, observation, legal):
        time.sleep(0.6)
        return super().choose(game, observation, legal)

run_bot(Laggard())
"""


@pytest.mark.slow
def test_a_forfeited_sdk_bot_ends_quietly_without_a_rejection_traceback(tmp_path: Path) -> None:
    # Its late answer comes after the forfeit; reconnecting, the SDK finds its token's seats
    # gone. That is the end of its match, not an error of the bot's: no BotRejected, no trace.
    (tmp_path / "laggard.py").write_text(LAGGARD)
    timing = ("--move-ms", "200", "--bank-ms", "0", "--strict")
    done = match(tmp_path, *timing, "--json", second="python3 laggard.py")
    assert done.returncode == 3, done.stderr
    data = json.loads(done.stdout)
    laggard = data["seats"][1]
    assert laggard["forfeited"] is True
    log = Path(laggard["log"]).read_text()
    assert "BotRejected" not in log and "Traceback" not in log, log


def test_a_match_the_arena_failed_exits_4(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A referee bug (here: the engine's first step raises) ends the match with no result: that
    # is the arena's failure, never exit status 0, and --allow-faults (for bots' faults) keeps it.
    def broken(self: LiveMatch) -> None:
        raise RuntimeError("the referee broke")

    monkeypatch.setattr(LiveMatch, "_begin", broken)
    monkeypatch.chdir(tmp_path)
    argv = ["match", "tennis", "--option", "sets_to_win=1", "--seed", "5", "--no-sandbox"]
    argv += ["--out", str(tmp_path / "out"), "--allow-faults"]
    status = main([*argv, "--bot", "arena bot random", "--bot", "arena bot random"])
    err = capsys.readouterr().err
    assert status == 4, err
    line = next(ln for ln in err.splitlines() if ln.startswith("arena match:"))
    assert "the arena failed match" in line and "the referee broke" in line
    assert "exit status 4" in line
