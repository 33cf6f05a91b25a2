"""Bots over stdio (``arena match --bot stdio:CMD``): the reference bots play every game, and a
bot that misbehaves on its pipes is charged a fault while the other seats play on unharmed.
Real bot processes, unsandboxed (so the tests run where bubblewrap is missing too)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arena.server.stdio import MAX_LINE
from engine import game_ids, get_game
from tests.arena.run_arena import arena_error

ARENA = str(Path(sys.executable).parent / "arena")
ROOT = Path(__file__).resolve().parents[3]
PY_BOT = f"stdio:{sys.executable} {ROOT / 'reference_bots/stdio/random_bot.py'}"
NODE = shutil.which("node")
JS_BOT = f"stdio:{NODE} {ROOT / 'reference_bots/stdio/random_bot.js'}"

#: Short matches where a game has an option for it.
SHORT: dict[str, list[str]] = {"tennis": ["--option", "sets_to_win=1"]}


def play(
    tmp_path: Path, game: str, bots: list[str], *args: str, boxed: bool = False
) -> tuple[dict[str, Any], subprocess.CompletedProcess[str]]:
    """``arena match GAME --json`` between ``bots`` (unsandboxed unless ``boxed``): its JSON
    summary and the process."""
    argv = [ARENA, "match", game, "--seed", "7", "--json", "--allow-faults"]
    argv += [] if boxed else ["--no-sandbox"]
    argv += ["--out", str(tmp_path / "out"), *SHORT.get(game, []), *args]
    for bot in bots:
        argv += ["--bot", bot]
    done = subprocess.run(
        argv, capture_output=True, text=True, cwd=tmp_path, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout), done


def seats_of(game: str) -> int:
    """The game's default table size."""
    g = get_game(game)
    return g.num_seats(g.configure(None, {}))


def grpc_and(bot: str, game: str) -> list[str]:
    """``bot`` in every even seat, ``arena bot random`` (gRPC) in the others."""
    return [bot if seat % 2 == 0 else "arena bot random" for seat in range(seats_of(game))]


def faults(data: dict[str, Any], seat: int) -> set[str]:
    return {f["kind"] for f in data["seats"][seat]["faults"]}


def assert_clean(data: dict[str, Any]) -> None:
    for seat in range(len(data["seats"])):
        assert faults(data, seat) == set(), data["seats"][seat]
    assert data["result"]["forfeited_by"] is None


@pytest.mark.slow
@pytest.mark.parametrize("game", game_ids())
def test_the_python_stdio_bot_plays_every_game(tmp_path: Path, game: str) -> None:
    data, _ = play(tmp_path, game, grpc_and(PY_BOT, game))
    assert_clean(data)
    assert data["seats"][0]["bot"] == "stdio-random-py"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_a_sandboxed_stdio_bot_plays_over_its_pipes(tmp_path: Path) -> None:
    # Its stdin passes the box's guard shell (arena/bots/sandbox.py) and bubblewrap.
    bot = f"stdio:python3 {ROOT / 'reference_bots/stdio/random_bot.py'}"
    data, _ = play(tmp_path, "tennis", [bot, "arena bot random"], boxed=True)
    assert_clean(data)
    assert data["seats"][0]["bot"] == "stdio-random-py"


@pytest.mark.slow
@pytest.mark.skipif(NODE is None, reason="node is not installed")
@pytest.mark.parametrize("game", game_ids())
def test_the_node_stdio_bot_plays_every_game(tmp_path: Path, game: str) -> None:
    data, _ = play(tmp_path, game, grpc_and(JS_BOT, game))
    assert_clean(data)
    assert data["seats"][0]["bot"] == "stdio-random-js"


@pytest.mark.slow
@pytest.mark.parametrize("game", game_ids())
def test_the_go_stdio_bot_plays_every_game(tmp_path: Path, game: str, go_stdio_bot: Path) -> None:
    # Built by tests/go_bot.py (make go-bot): a missing Go fails here, saying so.
    data, _ = play(tmp_path, game, grpc_and(f"stdio:{go_stdio_bot}", game))
    assert_clean(data)
    assert data["seats"][0]["bot"] == "stdio-random-go"


