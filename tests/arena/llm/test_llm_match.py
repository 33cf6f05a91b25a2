"""``arena bot llm`` in real matches: ``arena match`` starts it as a real process, it asks a real
HTTP server (tests/arena/llm/fake_openai.py) that answers from a script, and the record says what
happened at each decision: its notes, its faults and the SDK's fallbacks. The key, set to a
distinctive value, is sent to the server and found nowhere else."""

from __future__ import annotations

import gzip
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arena.records.format import read_record
from reference_bots.llm.prompt import HARNESS
from tests.arena.llm.fake_openai import FakeOpenAI

#: Every test here plays whole matches over the arena: the slow tier.
pytestmark = [pytest.mark.slow, pytest.mark.agents]

ARENA = str(Path(sys.executable).parent / "arena")
#: The key every test sets: it must reach the server and nothing else.
KEY = "sk-test-DISTINCTIVE-9f27c4e1b0"
KEY_ENV = "CARD_ARENA_TEST_LLM_KEY"


def llm_command(url: str, *extra: str) -> str:
    base = ["arena", "bot", "llm", "--endpoint", url, "--model", "fake-1", "--key-env", KEY_ENV]
    return shlex.join([*base, *extra])


def play(
    tmp_path: Path, game: str, bots: list[str], *flags: str, timeout: float = 180
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """``arena match GAME --json`` with ``bots`` (no sandbox: the harness needs the network),
    the key in the environment; the process and its JSON result."""
    argv = [ARENA, "match", game, "--json", "--allow-faults", "--no-sandbox", "--seed", "5"]
    argv += ["--out", str(tmp_path / "out"), *flags]
    for bot in bots:
        argv += ["--bot", bot]
    env = {**os.environ, KEY_ENV: KEY, "ARENA_HOME": str(tmp_path / "home")}
    proc = subprocess.run(
        argv, capture_output=True, text=True, timeout=timeout, env=env, check=False
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc, json.loads(proc.stdout)


def assert_key_nowhere(tmp_path: Path, proc: subprocess.CompletedProcess[str]) -> None:
    """The key in no output: stdout, stderr, and every file the run left (records gunzipped,
    seat logs, the arena's own logs)."""
    assert KEY not in proc.stdout and KEY not in proc.stderr
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name.endswith(".log") for p in files), files
    for path in files:
        data = path.read_bytes()
        if path.suffix == ".gz":
            data = gzip.decompress(data)
        assert KEY.encode() not in data, path


def seat_decisions(record_path: str, seat: int) -> list[dict[str, Any]]:
    record = read_record(Path(record_path))
    return [e for _, e in record.decisions() if e["seat"] == seat]


def test_faults_and_fallbacks_are_recorded_as_stated(tmp_path: Path) -> None:
    script = [
        *["illegal", "legal"],  # decision 0: refused once, then taken
        *["unparsable"] * 3,  # 1: three refusals with --retries 2: the SDK's fallback
        *["500", "legal"],  # 2: a server error, asked again
        *["429", "legal"],  # 3: rate limited, Retry-After honoured (1 s)
        *["malformed", "legal"],  # 4: no JSON
        *["slow", "legal"],  # 5: past --timeout-s
        "nousage",  # 6: no usage: tokens estimated, marked ~
        "explain",  # 7: the action's number on the answer's last line
        "401",  # 8: refused outright (echoing the key): no retry, the fallback
    ]
    with FakeOpenAI(script, slow_s=3.0) as fake:
        llm = llm_command(fake.url, "--list-legal", "--retries", "2", "--timeout-s", "1")
        proc, result = play(
            tmp_path,
            "whist",
            [llm, "arena bot random", "arena bot random", "arena bot random"],
            "--option",
            "points_to_win=1",
            "--option",
            "games_per_rubber=1",
            "--move-ms",
            "5000",
        )
        seen = list(fake.requests)
    seat = result["seats"][0]
    assert seat["bot"] == "llm" and seat["version"] == HARNESS
    assert seat["faults"] == []  # the referee saw legal answers throughout
    assert len(seat["sdk_fallbacks"]) == 2  # numbered among all seats' decisions
    mine = seat_decisions(result["record"], 0)
    assert [i for i, e in enumerate(mine) if e.get("sdk_fallback")] == [1, 8]
    notes = [e.get("note", "") for e in mine]
    assert all(n.startswith(f"llm {HARNESS} ") for n in notes), notes
    assert all(len(n.encode()) <= 500 for n in notes)
    expected = [
        ("tries=2", "parse=exact", "faults=illegalx1"),
        ("tries=3", "parse=none", "faults=unparsablex3"),
        ("tries=2", "parse=exact", "faults=server_errorx1"),
        ("tries=2", "parse=exact", "faults=rate_limitx1"),
        ("tries=2", "parse=exact", "faults=malformedx1"),
        ("tries=2", "parse=exact", "faults=timeoutx1"),
        ("tries=1", "tok=~", "parse=exact"),
        ("tries=1", "tok=100+2", "parse=soft"),  # the last line: a stated soft rule
        ("tries=1", "parse=none", "faults=refusedx1"),
    ]
    for n, parts in enumerate(expected):
        head = notes[n].split(" | ")[0]
        assert all(part in head for part in parts), (n, notes[n])
    assert "tok=200+4" in notes[0]  # two answered requests, the server's usage
    assert "ms " in notes[3] and int(re.search(r" (\d+)ms ", notes[3])[1]) >= 1000  # type: ignore[index]
    assert mine[1]["sdk_fallback"].startswith("NoAnswer: no legal answer after 3 attempt(s)")
    assert "[key]" in mine[8]["sdk_fallback"]  # the echoed key, taken out
    # The match's running totals: the last note sums the match.
    last = notes[-1].split(" | ")[1]
    assert f"d={len(mine)}" in last and "fallbacks=2" in last and "tok=~" in last
    # Conversations: a refusal is answered in the same conversation, with the reason.
    assert [m["role"] for m in seen[1].body["messages"]] == ["system", "user", "assistant", "user"]
    assert "refused" in seen[1].body["messages"][3]["content"]
    assert seen[1].body["model"] == "fake-1"
    assert all(s.headers.get("Authorization") == f"Bearer {KEY}" for s in seen)
    assert_key_nowhere(tmp_path, proc)


def test_no_key_no_authorization_header(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # the default --key-env
    with FakeOpenAI() as fake:
        flags = ["--model", "m", "--list-legal", "--log-level", "info"]
        llm = shlex.join(["arena", "bot", "llm", "--endpoint", fake.url, *flags])
        _, result = play(tmp_path, "tennis", [llm, "arena bot random"], "--option", "sets_to_win=1")
        seen = list(fake.requests)
    assert seen and all("Authorization" not in s.headers for s in seen)
    assert result["seats"][0]["sdk_fallbacks"] == []
    # At info level the seat log has the match's totals as one JSON line.
    lines = Path(result["seats"][0]["log"]).read_text().splitlines()
    (totals,) = [json.loads(x) for x in lines if '"llm match totals"' in x]
    assert totals["decisions"] == len(seen) and totals["prompt_tokens"] == 100 * len(seen)
    assert totals["harness"] == HARNESS and totals["fallbacks"] == 0


def test_the_deadline_stops_the_asking(tmp_path: Path) -> None:
    """A slow model on a short clock: the harness gives up before the referee's deadline and
    the SDK's fallback answers in time (no timeout fault), whatever --timeout-s says."""
    with FakeOpenAI(["slow"] * 4, slow_s=5.0) as fake:
        llm = llm_command(fake.url, "--list-legal", "--retries", "5", "--timeout-s", "30")
        proc, result = play(
            tmp_path,
            "tennis",
            [llm, "arena bot random"],
            "--option",
            "sets_to_win=1",
            "--move-ms",
            "800",
            "--bank-ms",
            "400",
        )
    seat = result["seats"][0]
    assert seat["faults"] == [], seat
    first = seat_decisions(result["record"], 0)[0]
    assert "faults=timeoutx1" in first["note"] and "parse=none" in first["note"]
    assert "out of time" in first["sdk_fallback"]
    assert_key_nowhere(tmp_path, proc)


#: One table of each other game family, short (tennis singles, and doubles: a team's seat).
FAMILIES = [
    ("tennis", ["--option", "sets_to_win=1"], 2),
    ("tennis", ["--option", "sets_to_win=1"], 4),  # doubles: one seat per team
    ("tennis_whist", ["--option", "sets_to_win=1"], 2),
    ("spoil_five", ["--option", "rounds=1"], 2),
    ("forty_five", ["--option", "points_to_win=5"], 2),
]


@pytest.mark.parametrize(("game", "options", "players"), FAMILIES)
def test_whole_matches_of_every_family(
    tmp_path: Path, game: str, options: list[str], players: int
) -> None:
    with FakeOpenAI(seed=3) as fake:
        llm = llm_command(fake.url, "--list-legal")
        proc, result = play(
            tmp_path, game, [llm, "arena bot random"], "--players", str(players), *options
        )
    seat = result["seats"][0]
    assert result["result"]["reason"] == "normal"
    assert seat["faults"] == [] and seat["sdk_fallbacks"] == [], seat
    mine = seat_decisions(result["record"], 0)
    assert mine and all("parse=exact" in e["note"] for e in mine)
    assert len(fake.requests) == len(mine)
    assert_key_nowhere(tmp_path, proc)
