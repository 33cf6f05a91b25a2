"""``arena replay ask --replay-all``: real bot processes taken through a whole recorded match."""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.cli.main import main
from arena.records.ask import ask
from arena.records.format import Recorder, match_header, read_record, write_record
from arena.seeds import seat_seed
from engine import MatchState, get_game

#: Every test here starts real bot processes: the slow tier (pytest -m slow).
pytestmark = pytest.mark.slow

ARENA = str(Path(sys.executable).parent / "arena")

#: A bot that keeps state: its choice hashes the observation text and legal actions with how
#: many decisions it has answered and how many events it has been sent in this match, so it
#: answers the recorded action only when taken through the match from the start. Hostile on
#: request: ``--crash-at N`` exits, ``--mute-at N`` never answers, ``--garbage-at N`` sends an
#: empty message, at its N-th decision (from 0). ``--batch`` asks for batched events;
#: ``--report FILE`` writes what it was sent once the match ends.
COUNT_BOT = """
import hashlib, json, os, queue, sys, time
import grpc
from cardarena import codec, messages
from cardarena._pb import arena_pb2, arena_pb2_grpc

args = sys.argv[1:]

def flag(name):
    return int(args[args.index(name) + 1]) if name in args else None

crash_at, mute_at, garbage_at = flag("--crash-at"), flag("--mute-at"), flag("--garbage-at")
report = args[args.index("--report") + 1] if "--report" in args else None
batch = "--batch" in args

def choose(text, legal, decided, seen):
    key = f"{text}|{' '.join(legal)}|{decided}|{seen}"
    return int(hashlib.sha256(key.encode()).hexdigest(), 16) % len(legal)

out = queue.SimpleQueue()
hello = messages.Hello("countbot", "2.0", os.environ["ARENA_TOKEN"], batch_events=batch)
out.put(codec.hello_to_proto(hello))

def outgoing():
    while (msg := out.get()) is not None:
        yield msg

stub = arena_pb2_grpc.ArenaStub(grpc.insecure_channel(os.environ["ARENA_ADDRESS"]))
seqs, start, end, decided = [], None, None, 0
for raw in stub.Play(outgoing()):
    m = codec.proto_to_plain(raw)
    if isinstance(m, messages.EventInfo):
        seqs.append(m.seq)
    elif isinstance(m, messages.MatchStart):
        start = {"match_id": m.match_id, "seats": list(m.seats), "seed": m.bot_seed}
    elif isinstance(m, messages.Decision):
        seqs.extend(e.seq for e in m.events)
        if decided == crash_at:
            print("crashing on purpose at", decided, flush=True)
            os._exit(3)
        if decided == mute_at:
            time.sleep(60)
        if decided == garbage_at:
            out.put(arena_pb2.BotMessage())
            continue
        legal = [a.text for a in m.legal]
        index = choose(m.text, legal, decided, len(seqs))
        out.put(codec.answer_to_proto(m.request_id, index=index))
        decided += 1
    elif isinstance(m, messages.MatchEnd):
        end = m.result.summary
        break
    elif isinstance(m, messages.Rejected):
        break
if report:
    with open(report, "w") as f:
        json.dump({"seqs": seqs, "start": start, "end": end, "decided": decided}, f)
out.put(None)
"""


def count_choice(text: str, legal: list[str], decided: int, seen: int) -> int:
    key = f"{text}|{' '.join(legal)}|{decided}|{seen}"
    return int(hashlib.sha256(key.encode()).hexdigest(), 16) % len(legal)


@pytest.fixture(scope="module")
def bot(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("bot") / "countbot.py"
    path.write_text(COUNT_BOT)
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(path))}"


def count_bot_record(path: Path, game: str, players: int | None, seed: int) -> Path:
    """A match where every seat played the counting bot's strategy, recorded as the arena does."""
    decided: dict[int, int] = {}

    def pick(state: MatchState, seat: int, legal: list[str]) -> int:
        seen = len(state.visible_events(seat))
        text = state.observation(seat).render()
        decided[seat] = decided.get(seat, 0) + 1
        return count_choice(text, legal, decided[seat] - 1, seen)

    return played_record(path, game, players, seed, pick, f"count-{game}-{seed}", "countbot")


