"""``arena replay ask``: the bot's answers judged against the record, and printed."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from cardarena import messages

from arena.bots.sandbox import Limits
from arena.errors import UsageError
from arena.records.ask.bot import Asking, failure, serve_script
from arena.records.ask.raised import Raised, raised_report
from arena.records.ask.script import (
    Asked,
    MatchScript,
    Position,
    bot_seed,
    find_position,
    match_script,
    position_script,
)
from arena.records.format import Record, read_record
from arena.records.replay import start_state
from arena.records.view import seat_index
from engine import Action, MatchState, Observation

#: Differing decisions named in a summary line.
_NAMED = 20


@dataclass(frozen=True, slots=True)
class AskOutcome:
    """What the bot answered."""

    #: The position asked.
    position: Position
    #: The chosen legal action, or ``None`` when the answer was not a legal action.
    action: Action | None
    #: The answer as sent: ``index 3`` or ``text 'play:QS'``.
    sent: str
    #: Why the answer is not a legal action (``None`` when it is).
    problem: str | None
    #: Milliseconds from sending the request to the answer.
    ms: float
    #: The bot's name and version from its Hello.
    bot: str
    #: The bot's last lines of output (stdout and stderr) while it was asked: its debug prints,
    #: or the traceback of a strategy that failed and fell back.
    output: tuple[str, ...] = ()
    #: The strategy's failure the SDK logged (then it answered the first legal action).
    raised: tuple[Raised, ...] = ()

    @property
    def same(self) -> bool:
        """Whether the bot chose the recorded action."""
        return self.action is not None and self.action.text == self.position.recorded


def _checked(bot_command: str, timeout: float) -> None:
    if not bot_command.strip():
        raise UsageError("--bot needs a command")
    if timeout <= 0:
        raise UsageError("--timeout must be positive")


def ask(
    record: Record,
    at: int,
    bot_command: str,
    timeout: float,
    where: str = "record",
    sandbox: Limits | None = None,
    hide: Sequence[Path] = (),
) -> AskOutcome:
    """Replay to decision ``at``, ask the bot started by ``bot_command``, return its answer.

    The bot starts as a seat's bot of ``arena match`` starts (:func:`~arena.bots.launch.start_bot`,
    in the current directory): boxed with ``sandbox`` limits when given, reaching the server by
    its Unix socket and seeing none of ``hide`` (nor the arena's home), else as a plain process;
    ``image:IMAGE [CMD]`` in a container. Nothing started outlives the call.

    Raises :class:`ArenaError` when the bot does not start, exits, or does not answer in
    ``timeout`` seconds (its last output lines are in the message).
    """
    _checked(bot_command, timeout)
    pos = find_position(record, at, where)
    asking = Asking(bot_command, timeout, sandbox, hide)
    make = functools.partial(position_script, record.header, pos)
    # Stopped once it has answered: nothing else is asked of it.
    served = serve_script(make, bot_seed(record.header, pos.seat), asking, goodbye_s=0.0)
    if served.end[0] != "done":
        raise failure(served, asking, closed="the bot closed its stream without answering")
    _, _, answer, ms, bot = served.answers[0]
    action, sent, problem = _choice(pos.state.legal_actions(), answer)
    return AskOutcome(pos, action, sent, problem, ms, bot, served.output, served.raised)


def _choice(
    legal: Sequence[Action], answer: messages.Answer
) -> tuple[Action | None, str, str | None]:
    """The legal action an answer chose (``None`` if none), the answer as sent, and why it is
    not a legal action (``None`` when it is)."""
    if answer.index is not None:
        sent = f"index {answer.index}"
        if answer.index < len(legal):
            return legal[answer.index], sent, None
        return None, sent, f"index out of range (0..{len(legal) - 1})"
    if answer.text is not None:
        sent = f"text {answer.text!r}"
        for action in legal:
            if action.text == answer.text.strip():
                return action, sent, None
        return None, sent, "not a legal action"
    return None, "an Action with neither index nor text", "garbage"


def _position_lines(
    state: MatchState,
    match_id: str,
    number: int,
    total: int,
    observation: Observation,
    legal: Sequence[Action],
    recorded: str,
    fallback: bool,
) -> list[str]:
    """A recorded decision for people: whose, what the seat was sent, what was recorded."""
    names = state.game.seat_names(state.config)
    return [
        f"{state.game.id} match {match_id}: decision {number} of {total}, "
        f"seat {names[observation.seat]} to move",
        *("  " + line for line in observation.render().splitlines()),
        f"legal ({len(legal)}): {' '.join(a.text for a in legal)}",
        f"recorded: {recorded}" + ("  (the referee's fallback)" if fallback else ""),
    ]


def _bot_line(
    action: Action | None, sent: str, problem: str | None, ms: float, bot: str, same: bool
) -> str:
    """The bot's answer next to the recorded one."""
    if action is None:
        return f"bot:      {sent}: {problem} - not a legal action"
    verdict = "same as recorded" if same else "DIFFERENT from the record"
    return f"bot:      {action.text}  ({sent}, {ms:.1f} ms, {bot.strip()}) - {verdict}"


def report(outcome: AskOutcome, record: Record) -> str:
    """The answer next to the recorded one, for people."""
    pos = outcome.position
    state = pos.state
    lines = _position_lines(
        state,
        str(record.header.get("match_id", "")),
        pos.number,
        pos.total,
        state.observation(pos.seat),
        state.legal_actions(),
        pos.recorded,
        pos.fallback,
    )
    lines.append(
        _bot_line(
            outcome.action, outcome.sent, outcome.problem, outcome.ms, outcome.bot, outcome.same
        )
    )
    if outcome.raised:
        lines.append(
            f"the strategy FAILED at decision {pos.number}: the SDK played the first legal "
            "action, so this answer is not the strategy's (its traceback: in the bot output below)"
        )
        lines.extend(raised_report(outcome.raised, [pos.number], tracebacks=False))
    if outcome.output:
        lines.append(f"bot output (last {len(outcome.output)} lines):")
        lines.extend("  " + line for line in outcome.output)
    return "\n".join(lines)


def ask_command(
    path: Path,
    at: int,
    bot_command: str,
    timeout: float,
    out: TextIO,
    sandbox: Limits | None = None,
) -> int:
    """``arena replay ask``: 0 when the bot chose the recorded action, 1 when it did not or its
    strategy failed (the SDK logged that it raised, and answered the first legal action).

    ``sandbox``: the limits of the bot's box (``None``: a plain process); the box does not show
    the record's directory.
    """
    record = read_record(path)
    outcome = ask(record, at, bot_command, timeout, str(path), sandbox, hide=(path.parent,))
    out.write(report(outcome, record) + "\n")
    return 0 if outcome.same and not outcome.raised else 1


# --- --replay-all: the bot taken through the whole recorded match -----------------------------


@dataclass(frozen=True, slots=True)
class Answered:
    """The bot's answer at one decision of a whole-match replay."""

    asked: Asked
    #: The chosen legal action, or ``None`` when the answer was not a legal action.
    action: Action | None
    #: The answer as sent: ``index 3`` or ``text 'play:QS'``.
    sent: str
    #: Why the answer is not a legal action (``None`` when it is).
    problem: str | None
    ms: float

    @property
    def same(self) -> bool:
        """Whether the bot chose the recorded action."""
        return self.action is not None and self.action.text == self.asked.recorded


@dataclass(frozen=True, slots=True)
class SeatRun:
    """One seat's whole-match replay: every answer of its bot."""

    seat: int
    #: The bot's name and version from its Hello.
    bot: str
    answers: tuple[Answered, ...]
    #: The bot's last lines of output.
    output: tuple[str, ...]
    #: Each decision where its strategy failed (the SDK answered the first legal action).
    raised: tuple[Raised, ...] = ()

    @property
    def differ(self) -> list[Answered]:
        return [a for a in self.answers if not a.same]


def replay_seat(
    record: Record,
    match: MatchScript,
    seat: int,
    bot_command: str,
    timeout: float,
    sandbox: Limits | None = None,
    hide: Sequence[Path] = (),
) -> SeatRun:
    """Take a fresh bot started by ``bot_command`` (as :func:`ask` starts it) through the match
    as seat ``seat``; its answers, each judged against the recorded action.

    Raises :class:`ArenaError`, naming the decision, when the bot does not start, exits, sends
    garbage, closes its stream or does not answer a decision within ``timeout`` seconds.
    """
    script = next(s for s in match.seats if s.seat == seat)
    asking = Asking(bot_command, timeout, sandbox, hide)
    make = functools.partial(match.script, record.header, seat)
    served = serve_script(make, bot_seed(record.header, seat), asking)
    if served.end[0] != "done":
        # The decision asked when it failed: the one after those it answered.
        name = match.start.game.seat_names(match.start.config)[seat]
        asked = script.asked[min(len(served.answers), len(script.asked) - 1)]
        decision = f" decision {asked.number} (seat {name})"
        closed = f"closed its stream without answering{decision}"
        raise failure(served, asking, decision, closed)
    judged = []
    for _, k, answer, ms, _bot in served.answers:
        asked = script.asked[k]
        action, sent, problem = _choice(asked.legal, answer)
        judged.append(Answered(asked, action, sent, problem, ms))
    name = served.answers[0][4] if served.answers else ""
    return SeatRun(seat, name, tuple(judged), served.output, served.raised)


def _numbers(numbers: Sequence[int | None]) -> str:
    """The first of ``numbers`` (``?``: a decision the bot's log did not name)."""
    named = " ".join("?" if n is None else str(n) for n in numbers[:_NAMED])
    return named + (" …" if len(numbers) > _NAMED else "")


def _in_order(numbers: Sequence[int | None]) -> list[int | None]:
    return sorted(numbers, key=lambda n: (n is None, n or 0))


def _counted(decisions: int, differ: Sequence[int], failed: Sequence[int | None]) -> str:
    """``52 decisions, 3 differ: 5 17 40``, then ``, 2 failed: 5 9`` when the strategy failed."""
    k = len(differ)
    line = f"{decisions} decisions, {k} {'differs' if k == 1 else 'differ'}"
    line += f": {_numbers(differ)}" if k else ""
    return line + (f", {len(failed)} failed: {_numbers(failed)}" if failed else "")


def ask_all_command(
    path: Path,
    bot_command: str,
    timeout: float,
    out: TextIO,
    sandbox: Limits | None = None,
    seat: str | None = None,
    upto: int | None = None,
) -> int:
    """``arena replay ask --replay-all``: each seat's bot (a fresh process per seat; ``seat``
    for one) taken through the match, every decision asked; prints each one where the bot's
    answer differs from the record and each where its strategy failed (the SDK logged that it
    raised and answered the first legal action), then ``N decisions, K differ``. 0 when all
    agree, 1 when some differ or the strategy failed at some."""
    _checked(bot_command, timeout)
    record = read_record(path)
    where = str(path)
    start = start_state(record, where)
    number = None if seat is None else seat_index(start.game.seat_names(start.config), seat)
    match = match_script(record, where, number, upto)
    state = match.start
    match_id = str(record.header.get("match_id", ""))
    asked = 0
    differing: list[int] = []
    failing: list[int | None] = []
    for script in match.seats:
        run = replay_seat(record, match, script.seat, bot_command, timeout, sandbox, (path.parent,))
        numbers = [a.number for a in script.asked]
        failed = _write_seat(out, run, state, match_id, match.total, numbers)
        asked += len(run.answers)
        differing.extend(a.asked.number for a in run.differ)
        failing.extend(failed)
    out.write(f"replay-all: {_counted(asked, sorted(differing), _in_order(failing))}\n")
    return 1 if differing or failing else 0


def _write_seat(
    out: TextIO, run: SeatRun, state: MatchState, match_id: str, total: int, numbers: list[int]
) -> list[int | None]:
    """One seat's replay for people: each differing decision, each failure of the strategy (its
    traceback too), the bot's last output when some differ, then the seat's count; the numbers
    of the decisions that failed."""
    name = state.game.seat_names(state.config)[run.seat]
    for a in run.differ:
        asked = a.asked
        lines = _position_lines(
            state,
            match_id,
            asked.number,
            total,
            asked.observation,
            asked.legal,
            asked.recorded,
            asked.fallback,
        )
        lines.append(_bot_line(a.action, a.sent, a.problem, a.ms, run.bot, a.same))
        out.write("\n".join(lines) + "\n\n")
    if run.raised:
        k = len(run.raised)
        out.write(
            f"seat {name}: the strategy FAILED at {k} decision{'s' if k > 1 else ''}: the SDK "
            "played the first legal action at each, so those answers are not the strategy's\n"
        )
        out.write("".join(f"{line}\n" for line in raised_report(run.raised, numbers, True)))
    if run.differ and run.output:
        out.write(f"seat {name}: bot output (last {len(run.output)} lines):\n")
        out.write("".join(f"  {line}\n" for line in run.output))
    # A decision the SDK's line does not name (the author's own logging) still counts.
    known = {numbers[r.k] for r in run.raised if r.k is not None and 0 <= r.k < len(numbers)}
    unnamed = sum(1 for r in run.raised if r.k is None or not 0 <= r.k < len(numbers))
    failed: list[int | None] = [*sorted(known), *[None] * unnamed]
    differ = [a.asked.number for a in run.differ]
    out.write(f"seat {name}: {_counted(len(run.answers), differ, failed)}\n")
    out.flush()
    return failed
