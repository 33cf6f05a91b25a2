"""``arena replay ask``: a recorded decision put to a real bot process over the real protocol."""

from __future__ import annotations

import hashlib
import json
import os
import random
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from arena.cli.main import main
from arena.records.ask import ask
from arena.records.format import Recorder, match_header, read_record, write_record
from arena.seeds import seat_seed
from engine import get_game
from tests.arena.run_arena import arena_error

#: Every test here starts real bot processes: the slow tier (pytest -m slow).
pytestmark = pytest.mark.slow

#: A bot speaking the protocol with nothing but grpc and arena.protocol.codec. Its choice is a
#: hash of the observation text and legal actions it is sent, so it answers the recorded action
#: only if it is sent exactly what the seat was sent in the match. ``--text`` answers by text,
#: ``--wrong`` another action, ``--illegal`` an out-of-range index; ``--mute`` never answers;
#: ``--crash`` exits at once; ``--report FILE`` writes what it received before answering;
#: ``--batch`` asks for batched events and no JSON rendering (Hello.batch_events, omit_json).
HASH_BOT = """
import hashlib, json, os, queue, sys, time
import grpc
from arena.protocol import codec
from cardarena import codec as bot_codec
from cardarena import messages
from cardarena._pb import arena_pb2_grpc as pb_grpc

args = sys.argv[1:]
report = args.pop(args.index("--report") + 1) if "--report" in args else None
batch = "--batch" in args
mode = next((a for a in args if a not in ("--report", "--batch")), "")
if mode == "--crash":
    print("crashing on purpose", flush=True)
    sys.exit(3)

def choose(text, legal):
    digest = hashlib.sha256((text + "|" + " ".join(legal)).encode()).hexdigest()
    return int(digest, 16) % len(legal)

out = queue.SimpleQueue()
token = os.environ["ARENA_TOKEN"]
hello = messages.Hello("hashbot", "1.0", token, batch_events=batch, omit_json=batch)
out.put(bot_codec.hello_to_proto(hello))

def outgoing():
    while (msg := out.get()) is not None:
        yield msg

stub = pb_grpc.ArenaStub(grpc.insecure_channel(os.environ["ARENA_ADDRESS"]))
seen = []
received = []
for msg in stub.Play(outgoing()):
    m = bot_codec.proto_to_plain(msg)
    seen.append(type(m).__name__)
    if isinstance(m, messages.EventInfo):
        received.append({"seq": m.seq, "kind": m.kind, "data": m.data, "private": m.private})
    if isinstance(m, messages.MatchStart):
        received.append({"start": m.seats, "seed": m.bot_seed, "game": m.game})
    if isinstance(m, messages.Decision):
        for e in m.events:  # (batch) they happened just before the request, in this order
            received.append({"seq": e.seq, "kind": e.kind, "data": e.data, "private": e.private})
        if report:  # before answering: the arena stops the bot once it has its answer
            with open(report, "w") as f:
                seed = os.environ["ARENA_SEED"]
                json.dump({"kinds": seen, "received": received, "seed": seed}, f)
        if mode == "--mute":
            time.sleep(60)  # mute on purpose: it never answers
        legal = [a.text for a in m.legal]
        index = choose(m.text, legal)
        if mode == "--wrong":
            index = (index + 1) % len(legal)
        if mode == "--illegal":
            index = len(legal) + 5
        if mode == "--text":
            out.put(bot_codec.answer_to_proto(m.request_id, text=legal[index]))
        else:
            out.put(bot_codec.answer_to_proto(m.request_id, index=index))
    elif isinstance(m, (messages.MatchEnd, messages.Rejected)):
        break
out.put(None)
"""


def hash_choice(text: str, legal: list[str]) -> int:
    digest = hashlib.sha256((text + "|" + " ".join(legal)).encode()).hexdigest()
    return int(digest, 16) % len(legal)


@pytest.fixture(scope="module")
def bot(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("bot") / "hashbot.py"
    path.write_text(HASH_BOT)
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(path))}"