def played_record(
    path: Path,
    game: str,
    players: int | None,
    seed: int,
    pick: Callable[[MatchState, int, list[str]], int],
    match_id: str,
    bot: str,
) -> Path:
    """A match where every seat played ``pick`` (the index of its choice), recorded as the arena
    records it."""
    g = get_game(game)
    config = g.configure(
        players, {"points_to_win": "1", "games_per_rubber": "1"} if game == "whist" else {}
    )
    state = g.new_match(config, seed)
    recorder = Recorder(state)
    while (seat := state.to_move) is not None:
        legal = state.legal_actions()
        index = pick(state, seat, [a.text for a in legal])
        recorder.decision(seat, len(legal), legal[index].text, 1.0)
        state.apply(legal[index])
    recorder.sync()
    result = state.result()
    assert result is not None
    bots = [(bot, "2.0")] * state.num_seats
    time_control = {"move_ms": 500, "bank_ms": 5000}
    header = match_header(match_id, g, config, seed, bots, time_control, "lenient")
    write_record(path, header, recorder.entries, {**result.to_dict(), "faults": []})
    return path


def _ask_all(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    # Unsandboxed: the test's bot lives in a temporary directory no box would show it.
    status = main(["replay", "ask", "--no-sandbox", "--replay-all", *args])
    return status, capsys.readouterr().out


@pytest.mark.parametrize(("game", "players"), [("whist", None), ("tennis", 2)])
def test_a_stateful_bot_agrees_with_its_record_only_when_replayed_whole(
    tmp_path: Path, bot: str, capsys: pytest.CaptureFixture[str], game: str, players: int | None
) -> None:
    record = count_bot_record(tmp_path / f"{game}.jsonl.gz", game, players, seed=11)
    rec = read_record(record)
    decisions = [e for e in rec.entries if e["type"] == "decision"]
    status, out = _ask_all(capsys, str(record), "--bot", bot)
    assert status == 0, out
    assert out.splitlines()[-1] == f"replay-all: {len(decisions)} decisions, 0 differ"
    # Asked cold, the same bot has answered nothing and differs at some later decision.
    later = [i for i, d in enumerate(decisions) if d["legal"] >= 3][-4:]
    assert any(not ask(rec, at, bot, timeout=20).same for at in later)


@pytest.mark.parametrize("batch", [False, True])
def test_the_bot_is_sent_its_seats_whole_match(tmp_path: Path, bot: str, batch: bool) -> None:
    record = count_bot_record(tmp_path / "whist.jsonl.gz", "whist", None, seed=4)
    rec = read_record(record)
    report = tmp_path / "report.json"
    flags = " --batch" if batch else ""
    command = [ARENA, "replay", "ask", str(record), "--replay-all", "--seat", "E", "--no-sandbox"]
    done = subprocess.run(
        [*command, "--bot", f"{bot}{flags} --report {shlex.quote(str(report))}"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    seat = 1
    mine = [e for e in rec.entries if e["type"] == "decision" and e["seat"] == seat]
    assert done.stdout.splitlines()[-1] == f"replay-all: {len(mine)} decisions, 0 differ"
    got = json.loads(report.read_text())
    # The match's own MatchStart (its id, the seat, the seat's seed), every event the seat saw
    # in order, numbered as the arena numbers them, and the recorded result at the end.
    assert got["start"] == {"match_id": rec.header["match_id"], "seats": [seat]} | {
        "seed": seat_seed(4, seat)
    }
    visible = [
        e for e in rec.entries if e["type"] == "event" and (e["to"] is None or seat in e["to"])
    ]
    assert got["seqs"] == list(range(len(visible)))
    assert got["decided"] == len(mine) and got["end"] == rec.result["summary"]


def _random_record(tmp_path: Path) -> Path:
    proc = subprocess.run(
        [ARENA, "match", "whist", "--option", "points_to_win=1", "--option", "games_per_rubber=1"]
        + ["--bot", "arena bot random"] * 4
        + ["--seed", "5", "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    (record,) = (tmp_path / "out").glob("*.jsonl.gz")
    return record


def test_arena_bot_random_agrees_replayed_whole_and_rules_differs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `arena bot random` draws from a generator seeded per match from bot_seed: asked cold it
    # draws its first number at any decision, taken through the match it draws as it did.
    record = _random_record(tmp_path)
    rec = read_record(record)
    decisions = [e for e in rec.entries if e["type"] == "decision"]
    status, out = _ask_all(capsys, str(record), "--bot", "arena bot random")
    assert status == 0, out
    assert out.splitlines()[-1] == f"replay-all: {len(decisions)} decisions, 0 differ"
    many = sorted(range(len(decisions)), key=lambda i: -decisions[i]["legal"])[:4]
    assert any(not ask(rec, at, "arena bot random", timeout=30).same for at in many)

    # Another strategy on the same record, sandboxed as `arena match` runs it: each decision
    # where it differs is shown with the seat's view, and named in the summary.
    bot_dir = tmp_path / "bot"
    bot_dir.mkdir()
    done = subprocess.run(
        [ARENA, "replay", "ask", str(record), "--replay-all", "--bot", "arena bot rules"],
        cwd=bot_dir,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 1, done.stderr
    last = done.stdout.splitlines()[-1]
    found = re.fullmatch(r"replay-all: (\d+) decisions, (\d+) differs?: ([\d ]+)( …)?", last)
    assert found, last
    total, differ = int(found[1]), int(found[2])
    # The summary names the first 20, each with its block above.
    named = [int(n) for n in found[3].split()]
    assert total == len(decisions) and 0 < differ < total
    assert len(named) == min(differ, 20) and bool(found[4]) == (differ > 20)
    shown = [int(n) for n in re.findall(r"decision (\d+) of \d+, seat \w+ to move", done.stdout)]
    assert len(shown) == differ and sorted(shown)[: len(named)] == named
    for number in shown:
        block = done.stdout.split(f": decision {number} of {total},", 1)[1]
        recorded = decisions[number]["action"]
        assert f"recorded: {recorded}\n" in block.split("\n\n", 1)[0]
        assert "DIFFERENT from the record" in block.split("\n\n", 1)[0]
    for seat in "NESW":
        assert re.search(rf"^seat {seat}: 13 decisions, \d+ differs?", done.stdout, re.M)


def _error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["replay", "ask", "--no-sandbox", *args]) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and captured.err.startswith("arena: error: ")
    assert "Traceback" not in captured.err
    return captured.err


def test_a_hostile_bot_mid_replay_is_one_line_naming_the_decision(
    tmp_path: Path, bot: str, capsys: pytest.CaptureFixture[str]
) -> None:
    record = count_bot_record(tmp_path / "whist.jsonl.gz", "whist", None, seed=3)
    rec = read_record(record)
    # Seat W's sixth decision (its index 5 in the bot's count).
    west = [i for i, (_, d) in enumerate(rec.decisions()) if d["seat"] == 3][5]
    named = f"decision {west} (seat W)"
    args = (str(record), "--replay-all", "--seat", "W")
    err = _error(capsys, *args, "--bot", f"{bot} --crash-at 5")
    assert f"exited with status 3 before answering {named}" in err, err
    assert "crashing on purpose at 5" in err
    err = _error(capsys, *args, "--timeout", "1.5", "--bot", f"{bot} --mute-at 5")
    assert f"did not answer {named} within 1.5 s" in err, err
    err = _error(capsys, *args, "--bot", f"{bot} --garbage-at 5")
    assert f"sent garbage at {named}: empty message" in err, err
    err = _error(capsys, *args, "--bot", "/nonexistent/bot-command")
    assert "exited with status 127 before answering decision" in err, err


def test_replay_all_up_to_a_decision_and_bad_arguments(
    tmp_path: Path, bot: str, capsys: pytest.CaptureFixture[str]
) -> None:
    record = count_bot_record(tmp_path / "whist.jsonl.gz", "whist", None, seed=3)
    rec = read_record(record)
    decisions = [d for _, d in rec.decisions()]
    at = 30
    seat = decisions[at]["seat"]
    mine = sum(1 for d in decisions[: at + 1] if d["seat"] == seat)
    status, out = _ask_all(capsys, str(record), "--at", str(at), "--bot", bot)
    assert status == 0 and out.splitlines()[-1] == f"replay-all: {mine} decisions, 0 differ"

    assert "--at K" in _error(capsys, str(record), "--bot", bot)
    assert "--seat goes with --replay-all" in _error(
        capsys, str(record), "--at", "3", "--seat", "N", "--bot", bot
    )
    assert "unknown seat 'X'" in _error(
        capsys, str(record), "--replay-all", "--seat", "X", "--bot", bot
    )
    err = _error(capsys, str(record), "--replay-all", "--at", str(len(decisions)), "--bot", bot)
    assert "out of range" in err and f"{len(decisions)} decisions" in err


#: An SDK bot that plays the first legal action, but raises (in a helper of its own file) at its
#: 2nd and 5th decisions of the match: the SDK then plays the first legal action too, so its
#: answers all match a record of first actions, and only its log says it raised.
RAISING_BOT = """
from cardarena import Bot, run_bot


def plan(legal):
    raise ValueError(f"no plan for {len(legal)} moves")


class Raising(Bot):
    name = "raising"
    asked = 0

    def choose(self, game, observation, legal):
        self.asked += 1
        if self.asked in (2, 5):
            return plan(legal)
        return 0


run_bot(Raising())
"""


def first_action_record(path: Path, seed: int) -> Path:
    """A short whist match where every seat played its first legal action."""
    return played_record(path, "whist", None, seed, lambda *_: 0, f"first-{seed}", "raising")


def test_every_exception_the_bot_raised_is_reported_and_the_status_is_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Its answers all match the record: it used to print "N decisions, 0 differ" and exit 0.
    record = first_action_record(tmp_path / "whist.jsonl.gz", seed=2)
    rec = read_record(record)
    decisions = [d for _, d in rec.decisions()]
    bot = tmp_path / "raising.py"
    bot.write_text(RAISING_BOT)
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(bot))}"
    status, out = _ask_all(capsys, str(record), "--bot", command)
    assert status == 1, out
    # Each seat's 2nd and 5th decisions, numbered as in the match.
    raised = {
        seat: [i for i, d in enumerate(decisions) if d["seat"] == seat][1:5:3] for seat in range(4)
    }
    failed = sorted(n for numbers in raised.values() for n in numbers)
    last = out.splitlines()[-1]
    assert last == (
        f"replay-all: {len(decisions)} decisions, 0 differ, 8 failed: {' '.join(map(str, failed))}"
    ), out
    for seat, name in enumerate("NESW"):
        at = raised[seat]
        assert f"seat {name}: 13 decisions, 0 differ, 2 failed: {at[0]} {at[1]}\n" in out
        assert f"seat {name}: the strategy FAILED at 2 decisions" in out
    # Each exception with its decision and one-line summary; its traceback, whole, down to the
    # frame in the author's own file.
    assert "  raised ValueError: no plan for " in out
    assert re.search(r"^  raised ValueError: no plan for \d+ moves: decisions? [\d ]+$", out, re.M)
    assert out.count("  traceback at decision ") == 8  # each different one (the messages differ)
    assert f'File "{bot}", line 6, in plan' in out
    assert "ValueError: no plan for" in out.split("traceback at decision", 1)[1]
