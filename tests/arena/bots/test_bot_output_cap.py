"""A bot's output is capped (arena/bots/process.py): a bot printing without end must fill neither
the disk (``arena match``, boxed or not) nor the memory (``arena replay ask``), nor cost the arena
much CPU, and its log must say what was dropped.

Real processes throughout: ``yes garbage`` floods, and each arena command runs in a child whose
CPU time and peak memory are measured with ``getrusage(RUSAGE_CHILDREN)``.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.bots.logs import LOG_CAP, BotOutput
from arena.records.format import Recorder, match_header, write_record
from engine import get_game

ARENA = str(Path(sys.executable).parent / "arena")
#: What the flooding bot writes, without end.
FLOOD = "yes garbage"

#: Runs argv (JSON in argv[1]), then prints the child's exit status, CPU seconds (user + system,
#: the arena and every bot it waited for) and peak RSS in KiB.
MEASURE = """
import json, resource, subprocess, sys
done = subprocess.run(json.loads(sys.argv[1]), capture_output=True, text=True, timeout=60)
use = resource.getrusage(resource.RUSAGE_CHILDREN)
sys.stderr.write(done.stderr)
print(json.dumps([done.returncode, use.ru_utime + use.ru_stime, use.ru_maxrss, done.stdout]))
"""


def _measured(argv: list[str], cwd: Path) -> tuple[int, float, int, str, str]:
    """``(status, cpu_s, max_rss_kib, stdout, stderr)`` of ``argv`` and everything it waited for."""
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, json.dumps(argv)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=90,
        check=True,
    )
    status, cpu, rss, out = json.loads(done.stdout)
    return status, cpu, rss, out, done.stderr


def _flood_match(tmp_path: Path, *extra: str) -> tuple[str, float, Path]:
    """A tennis match with the flooding bot in seat 0 (it never connects, so its seat faults);
    its printed result, its CPU seconds, seat 0's log."""
    out = tmp_path / "m"
    argv = [ARENA, "match", "tennis", "--bot", FLOOD, "--bot", "arena bot random"]
    argv += ["--connect-timeout", "3", "--move-ms", "200", "--bank-ms", "0", "--out", str(out)]
    status, cpu, _, stdout, stderr = _measured([*argv, *extra], tmp_path)
    assert status == 3, stderr  # its seat faulted
    logs = sorted((out / "logs").glob("*.seat0.log"))
    assert len(logs) == 1
    return stdout, cpu, logs[0]


def _assert_capped(log: Path) -> None:
    size = log.stat().st_size
    assert size <= LOG_CAP, size
    data = log.read_bytes()
    assert data.startswith(b"garbage\ngarbage\n")
    notes = [ln for ln in data.splitlines() if ln.startswith(b"[arena: ")]
    assert len(notes) == 1, notes
    assert b"bytes of output dropped here" in notes[0] and f"cap of {LOG_CAP}".encode() in notes[0]
    # The kept tail follows the note, whole lines of the bot's.
    assert data.endswith(b"garbage\n") and data.rindex(b"[arena: ") > size - 70_000


def _assert_match_ended(stdout: str) -> None:
    assert "tennis match" in stdout and "record: " in stdout, stdout
    assert "(seat 0) disconnect" in stdout, stdout
    # The summary says what only the log knows: the cap was hit and the bot slowed by it.
    assert "seat 0: it wrote more output than its log keeps" in stdout, stdout
    assert Path(stdout.rsplit("record: ", 1)[1].strip()).exists(), stdout


@pytest.mark.slow
def test_flooding_bot_unsandboxed_log_is_capped_and_the_match_ends(tmp_path: Path) -> None:
    stdout, cpu, log = _flood_match(tmp_path, "--no-sandbox")
    _assert_capped(log)
    _assert_match_ended(stdout)
    # The arena, the flood and the other bot together: the flooder waited in its writes for
    # most of the 3 s instead of spinning (uncapped, writing the log alone took about 3 s).
    assert cpu < 2.5, cpu


@pytest.mark.slow
def test_flooding_bot_sandboxed_log_is_capped_and_the_match_ends(tmp_path: Path) -> None:
    from arena.bots.sandbox import SandboxUnavailable, check_available

    try:
        check_available()
    except SandboxUnavailable as err:
        pytest.skip(str(err))
    stdout, cpu, log = _flood_match(tmp_path)
    _assert_capped(log)
    _assert_match_ended(stdout)
    assert cpu < 2.5, cpu


#: A bot that says hello, floods 3 MB of numbered lines, says goodbye and exits.
CHATTY = """
import sys
out = sys.stdout
out.write("hello from the bot\\n")
for i in range(30000):
    out.write(f"line {i:06d} " + "x" * 87 + "\\n")
out.write("goodbye from the bot\\n")
"""


def test_the_log_keeps_the_head_a_note_and_the_tail(tmp_path: Path) -> None:
    log = tmp_path / "bot.log"
    cap, tail = 64 * 1024, 4096
    output = BotOutput(log, cap=cap, tail=tail, rate=1 << 30)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", CHATTY], stdout=output.child_fd, stderr=subprocess.STDOUT
        )
    finally:
        output.close_child_fd()
    assert proc.wait(timeout=30) == 0
    assert output.finish(10)
    data = log.read_bytes()
    assert len(data) <= cap
    lines = data.decode().splitlines()
    assert lines[0] == "hello from the bot" and lines[-1] == "goodbye from the bot"
    [note] = [ln for ln in lines if ln.startswith("[arena: ")]
    total = len("hello from the bot\n") + 30000 * 100 + len("goodbye from the bot\n")
    assert output.log.total == total
    assert f"{output.log.dropped} bytes of output dropped here" in note
    assert f"the bot wrote {total} bytes" in note
    # Nothing lost but what the note counts; the tail starts at a whole line.
    assert len(data) - len(note) - 2 == total - output.log.dropped
    after = lines[lines.index(note) + 1]
    assert after.startswith("line ") and len(after) == 99


