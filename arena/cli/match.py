"""``arena match``: play one match between bot commands and print its result.

Bot commands run sandboxed by default (arena/bots/sandbox.py: bubblewrap, no network, reaching
the arena only through the Unix socket); ``--bot image:IMAGE [CMD]`` runs a seat's bot from a
Docker image (arena/bots/docker.py); ``--bot stdio:CMD`` runs ``CMD`` speaking the protocol as
JSON lines on its stdin and stdout (arena/server/stdio.py). ``--no-sandbox`` runs commands as
plain processes.

Exit status 3 when a seat faulted or forfeited (``--allow-faults``: 0): a script or CI job that
plays its bot learns that the bot misbehaved without parsing the output (``--json``). Exit status
4 when the arena itself failed a match (a referee error: no result, whatever the bots did).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from cardarena.client import strategy_failures
from cardarena.messages import TimeControl

from arena.bots.command import BotProgram
from arena.bots.launch import confine
from arena.bots.logs import LOG_CUT, last_line
from arena.cli.arguments import parse_options
from arena.logging import configure, wants_json
from arena.match import CommandMatch, play_commands
from arena.policy import GONE, FaultPolicy
from arena.records.telemetry import seat_telemetry, telemetry_lines
from arena.server.api import run_trio
from engine import JSON

#: ``arena match``'s exit status when a seat faulted or forfeited (without ``--allow-faults``).
FAULTED = 3
#: ``arena match``'s exit status when the arena itself failed a match (result reason ``error``).
ARENA_FAILED = 4


@dataclass(frozen=True, slots=True)
class AnswerTimes:
    """How long bots took over a match's decisions. The figures cover the bots' answers and
    their timeouts, a timeout counting as the whole time the referee waited (its deadline: move
    time plus what was left of the bank), so a bot that sleeps past its deadline shows as slow,
    not as absent; decisions played by the referee after other faults (a crash, an illegal
    answer) are counted, not timed."""

    #: Every decision.
    decisions: int
    #: Of those, played by the referee after a fault (timeouts included).
    by_referee: int
    #: Of those, after a timeout.
    timeouts: int
    #: Milliseconds of each answer and each timeout, in order.
    timed: tuple[float, ...]

    def to_dict(self) -> dict[str, JSON]:
        """JSON-ready form; the means and maxima are ``None`` when nothing was timed."""
        timed = self.timed
        return {
            "decisions": self.decisions,
            "by_referee": self.by_referee,
            "timeouts": self.timeouts,
            "answers": len(timed) - self.timeouts,
            "mean_ms": round(sum(timed) / len(timed), 3) if timed else None,
            "max_ms": max(timed) if timed else None,
        }


def answer_times(entries: Sequence[Mapping[str, JSON]], seat: int | None = None) -> AnswerTimes:
    """The :class:`AnswerTimes` of a match's record ``entries``, of one ``seat`` or all."""
    decisions = by_referee = timeouts = 0
    timed: list[float] = []
    previous: Mapping[str, JSON] = {}
    for entry in entries:
        if entry.get("type") == "decision" and seat in (None, entry["seat"]):
            decisions += 1
            ms = entry["ms"]
            assert isinstance(ms, int | float)
            if not entry["fallback"]:
                timed.append(ms)
            else:
                by_referee += 1
                # The referee charges a timeout and plays the seat's fallback in one step: the
                # fault is the entry just before.
                if (previous.get("type"), previous.get("kind"), previous.get("seat")) == (
                    "fault",
                    "timeout",
                    entry["seat"],
                ):
                    timeouts += 1
                    timed.append(ms)
        previous = entry
    return AnswerTimes(decisions, by_referee, timeouts, tuple(timed))


def format_answer_times(times: AnswerTimes) -> str:
    """The summary's line of :class:`AnswerTimes`."""
    figures = times.to_dict()
    if not times.timed:
        return f"decisions: {times.decisions}, all played by the referee"
    waits = (
        f"{times.timeouts} timeout(s), each counted as its full wait"
        if times.timeouts
        else "no timeouts"
    )
    return (
        f"decisions: {times.decisions} ({times.by_referee} by the referee), answer time mean "
        f"{figures['mean_ms']:.2f} ms, max {figures['max_ms']:.1f} ms ({waits})"
    )


def sdk_fallbacks(entries: Sequence[Mapping[str, JSON]], seat: int) -> list[int]:
    """The decisions (numbered from 0, as ``arena replay show --at`` takes them) where ``seat``'s
    SDK played a fallback after its strategy raised or gave a bad index (the answer said so)."""
    decisions = [e for e in entries if e.get("type") == "decision"]
    return [n for n, e in enumerate(decisions) if e["seat"] == seat and e.get("sdk_fallback")]


