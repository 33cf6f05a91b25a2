"""``arena replay ask``: put one recorded decision to a bot over the real protocol.

For debugging a bot on a position it (or another bot) met in a match: the record is replayed
(and verified) up to decision K, a one-decision gRPC server starts on a free loopback port and a
Unix socket, the bot command is launched as ``arena match`` launches a seat's bot (sandboxed unless
told not to, :func:`arena.bots.launch.start_bot`; ``ARENA_ADDRESS``, ``ARENA_TOKEN``,
``ARENA_SEED`` = the seat's seed in that match), and the bot gets what it would have got in the
match: Welcome, MatchStart, every event its seat could see up to then, then the DecisionRequest
with the seat's observation and legal actions, all encoded by :mod:`arena.protocol.codec`. Its
answer is printed next to the recorded action; a MatchEnd then lets the bot finish cleanly.

``--replay-all`` (:func:`ask_all_command`) takes a fresh bot per seat through the whole match
instead: the events in order, every decision asked and the recorded action played whatever the
answer, then MatchEnd. A bot that keeps state (its generator seeded from ``bot_seed``, cards
counted from events) is then asked each decision in the state the match had left it in.

The server is a small servicer of its own rather than :class:`arena.server.ArenaServer`, whose
matches always start from the deal: here the match starts from a replayed state, and nothing
but one decision is refereed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import queue
import secrets
import threading
import time
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
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
from arena.bots.reaper import BotRun, bot_run
from arena.bots.sandbox import SOCKET_NAME, Limits, prepare_socket
from arena.errors import ArenaError, UsageError
from arena.layout import arena_home
from arena.protocol import codec
from arena.records.format import Record, read_record
from arena.records.replay import replay, start_state
from arena.seeds import seat_seed
from arena.version import arena_version
from engine import Action, Event, MatchState, Observation, Result

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


def _time_control(h: Mapping[str, Any]) -> messages.TimeControl:
    """The match's time control when it had one (self-play records have none). The header's
    check makes them finite numbers of ms; held to what the protocol can carry."""
    tc = h.get("time_control")
    if not isinstance(tc, dict):
        return messages.TimeControl()
    return messages.TimeControl(
        *(min(int(tc[k]), messages.MAX_TIME_MS) for k in ("move_ms", "bank_ms"))
    )


def _match_start(
    h: Mapping[str, Any], state: MatchState, seat: int, match_id: str
) -> messages.MatchStart:
    """The MatchStart the seat's bot got in the match, under ``match_id``."""
    names = state.game.seat_names(state.config)
    seats = {s.get("seat"): s for s in h.get("seats") or [] if isinstance(s, dict)}
    return messages.MatchStart(
        match_id=match_id,
        game=state.game.id,
        game_version=state.game.version,
        options={k: codec.option_to_text(v) for k, v in state.config.options},
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
        time_control=_time_control(h),
        fault_policy=str(h.get("fault_policy") or "lenient"),
        bot_seed=_seat_seed(int(h.get("seed", 0)), seat),
    )


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
        hello = codec.bot_proto_to_plain(first) if first is not None else None
        if not isinstance(hello, messages.Hello):
            self.results.put(("error", "the bot's first message was not a Hello"))
            yield codec.plain_to_proto(messages.Rejected("the first message must be Hello"))
            return
        if hello.token != self._token:
            yield codec.plain_to_proto(messages.Rejected("unknown token"))
            return
        if self._done.is_set():  # a reconnect after the answer: nothing more to play
            yield codec.plain_to_proto(
                messages.Rejected("the replayed decision is already answered")
            )
            return
        yield codec.plain_to_proto(messages.Welcome(arena_version(), f"ask-{secrets.token_hex(3)}"))
        yield from self._position_messages(hello)
        start = time.perf_counter()
        for msg in request_iterator:
            got = codec.bot_proto_to_plain(msg)
            if isinstance(got, messages.Ping):
                yield codec.plain_to_proto(messages.Pong(got.nonce))
            elif isinstance(got, messages.Answer) and got.request_id == self._request_id:
                ms = (time.perf_counter() - start) * 1000.0
                self._done.set()
                self.results.put(("answer", got, ms, f"{hello.bot_name} {hello.bot_version}"))
                break
            elif isinstance(got, messages.Answer):
                yield codec.plain_to_proto(
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
        yield codec.plain_to_proto(
            messages.MatchEnd(self._match_id, codec.engine_result_to_plain(end))
        )

    def _position_messages(self, hello: messages.Hello) -> Iterator[rpc.ServerMessage]:
        h, pos = self._header, self._pos
        state, seat = pos.state, pos.seat
        time_control = _time_control(h)
        yield codec.plain_to_proto(_match_start(h, state, seat, self._match_id))
        events = [
            # Numbered over what the seat may see, as the arena numbers them.
            codec.event_to_body(self._match_id, seq, event)
            for seq, event in enumerate(state.visible_events(seat))
        ]
        if not hello.batch_events:
            yield from (codec.bytes_to_proto(codec.event_body_to_bytes(e)) for e in events)
        # As the arena sends it: with batch_events the events ride in the request.
        request = codec.decision_to_bytes(
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
        yield codec.bytes_to_proto(request)


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
    register = functools.partial(rpc.add_arena_servicer, service)
    with _serving(register, bot_command, program, sandbox, hide) as (run, confinement, port):
        # As a seat's bot: ARENA_ADDRESS (the socket's when confined), ARENA_TOKEN, and
        # ARENA_SEED = the seat's seed in that match.
        seed = _seat_seed(int(record.header.get("seed", 0)), pos.seat)
        env = bot_environment(f"127.0.0.1:{port}", token, seed)
        log = run.directory / "bot.log"  # through a capped pipe, as in a match
        got = trio.run(_ask_bot, service, program, env, log, confinement, timeout)
        if got[0] != "answer":
            raise _failure(got, bot_command, timeout, log)
        shown = tuple(_tail_lines(log, _OUTPUT_LINES))
    _, answer, ms, bot = got
    return dataclasses.replace(_judge(pos, answer, ms, bot), output=shown)


@contextlib.contextmanager
def _serving(
    register: Callable[[grpc.Server], None],
    bot_command: str,
    program: BotProgram,
    sandbox: Limits | None,
    hide: Sequence[Path],
) -> Iterator[tuple[BotRun, Confinement, int]]:
    """A run for the bot (its directory and cgroups), its confinement (the command checked in
    it), and a gRPC server that ``register`` fills, listening on a free loopback port and the
    run's Unix socket: ``(run, confinement, port)``. All of it is gone when the block ends."""
    with bot_run() as run:
        confinement = Confinement.of_run(run, sandbox, hide=(*hide, arena_home()))
        check_in_box([(f"--bot {bot_command!r}", program)], confinement)
        server = grpc.server(ThreadPoolExecutor(max_workers=4), options=list(rpc.SERVER_OPTIONS))
        register(server)
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
            yield run, confinement, port
        finally:
            server.stop(grace=None)


def _failure(
    got: tuple[Any, ...], bot_command: str, timeout: float, log: Path, decision: str = ""
) -> ArenaError:
    """The one-line error for a bot that gave no answer (``got`` as :func:`_ask_bot` returns
    it); ``decision`` names the one it was asked (`` decision 12 (seat N)``) in a whole-match
    replay, where ``error`` and ``closed`` already name it."""
    output = _tail(log) or "-"
    if got[0] == "unstarted":
        return ArenaError(f"cannot start bot {bot_command!r}: {got[1]}")
    if got[0] in ("error", "closed"):
        return ArenaError(f"bot {bot_command!r}: {got[1]}; output: {output}")
    if got[0] == "exited":
        return ArenaError(
            f"bot {bot_command!r} exited with status {got[1]} before answering{decision}; "
            f"output: {output}"
        )
    return ArenaError(
        f"bot {bot_command!r} did not answer{decision} within {timeout:g} s; output: {output}"
    )


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
            got = await _answer(service.results, exits, timeout)
            nursery.cancel_scope.cancel()
    finally:
        with trio.CancelScope(shield=True):
            await bot.stop()
    return got


async def _answer(
    results: queue.SimpleQueue[tuple[Any, ...]], exits: list[int], timeout: float
) -> tuple[Any, ...]:
    """The service's next result, or ``("exited", status)`` or ``("timeout",)``."""
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


def _judge(pos: Position, answer: messages.Answer, ms: float, bot: str) -> AskOutcome:
    action, sent, problem = _choice(pos.state.legal_actions(), answer)
    return AskOutcome(pos, action, sent, problem, ms, bot)


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


# --- --replay-all: the bot taken through the whole recorded match -----------------------------

#: Seconds a bot may take to leave on its own once told the match ended (its end_match hook).
_GOODBYE_S = 2.0
#: Differing decisions named in a summary line.
_NAMED = 20


@dataclass(frozen=True, slots=True)
class Asked:
    """One decision of the replayed seat, and the events that seat saw since its previous one."""

    #: Decision number in the record, from 0.
    number: int
    #: The recorded action text.
    recorded: str
    #: Whether the recorded action was the referee's fallback for a faulted bot.
    fallback: bool
    #: What the seat was sent: its observation and legal actions.
    observation: Observation
    legal: tuple[Action, ...]
    #: The events the seat saw since its previous decision, the first numbered ``seq``.
    events: tuple[Event, ...]
    seq: int


@dataclass(frozen=True, slots=True)
class SeatScript:
    """What the bot of one seat is sent, from the match's start to its end."""

    seat: int
    asked: tuple[Asked, ...]
    #: The events after its last decision (none when the replay stops at a decision).
    tail: tuple[Event, ...]
    tail_seq: int


@dataclass(frozen=True, slots=True)
class MatchScript:
    """A record replayed for ``--replay-all``."""

    #: A fresh state of the match (its game, options and seats).
    start: MatchState
    #: Decisions in the record.
    total: int
    #: The seats to replay, each with at least one decision.
    seats: tuple[SeatScript, ...]
    #: The match's result and faults, as MatchEnd told the bots; ``None`` when the replay stops
    #: at a decision (``--at K``).
    result: Result | None
    faults: tuple[messages.FaultInfo, ...]


def match_script(
    record: Record, where: str = "record", seat: int | None = None, upto: int | None = None
) -> MatchScript:
    """Replay (and check) the whole record and script the bots of ``seat`` (default: every
    seat that decided); with ``upto``, only the seat of decision ``upto``, up to it."""
    start = start_state(record, where)
    n = start.num_seats
    read = [0] * n  # engine events each seat has been sent
    seqs = [0] * n
    asked: list[list[Asked]] = [[] for _ in range(n)]
    total = 0
    final: MatchState | None = None
    upto_seat: int | None = None
    for step in replay(record, where):
        total += 1
        state = final = step.state
        if upto is not None and step.number > upto:
            continue
        s = state.to_move
        assert s is not None
        new = tuple(state.visible_events(s, read[s]))
        read[s] = len(state.events)
        asked[s].append(
            Asked(
                step.number,
                str(step.entry.get("action")),
                bool(step.entry.get("fallback", False)),
                state.observation(s),
                tuple(state.legal_actions()),
                new,
                seqs[s],
            )
        )
        seqs[s] += len(new)
        upto_seat = s
    if upto is not None:
        if upto >= total or upto < 0:
            last = f"0 to {total - 1}" if total else "none"
            raise UsageError(
                f"--at {upto} is out of range: the record has {total} decisions ({last})"
            )
        seat = upto_seat
    wanted = range(n) if seat is None else (seat,)
    scripts = tuple(
        SeatScript(
            s,
            tuple(asked[s]),
            () if upto is not None or final is None else tuple(final.visible_events(s, read[s])),
            seqs[s],
        )
        for s in wanted
        if asked[s]
    )
    result = None if upto is not None or final is None else final.result()
    return MatchScript(start, total, scripts, result, _recorded_faults(record, n))


def _recorded_faults(record: Record, seats: int) -> tuple[messages.FaultInfo, ...]:
    """The result line's faults, as MatchEnd carried them (those of the wrong form left out:
    replaying without ``strict`` leaves them unchecked)."""
    listed = record.result.get("faults")
    return tuple(
        messages.FaultInfo(f["seat"], f["kind"], f["detail"])
        for f in (listed if isinstance(listed, list) else [])
        if isinstance(f, dict)
        and isinstance(f.get("seat"), int)
        and not isinstance(f.get("seat"), bool)
        and 0 <= f["seat"] < seats
        and isinstance(f.get("kind"), str)
        and isinstance(f.get("detail"), str)
    )


class _WholeMatch:
    """An Arena service that takes the bot holding ``token`` through the recorded match as its
    seat saw it: MatchStart, the events in order, each decision asked and the recorded action
    played whatever the answer, and MatchEnd with the recorded result.

    It reads bytes, as the arena's server does, so that bytes which are no BotMessage are
    garbage to report rather than a stream ended without a word.
    """

    def __init__(self, header: Mapping[str, Any], match: MatchScript, seat: int, token: str):
        self._header = header
        self._match = match
        self._script = next(s for s in match.seats if s.seat == seat)
        self._token = token
        self._match_id = str(header.get("match_id") or "replay")
        self._first_id = 1 + secrets.randbelow(1 << 30)
        names = match.start.game.seat_names(match.start.config)
        self._seat_name = names[seat]
        #: ``("answer", k, Answer, ms, bot)`` per decision, then ``("done",)``; or
        #: ``("error", why)`` or ``("closed", why)``, which name the decision.
        self.results: queue.SimpleQueue[tuple[Any, ...]] = queue.SimpleQueue()
        #: Index in the seat's script of the decision asked now.
        self.asking = 0
        self._lock = threading.Lock()
        self._taken = False

    def register(self, server: grpc.Server) -> None:
        handlers = {
            "Play": grpc.stream_stream_rpc_method_handler(
                self.Play, response_serializer=codec.proto_to_bytes
            )
        }
        name = rpc.service_name("Arena")
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(name, handlers),))

    def decision(self, k: int | None = None) -> str:
        """`` decision 12 (seat N)``: the one asked now, or the ``k``-th of the seat."""
        asked = self._script.asked[self.asking if k is None else k]
        return f" decision {asked.number} (seat {self._seat_name})"

    def Play(self, requests: Iterator[bytes], context: grpc.ServicerContext) -> Iterator[Any]:
        try:
            first = next(requests, None)
        except grpc.RpcError:
            first = None
        hello = codec.bot_bytes_to_plain(first) if first is not None else None
        if not isinstance(hello, messages.Hello):
            why = f"sent garbage before{self.decision()}: its first message was not a Hello"
            self.results.put(("error", why))
            yield codec.plain_to_proto(messages.Rejected("the first message must be Hello"))
            return
        if hello.token != self._token:
            yield codec.plain_to_proto(messages.Rejected("unknown token"))
            return
        with self._lock:
            taken, self._taken = self._taken, True
        if taken:  # a reconnect: the replay went on (or failed) with the first stream
            yield codec.plain_to_proto(messages.Rejected("the replay is under way on a stream"))
            return
        bot = f"{hello.bot_name} {hello.bot_version}"
        yield codec.plain_to_proto(messages.Welcome(arena_version(), f"ask-{secrets.token_hex(3)}"))
        yield codec.plain_to_proto(
            _match_start(self._header, self._match.start, self._script.seat, self._match_id)
        )
        for k, asked in enumerate(self._script.asked):
            self.asking = k
            events = [
                codec.event_to_body(self._match_id, asked.seq + i, e)
                for i, e in enumerate(asked.events)
            ]
            if not hello.batch_events:
                yield from (codec.event_body_to_bytes(e) for e in events)
            yield self._request(hello, asked, self._first_id + k, events)
            start = time.perf_counter()
            got = yield from self._reply(requests, self._first_id + k)
            if not isinstance(got, messages.Answer):
                self.results.put(got)
                return
            self.results.put(("answer", k, got, (time.perf_counter() - start) * 1000.0, bot))
        # Done before MatchEnd goes out: a bot may leave as soon as it has it, and gRPC need
        # not resume this generator once the stream is gone.
        self.results.put(("done",))
        yield from self._end()

    def _request(
        self, hello: messages.Hello, asked: Asked, request_id: int, events: list[bytes]
    ) -> bytes:
        tc = _time_control(self._header)
        return codec.decision_to_bytes(
            request_id,
            self._match_id,
            self._script.seat,
            self._match.start.game.id,
            asked.observation,
            asked.legal,
            tc.move_ms,
            tc.bank_ms,
            events=events if hello.batch_events else (),
            text=not hello.omit_text,
            json=not hello.omit_json,
        )

    def _reply(
        self, requests: Iterator[bytes], request_id: int
    ) -> Generator[Any, None, messages.Answer | tuple[str, str]]:
        """Pongs and errors for the bot until its answer to ``request_id``, returned; or what
        went wrong instead, naming the decision."""
        try:
            for data in requests:
                got = codec.bot_bytes_to_plain(data)
                if isinstance(got, messages.Ping):
                    yield codec.plain_to_proto(messages.Pong(got.nonce))
                elif isinstance(got, messages.Answer) and got.request_id == request_id:
                    return got
                elif isinstance(got, messages.Answer):
                    yield codec.plain_to_proto(
                        messages.ErrorInfo(
                            "unknown_request",
                            f"no open request {got.request_id}",
                            match_id=self._match_id,
                            request_id=got.request_id,
                        )
                    )
                else:
                    why = got.why if isinstance(got, messages.Garbage) else "a second Hello"
                    return ("error", f"sent garbage at{self.decision()}: {why}")
        except grpc.RpcError:  # the stream broke (the bot's side cancelled it)
            return ("closed", f"its stream broke before answering{self.decision()}")
        return ("closed", f"closed its stream without answering{self.decision()}")

    def _end(self) -> Iterator[Any]:
        """The events after the seat's last decision, then MatchEnd."""
        script, match = self._script, self._match
        for i, event in enumerate(script.tail):
            yield codec.event_body_to_bytes(
                codec.event_to_body(self._match_id, script.tail_seq + i, event)
            )
        result = match.result
        if result is None:  # stopped at a decision (--at K): nothing was decided after it
            n = match.start.num_seats
            result = Result((0.0,) * n, (1,) * n, "replay", summary="replayed up to a decision")
        end = messages.MatchEnd(self._match_id, codec.engine_result_to_plain(result), match.faults)
        yield codec.plain_to_proto(end)


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
    token = secrets.token_urlsafe(16)
    service = _WholeMatch(record.header, match, seat, token)
    program = BotProgram(bot_command)
    with _serving(service.register, bot_command, program, sandbox, hide) as (run, box, port):
        seed = _seat_seed(int(record.header.get("seed", 0)), seat)
        env = bot_environment(f"127.0.0.1:{port}", token, seed)
        log = run.directory / "bot.log"
        answers, got = trio.run(_replay_bot, service, program, env, log, box, timeout)
        if got[0] != "done":
            raise _failure(got, bot_command, timeout, log, service.decision())
        shown = tuple(_tail_lines(log, _OUTPUT_LINES))
    script = next(s for s in match.seats if s.seat == seat)
    judged = []
    for _, k, answer, ms, _bot in answers:
        asked = script.asked[k]
        action, sent, problem = _choice(asked.legal, answer)
        judged.append(Answered(asked, action, sent, problem, ms))
    name = answers[0][4] if answers else ""
    return SeatRun(seat, name, tuple(judged), shown)