def test_a_quiet_bot_log_is_whole(tmp_path: Path) -> None:
    log = tmp_path / "bot.log"
    output = BotOutput(log)
    try:
        proc = subprocess.Popen(
            ["/bin/sh", "-c", "echo out; echo err >&2"],
            stdout=output.child_fd,
            stderr=subprocess.STDOUT,
        )
    finally:
        output.close_child_fd()
    assert proc.wait(timeout=10) == 0
    assert output.finish(10)
    assert log.read_text() == "out\nerr\n"


def _random_record(path: Path) -> Path:
    """A short tennis match of random choices, recorded as the arena does."""
    game = get_game("tennis")
    config = game.configure(2, {})
    state = game.new_match(config, 7)
    recorder = Recorder(state)
    rng = random.Random(7)
    while (seat := state.to_move) is not None:
        legal = state.legal_actions()
        action = rng.choice(legal)
        recorder.decision(seat, len(legal), action.text, 1.0)
        state.apply(action)
    recorder.sync()
    result = state.result()
    assert result is not None
    bots = [("random", "1")] * state.num_seats
    header = match_header("flood", game, config, 7, bots, {"move_ms": 500, "bank_ms": 0}, "lenient")
    write_record(path, header, recorder.entries, {**result.to_dict(), "faults": []})
    return path


@pytest.mark.slow
def test_replay_ask_with_a_flooding_bot_keeps_its_timeout_and_memory(tmp_path: Path) -> None:
    record = _random_record(tmp_path / "rec.jsonl.gz")
    argv = [ARENA, "replay", "ask", "--at", "5", "--bot", FLOOD, "--timeout", "1", str(record)]
    start = time.monotonic()
    status, cpu, rss_kib, stdout, stderr = _measured(argv, tmp_path)
    elapsed = time.monotonic() - start
    assert status == 2 and stdout == ""
    assert stderr.count("\n") == 1, stderr
    assert stderr.startswith(f"arena: error: bot {FLOOD!r} did not answer within 1 s; output: ")
    assert "garbage | garbage" in stderr and len(stderr) < 1000
    # Uncapped it read gigabytes back: 11 GB of memory and 50 s.
    assert rss_kib < 300 * 1024, rss_kib
    assert cpu < 4.0, cpu
    # Generous, for a loaded machine: the process start alone takes a second or two.
    assert elapsed < 15, elapsed


class _FloodedContainer:
    """Stands in for a Docker SDK container whose bot wrote 20 MB (no engine is needed)."""

    attrs: dict[str, object] = {"State": {"OOMKilled": False}}

    def logs(self, **kwargs: object) -> object:
        assert kwargs.get("stream") is True  # never the whole output in memory at once
        return (b"garbage\n" * 8192 for _ in range(320))

    def reload(self) -> None:
        pass


def test_container_output_is_capped_by_the_engine_and_when_saved(tmp_path: Path) -> None:
    from arena.bots.docker import ContainerBot, container_options
    from arena.bots.sandbox import Limits

    log_config = container_options(Limits(), tmp_path)["log_config"]
    assert log_config["Type"] == "json-file"
    assert log_config["Config"] == {"max-size": f"{LOG_CAP // 2048}k", "max-file": "2"}

    log = tmp_path / "seat0.log"
    ContainerBot("bot:1", log, None, _FloodedContainer())._collect()
    assert log.stat().st_size <= LOG_CAP
    data = log.read_bytes()
    assert data.startswith(b"garbage\n") and data.endswith(b"garbage\n")
    assert b"bytes of output dropped here: the bot wrote 20971520 bytes" in data


@pytest.mark.slow
def test_a_boxed_bot_cannot_fill_dev_or_grow_a_file_past_its_tmp(tmp_path: Path) -> None:
    """Writing elsewhere than the log: bwrap's /dev (a tmpfs of half the RAM) is read-only but
    for a /dev/shm sized like /tmp, and no file may outgrow /tmp (RLIMIT_FSIZE)."""
    from arena.bots.sandbox import (
        Limits,
        SandboxUnavailable,
        check_available,
        socket_directory,
        wrap,
    )

    try:
        check_available()
    except SandboxUnavailable as err:
        pytest.skip(str(err))
    script = (
        "touch /dev/x 2>/dev/null && echo DEV-WRITABLE; "
        "df -k /dev/shm | tail -1; "
        "head -c 12582912 /dev/zero > /dev/shm/big; echo shm status $?; "
        "ulimit -f"
    )
    with socket_directory() as sockets:
        boxed = wrap(script, tmp_path, sockets, Limits(tmp_mb=8))
        try:
            # stdin is the guard's pipe: it must stay open while the bot runs (no communicate()).
            with subprocess.Popen(
                boxed.argv, env=boxed.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE
            ) as proc:
                assert proc.stdout is not None
                out = proc.stdout.read()
                proc.wait(timeout=30)
        finally:
            boxed.cleanup()
    text = out.decode()
    assert "DEV-WRITABLE" not in text, text
    assert int(text.splitlines()[0].split()[1]) <= 8 * 1024, text  # /dev/shm's size, KiB
    assert "shm status 0" not in text, text  # 12 MiB in 8: refused (SIGXFSZ or no space)
    assert text.splitlines()[-1] == str(8 * 1024 * 1024 // 512), text  # ulimit -f: 512 B blocks