def hash_bot_record(path: Path, game: str, players: int | None, seed: int) -> Path:
    """A match where every seat played the hash bot's strategy, recorded as the arena does."""
    g = get_game(game)
    config = g.configure(
        players, {"points_to_win": "1", "games_per_rubber": "1"} if game == "whist" else {}
    )
    state = g.new_match(config, seed)
    recorder = Recorder(state)
    while (seat := state.to_move) is not None:
        legal = state.legal_actions()
        index = hash_choice(state.observation(seat).render(), [a.text for a in legal])
        recorder.decision(seat, len(legal), legal[index].text, 1.0)
        state.apply(legal[index])
    recorder.sync()
    result = state.result()
    assert result is not None
    bots = [("hashbot", "1.0")] * state.num_seats
    time_control = {"move_ms": 500, "bank_ms": 5000}
    header = match_header(f"hash-{game}-{seed}", g, config, seed, bots, time_control, "lenient")
    write_record(path, header, recorder.entries, {**result.to_dict(), "faults": []})
    return path


@pytest.mark.parametrize(("game", "players"), [("whist", None), ("tennis", 2)])
def test_ask_gives_the_same_choice_the_bot_made_in_the_match(
    tmp_path: Path, bot: str, game: str, players: int | None
) -> None:
    record = hash_bot_record(tmp_path / f"{game}.jsonl.gz", game, players, seed=21)
    rec = read_record(record)
    decisions = [e for e in rec.entries if e["type"] == "decision"]
    rng = random.Random(4)
    for at in sorted(rng.sample(range(len(decisions)), 3)):
        outcome = ask(rec, at, bot, timeout=20)
        assert outcome.position.recorded == decisions[at]["action"]
        assert outcome.same, (at, outcome)
        assert outcome.problem is None and outcome.bot == "hashbot 1.0"


def test_cli_prints_both_answers_and_exit_status(
    tmp_path: Path, bot: str, capsys: pytest.CaptureFixture[str]
) -> None:
    record = hash_bot_record(tmp_path / "whist.jsonl.gz", "whist", None, seed=3)
    decisions = [e for e in read_record(record).entries if e["type"] == "decision"]
    assert (
        main(["replay", "ask", str(record), "--at", "5", "--no-sandbox", "--bot", f"{bot} --text"])
        == 0
    )
    out = capsys.readouterr().out
    recorded = decisions[5]["action"]
    assert f"recorded: {recorded}" in out
    assert f"bot:      {recorded}  (text '{recorded}'," in out and "same as recorded" in out
    assert "decision 5 of" in out and "You are" in out  # the position is shown

    assert (
        main(["replay", "ask", str(record), "--at", "5", "--no-sandbox", "--bot", f"{bot} --wrong"])
        == 1
    )
    out = capsys.readouterr().out
    assert "DIFFERENT from the record" in out and f"recorded: {recorded}" in out

    assert (
        main(
            ["replay", "ask", str(record), "--at", "5", "--no-sandbox", "--bot", f"{bot} --illegal"]
        )
        == 1
    )
    assert "index out of range" in capsys.readouterr().out


@pytest.mark.parametrize("batch", [False, True])
def test_the_bot_is_sent_what_its_seat_saw_and_its_seat_seed(
    tmp_path: Path, bot: str, batch: bool
) -> None:
    record = hash_bot_record(tmp_path / "whist.jsonl.gz", "whist", None, seed=3)
    rec = read_record(record)
    at = 6
    report = tmp_path / "received.json"
    flags = " --batch" if batch else ""
    outcome = ask(rec, at, f"{bot}{flags} --report {shlex.quote(str(report))}", timeout=20)
    assert outcome.same
    got = json.loads(report.read_text())
    seat = outcome.position.seat
    kinds = got["kinds"]
    assert kinds[:2] == ["Welcome", "MatchStart"] and kinds[-1] == "Decision"
    # Batched, the events ride in the request (Hello.batch_events); else each comes alone.
    assert set(kinds[2:-1]) == (set() if batch else {"EventInfo"})
    start = got["received"][0]
    assert start["start"] == [seat] and start["game"] == "whist"
    # The seed of that seat in that match, as `arena match` gives it to the bot.
    assert start["seed"] == seat_seed(3, seat) == int(got["seed"])
    # Every event the seat could see before decision `at`, in order, and nothing else.
    events = [e for e in got["received"][1:]]
    state = outcome.position.state
    # Numbered over what the seat may see, as the arena numbers them (docs/protocol.md).
    visible = list(enumerate(e for e in state.events if e.visible_to(seat)))
    assert [(e["seq"], e["kind"]) for e in events] == [(i, e.kind) for i, e in visible]
    deals = [e for e in events if e["kind"] == "deal"]
    assert len(deals) == 1 and deals[0]["private"] and deals[0]["data"]["seat"] == seat


