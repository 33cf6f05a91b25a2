"""``arena replay show``: whole-table and seat views as text, stepping, and one-line errors."""

from __future__ import annotations

import gzip
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

from arena.cli.main import main
from arena.records.format import Recorder, match_header, read_record, write_record
from arena.records.view import load_replay, render_frame
from engine import JSON, get_game
from tests.arena.replay_truth import (
    GAMES,
    card_tokens,
    engine_steps,
    engine_views,
    hidden_now,
    make_record,
)


def tokens(text: str) -> set[str]:
    return set(card_tokens(text))


#: The seed of the recorded matches shown here.
SEED = 7


def show(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["replay", "show", *args]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    return captured.out


@pytest.fixture
def whist(tmp_path: Path) -> Path:
    return make_record(tmp_path, "whist", SEED)


@pytest.mark.parametrize("game", GAMES)
def test_a_seat_view_never_shows_what_only_other_seats_know(tmp_path: Path, game: str) -> None:
    players = 4 if game == "tennis" else None  # doubles: partners see each other's hands
    record = make_record(tmp_path, game, SEED, players)
    rep = load_replay(record)
    steps = engine_steps(record)
    views = [v for v, _ in steps]
    assert len(steps) == len(rep.frames)
    for k, frame in enumerate(rep.frames):
        for seat in range(rep.num_seats):
            text = render_frame(rep, frame, seat)
            leaked = hidden_now(*steps[k], seat) & tokens(text)
            assert not leaked, f"step {k}: seat {seat}'s view shows {sorted(leaked)}"
            if frame.seat is not None and frame.seat != seat:
                # Another seat's action text may hold a hidden card (a pass discard).
                assert f"chose {frame.action}" not in text
            # What the seat holds is there.
            assert views[k][seat].get("hand", []) == [] or " ".join(views[k][seat]["hand"]) in text


def test_seat_view_hides_the_other_deal_events(
    whist: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    entries = read_record(whist).entries
    deals = {e["seat"]: set(e["hand"]) for e in entries if e.get("kind") == "deal"}
    turn_up = next(e["card"] for e in entries if e.get("kind") == "turn_up")
    for seat in range(4):
        out = show(capsys, str(whist), "--at", "0", "--seat", str(seat))
        seen = tokens(out)
        assert deals[seat] <= seen
        for other in range(4):
            if other != seat:
                assert (deals[other] - {turn_up}) & seen == set()
        assert out.count(" deal hand=") == 1 and "(private)" in out


def test_seat_can_be_named(whist: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert show(capsys, str(whist), "--at", "3", "--seat", "s") == show(
        capsys, str(whist), "--at", "3", "--seat", "2"
    )


def test_whole_table_is_the_default_and_shows_every_hand(
    whist: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = show(capsys, str(whist), "--at", "0")
    assert out == show(capsys, str(whist), "--at", "0", "--all")
    assert "whole table" in out
    # All 52 cards are in the four hands before the first card is played.
    assert len(tokens(out)) == 52
    for seat, name in enumerate("NESW"):
        assert re.search(rf"^  {name}  hand: ", out, re.M), seat
    first = read_record(whist).entries
    action = next(e["action"] for e in first if e["type"] == "decision")
    assert f"chose {action}" in out
    assert "[to N]" in out  # the private deal events are shown, marked


def test_whole_match_at_once_ends_with_the_result(
    whist: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rec = read_record(whist)
    decisions = sum(1 for _ in rec.decisions())
    out = show(capsys, str(whist))
    assert out.count("=== whist ·") == decisions + 1
    assert f"end of match (after {decisions} decisions)" in out
    assert f"result: {rec.result['summary']}" in out
    # --at the number of decisions is the end frame.
    end = show(capsys, str(whist), "--at", str(decisions))
    assert "end of match" in end and rec.result["summary"] in end


def test_step_mode_reads_enter_back_jump_and_ends_on_eof(
    whist: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n\nb\n5\nwhat\n"))
    out = show(capsys, str(whist), "--step", "--seat", "1")
    shown = [int(n) for n in re.findall(r"· decision (\d+) of", out)]
    # 0, Enter -> 1, Enter -> 2, b -> 1, 5 -> 5, an unknown command re-shows 5, EOF ends.
    assert shown == [0, 1, 2, 1, 5, 5]
    assert "unknown command 'what'" in out
    assert out.endswith("> \n")


def test_step_mode_starts_at_and_quits(
    whist: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("q\n\n"))
    out = show(capsys, str(whist), "--step", "--at", "7")
    assert re.findall(r"· decision (\d+) of", out) == ["7"]


def test_tennis_shows_the_court_and_the_ball(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = make_record(tmp_path, "tennis", SEED)
    views = engine_views(record)
    k = next(i for i, v in enumerate(views) if v[0]["ball_area"])
    area = views[k][0]["ball_area"]
    for args in (["--all"], ["--seat", "0"], ["--seat", "1"]):
        out = show(capsys, str(record), "--at", str(k), *args)
        lines = out.splitlines()
        marked = [i for i, line in enumerate(lines) if "(o)" in line]
        net = next(i for i, line in enumerate(lines) if line.endswith(" net"))
        assert len(marked) == 1 and f"{area} (o)" in lines[marked[0]]
        assert (marked[0] < net) == (views[k][0]["ball_side"] == 1)


def _error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["replay", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and captured.err.startswith("arena: error: ")
    return captured.err


def test_bad_input_is_one_line_and_non_zero(
    whist: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "No such file" in _error(capsys, "show", str(tmp_path / "missing.jsonl.gz"))
    plain = tmp_path / "plain.jsonl.gz"
    plain.write_text('{"type": "header"}\n')
    assert "not a gzip file" in _error(capsys, "show", str(plain))
    decisions = sum(1 for _ in read_record(whist).decisions())
    err = _error(capsys, "show", str(whist), "--at", str(decisions + 1))
    assert "out of range" in err and f"{decisions} decisions" in err
    assert "out of range" in _error(capsys, "show", str(whist), "--at", "-1")
    err = _error(capsys, "show", str(whist), "--seat", "X")
    assert "unknown seat 'X'" in err and "0=N" in err
    assert "unknown seat '4'" in _error(capsys, "show", str(whist), "--seat", "4")


def test_tampered_record_fails_in_a_real_process_without_traceback(
    whist: Path, tmp_path: Path
) -> None:
    lines = gzip.decompress(whist.read_bytes()).split(b"\n")
    i = next(n for n, line in enumerate(lines) if b'"kind":"play"' in line)
    lines[i] = lines[i].replace(b'"kind":"play"', b'"kind":"plays"')
    tampered = tmp_path / "tampered.jsonl.gz"
    tampered.write_bytes(gzip.compress(b"\n".join(lines)))
    for sub in (["show"], ["html", "-o", str(tmp_path / "t.html")]):
        proc = subprocess.run(
            [sys.executable, "-m", "arena.cli", "replay", sub[0], str(tampered), *sub[1:]],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 2
        assert proc.stdout == ""
        assert proc.stderr.count("\n") == 1 and "hash chain broken" in proc.stderr
        assert "Traceback" not in proc.stderr


def faulty_record(path: Path) -> Path:
    """A whist match where E times out twice (the referee plays its fallback), then forfeits."""
    game = get_game("whist")
    config = game.configure(None, {})
    state = game.new_match(config, 4)
    recorder = Recorder(state)
    faults: list[JSON] = []
    strikes = 0
    while (seat := state.to_move) is not None:
        legal = state.legal_actions()
        if seat == 1:
            strikes += 1
            recorder.fault(seat, "timeout", f"no answer within 200 ms (strike {strikes})")
            faults.append({"seat": seat, "kind": "timeout", "detail": "no answer"})
            if strikes == 3:
                state.forfeit(seat, "timeout: no answer within 200 ms (3 strikes)")
                break
            action = state.fallback_action()
            recorder.decision(seat, len(legal), action.text, 200.0, fallback=True)
        else:
            action = legal[-1]
            recorder.decision(seat, len(legal), action.text, 1.0)
        state.apply(action)
    recorder.sync()
    result = state.result()
    assert result is not None and result.reason == "forfeit"
    bots = [("b", "1")] * 4
    header = match_header(
        "faulty", game, config, 4, bots, {"move_ms": 200, "bank_ms": 0}, "lenient"
    )
    write_record(path, header, recorder.entries, {**result.to_dict(), "faults": faults})
    return path


def test_faults_fallbacks_and_a_forfeit_are_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = faulty_record(tmp_path / "faulty.jsonl.gz")
    out = show(capsys, str(record))
    assert out.count("fault: E timeout: no answer within 200 ms") == 3
    assert out.count("[played by the referee: fault fallback]") == 2
    end = out[out.index("end of match") :]
    assert "E forfeits" in end and "forfeit by E" in end
    assert end.count("  fault: E timeout: no answer") == 3  # the result's fault list
    assert "E forfeit why=timeout" in end  # the referee's forfeit event
    # A seat sees its own faults as they happen, not another seat's (all bots get the list of
    # faults with the result at the end).
    assert "fault: E timeout: no answer within" not in show(capsys, str(record), "--seat", "N")
    assert show(capsys, str(record), "--seat", "E").count("fault: E timeout: no answer within") == 3
