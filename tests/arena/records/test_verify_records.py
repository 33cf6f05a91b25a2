"""``arena replay verify`` holds a whole record to what the referee writes.

Records come from real matches (a real server, real bots over gRPC, and real processes for the
crash cases); the forgeries are made from them the way a forger would: by editing the last line
alone (no later line seals it) or by rewriting the lines and recomputing the whole hash chain.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio
from cardarena._pb import arena_pb2 as pb
from cardarena.messages import TimeControl

from arena.match import play_commands
from arena.policy import STRIKES_TO_FORFEIT, FaultPolicy, forfeit_reason
from arena.records.format import RecordError, read_record, write_record
from arena.records.replay import verify
from engine import OptionValue, get_game
from tests.arena.wire import (
    SHORT_WHIST,
    Behaviour,
    RawBot,
    make_spec,
    play_loop,
    raw,
    run_scenario,
    sdk,
)

GAMES = ["whist", "tennis_whist", "spoil_five", "forty_five", "tennis"]
SHORT: dict[str, dict[str, OptionValue]] = {
    "whist": SHORT_WHIST,
    "tennis_whist": {"sets_to_win": 1},
    "spoil_five": {"rounds": 1},
    "forty_five": {"points_to_win": 15},
    "tennis": {"sets_to_win": 1},
}
BAD = 1  # the seat whose bot misbehaves


def _seats(game: str) -> int:
    g = get_game(game)
    return g.num_seats(g.configure(None, SHORT[game]))


def _illegal(decision: pb.DecisionRequest, n: int) -> pb.BotMessage:
    return pb.BotMessage(action=pb.Action(request_id=decision.request_id, index=999))


def _illegal_once(decision: pb.DecisionRequest, n: int) -> pb.BotMessage:
    return pb.BotMessage(
        action=pb.Action(request_id=decision.request_id, index=999 if n == 0 else 0)
    )


def _garbage(decision: pb.DecisionRequest, n: int) -> pb.BotMessage:
    return pb.BotMessage(action=pb.Action(request_id=decision.request_id))


def _drops_and_resumes(address: str, token: str) -> None:
    """Answers one decision, leaves while asked the next, and resumes on a new stream."""
    first = RawBot(address)
    first.hello(token)
    asked = 0
    while (msg := first.recv()) is not None:
        if msg.WhichOneof("kind") == "decision":
            asked += 1
            if asked == 2:
                break
            first.answer(msg.decision.request_id, index=0)
    first.close()
    again = RawBot(address)
    again.hello(token)
    play_loop(again)
    again.close()


#: How the seat BAD behaves, the policy, and the connect timeout (s) per scenario.
SCENARIOS: dict[str, tuple[Behaviour | None, FaultPolicy, float]] = {
    # Every seat plays: no fault, a normal result.
    "normal": (sdk("random", 7), "lenient", 10.0),
    # One illegal answer: a fault, a fallback decision, and still a normal result.
    "one_fault": (raw(_illegal_once), "lenient", 10.0),
    # Illegal answers every time: three strikes forfeit.
    "three_strikes": (raw(_illegal), "lenient", 10.0),
    # Under the strict policy the first fault (a garbled Action) forfeits.
    "strict": (raw(_garbage), "strict", 10.0),
    # A bot that never connects: the match starts without it, disconnect faults forfeit.
    "no_show": (None, "lenient", 0.3),
    # A bot whose stream breaks mid-decision and comes back: connection lines, no fault.
    "resumed": (_drops_and_resumes, "lenient", 10.0),
}


class Records:
    """Genuine records, each played once per module and copied for each test that edits one."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._made: dict[tuple[str, str], Path] = {}

    def get(self, game: str, scenario: str) -> Path:
        key = (game, scenario)
        if key not in self._made:
            path = self.root / f"{game}-{scenario}.jsonl.gz"
            if scenario.startswith("crash"):
                self._crash(game, scenario == "crash_strict", path)
            else:
                bad, policy, connect = SCENARIOS[scenario]
                n = _seats(game)
                behaviours: list[Behaviour | None] = [sdk("random", s) for s in range(n)]
                behaviours[BAD] = bad
                spec = make_spec(
                    game,
                    n,
                    options=SHORT[game],
                    seed=5,
                    policy=policy,
                    move_ms=5000,
                    connect_timeout_s=connect,
                    match_id=f"{game}-{scenario}",
                )
                out = run_scenario(spec, behaviours).outcome
                write_record(path, out.header, out.entries, out.result_dict())
            self._made[key] = path
        return self._made[key]

    def _crash(self, game: str, strict: bool, path: Path) -> None:
        """A real ``arena match``-style run whose seat BAD is the command ``true``."""
        commands = ["arena bot random"] * _seats(game)
        commands[BAD] = "true"

        async def main() -> Path:
            played = await play_commands(
                game,
                commands,
                options=SHORT[game],
                seed=9,
                out_dir=self.root / "crash",
                time_control=TimeControl(5000, 0),
                fault_policy="strict" if strict else "lenient",
                connect_timeout_s=30.0,
            )
            return played.record

        trio.run(main).rename(path)

    def copy(self, game: str, scenario: str, tmp: Path) -> Path:
        dst = tmp / f"{game}-{scenario}.jsonl.gz"
        dst.write_bytes(self.get(game, scenario).read_bytes())
        return dst


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> Records:
    return Records(tmp_path_factory.mktemp("records"))


