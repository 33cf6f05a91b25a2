"""The Python SDK: run a :class:`cardarena.bot.Bot` against an arena server.

::

    from cardarena import Bot, run_bot

    class FirstLegal(Bot):
        name = "first-legal"

        def choose(self, game, observation, legal):
            return 0

    run_bot(FirstLegal(), "127.0.0.1:50051", token="...")

The bot sees each observation as the same plain dict as the engine's ``Observation.to_dict()``
and the legal actions as :class:`cardarena.Action` values (``kind``, ``arg``, ``text``), so a
strategy runs the same in-process and over the wire. :func:`run_bot` handles Welcome and
Rejected, plays any number of matches (several at once if the server asks), reconnects with
backoff when the connection drops, and returns once it has played ``matches`` matches or the
server has been gone for ``give_up_s``.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import grpc
import grpc.aio

import cardarena.codec as codec
import cardarena.messages as messages
import cardarena.rpc as rpc
from cardarena.bot import Bot, Turn
from cardarena.log import configure, get_logger
from cardarena.resolve import RESOLVE_ENV, ResolveError, grpc_target, parse_resolve

log = get_logger("cardarena.client")

#: What ``read()`` returns at the end of a grpc.aio stream (missing from grpc-stubs).
EOF: Any = getattr(grpc.aio, "EOF")  # noqa: B009

#: Client channel options (see docs/protocol.md): keep idle connections alive through NATs, and
#: accept observations up to the server's send limit.
CLIENT_OPTIONS: list[tuple[str, Any]] = [
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.max_receive_message_length", 4 * 1024 * 1024),
    ("grpc.max_send_message_length", 64 * 1024),
]

#: What the SDK logs when a bot's strategy fails and it plays the first legal action: the
#: referee sees a legal answer, so only the bot's log knows (``arena match`` looks for these).
SDK_FALLBACKS = (b"bot.choose failed;", b"bot.choose returned a bad index;")


def strategy_failures(log: bytes) -> int:
    """How many times a bot's log says its strategy failed and the SDK played a fallback."""
    return sum(log.count(marker) for marker in SDK_FALLBACKS)


#: Backoff between reconnection attempts, seconds: first, factor, cap.
BACKOFF_FIRST, BACKOFF_FACTOR, BACKOFF_CAP = 0.05, 2.0, 2.0


class BotError(Exception):
    """``run_bot`` cannot run: no address, an unreadable CA certificate, a wrong thread."""


class BotRejected(BotError):
    """The server refused the bot's first Hello (unknown token, unsupported protocol version)."""


@dataclass(slots=True)
class BotRun:
    """What one :func:`run_bot` call did."""

    #: Matches that ended (MatchEnd received).
    matches: int = 0
    #: Decisions answered.
    decisions: int = 0
    #: Streams opened (1 + reconnections).
    connections: int = 0
    #: Errors the server reported (faults and warnings).
    errors: int = 0
    #: Streams the server welcomed.
    welcomes: int = 0
    #: The server address used (the argument, else ``$ARENA_ADDRESS``).
    address: str = ""
    #: Why it stopped: ``matches`` (played enough), ``ended`` (the server ended the stream:
    #: it has nothing more for this bot, as after an ``arena match`` or tournament match),
    #: ``server gone`` (no server for ``give_up_s`` after it had one), ``unreachable`` (never
    #: welcomed within ``give_up_s``), ``rejected`` (welcomed before, then refused on
    #: reconnecting: its seats are gone, as after a forfeit or the match's end).
    stopped: str = ""
    #: Per match being played: decisions asked so far (its log lines' ``decision``, from 1).
    asked: dict[str, int] = field(default_factory=dict)


