"""``arena replay ask``: put one recorded decision to a bot over the real protocol.

For debugging a bot on a position it (or another bot) met in a match: the record is replayed
(and verified) up to decision K, a one-decision gRPC server starts on a free loopback port and a
Unix socket, the bot command is launched as ``arena match`` launches a seat's bot (sandboxed unless
told not to, :func:`arena.bots.launch.start_bot`; ``ARENA_ADDRESS``, ``ARENA_TOKEN``,
``ARENA_SEED`` = the seat's seed in that match), and the bot gets what it would have got in the
match: Welcome, MatchStart, every event its seat could see up to then, then the DecisionRequest
with the seat's observation and legal actions, all encoded by :mod:`arena.protocol.codec`. Its
answer is printed next to the recorded action; a MatchEnd then lets the bot finish cleanly.

The server is a small servicer of its own rather than :class:`arena.server.ArenaServer`, whose
matches always start from the deal: here the match starts from a replayed state, and nothing
but one decision is refereed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import queue
import secrets
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import grpc
import trio
from cardarena import messages, rpc

from arena.bots.command import BotProgram
from arena.bots.launch import Confinement, check_in_box, start_bot
from arena.bots.process import bot_environment
from arena.bots.reaper import bot_run
from arena.bots.sandbox import SOCKET_NAME, Limits, prepare_socket
from arena.errors import ArenaError, UsageError
from arena.layout import arena_home
from arena.protocol import codec
from arena.records.format import Record, read_record
from arena.records.replay import replay
from arena.seeds import seat_seed
from arena.version import arena_version
from engine import Action, MatchState, Result

#: How many lines of the bot's output to show when it fails.
_LOG_TAIL = 8
#: Lines of the bot's output shown with its answer (a traceback fits).
_OUTPUT_LINES = 20
#: Bytes read from the end of the bot's log for them, and characters shown of each.
_TAIL_BYTES = 8192
_LINE_CHARS = 300
#: Seconds between two looks for the bot's answer.
_POLL_S = 0.02
#: Seconds the server may take to hand on an answer the bot sent just before it exited.
_LAST_WORD_S = 0.5


@dataclass(frozen=True, slots=True)
class Position:
    """A recorded decision, replayed: the state before it and what was recorded."""

    #: Decision number, from 0.
    number: int
    #: Decisions in the record.
    total: int
    #: The engine state before the decision (a private copy).
    state: MatchState
    #: The deciding seat.
    seat: int
    #: The recorded action text.
    recorded: str
    #: Whether the recorded action was the referee's fallback for a faulted bot.
    fallback: bool


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

    @property
    def same(self) -> bool:
        """Whether the bot chose the recorded action."""
        return self.action is not None and self.action.text == self.position.recorded


def find_position(record: Record, at: int, where: str = "record") -> Position:
    """Replay ``record`` to decision ``at`` (then to the end, to verify it all)."""
    found: Position | None = None
    total = 0
    for step in replay(record, where):
        if step.number == at:
            state = step.state.clone()
            seat = state.to_move
            assert seat is not None
            found = Position(
                at,
                0,
                state,
                seat,
                str(step.entry.get("action")),
                bool(step.entry.get("fallback", False)),
            )
        total += 1
    if found is None:
        last = f"0 to {total - 1}" if total else "none"
        raise UsageError(f"--at {at} is out of range: the record has {total} decisions ({last})")
    return Position(found.number, total, found.state, found.seat, found.recorded, found.fallback)


def _seat_seed(match_seed: int, seat: int) -> int:
    """The seed the seat's bot got in the match (``ARENA_SEED``)."""
    return seat_seed(match_seed, seat)


