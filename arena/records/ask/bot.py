"""The bot under ``arena replay ask``: started in a boxed arena as ``arena match`` starts a seat's
bot, taken through its script (:class:`arena.server.scripted.ScriptedSeat`, through the same hub
as a live match), watched for its answers, its exit and the time it takes, and stopped."""

from __future__ import annotations

import contextlib
import queue
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio

from arena.bots.command import BotProgram
from arena.bots.launch import start_bot
from arena.bots.process import bot_environment
from arena.bots.sandbox import Limits
from arena.boxed import boxed_arena
from arena.errors import ArenaError
from arena.layout import arena_home
from arena.records.ask.raised import LINE_CHARS, Raised, raised_in, unfolded
from arena.server import new_token
from arena.server.api import run_trio
from arena.server.scripted import Script

#: How many lines of the bot's output to show when it fails.
_LOG_TAIL = 8
#: Lines of the bot's output shown with its answer, a traceback in them unfolded
#: (:func:`~arena.records.ask.raised.unfolded`), and at most :data:`_SHOWN` lines in all.
OUTPUT_LINES = 20
_SHOWN = 200
#: Bytes read from the end of the bot's log for them (an SDK log line with a deep traceback fits).
_TAIL_BYTES = 65536
#: Seconds between two looks for the bot's answer.
_POLL_S = 0.02
#: Seconds the server may take to hand on an answer the bot sent just before it exited.
_LAST_WORD_S = 0.5
#: Seconds a bot may take to leave on its own once told the match ended (its end_match hook).
GOODBYE_S = 2.0


@dataclass(frozen=True, slots=True)
class Asking:
    """How to start the bot, and how long to wait for it."""

    #: The bot's command, as given (``--bot``).
    command: str
    #: Seconds each answer may take.
    timeout: float
    #: Its box's limits (``None``: a plain process).
    sandbox: Limits | None = None
    #: What its box must not show (the arena's home is never shown).
    hide: Sequence[Path] = ()


@dataclass(frozen=True, slots=True)
class Served:
    """What the bot did with its script."""

    #: ``("answer", k, Answer, ms, bot)``, one a decision answered.
    answers: list[tuple[Any, ...]]
    #: How it ended: ``("done",)``, ``("garbage", k, why)``, ``("closed", k)``,
    #: ``("exited", status)``, ``("timeout",)`` or ``("unstarted", why)``.
    end: tuple[Any, ...]
    #: The bot's last lines of output.
    output: tuple[str, ...]
    #: One line on its failure when it did not finish (see :func:`failure`).
    tail: str
    #: Each decision where its strategy failed and the SDK played the first legal action.
    raised: tuple[Raised, ...] = ()


def serve_script(
    make: Callable[[str], Script], seed: int, asking: Asking, goodbye_s: float = GOODBYE_S
) -> Served:
    """Start the bot with a fresh token (its seat's ``ARENA_SEED`` = ``seed``) and take it
    through ``make(token)``; ``goodbye_s``: how long it may take to leave once done (0: stopped
    at once). Nothing started outlives the call."""
    program = BotProgram.of_command(asking.command)  # stdio:CMD too
    check = [(f"--bot {asking.command!r}", program)]
    hide = (*asking.hide, arena_home())

    async def main() -> Served:
        async with boxed_arena(asking.sandbox, hide, check=check) as arena:
            token = new_token()
            seat = arena.server.add_script(make(token))
            # As a seat's bot: ARENA_ADDRESS (the socket's when confined), ARENA_TOKEN, and
            # ARENA_SEED = the seat's seed in that match.
            env = bot_environment(arena.address(), token, seed)
            log = arena.box.directory / "bot.log"  # through a capped pipe, as in a match
            try:
                bot = await start_bot(
                    program, env, log, arena.box.confinement, arena.server.attach_stdio
                )
            except (OSError, ArenaError) as err:
                return Served([], ("unstarted", str(err)), (), "")
            answers: list[tuple[Any, ...]] = []
            exits: list[int] = []

            async def watch() -> None:
                exits.append(await bot.wait())

            try:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(watch)
                    end = await _follow(seat.results, exits, asking.timeout, answers, goodbye_s)
                    nursery.cancel_scope.cancel()
            finally:
                with trio.CancelScope(shield=True):
                    await bot.stop()
            output = unfolded(tail_lines(log, OUTPUT_LINES))[-_SHOWN:]
            decisions = {a[2].request_id: a[1] for a in answers}
            return Served(answers, end, tuple(output), _tail(log), raised_in(log, decisions))

    return run_trio(main)