def run_bot(
    bot: Bot,
    address: str | None = None,
    token: str | None = None,
    *,
    matches: int | None = None,
    games: tuple[str, ...] = (),
    give_up_s: float = 10.0,
    ca_cert: str | None = None,
) -> BotRun:
    """Connect ``bot`` to the server at ``address`` (``host:port`` or ``unix:PATH``; default
    ``$ARENA_ADDRESS``) with ``token`` (default ``$ARENA_TOKEN``) and play until ``matches``
    matches have ended (``None``: until the server goes away for ``give_up_s`` seconds).
    ``ca_cert`` (default ``$ARENA_CA_CERT``): a PEM file of the certificate authority to trust;
    given, the connection is TLS (a competition's host), else plaintext (an arena's own bots).

    Unless the bot was given a seed, its ``rng`` is seeded from each match's ``bot_seed``.

    Raises :class:`BotRejected` when the server refuses the bot's first Hello, :class:`BotError`
    when no address is given or when called on a thread that runs an asyncio loop (each
    connection runs on a grpc.aio loop of its own; ``bot.choose`` is called on it).
    """
    configure()
    if _in_running_loop():
        raise BotError(
            "run_bot blocks until it is done: call it where no asyncio loop runs "
            "(for example in a thread of its own)"
        )
    address = address or os.environ.get("ARENA_ADDRESS", "")
    if not address:
        raise BotError("no server address: pass one or set ARENA_ADDRESS")
    token = token if token is not None else os.environ.get("ARENA_TOKEN", "")
    ca_path = ca_cert if ca_cert is not None else os.environ.get("ARENA_CA_CERT", "")
    try:
        ca = Path(ca_path).read_bytes() if ca_path else None
    except OSError as err:
        named = "" if ca_cert is not None else " ($ARENA_CA_CERT)"
        raise BotError(
            f"cannot read the CA certificate {ca_path!r}{named}: {err.strerror}"
        ) from None
    try:
        # Where to connect, as $ARENA_RESOLVE maps the address: its name is still the one TLS
        # checks and the server is told.
        target = grpc_target(address, parse_resolve(os.environ.get(RESOLVE_ENV, "")))
    except ResolveError as err:
        raise BotError(str(err)) from None
    run = BotRun(address=address)
    backoff = BACKOFF_FIRST
    last_contact = time.monotonic()
    while True:
        run.connections += 1
        # Tell the server how many matches are left, so a lobby never seats us past them.
        left = 0 if matches is None else max(1, matches - run.matches)
        # Lean messages (docs/protocol.md): events ride in the decisions (Decision.events, for
        # the bot's on_event hook if it has one), and no text or JSON
        # rendering of the observation (a Bot gets the typed message's dict, observation_dict).
        hello = messages.Hello(
            bot.name,
            bot.version,
            token,
            messages.PROTOCOL_VERSION,
            games,
            left,
            batch_events=True,
            omit_text=True,
            omit_json=True,
        )
        welcomed, stop, resume = _play_stream(bot, target, hello, run, matches, ca)
        run.welcomes += welcomed
        # Only the secret the server gave resumes our seats (a lobby's guest's own token does
        # not): every later stream says Hello with it.
        token = resume or token
        if stop is not None:
            run.stopped = stop
            log.info("stopping", why=stop, address=address, matches=run.matches)
            return run
        now = time.monotonic()
        if welcomed:
            last_contact, backoff = now, BACKOFF_FIRST
        if now - last_contact >= give_up_s:
            run.stopped = "server gone" if run.welcomes else "unreachable"
            log.info("stopping", why=run.stopped, address=address, matches=run.matches)
            return run
        time.sleep(backoff)
        backoff = min(BACKOFF_CAP, backoff * BACKOFF_FACTOR)


def _in_running_loop() -> bool:
    """Whether this thread runs an asyncio loop (run_bot runs its own: asyncio.run)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _play_stream(
    bot: Bot,
    target: tuple[str, list[tuple[str, Any]]],
    hello: messages.Hello,
    run: BotRun,
    matches: int | None,
    ca: bytes | None = None,
) -> tuple[bool, str | None, str]:
    """Play over one stream until it ends; ``(welcomed, why to stop, resume token)``: why is
    ``matches``, ``ended``, or ``None`` to connect again (the stream broke); the resume token is
    the Welcome's (``""`` if none came)."""
    return asyncio.run(_play(bot, target, hello, run, matches, ca))