# --- forging helpers ---------------------------------------------------------------------------


def _lines(path: Path) -> list[bytes]:
    return gzip.decompress(path.read_bytes()).split(b"\n")[:-1]


def _canonical(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def _edit_last_line(path: Path, edit: Callable[[dict[str, Any]], None]) -> int:
    """Edit only the result line, in canonical form: no later line's ``prev`` covers it, so the
    chain still holds. Returns the line's number."""
    lines = _lines(path)
    result = json.loads(lines[-1])
    edit(result)
    lines[-1] = _canonical(result)
    path.write_bytes(gzip.compress(b"\n".join(lines) + b"\n"))
    return len(lines)


def _rechain(
    path: Path,
    header: dict[str, Any],
    entries: list[dict[str, Any]],
    result: dict[str, Any],
) -> None:
    """Rewrite the record with a freshly computed hash chain (what any forger can do)."""
    write_record(path, header, entries, result)


def _fails(path: Path, pattern: str) -> str:
    with pytest.raises(RecordError, match=pattern) as err:
        verify(path)
    message = str(err.value)
    assert "\n" not in message
    return message


def _cli_verify(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena.cli", "replay", "verify", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _forfeit_after_first_decision(
    path: Path, seat: int, faults: list[dict[str, Any]], why: str
) -> int:
    """The auditor's forgery (forge_forfeit.py): keep the record up to its first decision, add
    the fault lines ``faults``, make ``seat`` forfeit with ``why``, recompute the events, the
    result and the chain. Returns the forfeit event's line number."""
    rec = read_record(path)
    h = rec.header
    game = get_game(h["game"])
    state = game.new_match(game.configure(h["players"], h["options"]), h["seed"])
    body: list[dict[str, Any]] = []
    for entry in rec.entries:
        if entry["type"] == "fault":
            continue  # the genuine faults go; only the fabricated ones stay
        body.append(entry)
        if entry["type"] == "decision":
            state.apply(entry["action"])
            break
    body += [{"type": "fault", **f} for f in faults]
    state.forfeit(seat, why)
    kept = sum(1 for e in body if e["type"] == "event")
    for event in state.events[kept:]:
        body.append({"type": "event", **json.loads(json.dumps(event.to_dict()))})
    result = state.result()
    assert result is not None
    _rechain(path, h, body, {**json.loads(json.dumps(result.to_dict())), "faults": faults})
    return 1 + next(
        i + 1 for i, e in enumerate(body) if e["type"] == "event" and e["kind"] == "forfeit"
    )


# --- genuine records verify ----------------------------------------------------------------------


@pytest.mark.parametrize("scenario", list(SCENARIOS))
@pytest.mark.parametrize("game", GAMES)
def test_genuine_records_of_every_game_verify(records: Records, game: str, scenario: str) -> None:
    path = records.get(game, scenario)
    rec = read_record(path)
    faults = [e for e in rec.entries if e["type"] == "fault"]
    if scenario in ("normal", "resumed"):
        assert rec.result["reason"] == "normal" and faults == []
        connections = [(e["seat"], e["event"]) for e in rec.entries if e["type"] == "connection"]
        assert connections == ([] if scenario == "normal" else [(BAD, "lost"), (BAD, "resumed")])
    elif scenario == "one_fault":
        assert rec.result["reason"] == "normal" and len(faults) == 1
        assert any(e["type"] == "decision" and e["fallback"] for e in rec.entries)
    else:
        assert rec.result["reason"] == "forfeit" and rec.result["forfeited_by"] == BAD
        expected = 1 if scenario == "strict" else STRIKES_TO_FORFEIT
        assert [f["seat"] for f in faults] == [BAD] * expected
    assert verify(path) == sum(1 for _ in rec.decisions())


@pytest.mark.parametrize("strict", [False, True], ids=["lenient", "strict"])
@pytest.mark.parametrize("game", ["whist", "tennis"])
@pytest.mark.slow
def test_a_bot_that_exits_at_once_forfeits_and_its_record_verifies(
    records: Records, game: str, strict: bool
) -> None:
    path = records.get(game, "crash_strict" if strict else "crash")
    rec = read_record(path)
    faults = [e for e in rec.entries if e["type"] == "fault"]
    assert {f["kind"] for f in faults} == {"crash"} and {f["seat"] for f in faults} == {BAD}
    assert len(faults) == (1 if strict else STRIKES_TO_FORFEIT)
    assert rec.result["reason"] == "forfeit" and rec.result["forfeited_by"] == BAD
    verify(path)
    proc = _cli_verify(path)
    assert proc.returncode == 0 and proc.stdout.startswith("ok "), proc.stdout + proc.stderr


def test_the_referee_and_verify_share_one_forfeit_rule() -> None:
    assert forfeit_reason("strict", 1, "timeout", "slow") == "timeout: slow"
    assert [forfeit_reason("lenient", n, "crash", "gone") for n in (1, 2)] == [None, None]
    assert forfeit_reason("lenient", 3, "crash", "gone") == "crash: gone (3 strikes)"


def test_a_genuine_forfeit_is_the_one_its_faults_make(records: Records) -> None:
    rec = read_record(records.get("whist", "three_strikes"))
    faults = [e for e in rec.entries if e["type"] == "fault"]
    forfeit = next(e for e in rec.entries if e["type"] == "event" and e["kind"] == "forfeit")
    last = faults[-1]
    assert forfeit["why"] == forfeit_reason("lenient", len(faults), last["kind"], last["detail"])


# --- weakness 1: the result line ----------------------------------------------------------------


def test_auditors_forge_last_fails_in_one_line(records: Records, tmp_path: Path) -> None:
    # forge_last.py: empty the result's faults and add a field; the chain still holds.
    path = records.copy("tennis", "three_strikes", tmp_path)

    def forge(result: dict[str, Any]) -> None:
        assert result["faults"]
        result["faults"] = []
        result["note"] = "edited by hand"

    line = _edit_last_line(path, forge)
    read_record(path)  # the chain alone does not notice
    proc = _cli_verify(path)
    assert proc.returncode == 1
    out = proc.stdout.splitlines()
    assert len(out) == 1 and "Traceback" not in proc.stdout + proc.stderr
    assert out[0] == (
        f"FAIL {path}: line {line}: result has a field the referee never writes: 'note'"
    )


def _drop_all(faults: list[Any]) -> None:
    faults.clear()


def _drop_one(faults: list[Any]) -> None:
    faults.pop()


def _reorder(faults: list[Any]) -> None:
    faults.insert(0, faults.pop())


def _change_detail(faults: list[Any]) -> None:
    faults[0]["detail"] = "the network hiccuped"


def _change_kind(faults: list[Any]) -> None:
    faults[0]["kind"] = "timeout"


def _blame_another(faults: list[Any]) -> None:
    faults[0]["seat"] = 0


def _add_one(faults: list[Any]) -> None:
    faults.append({"seat": 0, "kind": "timeout", "detail": "no answer within 5000 ms"})


def _extra_field(faults: list[Any]) -> None:
    faults[0]["strikes"] = 1


def _seat_as_bool(faults: list[Any]) -> None:
    faults[0]["seat"] = True  # == 1 in Python, not what the referee wrote


@pytest.mark.parametrize(
    "edit",
    [
        _drop_all,
        _drop_one,
        _reorder,
        _change_detail,
        _change_kind,
        _blame_another,
        _add_one,
        _extra_field,
        _seat_as_bool,
    ],
)
def test_the_results_faults_must_be_exactly_the_fault_lines(
    records: Records, tmp_path: Path, edit: Callable[[list[Any]], None]
) -> None:
    path = records.copy("whist", "three_strikes", tmp_path)
    faults = [e for e in read_record(path).entries if e["type"] == "fault"]
    # Distinct details, so that reordering changes the list.
    assert len({f["detail"] for f in faults}) > 1 or edit is not _reorder
    line = _edit_last_line(path, lambda result: edit(result["faults"]))
    _fails(path, rf"line {line}: the result's faults .* are not the record's fault lines")


def test_a_normal_result_cannot_hide_its_faults(records: Records, tmp_path: Path) -> None:
    path = records.copy("spoil_five", "one_fault", tmp_path)
    line = _edit_last_line(path, lambda result: result["faults"].clear())
    message = _fails(path, rf"line {line}: the result's faults \[\] are not")
    assert "illegal" in message


@pytest.mark.parametrize(
    ("edit", "pattern"),
    [
        (
            lambda r: r.update(verified=True),
            "result has a field the referee never writes: 'verified'",
        ),
        (lambda r: r.pop("faults"), "result lacks 'faults'"),
        (lambda r: r.pop("stats"), "result lacks 'stats'"),
        (lambda r: r.update(summary="N+S win"), "result differs"),
        (lambda r: r.update(ranks=[float(x) for x in r["ranks"]]), "result differs"),
    ],
)
def test_every_key_of_the_result_line_is_checked(
    records: Records, tmp_path: Path, edit: Callable[[dict[str, Any]], None], pattern: str
) -> None:
    path = records.copy("forty_five", "normal", tmp_path)
    line = _edit_last_line(path, edit)
    _fails(path, rf"line {line}: {pattern}")


# --- weakness 2: a forfeit no fault justifies ---------------------------------------------------


def test_auditors_forge_forfeit_fails_in_one_line(records: Records, tmp_path: Path) -> None:
    # forge_forfeit.py: the winner "forfeits" right after the first decision, with no fault.
    path = records.copy("whist", "normal", tmp_path)
    winner = read_record(path).result["ranks"].index(1)
    line = _forfeit_after_first_decision(path, winner, [], "forged")
    proc = _cli_verify(path)
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [
        f"FAIL {path}: line {line}: forfeit by seat {winner} that no recorded fault justifies "
        f"(lenient policy: {STRIKES_TO_FORFEIT} faults forfeit; seat {winner} has 0)"
    ]


def test_too_few_faults_do_not_justify_a_lenient_forfeit(records: Records, tmp_path: Path) -> None:
    path = records.copy("tennis_whist", "normal", tmp_path)
    faults = [{"seat": 2, "kind": "timeout", "detail": "no answer within 5000 ms"}] * 2
    line = _forfeit_after_first_decision(path, 2, faults, "timeout: no answer (2 strikes)")
    _fails(path, rf"line {line}: forfeit by seat 2 that no recorded fault justifies .*seat 2 has 2")


def test_faults_of_one_seat_do_not_justify_another_seats_forfeit(
    records: Records, tmp_path: Path
) -> None:
    path = records.copy("tennis", "strict", tmp_path)
    rec = read_record(path)
    assert rec.header["fault_policy"] == "strict"
    fault = next(e for e in rec.entries if e["type"] == "fault")
    fault_line = 2 + rec.entries.index(fault)
    entries = []
    for e in rec.entries:
        if e["type"] == "event" and e["kind"] == "forfeit":
            e = {**e, "seat": 0}  # blame the other seat; its side now loses
        entries.append(e)
    game = get_game("tennis")
    config = game.configure(rec.header["players"], rec.header["options"])
    state = game.new_match(config, rec.header["seed"])
    for e in entries:
        if e["type"] == "decision":
            state.apply(e["action"])
    forfeit = next(e for e in entries if e["type"] == "event" and e["kind"] == "forfeit")
    result = state.forfeit(0, forfeit["why"])
    line = 2 + entries.index(forfeit)
    _rechain(path, rec.header, entries, {**result.to_dict(), "faults": rec.result["faults"]})
    _fails(
        path,
        rf"line {line}: forfeit by seat 0 .*, but the fault on line {fault_line} "
        rf"forfeits seat {BAD}",
    )


def test_a_forfeit_must_give_the_referees_reason(records: Records, tmp_path: Path) -> None:
    path = records.copy("spoil_five", "three_strikes", tmp_path)
    rec = read_record(path)
    entries = [
        {**e, "why": "illegal: cheating (3 strikes)"}
        if e["type"] == "event" and e["kind"] == "forfeit"
        else e
        for e in rec.entries
    ]
    result = dict(rec.result)
    result["summary"] = (
        result["summary"].split(" forfeits: ")[0] + " forfeits: illegal: cheating (3 strikes)"
    )
    _rechain(path, rec.header, entries, result)
    _fails(path, r"forfeit by seat 1 \('illegal: cheating \(3 strikes\)'\), but the fault on line")


def test_a_decision_after_a_forfeiting_fault_fails(records: Records, tmp_path: Path) -> None:
    # The one-fault record says strict: its fault forfeits, so play cannot go on after it.
    path = records.copy("whist", "one_fault", tmp_path)
    rec = read_record(path)
    fault_line = 2 + next(i for i, e in enumerate(rec.entries) if e["type"] == "fault")
    _rechain(path, {**rec.header, "fault_policy": "strict"}, rec.entries, rec.result)
    _fails(
        path,
        rf"line {fault_line + 1}: decision after the fault on line {fault_line} forfeited seat "
        rf"{BAD} \(strict policy\)",
    )


def test_consistently_fabricated_faults_are_beyond_verify(records: Records, tmp_path: Path) -> None:
    """What docs/records.md says verify cannot stop: a forger who rewrites the whole chain and
    fabricates the fault lines that justify the forfeit, exactly as the referee would write
    them, gets a record that verifies. Only a head digest kept elsewhere could tell."""
    path = records.copy("whist", "normal", tmp_path)
    winner = read_record(path).result["ranks"].index(1)
    fake = {"seat": winner, "kind": "timeout", "detail": "no answer within 5000 ms"}
    why = forfeit_reason("lenient", STRIKES_TO_FORFEIT, fake["kind"], fake["detail"])
    assert why is not None
    _forfeit_after_first_decision(path, winner, [fake] * STRIKES_TO_FORFEIT, why)
    assert verify(path) == 1


# --- fields nobody writes, and fallbacks ----------------------------------------------------------


def _first(rec_entries: list[dict[str, Any]], kind: str) -> int:
    return next(i for i, e in enumerate(rec_entries) if e["type"] == kind)


@pytest.mark.parametrize("where", ["header", "seat", "time_control", "decision", "fault", "event"])
def test_a_field_the_referee_never_writes_is_refused(
    records: Records, tmp_path: Path, where: str
) -> None:
    path = records.copy("whist", "one_fault", tmp_path)
    rec = read_record(path)
    header, entries = dict(rec.header), [dict(e) for e in rec.entries]
    if where == "header":
        header["comment"] = "hidden"
        pattern = "line 1: header has a field the referee never writes: 'comment'"
    elif where == "seat":
        header["seats"] = [{**s, "rating": 1500} for s in header["seats"]]
        pattern = "line 1: seat 0 is not"
    elif where == "time_control":
        header["time_control"] = {**header["time_control"], "increment_ms": 0}
        pattern = "line 1: time_control is not"
    else:
        i = _first(entries, where)
        entries[i]["comment"] = "hidden"
        # An event is compared whole with the engine's, so an added field is a difference.
        found = "event differs" if where == "event" else f"{where} has a field the referee never"
        pattern = f"line {i + 2}: {found}"
    _rechain(path, header, entries, rec.result)
    _fails(path, pattern)


def test_a_fallback_needs_a_fault_just_before_it(records: Records, tmp_path: Path) -> None:
    path = records.copy("tennis", "normal", tmp_path)
    rec = read_record(path)
    entries = [dict(e) for e in rec.entries]
    i = _first(entries, "decision")
    entries[i]["fallback"] = True
    _rechain(path, rec.header, entries, rec.result)
    _fails(path, rf"line {i + 2}: fallback decision of seat \d+ without a fault of that seat")


def test_an_unknown_fault_policy_is_refused(records: Records, tmp_path: Path) -> None:
    path = records.copy("tennis", "normal", tmp_path)
    rec = read_record(path)
    _rechain(path, {**rec.header, "fault_policy": "lax"}, rec.entries, rec.result)
    _fails(path, "line 1: fault_policy 'lax' is not one of lenient, strict")


def test_connection_lines_need_schema_2_and_the_referees_fields(
    records: Records, tmp_path: Path
) -> None:
    path = records.copy("whist", "resumed", tmp_path)
    assert verify(path) > 0
    rec = read_record(path)
    i = _first([dict(e) for e in rec.entries], "connection")
    assert rec.header["schema"] == 2
    _rechain(path, {**rec.header, "schema": 1}, rec.entries, rec.result)
    _fails(path, f"line {i + 2}: a connection line in a schema 1 record")
    for edit, pattern in [
        ({"event": "stolen"}, 'connection event "stolen" is not one of lost, resumed'),
        ({"seat": 9}, "connection of no seat of the match: 9"),
        ({"peer": "1.2.3.4"}, "connection line is not {seat, event, session}"),
    ]:
        entries = [dict(e) for e in rec.entries]
        entries[i].update(edit)
        _rechain(path, rec.header, entries, rec.result)
        _fails(path, f"line {i + 2}: {pattern}")
