"""``arena match``: play one match between bot commands and print its result.

Bot commands run sandboxed by default (arena/bots/sandbox.py: bubblewrap, no network, reaching
the arena only through the Unix socket); ``--bot image:IMAGE [CMD]`` runs a seat's bot from a
Docker image (arena/bots/docker.py). ``--no-sandbox`` runs commands as plain processes.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from arena.bots.command import BotProgram
from arena.bots.launch import confine
from arena.bots.logs import LOG_CUT, last_line
from arena.cli.arguments import parse_options
from arena.logging import configure
from arena.match import CommandMatch, play_commands
from arena.policy import GONE, FaultPolicy
from arena.protocol.messages import TimeControl
from arena.sdk.client import strategy_failures
from arena.server.api import run_trio


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
    answered = [t.ms for t in outcome.timings if not t.fallback]
    if answered:
        mean = sum(answered) / len(answered)
        lines.append(
            f"decisions: {len(outcome.timings)} ({len(outcome.timings) - len(answered)} by the "
            f"referee), answer time mean {mean:.2f} ms, max {max(answered):.1f} ms"
        )
    else:
        lines.append(f"decisions: {len(outcome.timings)}, all played by the referee")
    lines.append(f"record: {played.record}")
    return "\n".join(lines)


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
    configure(args.log_level)
    policy = FaultPolicy.STRICT if args.strict else FaultPolicy.LENIENT
    commands: list[str] = args.bot
    sandbox = confine([BotProgram(c) for c in commands], args.no_sandbox)

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
    if isinstance(played, CommandMatch):
        print(format_outcome(played, commands))
        return 0
    print(format_series(played, commands))
    return 0


def format_series(played: Sequence[CommandMatch], commands: Sequence[str]) -> str:
    """``arena match --games N``: a line per match, then each seat's firsts and faults."""
    lines = []
    firsts = [0] * len(commands)
    faults = [0] * len(commands)
    for n, m in enumerate(played, 1):
        result = m.outcome.result
        lines.append(f"{n:>3}. {m.outcome.spec.match_id}: {result.summary} [{result.reason}]")
        for seat in range(len(commands)):
            firsts[seat] += result.ranks[seat] == 1
            faults[seat] += m.outcome.faults_of(seat)
    lines.append(
        f"{len(played)} matches on one process per seat (records in {played[0].record.parent}):"
    )
    for seat, command in enumerate(commands):
        lines.append(f"  seat {seat}: first {firsts[seat]}, faults {faults[seat]}  {command}")
    return "\n".join(lines)