class _OneDecision(rpc.ArenaServicer):
    """An Arena service that plays exactly one decision with the bot holding ``token``."""

    def __init__(self, header: dict[str, Any], position: Position, token: str) -> None:
        self._header = header
        self._pos = position
        self._token = token
        self._request_id = 1 + secrets.randbelow(1 << 31)
        self._match_id = f"replay-ask-{header.get('match_id') or 'match'}-{position.number}"
        #: ``("answer", Answer, ms, hello)`` or ``("error", why)``; the first one counts.
        self.results: queue.SimpleQueue[tuple[Any, ...]] = queue.SimpleQueue()
        self._done = threading.Event()

    def Play(
        self, request_iterator: Iterator[rpc.BotMessage], context: grpc.ServicerContext
    ) -> Iterator[rpc.ServerMessage]:
        first = next(request_iterator, None)
        hello = codec.read_bot_message(first) if first is not None else None
        if not isinstance(hello, messages.Hello):
            self.results.put(("error", "the bot's first message was not a Hello"))
            yield codec.server_message(messages.Rejected("the first message must be Hello"))
            return
        if hello.token != self._token:
            yield codec.server_message(messages.Rejected("unknown token"))
            return
        if self._done.is_set():  # a reconnect after the answer: nothing more to play
            yield codec.server_message(
                messages.Rejected("the replayed decision is already answered")
            )
            return
        yield codec.server_message(messages.Welcome(arena_version(), f"ask-{secrets.token_hex(3)}"))
        yield from self._position_messages(hello)
        start = time.perf_counter()
        for msg in request_iterator:
            got = codec.read_bot_message(msg)
            if isinstance(got, messages.Ping):
                yield codec.server_message(messages.Pong(got.nonce))
            elif isinstance(got, messages.Answer) and got.request_id == self._request_id:
                ms = (time.perf_counter() - start) * 1000.0
                self._done.set()
                self.results.put(("answer", got, ms, f"{hello.bot_name} {hello.bot_version}"))
                break
            elif isinstance(got, messages.Answer):
                yield codec.server_message(
                    messages.ErrorInfo(
                        "unknown_request",
                        f"no open request {got.request_id}",
                        match_id=self._match_id,
                        request_id=got.request_id,
                    )
                )
        else:
            self.results.put(("error", "the bot closed its stream without answering"))
            return
        n = self._pos.state.num_seats
        end = Result((0.0,) * n, (1,) * n, "replay", summary="one decision asked from a record")
        yield codec.server_message(messages.MatchEnd(self._match_id, codec.result_value(end)))

    def _position_messages(self, hello: messages.Hello) -> Iterator[rpc.ServerMessage]:
        h, pos = self._header, self._pos
        state, seat = pos.state, pos.seat
        names = state.game.seat_names(state.config)
        seats = {s.get("seat"): s for s in h.get("seats") or [] if isinstance(s, dict)}
        # The match's time control when it had one (self-play records have none). The header's
        # check makes them finite numbers of ms; held to what the protocol can carry.
        tc = h.get("time_control")
        time_control = (
            messages.TimeControl(
                *(min(int(tc[k]), messages.MAX_TIME_MS) for k in ("move_ms", "bank_ms"))
            )
            if isinstance(tc, dict)
            else messages.TimeControl()
        )
        yield codec.server_message(
            messages.MatchStart(
                match_id=self._match_id,
                game=state.game.id,
                game_version=state.game.version,
                options={k: codec.option_text(v) for k, v in state.config.options},
                seats=(seat,),
                players=tuple(
                    messages.PlayerInfo(
                        s,
                        names[s],
                        str(seats.get(s, {}).get("bot_name", "")),
                        str(seats.get(s, {}).get("bot_version", "")),
                    )
                    for s in range(state.num_seats)
                ),
                time_control=time_control,
                fault_policy=str(h.get("fault_policy") or "lenient"),
                bot_seed=_seat_seed(int(h.get("seed", 0)), seat),
            )
        )
        events = [
            # Numbered over what the seat may see, as the arena numbers them.
            codec.event_body(self._match_id, seq, event)
            for seq, event in enumerate(state.visible_events(seat))
        ]
        if not hello.batch_events:
            yield from (codec.server_message_of(codec.event_bytes(e)) for e in events)
        # As the arena sends it: with batch_events the events ride in the request.
        request = codec.decision_bytes(
            self._request_id,
            self._match_id,
            seat,
            state.game.id,
            state.observation(seat),
            state.legal_actions(),
            time_control.move_ms,
            time_control.bank_ms,
            events=events if hello.batch_events else (),
            text=not hello.omit_text,
            json=not hello.omit_json,
        )
        yield codec.server_message_of(request)


def _tail_lines(path: Path, count: int = _LOG_TAIL) -> list[str]:
    """The bot's last ``count`` output lines, from the end of its log only (a chatty bot's is
    large), each cut to :data:`_LINE_CHARS` characters."""
    try:
        with path.open("rb") as f:
            f.seek(max(0, path.stat().st_size - _TAIL_BYTES))
            text = f.read(_TAIL_BYTES).decode(errors="replace")
    except OSError:
        return []
    lines = [line.rstrip()[:_LINE_CHARS] for line in text.splitlines() if line.strip()]
    return lines[-count:]