async def _replay_bot(
    service: _WholeMatch,
    program: BotProgram,
    env: dict[str, str],
    log: Path,
    confinement: Confinement,
    timeout: float,
) -> tuple[list[tuple[Any, ...]], tuple[Any, ...]]:
    """Start the bot and collect its answers until the match ends or it fails: the answers,
    and ``("done",)`` or the failure as :func:`_ask_bot` has them."""
    answers: list[tuple[Any, ...]] = []
    try:
        bot = await start_bot(program, env, log, confinement)
    except (OSError, ArenaError) as err:
        return answers, ("unstarted", str(err))
    exits: list[int] = []

    async def watch() -> None:
        exits.append(await bot.wait())

    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch)
            while (got := await _answer(service.results, exits, timeout))[0] == "answer":
                answers.append(got)
            if got[0] in ("closed", "done"):
                # A crashed bot's stream breaks first: its exit status says more. A bot told
                # the match is over may leave on its own (its end_match hook runs).
                with trio.move_on_after(_LAST_WORD_S if got[0] == "closed" else _GOODBYE_S):
                    while not exits:
                        await trio.sleep(_POLL_S)
                if exits and got[0] == "closed":
                    got = ("exited", exits[0])
            nursery.cancel_scope.cancel()
    finally:
        with trio.CancelScope(shield=True):
            await bot.stop()
    return answers, got


