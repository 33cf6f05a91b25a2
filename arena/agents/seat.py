"""One seat held for an agent: its protocol connection, and the decision waiting for it.

:class:`AgentSeat` connects to an arena server with the seat's token exactly as a bot does (one
gRPC stream: ``Hello``, then the seat's messages; the people's bridge, arena/people/bridge.py,
holds a person's seat the same way), keeps what the seat was sent (the match, the open
decision, the faults the referee charged, the result) and writes the agent's answers. The
referee sees a bot like any other: an agent that never answers gets the seat's timeouts and,
under the fault policy, its forfeit; nothing here decides for it. A stream lost mid-match is
opened again with the Welcome's resume token, as the SDK's ``run_bot`` does.

It runs on the asyncio loop of whoever holds it (the MCP server's); its readers wait on
:meth:`AgentSeat.wait_for_turn`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import grpc
import grpc.aio
from cardarena import codec, messages, rpc
from cardarena.client import CLIENT_OPTIONS, EOF
from cardarena.resolve import grpc_target, parse_resolve

from engine import Action, EngineError, Game, MatchConfig, get_game
from engine.text import TEXT_VERSION

#: The name an agent's seat gives in its Hello unless told another (the record's bot name).
AGENT = "mcp-agent"
#: How long a stream lost mid-match is tried again (seconds), and the pauses between tries.
RECONNECT_S = 10.0
BACKOFF_FIRST_S, BACKOFF_CAP_S = 0.05, 2.0


@dataclass
class Match:
    """The match the seat is in: its rules, as MatchStart gives them."""

    match_id: str
    game: Game
    #: ``None`` until known: a seat count some games share between tables (tennis: two
    #: players, or two teams of two) is settled by the first observation.
    config: MatchConfig | None
    options: dict[str, str]
    seats: int
    seat: int
    time_control: messages.TimeControl
    fault_policy: str
    #: The last observation the seat was sent (``to_dict()`` form).
    observation: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Turn:
    """A decision open for the agent."""

    decision: messages.Decision
    #: ``time.monotonic()`` when it arrived: its deadline runs from then.
    received: float
    #: The legal actions as the engine's (what ``engine.text`` reads), in the decision's order.
    legal: tuple[Action, ...] = ()

    def move_ms_left(self) -> int:
        """Milliseconds left before the bank is drawn on (0 once it is)."""
        spent = (time.monotonic() - self.received) * 1000.0
        return max(0, int(self.decision.deadline_ms - spent))

    def total_ms_left(self) -> int:
        """Milliseconds left for this decision, the bank included."""
        spent = (time.monotonic() - self.received) * 1000.0
        return max(0, int(self.decision.deadline_ms + self.decision.bank_ms - spent))

    def bank_ms_left(self) -> int:
        """The bank as it stands now (drawn on once the move's own time is spent)."""
        spent = (time.monotonic() - self.received) * 1000.0
        over = max(0.0, spent - self.decision.deadline_ms)
        return max(0, int(self.decision.bank_ms - over))


class SeatError(Exception):
    """What the agent asked cannot be done now (one line, for a tool error)."""


def match_config(game: Game, seats: int, options: Mapping[str, str]) -> MatchConfig | None:
    """The configuration a MatchStart's seats and options name, or ``None`` when several
    tables have as many seats (settled by :func:`settle_config`)."""
    found = []
    for n in game.player_counts:
        with contextlib.suppress(EngineError):
            config = game.configure(n, dict(options))
            if game.num_seats(config) == seats:
                found.append(config)
    return found[0] if len(found) == 1 else None


def settle_config(match: Match, observation: Mapping[str, Any]) -> MatchConfig:
    """The match's configuration, the observation telling apart tables with as many seats:
    its ``players`` list, where it has one, counts the players."""
    if match.config is not None:
        return match.config
    listed = observation.get("players")
    counts = [len(listed)] if isinstance(listed, list) else []
    for n in (*counts, match.seats, *match.game.player_counts):
        with contextlib.suppress(EngineError):
            config = match.game.configure(n, dict(match.options))
            if match.game.num_seats(config) == match.seats:
                match.config = config
                return config
    raise SeatError(f"cannot configure {match.game.id} for {match.seats} seats")


class AgentSeat:
    """One seat's connection, and what its agent is waiting for or may answer."""

    def __init__(
        self,
        address: str,
        token: str,
        *,
        name: str = AGENT,
        matches: int = 1,
        ca: bytes | None = None,
        resolve: str = "",
    ) -> None:
        self.address = address
        self.token = token
        #: The certificate authority to trust (a competition host's TLS), else plaintext.
        self.ca = ca
        #: Where to connect, as ``$ARENA_RESOLVE`` maps the address (the SDK's rule): TLS still
        #: checks the certificate against the address's name. Raises ``ResolveError`` if bad.
        self.target = grpc_target(address, parse_resolve(resolve))
        self.name = name
        #: Matches to play before hanging up (0: until the server ends the stream).
        self.max_matches = matches
        #: ``connecting``, ``waiting`` (welcomed, no match yet), ``playing``, ``over`` (the
        #: last match ended and no other is to come), ``closed`` (the connection ended first).
        self.status = "connecting"
        #: Why the connection ended, when it did ("" while it lives).
        self.why_closed = ""
        self.match: Match | None = None
        self.turn: Turn | None = None
        #: The last match's end (its result and every fault charged).
        self.ended: messages.MatchEnd | None = None
        self.matches_played = 0
        #: What the referee said (faults, warnings) not yet reported to the agent.
        self.news: list[str] = []
        self._changed = asyncio.Event()
        #: The Welcome's secret that resumes the seat on a new stream ("" before one came).
        self._resume = ""
        #: ``time.monotonic()`` of the last Welcome (0: none yet).
        self.welcomed_at = 0.0
        #: The open stream (``None`` before it opens and once it ended).
        self._call: grpc.aio.StreamStreamCall[rpc.BotMessage, rpc.ServerMessage] | None = None

    # -- the agent's side ---------------------------------------------------------------------

    async def wait_for_turn(self, timeout_s: float) -> bool:
        """Wait until a decision is open or the seat is done, at most ``timeout_s``; whether one
        of those came."""
        loop = asyncio.get_running_loop()
        until = loop.time() + timeout_s
        while not self._ready():
            left = until - loop.time()
            if left <= 0:
                return False
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), left)
        return True

    def _ready(self) -> bool:
        # News (a fault charged, a match's end) is reported at once: the agent hears of it.
        return bool(self.news) or self.turn is not None or self.status in ("over", "closed")

    async def answer(self, index: int) -> Action:
        """Play legal action ``index`` of the open decision: the answer is sent when this
        returns the action played. Raises :class:`SeatError` when no decision is open, its time
        ran out, or the connection ended."""
        turn = self.turn
        if turn is None:
            raise SeatError(self.describe_no_turn())
        legal = turn.legal
        if not 0 <= index < len(legal):
            raise SeatError(f"no legal action {index} (0 to {len(legal) - 1})")
        if turn.total_ms_left() <= 0:
            # The referee is about to play for the seat (its timeout is on the way): an answer
            # now would only be ignored as late.
            raise SeatError("the time for this decision ran out; the referee plays for the seat")
        call = self._call
        if call is None:
            raise SeatError("the seat's connection is not open now: call wait_for_turn")
        self.turn = None  # before the write: a second answer meanwhile finds no turn open
        try:
            await call.write(codec.answer_to_proto(turn.decision.request_id, index=index))
        except Exception as err:  # the stream ended under the write (grpc's own error types)
            raise SeatError(f"the seat's connection ended ({type(err).__name__})") from None
        return legal[index]

    def describe_no_turn(self) -> str:
        """Why no decision is open, in one line."""
        if self.status == "over":
            return "the match is over"
        if self.status == "closed":
            return f"the seat's connection ended ({self.why_closed})"
        return "it is not your turn: call wait_for_turn"

    def take_news(self) -> list[str]:
        """What the referee said since the last call."""
        news, self.news = self.news, []
        return news

    # -- the connection -----------------------------------------------------------------------

    async def run(self) -> None:
        """Hold the seat until its matches are played or the server ends the stream between
        matches. A stream lost in the middle of a match is opened again with the Welcome's
        resume token (the SDK's rule: the referee keeps the seat a while for it) for up to
        :data:`RECONNECT_S`; after that the referee's disconnection rules have it."""
        backoff, lost_at = BACKOFF_FIRST_S, 0.0
        while True:
            why = "the server ended the connection"
            try:
                await self._stream()
            except grpc.RpcError as err:
                code = err.code() if isinstance(err, grpc.Call) else None
                why = f"connection lost ({code})"
            if self.status in ("over", "closed"):
                return
            now = time.monotonic()
            if self.welcomed_at > lost_at:  # the last stream was welcomed: a fresh loss
                lost_at, backoff = now, BACKOFF_FIRST_S
            if self.status != "playing" or not self._resume or now - lost_at > RECONNECT_S:
                self._close(why)
                return
            # The referee sends the open decision again on the resumed stream.
            self.turn = None
            self.news.append(f"{why}; connecting again")
            self._changed.set()
            await asyncio.sleep(backoff)
            backoff = min(BACKOFF_CAP_S, backoff * 2)

    async def _stream(self) -> None:
        hello = messages.Hello(
            self.name,
            # The record names the text views' version the agent was shown.
            f"text-{TEXT_VERSION}",
            # Only the secret the server gave resumes the seat (a lobby guest's own token
            # does not).
            self._resume or self.token,
            messages.PROTOCOL_VERSION,
            max_matches=self.max_matches,
            batch_events=True,
            omit_text=True,
            omit_json=True,
        )
        async with self._channel() as channel:
            play: Any = rpc.ArenaStub(channel).Play
            self._call = call = play()
            try:
                await call.write(codec.hello_to_proto(hello))
                # Answers are written by :meth:`answer` as the agent gives them.
                done = False
                while not done and (raw := await call.read()) is not EOF:
                    msg = codec.proto_to_plain(cast(rpc.ServerMessage, raw), events=False)
                    done = self.take(msg)
            finally:
                self._call = None
                call.cancel()

    def _channel(self) -> grpc.aio.Channel:
        address, extra = self.target
        options = CLIENT_OPTIONS + extra
        if self.ca is None:
            return grpc.aio.insecure_channel(address, options=options)
        credentials = grpc.ssl_channel_credentials(root_certificates=self.ca)
        return grpc.aio.secure_channel(address, credentials, options=options)

    def take(self, msg: object) -> bool:
        """A message the seat received; whether the seat is done."""
        done = False
        if isinstance(msg, messages.Welcome):
            self._resume = msg.resume_token or self._resume
            self.welcomed_at = time.monotonic()
            if self.match is None or self.status != "playing":
                self.status = "waiting"
        elif isinstance(msg, messages.Rejected):
            self._close(f"rejected: {msg.reason}")
            done = True
        elif isinstance(msg, messages.MatchStart):
            self._start(msg)
        elif isinstance(msg, messages.Decision):
            self._decision(msg)
        elif isinstance(msg, messages.ErrorInfo):
            self._error(msg)
        elif isinstance(msg, messages.MatchEnd):
            done = self._end(msg)
        self._changed.set()
        return done

    def _start(self, msg: messages.MatchStart) -> None:
        game = get_game(msg.game)
        options = dict(msg.options)
        seats = len(msg.players)
        self.match = Match(
            msg.match_id,
            game,
            match_config(game, seats, options),
            options,
            seats,
            msg.seats[0] if msg.seats else 0,
            msg.time_control,
            msg.fault_policy,
        )
        self.turn, self.ended, self.status = None, None, "playing"

    def _decision(self, msg: messages.Decision) -> None:
        match = self.match
        if match is not None:
            match.observation = dict(msg.observation)
            match.seat = msg.seat
        legal = tuple(Action(a.kind, a.arg) for a in msg.legal)
        self.turn = Turn(msg, time.monotonic(), legal)

    def _error(self, msg: messages.ErrorInfo) -> None:
        turn = self.turn
        if turn is not None and msg.request_id == turn.decision.request_id and msg.fault:
            self.turn = None  # the referee played for the seat
        charged = f"fault {msg.fault} charged (strikes {msg.strikes})" if msg.fault else "warning"
        self.news.append(f"{charged}: {msg.message}")

    def _end(self, msg: messages.MatchEnd) -> bool:
        self.ended, self.turn = msg, None
        self.matches_played += 1
        self.news.append(f"match {msg.match_id} over: {msg.result.summary or msg.result.reason}")
        if self.max_matches and self.matches_played >= self.max_matches:
            self.status = "over"
            return True
        self.status = "waiting"
        return False

    def _close(self, why: str) -> None:
        self.status, self.why_closed, self.turn = "closed", why, None
        self._changed.set()