def _channel(target: tuple[str, list[tuple[str, Any]]], ca: bytes | None) -> grpc.aio.Channel:
    """A channel to the target's address, with options that keep the name it was given by
    (ARENA_RESOLVE); TLS when a CA is given."""
    address, extra = target
    options = CLIENT_OPTIONS + extra
    if ca is None:
        return grpc.aio.insecure_channel(address, options=options)
    credentials = grpc.ssl_channel_credentials(root_certificates=ca)
    return grpc.aio.secure_channel(address, credentials, options=options)


class _Stream:
    """What one stream has seen: whether it was welcomed, its resume token, and the matches
    started on it and not yet ended (seats at the table, options)."""

    def __init__(self, bot: Bot, run: BotRun, matches: int | None, address: str) -> None:
        self.bot, self.run, self.matches, self.address = bot, run, matches, address
        self.welcomed = False
        self.resume = ""
        self.playing: dict[str, tuple[int, dict[str, str]]] = {}
        self.events = bot.wants_events()

    def decide(self, msg: messages.Decision, received: float) -> rpc.BotMessage:
        """The bot's answer to ``msg`` (its events first, to a bot with an event hook): its
        choice, its note, and why the SDK fell back when it did."""
        bot = self.bot
        for event in msg.events:
            _on_event(bot, event)
        seats, typed = self.playing.get(msg.match_id, (0, {}))
        bot.turn = Turn(
            msg.match_id, msg.seat, seats, typed, msg.deadline_ms, msg.bank_ms, received
        )
        # Kept by the run, not the stream: a reconnection does not restart the count.
        number = self.run.asked[msg.match_id] = self.run.asked.get(msg.match_id, 0) + 1
        turn = bot.turn
        index, why = choose_with_reason(bot, msg, number)
        note = turn.note_text() if turn is not None else ""
        return codec.answer_to_proto(msg.request_id, index=index, note=note, sdk_fallback=why)

    def take(self, msg: object) -> str | None:
        """Any message but a Decision; why to stop the stream, or ``None`` to read on."""
        bot, run = self.bot, self.run
        if isinstance(msg, messages.EventInfo):
            if self.events:
                _on_event(bot, msg)
        elif isinstance(msg, messages.MatchStart):
            if msg.bot_seed and not bot.seeded:
                # Each match's own seed: the bot plays the same moves whether its process is
                # fresh or has played other matches before (a tournament keeps processes alive).
                bot.rng.seed(msg.bot_seed)
            options = dict(msg.options)
            self.playing[msg.match_id] = (len(msg.players), options)
            for seat in msg.seats:
                bot.start_match(msg.game, seat, options)
        elif isinstance(msg, messages.MatchEnd):
            return self._match_end(msg)
        elif isinstance(msg, messages.Welcome):
            self.welcomed = True
            self.resume = msg.resume_token
            log.info("welcomed", address=self.address, session=msg.session_id)
        elif isinstance(msg, messages.Rejected):
            if run.welcomes:
                # Welcomed before: the seats this token named are gone (the match ended, or
                # the bot forfeited it while away). Nothing is wrong here.
                log.info("the server has no more seats for this bot", why=msg.reason)
                return "rejected"
            raise BotRejected(f"the server rejected the bot: {msg.reason}")
        elif isinstance(msg, messages.ErrorInfo):
            run.errors += 1
            log.warning("server error", code=msg.code, message=msg.message)
        return None

    def _match_end(self, msg: messages.MatchEnd) -> str | None:
        self.playing.pop(msg.match_id, None)
        self.run.asked.pop(msg.match_id, None)
        self.run.matches += 1
        try:
            self.bot.end_match(msg.match_id, msg.result)
        except Exception as err:
            log.exception("bot.end_match failed", error=f"{type(err).__name__}: {err}")
        log.info(
            "match over",
            match_id=msg.match_id,
            summary=msg.result.summary,
            faults=len(msg.faults),
        )
        if self.matches is not None and self.run.matches >= self.matches:
            return "matches"
        return None