async def _follow(
    results: queue.SimpleQueue[tuple[Any, ...]],
    exits: list[int],
    timeout: float,
    answers: list[tuple[Any, ...]],
    goodbye_s: float,
) -> tuple[Any, ...]:
    """Collect the bot's answers until its script ends or it fails; how it ended."""
    while (got := await _next(results, exits, timeout))[0] == "answer":
        answers.append(got)
    if got[0] in ("closed", "done"):
        # A crashed bot's stream breaks first: its exit status says more. A bot told the match
        # is over may leave on its own (its end_match hook runs).
        with trio.move_on_after(_LAST_WORD_S if got[0] == "closed" else goodbye_s):
            while not exits:
                await trio.sleep(_POLL_S)
        if exits and got[0] == "closed":
            got = ("exited", exits[0])
    return got


async def _next(
    results: queue.SimpleQueue[tuple[Any, ...]], exits: list[int], timeout: float
) -> tuple[Any, ...]:
    """The script's next result, or ``("exited", status)`` or ``("timeout",)``."""
    with trio.move_on_after(timeout):
        while True:
            with contextlib.suppress(queue.Empty):
                return results.get_nowait()
            if exits:
                # Its last message may still be on the way: give the server a moment.
                with trio.move_on_after(_LAST_WORD_S):
                    while True:
                        with contextlib.suppress(queue.Empty):
                            return results.get_nowait()
                        await trio.sleep(_POLL_S)
                return ("exited", exits[0])
            await trio.sleep(_POLL_S)
    return ("timeout",)


def tail_lines(path: Path, count: int = _LOG_TAIL) -> list[str]:
    """The bot's last ``count`` output lines, from the end of its log only (a chatty bot's is
    large), whole (:func:`~arena.records.ask.raised.unfolded` cuts them for people)."""
    try:
        with path.open("rb") as f:
            f.seek(max(0, path.stat().st_size - _TAIL_BYTES))
            text = f.read(_TAIL_BYTES).decode(errors="replace")
    except OSError:
        return []
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    return lines[-count:]


def _tail(path: Path) -> str:
    """The bot's last output lines on one line, for an error message."""
    return " | ".join(line[:LINE_CHARS] for line in tail_lines(path))


def failure(served: Served, asking: Asking, decision: str = "", closed: str = "") -> ArenaError:
    """The one-line error for a bot that did not finish its script; ``decision`` names the one
    it was asked (`` decision 12 (seat N)``) in a whole-match replay, and ``closed`` is the
    script's word for a stream that ended without an answer."""
    got, command = served.end, asking.command
    output = served.tail or "-"
    if got[0] == "unstarted":
        return ArenaError(f"cannot start bot {command!r}: {got[1]}")
    if got[0] == "garbage":
        at = f" at{decision}" if decision else ""
        return ArenaError(f"bot {command!r}: sent garbage{at}: {got[2]}; output: {output}")
    if got[0] == "closed":
        return ArenaError(f"bot {command!r}: {closed}; output: {output}")
    if got[0] == "exited":
        return ArenaError(
            f"bot {command!r} exited with status {got[1]} before answering{decision}; "
            f"output: {output}"
        )
    return ArenaError(
        f"bot {command!r} did not answer{decision} within {asking.timeout:g} s; output: {output}"
    )
