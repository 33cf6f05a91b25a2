"""Running one match: the seats, their connections, decisions, deadlines and faults.

A :class:`LiveMatch` owns everything about its match (engine state, seats, strikes, record
entries); nothing is shared with other matches but the server's request-id book and its public
board. All of it runs on the server's asyncio loop thread, beside the gRPC handlers, so a decision
request and its answer never cross a thread (arena/server/service.py).

The referee asks the seat to move for a decision and waits, on the loop's clock, for at most the
move time plus the seat's remaining bank. It is a state machine, not a coroutine: it runs until it
must wait for a bot, and the answer's arrival runs it on (:meth:`LiveMatch.settled`) inside the
stream handler that read the answer, so the next request is on its way before control returns to
the loop.

Whatever goes wrong (no answer, an illegal or garbled answer, a bot that is gone) is a fault:
under the lenient policy the referee plays the seat's fallback action and charges a strike, and
the third strike forfeits; under the strict policy the first fault forfeits. Faults charged from
outside the referee (a flood, an answer for someone else's request) interrupt the wait when they
forfeit the match.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable, Sequence

import structlog
from cardarena import messages, rpc
from cardarena.messages import Answer, ErrorInfo, FaultInfo

from arena.policy import ERROR_CODE, FAULT_POLICIES, RECONNECT_GRACE, FaultKind, forfeit_reason
from arena.protocol import codec
from arena.records.format import (
    connection_entry,
    decision_entry,
    event_entry,
    fault_entry,
    match_header,
)
from arena.seeds import seat_seed
from arena.server.board import Board, BoardEntry
from arena.server.connections import Connection, PendingDecision, RequestBook, SeatSlot
from arena.server.spec import DecisionTiming, MatchOutcome, MatchSpec
from engine import (
    JSON,
    Action,
    ConfigError,
    EngineError,
    Event,
    IllegalActionError,
    MatchState,
    Result,
    get_game,
)

log = structlog.get_logger("arena.referee")


#: A decision as the referee logs it (:func:`decision_entry`'s arguments): seat, legal count,
#: action, ms, fallback, and the bot's note and SDK fallback reason when its answer had either.
_Decided = tuple[int, int, str, float, bool] | tuple[int, int, str, float, bool, str, str]


class LiveMatch:
    """One match from registration to its end."""

    def __init__(self, spec: MatchSpec, requests: RequestBook, board: Board) -> None:
        game = get_game(spec.game)
        config = game.configure(spec.players, spec.options)
        seats = game.num_seats(config)
        if len(spec.seats) != seats:
            raise ConfigError(
                f"{spec.game} with {config.players} players has {seats} seats; "
                f"the match names {len(spec.seats)} bots"
            )
        if spec.fault_policy not in FAULT_POLICIES:
            raise ConfigError(f"fault policy must be lenient or strict; got {spec.fault_policy!r}")
        if spec.branch is not None:  # refused at registration, not once its bots are up
            start = game.new_match(config, spec.seed)
            for n, text in enumerate(spec.branch.actions):
                start.apply(_branch_action(start, n, text)[1])
        #: The spec.
        self.spec = spec
        #: The game.
        self.game = game
        #: The validated configuration.
        self.config = config
        names = game.seat_names(config)
        #: One slot per seat.
        self.slots = [
            SeatSlot(self, i, names[i], s.token, s.bot_name, float(spec.time_control.bank_ms))
            for i, s in enumerate(spec.seats)
        ]
        self._requests = requests
        self._board = board
        self._entry: BoardEntry | None = None
        #: The engine state once started.
        self.state: MatchState | None = None
        #: Whether it has ended.
        self.finished = False
        #: The decision being waited for.
        self.pending: PendingDecision | None = None
        #: ``(seat, why)`` once a seat must forfeit.
        self.forfeit_due: tuple[int, str] | None = None
        #: Faults charged so far.
        self.faults: list[FaultInfo] = []
        # The record's entries so far, in the order they happened: an engine Event, a decision
        # as (seat, legal count, action text, ms, fallback), or a fault's entry. Events and
        # decisions become dicts when the match ends (entries()), not while a bot waits.
        self._log_entries: list[Event | _Decided | dict[str, JSON]] = []
        #: Set once every seat is connected (or known crashed).
        self.ready = asyncio.Event()
        self._sent = 0  # events already distributed
        # Each audience numbers the events it may see on its own, from 0 (Event.seq): a
        # connection's seats by what any of them may see, the public (spectators: ``None``) by
        # the public events. Numbers from the full log would leave gaps where an audience was
        # not told something (spoil five's silent ace). Audience -> how many of the events
        # distributed so far it may see, for the audiences _distribute sent to last time.
        self._seen: dict[tuple[int, ...] | None, int] = {}
        self._group_cache: list[tuple[Connection, tuple[int, ...]]] | None = None
        # The deadline timer, kept across decisions (see _arm).
        self._timer: asyncio.TimerHandle | None = None
        self._deadline = 0.0
        # Set by play(): the loop, and the match's result once over.
        self._loop: asyncio.AbstractEventLoop
        self._done: asyncio.Future[Result]
        self._log = log.bind(match_id=spec.match_id, game=spec.game)

    @property
    def match_id(self) -> str:
        """The match's id."""
        return self.spec.match_id

    # --- connections -------------------------------------------------------------------------

    def attach(self, conn: Connection, slots: list[SeatSlot]) -> None:
        """``conn`` (authenticated with the slots' token) now plays ``slots``."""
        assert conn.hello is not None
        self._group_cache = None
        running = self.state is not None and not self.finished
        for slot in slots:
            if running and slot.conn is not conn:
                # Who played a seat is part of the match's story: a stream that replaces a live
                # one (same token) took the seat over; one after a lost stream resumed it.
                old = slot.conn
                how = "taken_over" if old is not None and not old.closed else "resumed"
                self._log_entries.append(connection_entry(slot.seat, how, conn.session_id))
            slot.conn = conn
            slot.joined = True
            slot.hello_name = conn.hello.bot_name
            slot.hello_version = conn.hello.bot_version
            if slot not in conn.slots:
                conn.slots.append(slot)
        if self.state is not None and not self.finished:
            # A resumed seat gets the match start and every event it may see so far.
            seats = tuple(s.seat for s in slots)
            conn.send(self._start_message(seats))
            # Numbered as _distribute numbers them for these seats (the rest, if any, follows).
            sent = self.state.events[: self._sent]
            for seq, event in enumerate(_visible(sent, seats)):
                conn.send_event(codec.event_to_body(self.match_id, seq, event))
            pending = self.pending
            if pending is not None and pending.seat in seats and not pending.done:
                if pending.conn is not None:
                    pending.conn.open.pop(pending.request_id, None)
                pending.conn = conn
                pending.lost_at = None
                conn.open[pending.request_id] = pending
                conn.send(
                    self._request(pending.request_id, self.state, pending.seat, conn, pending.legal)
                )
                self._arm(self._loop, pending.deadline)  # back: its own clock again
            self._log.info("seat resumed", seats=seats, session=conn.session_id)
        self._check_ready()

    def detach(self, conn: Connection) -> None:
        """``conn`` is gone: its seats have no bot until it comes back (a decision it was making
        waits for it a grace, :data:`~arena.policy.RECONNECT_GRACE`)."""
        self._group_cache = None
        running = self.state is not None and not self.finished
        for slot in self.slots:
            if slot.conn is conn:
                slot.conn = None
                if running:
                    self._log_entries.append(connection_entry(slot.seat, "lost", conn.session_id))
        pending = self.pending
        if pending is not None and pending.conn is conn and not pending.done:
            conn.open.pop(pending.request_id, None)
            pending.conn = None
            self._away(pending, self._loop.time())

    def _away(self, pending: PendingDecision, now: float) -> None:
        """The bot of ``pending``'s seat is gone: give it a grace to come back."""
        pending.lost_at = now
        grace = (pending.deadline - pending.asked_at) * RECONNECT_GRACE
        self._arm(self._loop, min(pending.deadline, now + grace))

    def crash(self, seat: int, detail: str) -> None:
        """The bot process of ``seat`` is gone for good (exited, or never started)."""
        slot = self.slots[seat]
        if slot.crashed is None:
            slot.crashed = detail
            self._log.warning("bot crashed", seat=seat, detail=detail)
        pending = self.pending
        if pending is not None and pending.seat == seat:
            pending.interrupt(FaultKind.CRASH, detail)
        self._check_ready()

    def _check_ready(self) -> None:
        if all(s.conn is not None or s.crashed is not None for s in self.slots):
            self.ready.set()

    def _groups(self) -> list[tuple[Connection, tuple[int, ...]]]:
        """Each connected bot with the seats it plays here (kept until a seat's connection
        changes; a connection closed meanwhile drops what it is sent)."""
        if self._group_cache is None:
            groups: dict[int, tuple[Connection, list[int]]] = {}
            for slot in self.slots:
                if slot.conn is not None and not slot.conn.closed:
                    groups.setdefault(id(slot.conn), (slot.conn, []))[1].append(slot.seat)
            self._group_cache = [(conn, tuple(seats)) for conn, seats in groups.values()]
        return self._group_cache

    # --- faults ------------------------------------------------------------------------------

    def charge(
        self,
        seat: int,
        kind: FaultKind,
        detail: str,
        request_id: int = 0,
        to: Connection | None = None,
        private: str | None = None,
    ) -> None:
        """Charge a fault to ``seat``: record it, tell the bot, forfeit when the policy says.

        ``detail`` is public (every bot and spectator sees it in MatchEnd); ``private`` is a
        fuller explanation for the faulting bot alone, e.g. naming its legal actions.
        """
        slot = self.slots[seat]
        slot.strikes += 1
        fault = FaultInfo(seat, kind, detail)
        self.faults.append(fault)
        self._log_entries.append(fault_entry(seat, kind, detail))
        self._log.warning(
            "fault", seat=seat, kind=kind, detail=private or detail, strikes=slot.strikes
        )
        conn = to or slot.conn
        if conn is not None:
            error = ErrorInfo(
                ERROR_CODE[kind],
                private or detail,
                slot.strikes,
                self.match_id,
                request_id,
                kind,
                seat,
            )
            conn.send(codec.plain_to_proto(error))
        why = forfeit_reason(self.spec.fault_policy, slot.strikes, kind, detail)
        if self.forfeit_due is None and why is not None:
            self.forfeit_due = (seat, why)
            if self.pending is not None:
                self.pending.interrupt(None, self.forfeit_due[1])

    # --- the match ---------------------------------------------------------------------------

    async def play(self) -> MatchOutcome:
        """Wait for the bots, referee the match to its end, and return the outcome."""
        if not self.ready.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.ready.wait(), self.spec.connect_timeout_s)
        for slot in self.slots:
            if slot.conn is None and slot.crashed is None:
                self._log.warning("bot not connected; the match starts without it", seat=slot.seat)
        self._loop = loop = asyncio.get_running_loop()
        self._done = done = loop.create_future()
        try:
            self._begin()
            self._step()
            result = await done
        except Exception as err:  # a referee or engine bug must not take the server down
            self._log.exception("referee error")
            n = len(self.slots)
            result = Result(
                scores=(0.0,) * n,
                ranks=(1,) * n,
                reason="error",
                summary=f"referee error: {type(err).__name__}: {err}",
            )
        finally:
            if not done.done():  # cancelled: settling the pending decision must do nothing
                done.cancel()
            self._close_pending()
            if self._timer is not None:
                self._timer.cancel()
        self._finish(result)
        return MatchOutcome(
            spec=self.spec,
            result=result,
            faults=tuple(self.faults),
            players=tuple(s.player() for s in self.slots),
            header=self.header(),
            entries=self.entries(),
            timings=self.timings(),
        )

    def _begin(self) -> None:
        self.state = state = self.game.new_match(self.config, self.spec.seed)
        players = tuple(s.player() for s in self.slots)
        self._entry = self._board.start(self.match_id, self.spec.game, players)
        for conn, seats in self._groups():
            conn.send(self._start_message(seats))
        self._distribute()
        if self.spec.branch is not None:
            # A branched match: the recorded actions are the referee's, each a decision of its
            # seat taken at once (0 ms, charged to no bank), its events sent as they happen.
            for n, text in enumerate(self.spec.branch.actions):
                seat, action, legal = _branch_action(state, n, text)
                state.apply(self._decided(seat, action, legal, 0.0, False))
                self._distribute()
        self._log.info("match started", seats=[s.bot_name for s in self.slots])

    # A coroutine referee cost two task switches per decision (answer to referee, referee to
    # stream writer), each a trip through the event loop (docs/performance.md has the figure).

    def _step(self) -> None:
        """Referee until the match waits for a bot or ends; an error ends the match."""
        try:
            self._advance()
        except Exception as err:
            if not self._done.done():
                self._done.set_exception(err)

    def _advance(self) -> None:
        state = self.state
        assert state is not None
        done = self._done
        while not done.done():
            if state.to_move is None:
                result = state.result()
                assert result is not None
                done.set_result(result)
                return
            if self.forfeit_due is not None:
                state.forfeit(*self.forfeit_due)
                self._distribute()
                continue
            seat = state.to_move
            legal = state.legal_actions()
            slot = self.slots[seat]
            conn = slot.conn
            away = conn is None or conn.closed
            if slot.crashed is not None or (away and not slot.joined):
                kind, detail = (
                    (FaultKind.CRASH, slot.crashed)
                    if slot.crashed is not None
                    else (FaultKind.DISCONNECT, "the seat's bot never connected")
                )
                self.charge(seat, kind, detail)
                action = self._fallback(state, seat, 0.0)
                if action is not None:
                    state.apply(action)
                    self._distribute()
                # A run of faults must not starve other matches: go on at the loop's next turn.
                self._loop.call_soon(self._step)
                return
            self._ask(state, seat, slot, None if away else conn, legal)
            return

    def _ask(
        self,
        state: MatchState,
        seat: int,
        slot: SeatSlot,
        conn: Connection | None,
        legal: Sequence[Action],
    ) -> None:
        """Send ``seat`` its decision request (or, its bot away, wait a grace for it to come
        back); :meth:`settled` goes on from its answer."""
        rid = self._requests.new_id()
        pending = PendingDecision(rid, slot, conn, legal, self.settled)
        self._requests.open[rid] = pending
        self.pending = pending
        loop = self._loop
        pending.asked_at = start = loop.time()
        tc = self.spec.time_control
        pending.deadline = start + (tc.move_ms + slot.bank_ms) / 1000.0
        if conn is None:
            self._away(pending, start)  # attach() sends the request if it comes back
            return
        conn.open[rid] = pending
        conn.send(self._request(rid, state, seat, conn, legal))
        self._arm(loop, pending.deadline)

    def settled(self, pending: PendingDecision) -> None:
        """``pending`` is settled (answered, interrupted or expired): apply the seat's action or
        its fallback, and referee on."""
        if pending is not self.pending or self._done.done():
            return
        try:
            action = self._settle(pending)
            state = self.state
            assert state is not None
            if action is not None:
                state.apply(action)
                self._distribute()
        except Exception as err:
            if not self._done.done():
                self._done.set_exception(err)
            return
        self._step()

    def _settle(self, pending: PendingDecision) -> Action | None:
        """The action for the settled decision: the bot's, or the fallback after a fault;
        ``None`` when the match must be forfeited first."""
        state = self.state
        assert state is not None
        ms = (self._loop.time() - pending.asked_at) * 1000.0
        rid, seat, legal = pending.request_id, pending.seat, pending.legal
        slot = self.slots[seat]
        tc = self.spec.time_control
        self.pending = None
        self._requests.open.pop(rid, None)
        if pending.conn is not None:
            pending.conn.forget(rid)
        over = ms - tc.move_ms
        if over > 0.0:
            slot.bank_ms = max(0.0, slot.bank_ms - over)
        answer, interrupted = pending.outcome, pending.interrupted
        if interrupted is not None:
            kind, detail = interrupted
            if kind is None:
                return None
            self.charge(seat, kind, detail, rid)
            return self._fallback(state, seat, ms)
        if answer is None and pending.lost_at is not None:
            away = (self._loop.time() - pending.lost_at) * 1000.0
            detail = f"the bot was not connected, and did not come back within {away:.0f} ms"
            self.charge(seat, FaultKind.DISCONNECT, detail, rid)
            return self._fallback(state, seat, ms)
        if answer is None:
            slot.bank_ms = 0.0
            detail = f"no answer within {ms:.0f} ms"
            if pending.stray is not None:  # it answered, to the wrong id: say so, or it looks idle
                detail += f" (an answer to request {pending.stray} came instead of {rid})"
            self.charge(seat, FaultKind.TIMEOUT, detail, rid)
            return self._fallback(state, seat, ms)
        if answer.index is not None:
            # Never negative over gRPC (uint32), but an Answer made in-process could be.
            if 0 <= answer.index < len(legal):
                return self._decided(seat, legal[answer.index], len(legal), ms, False, answer)
            problem = f"index {answer.index} is out of range (0..{len(legal) - 1})"
            self.charge(seat, FaultKind.ILLEGAL, problem, rid)
        elif answer.text is not None:
            try:
                chosen = state.find_action(answer.text)
            except EngineError as err:
                # The engine's explanation lists the seat's legal actions: for its bot only.
                text = _quoted(answer.text)
                public = f"{text} is not a legal action"
                # The engine's message quotes the text whole: only its reason is kept.
                why = err.reason if isinstance(err, IllegalActionError) else str(err)
                self.charge(seat, FaultKind.ILLEGAL, public, rid, private=f"{text}: {why}")
            else:
                return self._decided(seat, chosen, len(legal), ms, False, answer)
        else:
            self.charge(seat, FaultKind.GARBAGE, "an Action with neither index nor text", rid)
        return self._fallback(state, seat, ms, answer)

    def _arm(self, loop: asyncio.AbstractEventLoop, deadline: float) -> None:
        """Expire the pending decision at ``deadline`` (loop clock).

        Deadlines mostly move later from one decision to the next, so one timer serves many
        decisions: it is replaced only when the new deadline comes sooner, and when it fires
        early it re-arms for the current deadline. That saves scheduling and cancelling a timer
        per decision (docs/performance.md has what that cost with fast bots).
        """
        self._deadline = deadline
        timer = self._timer
        if timer is None or timer.when() > deadline:
            if timer is not None:
                timer.cancel()
            self._timer = loop.call_at(deadline, self._on_timer, loop)

    def _on_timer(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer = None
        pending = self.pending
        if pending is None:
            return
        if loop.time() >= self._deadline:
            pending.expire()
        else:
            self._timer = loop.call_at(self._deadline, self._on_timer, loop)

    def _request(
        self,
        rid: int,
        state: MatchState,
        seat: int,
        conn: Connection,
        legal: Sequence[Action],
    ) -> bytes:
        """The DecisionRequest for ``seat``, shaped for ``conn`` (held events inside, renderings
        it asked to omit left out)."""
        hello = conn.hello
        return codec.decision_to_bytes(
            rid,
            self.match_id,
            seat,
            self.spec.game,
            state.observation(seat),
            legal,
            self.spec.time_control.move_ms,
            int(self.slots[seat].bank_ms),
            events=conn.take_held() if conn.held else (),
            text=hello is None or not hello.omit_text,
            json=hello is None or not hello.omit_json,
        )

    def _fallback(
        self, state: MatchState, seat: int, ms: float, answer: Answer | None = None
    ) -> Action | None:
        if self.forfeit_due is not None:
            return None
        legal = len(state.legal_actions())
        return self._decided(seat, state.fallback_action(), legal, ms, True, answer)

    def _decided(
        self,
        seat: int,
        action: Action,
        legal: int,
        ms: float,
        fallback: bool,
        answer: Answer | None = None,
    ) -> Action:
        """Log the decision; the bot's note and SDK fallback reason, when its answer had any."""
        if answer is not None and (answer.note or answer.sdk_fallback):
            entry = (seat, legal, action.text, ms, fallback, answer.note, answer.sdk_fallback)
            self._log_entries.append(entry)
        else:
            self._log_entries.append((seat, legal, action.text, ms, fallback))
        return action

    def entries(self) -> list[dict[str, JSON]]:
        """The record's entries so far."""
        return [
            event_entry(e)
            if isinstance(e, Event)
            else decision_entry(*e)
            if isinstance(e, tuple)
            else e
            for e in self._log_entries
        ]

    def timings(self) -> list[DecisionTiming]:
        """Every decision's timing so far."""
        return [DecisionTiming(e[0], e[3], e[4]) for e in self._log_entries if isinstance(e, tuple)]

    def _distribute(self) -> None:
        """Send the events since the last call to every bot that may see them, and record them.

        Each event is numbered by its position among the events its receiver may see (see
        ``_seen``), so nobody learns from the numbers that it was not told something."""
        state = self.state
        assert state is not None
        events = state.events
        sent = self._sent
        if sent == len(events):
            return
        groups = self._groups()
        # Each audience's next number.
        nexts = [self._seen_by(seats) for _, seats in groups]
        public = self._seen_by(None)
        match_id = self.match_id
        log_entries = self._log_entries
        for i in range(sent, len(events)):
            event = events[i]
            log_entries.append(event)
            to = event.to
            # Mostly every seat has been sent as many events: one body serves them all.
            body_seq = -1
            body = b""
            for g, (conn, seats) in enumerate(groups):
                if to is None or any(s in to for s in seats):
                    seq = nexts[g]
                    nexts[g] = seq + 1
                    if seq != body_seq:
                        body_seq, body = seq, codec.event_to_body(match_id, seq, event)
                    conn.send_event(body)
            if to is None:
                if self._entry is not None:
                    if public != body_seq:
                        body_seq, body = public, codec.event_to_body(match_id, public, event)
                    self._board.event(self._entry, codec.event_body_to_bytes(body))
                public += 1
        # Only these counts are kept up to date: a seat set away meanwhile (a bot that left and
        # comes back) is counted afresh when it is next sent something.
        seen: dict[tuple[int, ...] | None, int] = {None: public}
        for (_, seats), n in zip(groups, nexts, strict=True):
            seen[seats] = n
        self._seen = seen
        self._sent = len(events)

    def _seen_by(self, seats: tuple[int, ...] | None) -> int:
        """How many of the events distributed so far ``seats`` may see (``None``: the public),
        as attach() numbers a resumed seat's replay."""
        n = self._seen.get(seats)
        if n is None:
            assert self.state is not None
            n = sum(1 for _ in _visible(self.state.events[: self._sent], seats))
        return n

    def _close_pending(self) -> None:
        pending = self.pending
        if pending is not None:
            self.pending = None
            self._requests.open.pop(pending.request_id, None)
            if pending.conn is not None:
                pending.conn.forget(pending.request_id)

    def _finish(self, result: Result) -> None:
        self.finished = True
        end = codec.plain_to_proto(
            messages.MatchEnd(
                self.match_id, codec.engine_result_to_plain(result), tuple(self.faults)
            )
        )
        for conn, _seats in self._groups():
            conn.send(end)
        for slot in self.slots:
            if slot.conn is not None and slot in slot.conn.slots:
                slot.conn.slots.remove(slot)
        players = tuple(s.player() for s in self.slots)
        if self._entry is None:
            self._entry = self._board.start(self.match_id, self.spec.game, players)
        self._board.finish(
            self._entry, result, end, players, self.game.sides(self.config), self.faults
        )
        self._log.info(
            "match over",
            summary=result.summary,
            reason=result.reason,
            faults=len(self.faults),
            decisions=sum(1 for e in self._log_entries if isinstance(e, tuple)),
        )

    # --- messages ----------------------------------------------------------------------------

    def _start_message(self, seats: tuple[int, ...]) -> rpc.ServerMessage:
        spec = self.spec
        return codec.plain_to_proto(
            messages.MatchStart(
                match_id=spec.match_id,
                game=spec.game,
                game_version=self.game.version,
                options={k: codec.option_to_text(v) for k, v in self.config.options},
                seats=seats,
                players=tuple(s.player() for s in self.slots),
                time_control=spec.time_control,
                fault_policy=spec.fault_policy,
                # A bot playing several seats gets its first seat's seed.
                bot_seed=seat_seed(spec.seed, seats[0]) if seats else 0,
            )
        )

    def header(self) -> dict[str, JSON]:
        """The record's header."""
        spec = self.spec
        return match_header(
            spec.match_id,
            self.game,
            self.config,
            spec.seed,
            [(s.bot_name, s.hello_version) for s in self.slots],
            spec.time_control.to_dict(),
            spec.fault_policy,
        ) | ({} if spec.branch is None else {"branched_from": spec.branch.header()})


def _branch_action(state: MatchState, n: int, text: str) -> tuple[int, Action, int]:
    """A branch's recorded action ``n`` in ``state``: its seat, the action and the legal count.
    Raises ``ConfigError`` for one the game refuses (the branch is not of this match)."""
    seat = state.to_move
    try:
        if seat is None:
            raise EngineError("the match is over")
        legal = len(state.legal_actions())
        return seat, state.find_action(text), legal
    except EngineError as err:
        raise ConfigError(f"the branch's decision {n} ({text!r}) is not legal: {err}") from None


def _visible(events: Iterable[Event], seats: tuple[int, ...] | None) -> Iterable[Event]:
    """The events that any of ``seats`` may see (``None``: the public ones), in order."""
    if seats is None:
        return (e for e in events if e.to is None)
    return (e for e in events if e.to is None or any(s in e.to for s in seats))


#: Characters of a bot's text quoted in a fault: a 64 KiB answer would otherwise be printed,
#: logged and recorded whole, several times over.
QUOTE_LIMIT = 80


def _quoted(text: str) -> str:
    """``text`` as a fault quotes it: ``repr``, cut to :data:`QUOTE_LIMIT` characters."""
    if len(text) <= QUOTE_LIMIT:
        return repr(text)
    return f"{text[:QUOTE_LIMIT]!r}… ({len(text)} characters)"
