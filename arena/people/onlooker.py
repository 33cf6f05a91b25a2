"""The table as a spectator sees it: the viewer's steps from a match's public events alone.

A spectator (``arena watch``, a competition's live match page) is sent public events and
nothing else: no observation, no hand. :class:`Onlooker` keeps a *stand-in*, a full
:class:`~engine.MatchState` that produces exactly those public events, and draws it: its
observations without every part that differs between seats (hands and the like), and its hand
sizes (plain to see at a table). The stand-in's hidden cards are drawn at random and never
shown, so a page drawn from it holds what the events said, the rules' consequences of it, and
nothing else; the real hidden cards are not even on this machine.

The stand-in is found as the seat's desk (arena/people/desk.py) follows its events: the match's
start is a deal (a seed) whose public events begin with the ones received; each next action
is a legal action of the stand-in whose public events begin with those received since, the
hidden cards drawn again when none is (the played card was elsewhere), and the chance after it
(the next deal's turn-up, a serve) drawn again when only that differs. What nothing explains
within :data:`TRIES` stops the drawing (the event list goes on): the page never shows a guess.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from arena.records.view import FieldPath, differing_paths, without_paths
from engine import Event, Game, MatchConfig, MatchState

#: States tried (deals, re-deals, chances) to explain one public event before giving up.
TRIES = 6000
#: Of those, chances drawn again after one action whose own event is right.
CHANCES = 600
#: Random walks through silent actions per re-deal, and the longest.
WALKS = 20
WALK_DEPTH = 40


def _key(kind: str, data: Any) -> str:
    return json.dumps([kind, data], sort_keys=True, separators=(",", ":"))


def _public(events: list[Event]) -> list[str]:
    return [_key(e.kind, e.data) for e in events if e.to is None]


def _loose(key: str) -> str:
    """An event of the start with each list in its data as its length: the draws that settle
    who begins (tennis's first server: cards turned until an ace, then shuffled back) are
    matched by their outcome, which the event names, not card by card."""
    kind, data = json.loads(key)
    if isinstance(data, dict):
        data = {k: len(v) if isinstance(v, list) else v for k, v in data.items()}
    return _key(kind, data)


@dataclass
class Onlooker:
    """One match's stand-in state, followed event by event."""

    game: Game
    config: MatchConfig
    #: A state consistent with every public event so far; ``None`` before the start is
    #: explained, and for good once an event is not (:attr:`lost`).
    live: MatchState | None = None
    lost: bool = False
    #: The state before the action being followed (``None``: the start), its public events
    #: received so far, and those the stand-in says are still to come.
    anchor: MatchState | None = None
    got: list[str] = field(default_factory=list)
    expected: list[str] = field(default_factory=list)
    #: Parts of observations found to differ between seats so far (kept for the whole match).
    private: set[FieldPath] = field(default_factory=set)
    rng: random.Random = field(default_factory=lambda: random.Random(0))

    def take(self, kind: str, data: Any) -> bool:
        """A public event; whether the table is now at a position to draw (the events of the
        start or of an action have all come, and someone is to move)."""
        if self.lost:
            return False
        key = _key(kind, data)
        start = self.anchor is None and self.expected
        if self.expected and (_loose(self.expected[0]) if start else self.expected[0]) == (
            _loose(key) if start else key
        ):
            self.expected.pop(0)
            self.got.append(key)
        elif self.expected or (self.live is None and self.anchor is None):
            # The stand-in said otherwise (hidden chance, a hidden card) or the start goes on.
            self._explain(self.anchor, [*self.got, key])
        else:
            anchor, got = self.anchor, self.got
            if not self._explain(self.live, [key]):
                # An event of the previous action (or the start) the stand-in did not foresee.
                self._explain(anchor, [*got, key])
        live = self.live
        return not self.lost and not self.expected and live is not None and live.to_move is not None

    def _explain(self, anchor: MatchState | None, got: list[str]) -> bool:
        found = self._search(anchor, got)
        if found is None:
            self.live, self.lost = None, True
            return False
        (self.live, self.expected), self.lost = found, False
        self.anchor, self.got = anchor, got
        return True

    def _search(
        self, anchor: MatchState | None, got: list[str]
    ) -> tuple[MatchState, list[str]] | None:
        """A state after ``anchor``'s next action (or the start) whose public events begin
        with ``got``, and the rest of them."""
        tries = 0
        for start, action in self._candidates(anchor):
            tries += 1
            if tries > TRIES:
                return None
            trial = start.clone()
            if action is None:
                told = _public(trial.events)
                if [_loose(k) for k in told[: len(got)]] == [_loose(k) for k in got]:
                    return trial, told[len(got) :]
                continue
            told = _public(trial.apply(action))
            if told[:1] != got[:1]:
                continue
            if told[: len(got)] == got:
                return trial, told[len(got) :]
            # The action's own event is right and what followed is not: chance (a deal's
            # turn-up, a serve) or a hidden deck's order. Keep the actor's hand (the action
            # stays legal) and draw the rest again.
            assert start.to_move is not None
            for _ in range(CHANCES):
                tries += 1
                again = start.determinize(start.to_move, self.rng)
                told = _public(again.apply(action))
                if told[: len(got)] == got:
                    return again, told[len(got) :]
        return None

    def _candidates(self, anchor: MatchState | None) -> Iterator[tuple[MatchState, Any]]:
        """Deals (``anchor`` None: the start, one per seed), else ``anchor``'s legal actions,
        then the same from ``anchor`` with its hidden cards drawn again, and again."""
        if anchor is None:
            while True:
                yield self.game.new_match(self.config, self.rng.getrandbits(63)), None
        if anchor.to_move is None:
            return
        silent = any(not _public(anchor.clone().apply(a)) for a in anchor.legal_actions())
        start = anchor
        while True:
            for action in start.legal_actions():
                yield start, action
            if silent:
                yield from self._walks(start)
            start = self._redraw(anchor)

    def _walks(self, start: MatchState) -> Iterator[tuple[MatchState, Any]]:
        """Random plays from ``start`` through actions no spectator hears of (a doubles team's
        private card exchange), each up to the first action that makes a public event."""
        for _ in range(WALKS):
            state = start
            for _ in range(WALK_DEPTH):
                if state.to_move is None:
                    break
                action = self.rng.choice(state.legal_actions())
                trial = state.clone()
                if _public(trial.apply(action)):
                    yield state, action
                    break
                state = trial

    def _redraw(self, state: MatchState) -> MatchState:
        """``state`` with every hidden card drawn again: two seats' determinizations (each keeps
        one seat's hand, a stand-in's own guess, and draws the rest)."""
        seats = list(range(state.num_seats))
        self.rng.shuffle(seats)
        for seat in seats[:2]:
            state = state.determinize(seat, self.rng)
        return state

    def step(self, number: int, events: list[dict[str, Any]]) -> dict[str, Any] | None:
        """The viewer's step ``number`` for the position now (after :meth:`take` said so): the
        public part of the stand-in's observations, its hand sizes, no hand."""
        state = self.live
        if state is None or state.to_move is None:
            return None
        views = [state.observation(s).to_dict() for s in range(state.num_seats)]
        self.private |= differing_paths(views)
        hands = [v.get("hand") for v in views]
        sizes = [len(h) for h in hands if isinstance(h, list)]
        undrawn = set(self.game.undrawn_fields) | set(self.game.restore_unchecked)
        public = {
            k: v
            for k, v in without_paths(views[0], frozenset(self.private)).items()
            if k not in undrawn
        }
        return viewer_step(
            self.game,
            self.config,
            number,
            public,
            [{} for _ in views],
            events,
            sizes if len(sizes) == len(views) else None,
            state.to_move,
        )


def viewer_step(
    game: Game,
    config: MatchConfig,
    number: int,
    public: Mapping[str, Any],
    private: list[dict[str, Any]],
    events: list[dict[str, Any]],
    sizes: list[int] | None,
    seat: int,
    legal: list[str] | None = None,
) -> dict[str, Any]:
    """A replay viewer's step (arena/records/html.py's shape) from a public part, each seat's
    private part as far as it is shown, and the hand sizes; the game's presentation of the
    public part gives its scores, notes and drawing."""
    shown = game.present(config, public).to_dict()
    step: dict[str, Any] = {
        "n": number,
        "end": False,
        "seat": seat,
        "action": "\u2026",
        "fallback": False,
        "note": "",
        "sdk_fallback": "",
        "legal": legal or [],
        "decision": None,
        "public": dict(public),
        "private": private,
        "events": list(events),
        "faults": [],
        "scores": {"rows": shown["rows"], "facts": shown["facts"]},
        "notes": shown["notes"],
        "hand_sizes": sizes,
    }
    drawing = shown["drawing"]
    if isinstance(drawing, dict):
        for key, value in drawing.items():
            step.setdefault(key, value)
    return step
