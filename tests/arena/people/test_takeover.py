"""``arena replay play``: a seat taken over at a recorded decision and played on over the real
arena (server, referee, bot processes); the new record verifies, names its branch and starts
with the record's decisions. Its usage errors, each one line; ``verify`` holds a branched
record's header and its replayed start to what the referee writes."""

from __future__ import annotations

import functools
import hashlib
import sys
from pathlib import Path

import pytest
import trio

from arena.cli.main import main
from arena.match import play_commands
from arena.records.format import RecordError, read_record, write_record
from arena.records.replay import verify
from arena.server import Branch
from engine import ConfigError
from tests.arena.people.running import RULES, SHORT_WHIST

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
STDIO_BOT = f"stdio:{sys.executable} {ROOT / 'reference_bots' / 'stdio' / 'random_bot.py'}"


def _match(out: Path, bots: list[str], capsys: pytest.CaptureFixture[str]) -> Path:
    args = [a for b in bots for a in ("--bot", b)]
    assert main(["match", "whist", *args, *SHORT_WHIST, "--seed", "3", "--out", str(out)]) == 0
    (record,) = out.glob("*.jsonl.gz")
    capsys.readouterr()
    return record


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("original")
    args = ["--bot", RULES, "--bot", "arena bot random", "--bot", RULES, "--bot", RULES]
    assert main(["match", "whist", *args, *SHORT_WHIST, "--seed", "3", "--out", str(out)]) == 0
    (record,) = out.glob("*.jsonl.gz")
    return record


#: A bot that says, on its first decision, which plays of the match it was sent before it.
WITNESS = """
import sys
from cardarena import Bot, run_bot

class Witness(Bot):
    name = "witness"
    plays = []
    asked = False

    def on_event(self, match_id, kind, data, private):
        if kind == "play" and not self.asked:
            self.plays.append(f"{data['seat']}:{data['card']}")

    def choose(self, game, observation, legal):
        if not self.asked:
            self.asked = True
            print("before my first decision:", " ".join(self.plays), file=sys.stderr, flush=True)
        return 0

run_bot(Witness())
"""


def _decisions(path: Path) -> list[tuple[int, str]]:
    return [(e["seat"], e["action"]) for _, e in read_record(path).decisions()]


