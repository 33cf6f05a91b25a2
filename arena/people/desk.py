"""What a person's page is told: one seat's protocol messages turned into the replay viewer's
document, step by step, and nothing else.

A :class:`Desk` takes the messages the seat's connection receives (``MatchStart``, events,
``Decision``s, errors, ``MatchEnd``) and publishes page messages (JSON-ready dicts) to the pages
watching it. Everything a page message holds comes from those messages and the rules (the
engine, as any bot may hold them): the seat's own observation, its legal actions, its clock, the
events it was sent. The public part of an observation, what :meth:`engine.Game.present` is given
as the viewer's is, leaves out every part that differs between seats in a state rebuilt from
that observation (:meth:`engine.Game.restore`, its hidden cards drawn at random); the other
seats' hand sizes come from the same state (sizes are plain to see at a table). Between the
seat's decisions that state is advanced by each event the seat is sent (:func:`follow`), and the
page shows each new position; an event it cannot explain (chance the seat cannot see) ends it
until the next decision.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cardarena import messages

from arena.people.onlooker import Onlooker, viewer_step
from arena.records.view import FieldPath, differing_paths, event_text, without_paths
from engine import EngineError, Event, Game, MatchConfig, MatchState, get_game

#: Page messages a desk keeps for a page that (re)connects: a match's worth, bounded.
MAX_FEED = 20_000


def action_text(action: messages.Action) -> str:
    """An action as the record writes it: ``play:TD``, ``pass``."""
    return f"{action.kind}:{action.arg}" if action.arg else action.kind


@dataclass
class Table:
    """The match as this seat knows it: the rules, the names, what it has seen."""

    game: Game
    config: MatchConfig
    names: tuple[str, ...]
    seat: int
    #: Every event the seat was sent, oldest first (for :meth:`Game.restore`).
    seen: list[Event] = field(default_factory=list)
    #: Parts of observations found private so far (kept for the whole match, as the viewer does).
    private: set[FieldPath] = field(default_factory=set)
    #: Between the seat's decisions: a state consistent with its last observation and every
    #: event since (``None`` once an event is not one it would produce), and the events of the
    #: last action it applied still to come.
    live: MatchState | None = None
    expected: list[str] = field(default_factory=list)
    #: The state before the action being followed, and its events received so far.
    anchor: MatchState | None = None
    got: list[str] = field(default_factory=list)


@dataclass
class Desk:
    """One person's seat: its page feed, and the decision waiting for the person's answer."""

    #: The seat this desk plays.
    seat: int
    #: The secret in the page's URL.
    secret: str
    #: Players at the table (the match's rules, which its MatchStart gives as seats only: two
    #: seats of tennis may be two players or two sides of four); ``None``: one per seat.
    players: int | None = None
    #: Every page message so far (a page that connects late is sent them all first).
    feed: list[dict[str, Any]] = field(default_factory=list)
    #: The pages listening now.
    listeners: set[asyncio.Queue[dict[str, Any]]] = field(default_factory=set)
    #: The decision waiting for an answer, if any.
    pending: messages.Decision | None = None
    #: Answers the person gave, for the connection to send: ``(request_id, index)``.
    answers: asyncio.Queue[tuple[int, int]] = field(default_factory=asyncio.Queue)
    #: Whether the match has ended (the page has its last message).
    ended: bool = False
    table: Table | None = None
    #: A spectator's desk (no seat): the match's options, when its caller knows them (the
    #: spectator service does not say them), and the table drawn from public events alone.
    options: Mapping[str, Any] = field(default_factory=dict)
    onlooker: Onlooker | None = None
    #: Events since the last decision (the next step's "since the last step").
    _since: list[dict[str, Any]] = field(default_factory=list)
    _steps: int = 0

    def publish(self, message: dict[str, Any]) -> None:
        """Send ``message`` to every page listening, and keep it for pages to come."""
        if len(self.feed) < MAX_FEED:
            self.feed.append(message)
        for queue in self.listeners:
            queue.put_nowait(message)

    def answer(self, request_id: int, index: int) -> str:
        """The person's choice for ``request_id``; ``""`` when taken, else why not (one line)."""
        pending = self.pending
        if pending is None or pending.request_id != request_id:
            return "that decision is no longer open"
        if not 0 <= index < len(pending.legal):
            return f"no legal action {index}"
        self.pending = None
        self.answers.put_nowait((request_id, index))
        self.publish({"type": "answered", "request_id": request_id, "index": index})
        return ""

    def take(self, msg: object) -> None:
        """A message the seat's connection received."""
        if isinstance(msg, messages.MatchStart):
            self._start(msg)
        elif isinstance(msg, messages.EventInfo):
            self._event(msg)
        elif isinstance(msg, messages.Decision):
            for event in msg.events:
                self._event(event)
            self._decision(msg)
        elif isinstance(msg, messages.ErrorInfo):
            if (
                msg.fault == "timeout"
                and self.pending
                and self.pending.request_id == msg.request_id
            ):
                self.pending = None  # the referee played for the seat
            self.publish(
                {"type": "error", "fault": msg.fault, "message": msg.message, "code": msg.code}
            )
        elif isinstance(msg, messages.MatchEnd):
            self._end(msg)

    def _start(self, msg: messages.MatchStart) -> None:
        game = get_game(msg.game)
        config = game.configure(self.players or len(msg.players), dict(msg.options))
        names = tuple(game.seat_names(config))
        self.table = Table(game, config, names, self.seat)
        if self.seat < 0:
            self.onlooker = Onlooker(game, config)
        tc = msg.time_control
        meta = {
            "game": game.id,
            "title": game.title,
            "presentation": game.presentation_kind,
            "match_id": msg.match_id,
            "seed": None,
            "options": dict(msg.options),
            "players": config.players,
            "seat_names": list(names),
            "bots": [p.bot_name for p in sorted(msg.players, key=lambda p: p.seat)],
            "sides": [list(s) for s in game.sides(config) or ()],
            "decisions": 0,
            "private_fields": [],
            "time_control": {"move_ms": tc.move_ms, "bank_ms": tc.bank_ms},
            "marks": [],
            "result": None,
        }
        self.publish({"type": "start", "seat": self.seat, "meta": meta})

    def _event(self, msg: messages.EventInfo) -> None:
        table = self.table
        if table is None:
            return
        to = (table.seat,) if msg.private else None
        event = Event(msg.kind, msg.data, to)
        table.seen.append(event)
        shown = {
            "i": msg.seq,
            "to": None if to is None else list(to),
            "text": event_text(event, table.names),
        }
        self._since.append(shown)
        self.publish({"type": "event", "event": shown})
        if self.onlooker is not None:
            lost = self.onlooker.lost
            if self.onlooker.take(msg.kind, msg.data):
                self._publish_view(self.onlooker.step(self._steps, self._since))
            elif self.onlooker.lost and not lost:
                # Said once: the events and the result still come.
                self.publish(
                    {
                        "type": "error",
                        "fault": "",
                        "code": "",
                        "message": "the table stops here: the public events no longer fit the "
                        "rules as this page knows them (the match's options?)",
                    }
                )
        elif follow(table, event) and not table.expected:
            self._view()

    def _view(self) -> None:
        """The table as it stands now, between the seat's decisions (the timeline's next step)."""
        table = self.table
        state = table.live if table else None
        if table is None or state is None or state.to_move is None:
            return  # the end is the result's to show
        # Fields a rebuilt state may not reproduce (a window of recent events) are left out.
        observation = {
            k: v
            for k, v in state.observation(table.seat).to_dict().items()
            if k not in table.game.restore_unchecked
        }
        step = seat_step(table, observation, self._steps, [], self._since, state.clone())
        step["seat"] = state.to_move
        self._publish_view(step)

    def _publish_view(self, step: dict[str, Any] | None) -> None:
        if step is None:
            return
        self._steps += 1
        self._since = []
        self.publish({"type": "view", "step": step})

    def _decision(self, msg: messages.Decision) -> None:
        table = self.table
        if table is None:
            return
        self.pending = msg
        legal = [action_text(a) for a in msg.legal]
        state = rebuild(table, msg.observation, self._steps)
        table.live, table.expected, table.got = (state.clone() if state else None), [], []
        step = seat_step(table, msg.observation, self._steps, legal, self._since, state)
        self._steps += 1
        self._since = []
        self.publish(
            {
                "type": "decision",
                "request_id": msg.request_id,
                "step": step,
                "legal": legal,
                "deadline_ms": msg.deadline_ms,
                "bank_ms": msg.bank_ms,
            }
        )

    def _end(self, msg: messages.MatchEnd) -> None:
        self.pending = None
        self.ended = True
        table = self.table
        names: Sequence[str] = table.names if table else ()
        res = msg.result

        def who(seat: int | None) -> str | None:
            return names[seat] if seat is not None and 0 <= seat < len(names) else None

        result = {
            "summary": res.summary or res.reason,
            "reason": res.reason,
            "forfeited_by": who(res.forfeited_by),
            "scores": list(res.scores),
            "ranks": list(res.ranks),
            "faults": [
                {"seat": f.seat, "kind": f.kind, "detail": f.detail}
                for f in msg.faults
                if table is None or f.seat == table.seat
            ],
            "events": self._since,
        }
        self.publish({"type": "end", "result": result})