def _error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    # Unsandboxed: the test's bot lives in a temporary directory no box would show it.
    assert main(["replay", "ask", "--no-sandbox", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and captured.err.startswith("arena: error: ")
    return captured.err


def test_bot_failures_and_bad_input_are_one_line_errors(
    tmp_path: Path, bot: str, capsys: pytest.CaptureFixture[str]
) -> None:
    record = hash_bot_record(tmp_path / "whist.jsonl.gz", "whist", None, seed=3)
    total = sum(1 for _ in read_record(record).decisions())
    err = _error(capsys, str(record), "--at", "0", "--bot", f"{bot} --crash")
    assert "exited with status 3 before answering" in err and "crashing on purpose" in err
    err = _error(capsys, str(record), "--at", "0", "--bot", f"{bot} --mute", "--timeout", "1.5")
    assert "did not answer within 1.5 s" in err
    err = _error(capsys, str(record), "--at", str(total), "--bot", bot)
    assert "out of range" in err and f"{total} decisions" in err
    assert "No such file" in _error(
        capsys, str(tmp_path / "nope.jsonl.gz"), "--at", "0", "--bot", bot
    )
    err = _error(capsys, str(record), "--at", "0", "--bot", "/nonexistent/bot-command")
    assert "exited with status 127" in err


def test_ask_arena_bot_rules_on_a_record_of_arena_match(tmp_path: Path) -> None:
    # A real match over gRPC between `arena bot rules` processes; the whist rules bot is a pure
    # function of what it is sent, so asked again it must choose as it did in the match.
    arena = str(Path(sys.executable).parent / "arena")
    rules = "arena bot rules"
    proc = subprocess.run(
        [arena, "match", "whist", "--option", "points_to_win=1", "--option", "games_per_rubber=1"]
        + ["--bot", rules] * 4
        + ["--seed", "8", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    (record,) = tmp_path.glob("*.jsonl.gz")
    rec = read_record(record)
    decisions = [e for e in rec.entries if e["type"] == "decision"]
    real_choices = [i for i, d in enumerate(decisions) if d["legal"] > 1]
    for at in (real_choices[0], real_choices[len(real_choices) // 2]):
        outcome = ask(rec, at, rules, timeout=30)
        assert outcome.bot.startswith("rules")
        assert outcome.action is not None and outcome.action.text == decisions[at]["action"]


FAILING_SDK_BOT = """
import sys
from cardarena.client import run_bot
from cardarena.bot import Bot

class Failing(Bot):
    name = "failing"
    def choose(self, game, observation, legal):
        print("thinking about", len(legal), "moves", file=sys.stderr, flush=True)
        raise ValueError("my strategy has a bug")

run_bot(Failing())
"""


def _ask_failing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str
) -> tuple[int, str, Path]:
    """Decision 5 of a whist record put to the SDK bot ``source``: the exit status, the output
    and the bot's file."""
    record = hash_bot_record(tmp_path / "whist.jsonl.gz", "whist", None, seed=3)
    bot = tmp_path / "failing.py"
    bot.write_text(source)
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(bot))}"
    status = main(["replay", "ask", str(record), "--at", "5", "--no-sandbox", "--bot", command])
    return status, capsys.readouterr().out, bot


def test_the_bot_output_is_shown_with_its_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A strategy that raises still answers (the SDK falls back to the first action): without
    # its output, the failure would look like a choice.
    _, out, _ = _ask_failing(tmp_path, capsys, FAILING_SDK_BOT)
    assert "bot output (last " in out
    shown = out.split("bot output (last ", 1)[1]
    assert "thinking about" in shown and "my strategy has a bug" in shown
    assert "bot.choose failed; playing the first legal action" in shown


def test_the_bot_runs_sandboxed_as_in_arena_match_unless_told_not_to(tmp_path: Path) -> None:
    """`arena replay ask` boxes the bot as `arena match` boxes a seat's: uid nobody, and nothing
    of the machine outside its directory (the current one), such as a file beside it;
    --no-sandbox runs it as a plain process, which sees both."""
    (tmp_path / "records").mkdir()
    record = hash_bot_record(tmp_path / "records" / "whist.jsonl.gz", "whist", None, seed=3)
    secret = tmp_path / "host-only.txt"
    secret.write_text("seen\n")
    bot_dir = tmp_path / "bot"
    bot_dir.mkdir()
    # What only a boxed bot reports: its uid, and whether the host's file exists for it.
    probe = f"echo uid=$(id -u) file=$(cat {shlex.quote(str(secret))} || echo hidden) >&2"
    command = f"sh -c {shlex.quote(probe)}; exec arena bot rules"
    arena = str(Path(sys.executable).parent / "arena")

    def asked(*flags: str) -> str:
        done = subprocess.run(
            [arena, "replay", "ask", str(record), "--at", "5", "--bot", command, *flags],
            cwd=bot_dir,
            capture_output=True,
            text=True,
            timeout=60,
        )
        # 0 or 1: the rules bot chose as the hash bot did, or not.
        assert done.returncode in (0, 1), done.stderr
        assert "Traceback" not in done.stderr
        return done.stdout.split("bot output (last ", 1)[1]

    assert "uid=65534 file=hidden" in asked()
    assert f"uid={os.getuid()} file=seen" in asked("--no-sandbox")


def test_a_bot_outside_its_sandbox_is_one_line_before_it_starts(tmp_path: Path) -> None:
    """A bot command this machine can run but whose box would not show it (a script outside the
    current directory) is refused in one line that names the sandbox and the way out."""
    (tmp_path / "records").mkdir()
    record = hash_bot_record(tmp_path / "records" / "whist.jsonl.gz", "whist", None, seed=3)
    script = tmp_path / "elsewhere" / "bot.sh"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\nexec arena bot rules\n")
    script.chmod(0o755)
    bot_dir = tmp_path / "bot"
    bot_dir.mkdir()
    line = arena_error("replay", "ask", str(record), "--at", "5", "--bot", str(script), cwd=bot_dir)
    assert f"--bot '{script}': {script} is not found inside the sandbox" in line, line
    assert "bubblewrap binds only" in line and "--no-sandbox" in line, line


#: Raises in a helper of its own file, below the SDK's frame: its JSON log line is far longer
#: than a line of output shown, and the author's frames come last.
DEEP_FAILING_BOT = """
from cardarena.client import run_bot
from cardarena.bot import Bot


def deeper(legal):
    raise KeyError("the frame in my own file")


def plan(legal):
    return deeper(legal)


class Failing(Bot):
    name = "failing"
    def choose(self, game, observation, legal):
        return plan(legal)

run_bot(Failing())
"""


def test_the_bot_output_shows_a_traceback_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, bot = _ask_failing(tmp_path, capsys, DEEP_FAILING_BOT)
    # The traceback unfolded in the bot's output, down to the author's own frames (a line of
    # output is cut at 300 characters, and the SDK's log line held the traceback on one line).
    shown = out.split("bot output (last ", 1)[1]
    assert f'File "{bot}", line 11, in plan' in shown
    assert f'File "{bot}", line 7, in deeper' in shown
    assert "KeyError: 'the frame in my own file'" in shown.splitlines()[-1]


def test_a_strategy_that_raised_is_reported_and_the_status_is_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # At decision 5 the SDK's fallback, the first action, is the recorded one: it used to print
    # "same as recorded" and exit 0.
    status, out, _ = _ask_failing(tmp_path, capsys, DEEP_FAILING_BOT)
    assert "(index 0, " in out and "- same as recorded" in out
    assert status == 1, out
    answer = out.split("- same as recorded\n", 1)[1]
    assert answer.startswith(
        "the strategy FAILED at decision 5: the SDK played the first legal action, so this "
        "answer is not the strategy's (its traceback: in the bot output below)\n"
        "  raised KeyError: 'the frame in my own file': decision 5\n"
        "bot output (last "
    ), out