def _seat_number(text: str, state: MatchState) -> int:
    """A seat given by number or name (``2``, ``S``); :class:`UsageError` if unknown."""
    names = state.game.seat_names(state.config)
    key = text.strip()
    if key.isdigit() and int(key) < len(names):
        return int(key)
    for i, name in enumerate(names):
        if name.lower() == key.lower():
            return i
    shown = ", ".join(f"{i}={n}" for i, n in enumerate(names))
    raise UsageError(f"unknown seat {text!r} (seats: {shown})")


def _numbers(answers: Sequence[Answered]) -> str:
    named = " ".join(str(a.asked.number) for a in answers[:_NAMED])
    return named + (" …" if len(answers) > _NAMED else "")


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
    answer differs from the record, then ``N decisions, K differ``. 0 when all agree, 1 when
    some differ."""
    if not bot_command.strip():
        raise UsageError("--bot needs a command")
    if timeout <= 0:
        raise UsageError("--timeout must be positive")
    record = read_record(path)
    where = str(path)
    number = None if seat is None else _seat_number(seat, start_state(record, where))
    match = match_script(record, where, number, upto)
    state = match.start
    names = state.game.seat_names(state.config)
    match_id = str(record.header.get("match_id", ""))
    asked = differ = 0
    differing: list[Answered] = []
    for script in match.seats:
        run = replay_seat(record, match, script.seat, bot_command, timeout, sandbox, (path.parent,))
        for a in run.differ:
            lines = _position_lines(
                state,
                match_id,
                a.asked.number,
                match.total,
                a.asked.observation,
                a.asked.legal,
                a.asked.recorded,
                a.asked.fallback,
            )
            lines.append(_bot_line(a.action, a.sent, a.problem, a.ms, run.bot, a.same))
            out.write("\n".join(lines) + "\n\n")
        if run.differ and run.output:
            out.write(f"seat {names[run.seat]}: bot output (last {len(run.output)} lines):\n")
            out.write("".join(f"  {line}\n" for line in run.output))
        k = len(run.differ)
        out.write(
            f"seat {names[run.seat]}: {len(run.answers)} decisions, {k} "
            f"{'differs' if k == 1 else 'differ'}{': ' + _numbers(run.differ) if k else ''}\n"
        )
        out.flush()
        asked += len(run.answers)
        differ += k
        differing.extend(run.differ)
    differing.sort(key=lambda a: a.asked.number)
    out.write(
        f"replay-all: {asked} decisions, {differ} {'differs' if differ == 1 else 'differ'}"
        f"{': ' + _numbers(differing) if differ else ''}\n"
    )
    return 1 if differ else 0