def _canonical(kind: str, data: Any) -> str:
    return json.dumps([kind, data], sort_keys=True, separators=(",", ":"))


def rebuild(table: Table, observation: dict[str, Any], number: int) -> MatchState | None:
    """A full state showing ``observation`` to the seat (:meth:`Game.restore`; the hidden
    parts drawn at random), or ``None`` for a game that cannot."""
    try:
        return table.game.restore(table.config, observation, table.seen, random.Random(number))
    except (EngineError, NotImplementedError):
        return None


def follow(table: Table, event: Event) -> bool:
    """Advance ``table.live`` by ``event``; whether it did. The events of one action come
    one by one: the first starts an action (``table.anchor`` is the state before it), each next
    one continues it. A state explains them when one of its legal actions makes the seat see
    them, in order; the hidden cards (and hidden chance) of the anchor are drawn again
    (:meth:`MatchState.determinize`) until some state does, at most :data:`REDEALS` times:
    another seat's card is in its hand there. An event nothing explains ends the live state
    until the seat's next decision: what the page shows is never a guess."""
    if table.live is None:
        return False
    key = _canonical(event.kind, event.data)
    if table.expected and table.expected[0] == key:
        table.expected.pop(0)
        table.got.append(key)
        return True
    if not table.expected:  # a new action
        table.anchor, table.got = table.live, []
    table.got.append(key)
    found = _explain(table.anchor, table.got, table.seat, random.Random(len(table.seen)))
    if found is None:
        table.live = None
        return False
    table.live, table.expected = found
    return True