def _tail(path: Path) -> str:
    """The bot's last output lines on one line, for an error message."""
    return " | ".join(_tail_lines(path))


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
    if not bot_command.strip():
        raise UsageError("--bot needs a command")
    if timeout <= 0:
        raise UsageError("--timeout must be positive")
    pos = find_position(record, at, where)
    token = secrets.token_urlsafe(16)
    service = _OneDecision(record.header, pos, token)
    program = BotProgram(bot_command)
    with bot_run() as run:
        confinement = Confinement.of_run(run, sandbox, hide=(*hide, arena_home()))
        check_in_box([(f"--bot {bot_command!r}", program)], confinement)
        server = grpc.server(ThreadPoolExecutor(max_workers=4), options=list(rpc.SERVER_OPTIONS))
        rpc.add_arena_servicer(service, server)
        sock = run.socket_dir / SOCKET_NAME
        try:
            port = server.add_insecure_port("127.0.0.1:0")
            listening = port != 0 and server.add_insecure_port(f"unix:{sock}") != 0
        except RuntimeError:
            listening = False
        if not listening:
            raise ArenaError("cannot listen on a loopback port and a Unix socket")
        server.start()
        try:
            prepare_socket(sock)  # a boxed bot runs as uid nobody
            # As a seat's bot: ARENA_ADDRESS (the socket's when confined), ARENA_TOKEN, and
            # ARENA_SEED = the seat's seed in that match.
            seed = _seat_seed(int(record.header.get("seed", 0)), pos.seat)
            env = bot_environment(f"127.0.0.1:{port}", token, seed)
            log = run.directory / "bot.log"  # through a capped pipe, as in a match
            got = trio.run(_ask_bot, service, program, env, log, confinement, timeout)
            if got[0] == "unstarted":
                raise ArenaError(f"cannot start bot {bot_command!r}: {got[1]}")
            if got[0] == "error":
                raise ArenaError(f"bot {bot_command!r}: {got[1]}; output: {_tail(log) or '-'}")
            if got[0] == "exited":
                raise ArenaError(
                    f"bot {bot_command!r} exited with status {got[1]} before answering; "
                    f"output: {_tail(log) or '-'}"
                )
            if got[0] == "timeout":
                raise ArenaError(
                    f"bot {bot_command!r} did not answer within {timeout:g} s; "
                    f"output: {_tail(log) or '-'}"
                )
            shown = tuple(_tail_lines(log, _OUTPUT_LINES))
        finally:
            server.stop(grace=None)
    _, answer, ms, bot = got
    return dataclasses.replace(_judge(pos, answer, ms, bot), output=shown)


async def _ask_bot(
    service: _OneDecision,
    program: BotProgram,
    env: dict[str, str],
    log: Path,
    confinement: Confinement,
    timeout: float,
) -> tuple[Any, ...]:
    """Start the bot, wait for its answer, its exit or ``timeout``, and stop it: what happened,
    as ``service.results`` has it, or ``("exited", status)``, ``("timeout",)``,
    ``("unstarted", why)``."""
    try:
        bot = await start_bot(program, env, log, confinement)
    except (OSError, ArenaError) as err:
        return ("unstarted", str(err))
    exits: list[int] = []

    async def watch() -> None:
        exits.append(await bot.wait())

    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch)
            got = await _answer(service, exits, timeout)
            nursery.cancel_scope.cancel()
    finally:
        with trio.CancelScope(shield=True):
            await bot.stop()
    return got


async def _answer(service: _OneDecision, exits: list[int], timeout: float) -> tuple[Any, ...]:
    with trio.move_on_after(timeout):
        while True:
            with contextlib.suppress(queue.Empty):
                return service.results.get_nowait()
            if exits:
                # Its last message may still be on the way: give the server a moment.
                with trio.move_on_after(_LAST_WORD_S):
                    while True:
                        with contextlib.suppress(queue.Empty):
                            return service.results.get_nowait()
                        await trio.sleep(_POLL_S)
                return ("exited", exits[0])
            await trio.sleep(_POLL_S)
    return ("timeout",)


def _judge(pos: Position, answer: messages.Answer, ms: float, bot: str) -> AskOutcome:
    legal = pos.state.legal_actions()
    if answer.index is not None:
        sent = f"index {answer.index}"
        if answer.index < len(legal):
            return AskOutcome(pos, legal[answer.index], sent, None, ms, bot)
        return AskOutcome(pos, None, sent, f"index out of range (0..{len(legal) - 1})", ms, bot)
    if answer.text is not None:
        sent = f"text {answer.text!r}"
        for action in legal:
            if action.text == answer.text.strip():
                return AskOutcome(pos, action, sent, None, ms, bot)
        return AskOutcome(pos, None, sent, "not a legal action", ms, bot)
    return AskOutcome(pos, None, "an Action with neither index nor text", "garbage", ms, bot)


def report(outcome: AskOutcome, record: Record) -> str:
    """The answer next to the recorded one, for people."""
    pos = outcome.position
    state = pos.state
    names = state.game.seat_names(state.config)
    legal = state.legal_actions()
    match_id = record.header.get("match_id", "")
    lines = [
        f"{state.game.id} match {match_id}: decision {pos.number} of {pos.total}, "
        f"seat {names[pos.seat]} to move",
        *("  " + line for line in state.observation(pos.seat).render().splitlines()),
        f"legal ({len(legal)}): {' '.join(a.text for a in legal)}",
        f"recorded: {pos.recorded}" + ("  (the referee's fallback)" if pos.fallback else ""),
    ]
    if outcome.action is not None:
        verdict = "same as recorded" if outcome.same else "DIFFERENT from the record"
        lines.append(
            f"bot:      {outcome.action.text}  ({outcome.sent}, {outcome.ms:.1f} ms, "
            f"{outcome.bot.strip()}) - {verdict}"
        )
    else:
        lines.append(f"bot:      {outcome.sent}: {outcome.problem} - not a legal action")
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
    """``arena replay ask``: 0 when the bot chose the recorded action, 1 when it did not.

    ``sandbox``: the limits of the bot's box (``None``: a plain process); the box does not show
    the record's directory.
    """
    record = read_record(path)
    outcome = ask(record, at, bot_command, timeout, str(path), sandbox, hide=(path.parent,))
    out.write(report(outcome, record) + "\n")
    return 0 if outcome.same else 1