# grpc.aio, read and written from one coroutine: the synchronous client's stream costs two
# thread hand-offs per decision (a thread feeding the request iterator, another delivering
# responses), each waking a thread (docs/performance.md has the figures).
async def _play(
    bot: Bot,
    target: tuple[str, list[tuple[str, Any]]],
    hello: messages.Hello,
    run: BotRun,
    matches: int | None,
    ca: bytes | None = None,
) -> tuple[bool, str | None, str]:
    stream = _Stream(bot, run, matches, target[0])
    async with _channel(target, ca) as channel:
        # The generated stubs are typed for the synchronous API.
        play: Any = rpc.ArenaStub(channel).Play
        call: grpc.aio.StreamStreamCall[rpc.BotMessage, rpc.ServerMessage] = play()
        try:
            await call.write(codec.hello_to_proto(hello))
            while (raw := await call.read()) is not EOF:
                # The events a Decision carries are decoded only for a bot with an event hook.
                received = time.monotonic()  # a decision's deadline runs from its arrival
                msg = codec.proto_to_plain(cast(rpc.ServerMessage, raw), events=stream.events)
                if isinstance(msg, messages.Decision):
                    await call.write(stream.decide(msg, received))
                    run.decisions += 1
                elif (why := stream.take(msg)) is not None:
                    return stream.welcomed, why, stream.resume
            # The server ended the stream (status OK; a broken one raises). Between matches
            # that means it has nothing more for this bot (docs/protocol.md): connecting again
            # would only be refused. In the middle of one, connect again and resume it.
            if stream.welcomed and not stream.playing:
                return stream.welcomed, "ended", stream.resume
        except grpc.RpcError as err:
            code = err.code() if isinstance(err, grpc.Call) else None
            log.info("connection lost", address=stream.address, code=str(code))
        finally:
            call.cancel()  # nothing more to say; the channel closes with the block
    return stream.welcomed, None, stream.resume


def _on_event(bot: Bot, event: messages.EventInfo) -> None:
    """The bot's event hook; a failure is logged and costs nothing else."""
    try:
        bot.on_event(event.match_id, event.kind, event.data, event.private)
    except Exception as err:
        log.exception("bot.on_event failed", error=f"{type(err).__name__}: {err}")


def _choose(bot: Bot, decision: messages.Decision, number: int = 0) -> int:
    """The bot's choice (:func:`choose_with_reason`'s index)."""
    return choose_with_reason(bot, decision, number)[0]


def choose_with_reason(bot: Bot, decision: messages.Decision, number: int = 0) -> tuple[int, str]:
    """The bot's choice, and why the SDK played a fallback instead ("" when it did not): a
    strategy error or a bad index falls back to the first action, so a bug costs one move, not
    the match. The reason goes in the answer (``Action.sdk_fallback``): the record and ``arena
    match`` mark the decision. The log line names the match, the request (``arena replay ask``
    finds the decision from it) and ``number``, the bot's count of the decisions it was asked in
    the match, from 1."""
    try:
        index = bot.choose(decision.game, decision.observation, decision.legal)
    except Exception as err:
        # The error first: a log line cut short still names it.
        log.exception(
            "bot.choose failed; playing the first legal action",
            error=f"{type(err).__name__}: {err}",
            game=decision.game,
            match_id=decision.match_id,
            request_id=decision.request_id,
            decision=number,
        )
        return 0, f"{type(err).__name__}: {err}"
    if not isinstance(index, int) or not 0 <= index < len(decision.legal):
        log.warning(
            "bot.choose returned a bad index; playing the first legal action",
            index=index,
            match_id=decision.match_id,
            request_id=decision.request_id,
            decision=number,
        )
        return 0, f"bad index: {index!r}"
    return index, ""