#: How many times :func:`follow` draws the hidden parts again to explain an event.
REDEALS = 48


def _explain(
    anchor: MatchState | None, got: list[str], seat: int, rng: random.Random
) -> tuple[MatchState, list[str]] | None:
    """A state after one legal action from ``anchor`` (or from it with its hidden parts drawn
    again) whose events the seat sees begin with ``got``, and the rest of them; ``None``."""
    if anchor is None or anchor.to_move is None:
        return None
    for attempt in range(REDEALS):
        start = anchor if attempt == 0 else anchor.determinize(seat, rng)
        for action in start.legal_actions():
            trial = start.clone()
            told = [_canonical(e.kind, e.data) for e in trial.apply(action) if e.visible_to(seat)]
            if told[: len(got)] == got:
                return trial, told[len(got) :]
    return None


def seat_step(
    table: Table,
    observation: dict[str, Any],
    number: int,
    legal: list[str],
    events: list[dict[str, Any]],
    state: MatchState | None,
) -> dict[str, Any]:
    """The viewer's step ``number`` of the seat's view: its observation as the seat's own
    ``private`` entry, the shared part as ``public``, the game's presentation of that part;
    ``state``, one that shows it that observation, gives the parts that differ between seats
    and the hand sizes."""
    game, config, seat = table.game, table.config, table.seat
    sizes: list[int] | None = None
    if state is not None:
        views = [state.observation(s).to_dict() for s in range(state.num_seats)]
        table.private |= differing_paths(views)
        hands = [v.get("hand") for v in views]
        if all(isinstance(h, list) for h in hands):
            sizes = [len(h) for h in hands if isinstance(h, list)]
    public = without_paths(observation, frozenset(table.private))
    # Without a rebuilt state (a game that cannot restore), the whole observation is the seat's.
    heads = ({p[0] for p in table.private if p} or set(observation)) - {"seat"}
    private: list[dict[str, Any]] = [{} for _ in table.names]
    undrawn = set(game.undrawn_fields)
    private[seat] = {k: v for k, v in observation.items() if k in heads and k not in undrawn}
    return viewer_step(game, config, number, public, private, events, sizes, seat, legal)