def sdk_fallback_lines(played: CommandMatch) -> list[str]:
    """A line per seat whose SDK fell back: how many times, at which decisions, the first why."""
    entries = played.outcome.entries
    decisions = [e for e in entries if e.get("type") == "decision"]
    lines = []
    for p in played.outcome.players:
        numbers = sdk_fallbacks(entries, p.seat)
        if numbers:
            first = decisions[numbers[0]].get("sdk_fallback")
            lines.append(
                f"  seat {p.seat}: {len(numbers)} (decisions {', '.join(map(str, numbers))}); "
                f"first: {first}"
            )
    if not lines:
        return []
    return ["SDK fallbacks (the strategy failed; `arena replay show RECORD --at N`):", *lines]


def format_outcome(played: CommandMatch, commands: Sequence[str]) -> str:
    """The result as printed by ``arena match``."""
    outcome = played.outcome
    spec, result = outcome.spec, outcome.result
    lines = [
        f"{spec.game} match {spec.match_id} (seed {spec.seed}): {result.summary} [{result.reason}]"
    ]
    rows = [("seat", "name", "bot", "score", "rank", "faults", "command")]
    for p in outcome.players:
        bot = f"{p.bot_name} {p.bot_version}".strip()
        rows.append(
            (
                str(p.seat),
                p.seat_name,
                bot,
                f"{result.scores[p.seat]:g}",
                str(result.ranks[p.seat]),
                str(outcome.faults_of(p.seat)),
                commands[p.seat] if p.seat < len(commands) else "",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for r in rows:
        cells = [c.ljust(w) for c, w in zip(r[:-1], widths, strict=True)] + [r[-1]]
        lines.append("  " + "  ".join(cells).rstrip())
    if outcome.faults:
        lines.append("faults:")
        names = {p.seat: p.seat_name for p in outcome.players}
        lines.extend(
            f"  {names.get(f.seat, f.seat)} (seat {f.seat}) {f.kind}: {f.detail}"
            for f in outcome.faults
        )
        # A bot that died may be charged `disconnect` (its stream broke first) or `crash` (its
        # exit was seen first): either way its own output says why.
        gone = {f.seat for f in outcome.faults if f.kind in GONE}
        for seat in sorted(gone):
            tail = last_line(played.logs[seat])
            lines.append(f"  seat {seat} output ({played.logs[seat]}): {tail or '(none)'}")
    lines.extend(log_notes(played.logs))
    lines.extend(sdk_fallback_lines(played))
    seat_names = [p.seat_name for p in sorted(outcome.players, key=lambda p: p.seat)]
    lines.extend(telemetry_lines(outcome.entries, seat_names))
    lines.append(format_answer_times(answer_times(outcome.entries)))
    lines.append(f"record: {played.record}")
    return "\n".join(lines)


def outcome_json(played: CommandMatch, commands: Sequence[str]) -> dict[str, JSON]:
    """``arena match --json``: the result, each seat's faults, forfeit and answer times."""
    outcome = played.outcome
    spec, result = outcome.spec, outcome.result
    seats: list[JSON] = []
    telemetry = seat_telemetry(outcome.entries)
    for p in outcome.players:
        faults = [f for f in outcome.faults if f.seat == p.seat]
        seat: dict[str, JSON] = {
            "seat": p.seat,
            "name": p.seat_name,
            "bot": p.bot_name,
            "version": p.bot_version,
            "command": commands[p.seat] if p.seat < len(commands) else "",
            "score": result.scores[p.seat],
            "rank": result.ranks[p.seat],
            "faults": [{"kind": f.kind, "detail": f.detail} for f in faults],
            "forfeited": result.forfeited_by == p.seat,
            "answer_time": answer_times(outcome.entries, p.seat).to_dict(),
            "sdk_fallbacks": list[JSON](sdk_fallbacks(outcome.entries, p.seat)),
            "log": str(played.logs[p.seat]),
        }
        if any(f.kind in GONE for f in faults):  # as the summary: its own output says why
            seat["last_output"] = last_line(played.logs[p.seat])
        if p.seat in telemetry:  # only for a bot whose notes carry figures (docs/sdk.md)
            seat["telemetry"] = telemetry[p.seat].to_dict()
        seats.append(seat)
    return {
        "match_id": spec.match_id,
        "game": spec.game,
        "seed": spec.seed,
        "result": result.to_dict(),
        "seats": seats,
        "answer_time": answer_times(outcome.entries).to_dict(),
        "record": str(played.record),
    }


def faulted(played: Sequence[CommandMatch]) -> bool:
    """Whether a seat faulted or forfeited in any of ``played``."""
    return any(m.outcome.faults or m.outcome.result.forfeited_by is not None for m in played)


def log_notes(logs: Sequence[Path]) -> list[str]:
    """Lines about what only the seats' logs know: strategy failures the SDK covered with a
    fallback (no fault, yet not the bot's choice), and output past the log's cap (past it the
    bot's writes are slowed, which may cost it time faults)."""
    notes = []
    for seat, path in enumerate(logs):
        try:
            text = path.read_bytes()
        except OSError:
            continue
        failed = strategy_failures(text)
        if failed:
            notes.append(
                f"  seat {seat}: its strategy failed {failed} time(s) and the SDK played the "
                f"first legal action instead; see {path}"
            )
        if LOG_CUT in text:
            notes.append(
                f"  seat {seat}: it wrote more output than its log keeps; past the cap its "
                f"writes were slowed, which can cost it time; see {path}"
            )
    return ["bot logs:", *notes] if notes else []


def run_match_command(args: argparse.Namespace) -> int:
    """The ``arena match`` command."""
    configure(args.log_level, json=wants_json(args.log_format, sys.stderr))
    policy = FaultPolicy.STRICT if args.strict else FaultPolicy.LENIENT
    commands: list[str] = args.bot
    sandbox = confine([BotProgram.of_command(c) for c in commands], args.no_sandbox)

    async def main() -> CommandMatch | list[CommandMatch]:
        return await play_commands(
            args.game,
            commands,
            players=args.players,
            options=parse_options(args.option),
            seed=args.seed,
            out_dir=args.out,
            time_control=TimeControl(args.move_ms, args.bank_ms),
            fault_policy=policy,
            connect_timeout_s=args.connect_timeout,
            via_unix=args.unix,
            sandbox=sandbox,
            games=args.games,
        )

    played = run_trio(main)
    series = [played] if isinstance(played, CommandMatch) else played
    if args.json:
        data: JSON = (
            outcome_json(series[0], commands)
            if isinstance(played, CommandMatch)
            else {
                "matches": [outcome_json(m, commands) for m in series],
                "seats": series_seats(series, commands),
            }
        )
        print(json.dumps(data))
    elif isinstance(played, CommandMatch):
        print(format_outcome(played, commands))
    else:
        print(format_series(played, commands))
    failed = [m.outcome for m in series if m.outcome.result.reason == "error"]
    if failed:
        # Not a result: the arena's fault, not a bot's, so --allow-faults does not cover it.
        print(
            f"arena match: the arena failed match {failed[0].spec.match_id} "
            f"({failed[0].result.summary}); no result: exit status {ARENA_FAILED}",
            file=sys.stderr,
        )
        return ARENA_FAILED
    if faulted(series) and not args.allow_faults:
        print(
            f"arena match: a seat faulted or forfeited: exit status {FAULTED} (--allow-faults: 0)",
            file=sys.stderr,
        )
        return FAULTED
    return 0


def series_seats(played: Sequence[CommandMatch], commands: Sequence[str]) -> list[JSON]:
    """Each seat's firsts and faults over a series."""
    return [
        {
            "seat": seat,
            "command": command,
            "firsts": sum(m.outcome.result.ranks[seat] == 1 for m in played),
            "faults": sum(m.outcome.faults_of(seat) for m in played),
        }
        for seat, command in enumerate(commands)
    ]


def format_series(played: Sequence[CommandMatch], commands: Sequence[str]) -> str:
    """``arena match --games N``: a line per match, then each seat's firsts and faults."""
    lines = []
    for n, m in enumerate(played, 1):
        result = m.outcome.result
        line = f"{n:>3}. {m.outcome.spec.match_id}: {result.summary} [{result.reason}]"
        fell = [
            f"seat {p.seat} at {', '.join(map(str, at))}"
            for p in m.outcome.players
            if (at := sdk_fallbacks(m.outcome.entries, p.seat))
        ]
        lines.append(line + (f" [SDK fallbacks: {'; '.join(fell)}]" if fell else ""))
    lines.append(
        f"{len(played)} matches on one process per seat (records in {played[0].record.parent}):"
    )
    for seat in series_seats(played, commands):
        assert isinstance(seat, dict)
        lines.append(
            f"  seat {seat['seat']}: first {seat['firsts']}, faults {seat['faults']}  "
            f"{seat['command']}"
        )
    times = answer_times([e for m in played for e in m.outcome.entries])
    lines.append("  " + format_answer_times(times))
    return "\n".join(lines)