#: A stdio bot that plays at random and misbehaves once, at its third decision (``MISCHIEF``).
HOSTILE = """\
import json, os, random, sys, time
MISCHIEF = {mischief!r}
CAP = {cap}
def send(text):
    sys.stdout.write(text + "\\n")
    sys.stdout.flush()
send(json.dumps({{"hello": {{"botName": "hostile", "token": os.environ["ARENA_TOKEN"],
                           "protocolVersion": 1, "batchEvents": True}}}}))
asked = 0
for line in sys.stdin:
    msg = json.loads(line)
    if "matchEnd" in msg and MISCHIEF == "after_end":
        send(json.dumps({{"action": {{"requestId": "12345", "index": 0}}}}))
        send("after the end")
    if "decision" not in msg:
        continue
    d = msg["decision"]
    asked += 1
    if asked == 3:
        if MISCHIEF == "malformed":
            send('{{"action": {{"requestId": "1", "index": ')
        elif MISCHIEF == "oversize":
            send('{{"ping": {{"nonce": "' + "x" * (CAP + 10) + '"}}}}')
        elif MISCHIEF == "close":
            os.close(1)
            time.sleep(30)
    send(json.dumps({{"action": {{"requestId": d["requestId"],
                                 "index": random.randrange(len(d["legalActions"]))}}}}))
if MISCHIEF == "after_end":  # stdin is closed: the stream is over
    send("after the stream")
"""


def hostile(tmp_path: Path, mischief: str) -> str:
    path = tmp_path / f"{mischief}.py"
    path.write_text(HOSTILE.format(mischief=mischief, cap=MAX_LINE))
    return f"stdio:{sys.executable} {path}"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mischief", "kinds"),
    [
        ("malformed", {"garbage"}),
        ("oversize", {"garbage"}),
        ("close", {"disconnect", "timeout"}),
    ],
)
def test_a_stdio_bot_that_misbehaves_is_charged_and_alone(
    tmp_path: Path, mischief: str, kinds: set[str]
) -> None:
    bots = [hostile(tmp_path, mischief), "arena bot random", PY_BOT, "arena bot random"]
    data, _ = play(tmp_path, "whist", bots, "--move-ms", "300", "--bank-ms", "300")
    assert faults(data, 0) and faults(data, 0) <= kinds, data["seats"][0]
    for seat in (1, 2, 3):
        assert faults(data, seat) == set(), data["seats"][seat]
    details = " ".join(f["detail"] for f in data["seats"][0]["faults"])
    if mischief == "oversize":
        assert f"over {MAX_LINE} bytes" in details
    if mischief == "malformed":
        assert "malformed line" in details


@pytest.mark.slow
def test_output_after_the_end_is_reported_and_harms_nothing(tmp_path: Path) -> None:
    bots = [hostile(tmp_path, "after_end"), "arena bot random", PY_BOT, "arena bot random"]
    data, done = play(tmp_path, "whist", bots)
    assert_clean(data)
    assert "stdio bot wrote after its stream ended" in done.stderr


def test_stdio_without_a_command_is_one_line(tmp_path: Path) -> None:
    error = arena_error("match", "tennis", "--no-sandbox", "--bot", "stdio: ", "--bot", "x")
    assert error == "arena: error: stdio: needs a command, e.g. stdio:./my-bot"


@pytest.mark.parametrize("language", ["python", "go"])
def test_replay_ask_takes_a_stdio_bot_through_its_match(
    tmp_path: Path, language: str, request: pytest.FixtureRequest
) -> None:
    # Seeded by its seat's seed (Python: ARENA_SEED; Go: MatchStart.botSeed), the random stdio
    # bot makes the same choices when replay ask takes it through the whole match again.
    bot = PY_BOT if language == "python" else f"stdio:{request.getfixturevalue('go_stdio_bot')}"
    play(tmp_path, "whist", [bot] * 4, "--option", "points_to_win=1")
    (record,) = (tmp_path / "out").glob("*.jsonl.gz")
    argv = [ARENA, "replay", "ask", str(record), "--replay-all", "--seat", "0", "--no-sandbox"]
    done = subprocess.run(
        [*argv, "--bot", bot], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "0 differ" in done.stdout, done.stdout