def test_a_bot_takes_a_seat_over_and_plays_to_the_end(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    at = 10
    args = ["replay", "play", str(recorded), "--at", str(at), "--seat", "E"]
    assert main([*args, "--bot", RULES, "--out", str(tmp_path), "--no-sandbox"]) == 0
    out = capsys.readouterr().out
    original = read_record(recorded)
    assert f"branched from {original.header['match_id']} at decision {at}: seat 1 (E)" in out
    (new,) = tmp_path.glob("*.jsonl.gz")
    assert f"record: {new}" in out
    assert verify(new) > at
    record = read_record(new)
    sha = hashlib.sha256(recorded.read_bytes()).hexdigest()
    assert record.header["branched_from"] == {
        "match_id": original.header["match_id"],
        "sha256": sha,
        "decision": at,
    }
    assert record.header["seed"] == original.header["seed"]
    assert _decisions(new)[:at] == _decisions(recorded)[:at]
    # Seat E was the random bot's; now the rules bot's, the others' the record's own.
    assert [s["bot_name"] for s in record.header["seats"]] == ["rules"] * 4
    prefix = [e for _, e in record.decisions()][:at]
    assert all(e["ms"] == 0 and not e["fallback"] for e in prefix)
    assert record.result["reason"] == "normal"
    # `arena replay show` says where the record branched from, before its frames.
    assert main(["replay", "show", str(new), "--at", str(at)]) == 0
    shown = capsys.readouterr().out.splitlines()
    assert shown[0] == (
        f"branched from {original.header['match_id']} at decision {at} (record sha256 {sha})"
    )
    assert main(["replay", "show", str(recorded), "--at", "0"]) == 0
    assert "branched from" not in capsys.readouterr().out


def test_the_seat_taken_over_is_sent_the_plays_before_it(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its own seat's among them (docs/protocol.md): the referee's decisions are played like any."""
    bot = tmp_path / "witness.py"
    bot.write_text(WITNESS)
    at = 9  # whist's decisions are all plays; seat E made two of these
    args = ["replay", "play", str(recorded), "--at", str(at), "--seat", "1"]
    out = tmp_path / "out"
    assert main([*args, "--bot", f"{sys.executable} {bot}", "--out", str(out), "--no-sandbox"]) == 0
    capsys.readouterr()
    (log,) = (out / "logs").glob("*.seat1.log")
    said = next(line for line in log.read_text().splitlines() if "before my first" in line)
    plays = [f"{seat}:{action.split(':')[1]}" for seat, action in _decisions(recorded)[:at]]
    # The record's plays first; then any the others made after K before seat E's turn.
    assert said.split(": ", 1)[1].split()[:at] == plays
    assert sum(p.startswith("1:") for p in plays) == 2


def test_usage_errors_are_one_line(recorded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    play = ["replay", "play", str(recorded)]
    cases = {
        ("--at", "999", "--seat", "0", "--bot", RULES): "--at 999 is out of range",
        ("--at", "3", "--seat", "7", "--human"): "unknown seat '7' (seats: 0=N, 1=E, 2=S, 3=W)",
        ("--at", "3", "--seat", "0", "--human", "--bot-for", "0=x"): "seat 0 is the one taken",
        ("--at", "3", "--seat", "0", "--human", "--bot-for", "5=x"): "has seats 0 to 3",
    }
    for args, message in cases.items():
        assert main([*play, *args]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err
    with pytest.raises(SystemExit):
        main([*play, "--at", "-1", "--seat", "0", "--human"])
    assert "--at" in capsys.readouterr().err


def test_a_seat_whose_bot_cannot_be_started_needs_its_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = _match(tmp_path / "o", [RULES, STDIO_BOT, RULES, RULES], capsys)
    play = ["replay", "play", str(record), "--at", "5", "--seat", "0", "--bot", RULES]
    assert main(play) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "seat 1 (E: " in err and "--bot-for SEAT=CMD" in err, err
    out = tmp_path / "b"
    assert main([*play, "--bot-for", f"1={STDIO_BOT}", "--out", str(out), "--no-sandbox"]) == 0
    (new,) = out.glob("*.jsonl.gz")
    assert verify(new) > 5


def test_verify_holds_a_branch_to_what_the_referee_writes(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["replay", "play", str(recorded), "--at", "4", "--seat", "0", "--bot", RULES]
    assert main([*args, "--out", str(tmp_path), "--no-sandbox"]) == 0
    (new,) = tmp_path.glob("*.jsonl.gz")
    record = read_record(new)

    def rewritten(header: dict[str, object], entries: list[dict[str, object]]) -> str:
        bad = tmp_path / "bad.jsonl.gz"
        write_record(bad, header, entries, record.result)
        with pytest.raises(RecordError) as err:
            verify(bad)
        return str(err.value)

    header = {k: v for k, v in record.header.items() if k != "schema"}
    wrong = {**header, "branched_from": {"match_id": "m", "decision": 4}}
    assert "branched_from is not {match_id, sha256, decision}" in rewritten(wrong, record.entries)
    first = next(i for i, _ in record.decisions())
    slow = [dict(e, ms=5.0) if i == first else e for i, e in enumerate(record.entries)]
    assert "decision 0 of the branch's start is not the referee's" in rewritten(header, slow)
    branch = dict(record.header["branched_from"], decision=10_000)
    instant = [dict(e, ms=0.0) if e["type"] == "decision" else e for e in record.entries]
    far = {**header, "branched_from": branch}
    assert "fewer than the 10000 its branch started with" in rewritten(far, instant)


def test_the_referee_refuses_a_branch_its_match_cannot_play(tmp_path: Path) -> None:
    """At registration, on the real server, before any bot starts."""
    branch = Branch("elsewhere", "0" * 64, 1, ("play:ZZ",))
    play = functools.partial(
        play_commands, "whist", [RULES] * 4, seed=1, out_dir=tmp_path / "out", branch=branch
    )
    with pytest.raises(ConfigError, match=r"the branch's decision 0 \('play:ZZ'\) is not legal"):
        trio.run(play)
    assert not list((tmp_path / "out").glob("**/*.jsonl.gz"))
