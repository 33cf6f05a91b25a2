"""A competition's matches followed as they are played: the live match page's feed.

**What may be shown, and when** (the tournament director's rule; docs/hosting.md, "Live
matches"). Every seating of a deal (a unit's rotations, a rerun's) gets the same cards in other
hands, so one seating's public play is another's hidden hands: a spectator of rotation 0, maybe
the author of a live bot seated in rotation 1, would learn the cards its bot has yet to see. A
match is therefore shown live only once **no other seating of its deal is still to be played
or in play**; until then its page says so. A match with no other seating (a unit of one
rotation) is live at once, and so is a challenge (a person at the table,
arena/host/challenges.py: its deal is its own). Only public events are ever sent (the arena's
spectator feed of the match), drawn by the stand-in of arena/people/onlooker.py; hidden cards
appear only in the record, published when the unit is over.

**What it costs the match: nothing.** The arena hands each public event to a queue on its own
loop (:meth:`arena.server.ArenaServer.tap`, a slow reader cannot hold it); a thread per followed
match turns them into the page's messages (:class:`arena.people.desk.Desk`), kept in one list
every reader reads at its own pace. A reader that does not take a message within
:data:`SEND_TIMEOUT_S` is dropped (arena/host/api/live.py). Feeds are made when a first reader
comes and end with the last; at most :data:`MAX_FEEDS` matches are followed at once, and
:data:`MAX_STREAMS` readers read them, :data:`MAX_STREAMS_PER_ADDRESS` from one address.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import structlog
from cardarena import codec, messages, rpc

from arena.host.store import CompetitionStore, NotFound, StoredMatch
from arena.people.desk import Desk
from arena.people.spectate import SPECTATOR
from arena.server.outbox import Outgoing

log = structlog.get_logger("arena.host")

#: Matches followed at once (one thread each).
MAX_FEEDS = 16
#: Live streams open at once, in all and from one client address.
MAX_STREAMS = 256
MAX_STREAMS_PER_ADDRESS = 4
#: Seconds a reader has to take the next message before it is dropped.
SEND_TIMEOUT_S = 10.0
#: Public events a feed holds from the arena before it gives up on a match (far beyond any).
MAX_INBOX = 50_000

#: Why a match is or is not shown live.
Showing = Literal["live", "waiting", "over", "elsewhere"]

#: ``tap(match_id, deliver)``: the arena's public events of a match (:meth:`ArenaServer.tap`).
Tap = Callable[[str, Callable[[Outgoing | None], None]], Callable[[], None] | None]


@dataclass(frozen=True, slots=True)
class Verdict:
    """Whether a match is shown live now, and the page's sentence about it."""

    showing: Showing
    why: str
    #: The other seatings of its deal still to play or in play.
    waiting_for: tuple[str, ...] = ()


def verdict(store: CompetitionStore, match: StoredMatch, running: Sequence[str]) -> Verdict:
    """The duplicate-deal rule for ``match`` (``running``: what this host's arena plays now)."""
    if match.state != "pending":
        return Verdict("over", "the match is over: its replay is published with its unit")
    others = [
        m.match_id
        for m in store.deal_matches(match.seed)
        if m.match_id != match.match_id and m.state == "pending"
    ]
    if others:
        return Verdict(
            "waiting",
            f"shown live once the other seatings of its deal are over ({len(others)} still to "
            "play or in play: their bots must not learn its cards)",
            tuple(others),
        )
    return _running(match.match_id, running)


def challenge_verdict(match_id: str, playing: bool, running: Sequence[str]) -> Verdict:
    """The rule for a challenge (a human match): its deal is its own, played once, so it has no
    other seating to wait for: live at once while this host's arena plays it (``waiting`` while
    it starts, so that its page looks again)."""
    if not playing:
        return Verdict("over", "the match is over: its replay is published")
    if match_id not in running:  # stored, its seats still connecting (or its end being stored)
        return Verdict("waiting", "the match is starting: its seats are connecting")
    return _running(match_id, running)


def _running(match_id: str, running: Sequence[str]) -> Verdict:
    if match_id not in running:
        return Verdict("elsewhere", "not being played by this host's arena now")
    return Verdict("live", "shown live: public information only")


@dataclass(eq=False)
class Feed:
    """One match followed: the page's messages so far (``desk.feed``), grown by a thread."""

    match_id: str
    desk: Desk
    start: messages.MatchStart
    readers: int = 0
    #: The arena's messages not yet turned into page messages; ``None``: no more.
    inbox: deque[Outgoing | None] = field(default_factory=deque)
    wake: threading.Event = field(default_factory=threading.Event)
    stop: Callable[[], None] = lambda: None
    #: Whether the page has every message it will get (the end, or the feed gave up).
    done: bool = False

    def deliver(self, msg: Outgoing | None) -> None:
        """From the arena's loop: queue and go (never blocks)."""
        if len(self.inbox) < MAX_INBOX:
            self.inbox.append(msg)
        else:
            self.inbox.append(None)
        self.wake.set()

    def run(self) -> None:
        """The feed's thread: each message into the desk, until the end or ``None``."""
        try:
            self.desk.take(self.start)
            while True:
                self.wake.wait()
                self.wake.clear()
                while self.inbox:
                    raw = self.inbox.popleft()
                    if raw is None:
                        return
                    msg = codec.proto_to_plain(
                        rpc.ServerMessage.FromString(raw) if isinstance(raw, bytes) else raw
                    )
                    self.desk.take(msg)
                    if isinstance(msg, messages.MatchEnd):
                        return
        except Exception:  # a bug here must not touch the match: the page just stops
            log.exception("live feed failed", match_id=self.match_id)
        finally:
            self.done = True


class Refused(Exception):
    """No feed now: the one-line reason (too many)."""


class LiveFeeds:
    """The matches followed now, shared by their readers."""

    def __init__(self, tap: Tap, players: int, options: Mapping[str, Any], game: str = "") -> None:
        self._tap = tap
        self._players = players
        self._options = dict(options)
        self._game = game
        self._feeds: dict[str, Feed] = {}
        self._streams: dict[str, int] = {}
        self._lock = threading.Lock()

    def open(self, match_id: str, seats: Sequence[str], address: str) -> Feed | None:
        """A reader of ``match_id`` (``seats``: who plays each seat): its feed, made if it is
        the first; ``None`` when the arena does not know the match; :class:`Refused` over the
        limits."""
        with self._lock:
            if sum(self._streams.values()) >= MAX_STREAMS:
                raise Refused(f"{MAX_STREAMS} live streams are open already; try later")
            if self._streams.get(address, 0) >= MAX_STREAMS_PER_ADDRESS:
                raise Refused(f"{MAX_STREAMS_PER_ADDRESS} live streams from one address at most")
            feed = self._feeds.get(match_id)
            if feed is None:
                if len(self._feeds) >= MAX_FEEDS:
                    raise Refused(f"{MAX_FEEDS} matches are followed live already; try later")
                feed = self._start(match_id, seats)
                if feed is None:
                    return None
            feed.readers += 1
            self._streams[address] = self._streams.get(address, 0) + 1
            return feed

    def close(self, feed: Feed, address: str) -> None:
        """A reader left; the last one ends its feed."""
        with self._lock:
            feed.readers -= 1
            left = self._streams.get(address, 0) - 1
            if left > 0:
                self._streams[address] = left
            else:
                self._streams.pop(address, None)
            if feed.readers > 0 or self._feeds.get(feed.match_id) is not feed:
                return
            del self._feeds[feed.match_id]
        feed.stop()
        feed.deliver(None)

    def _start(self, match_id: str, seats: Sequence[str]) -> Feed | None:
        players = tuple(messages.PlayerInfo(s, "", *_named(ref)) for s, ref in enumerate(seats))
        start = messages.MatchStart(
            match_id, self._game, "", self._options, (), players, messages.TimeControl(), "", 0
        )
        desk = Desk(SPECTATOR, "", players=self._players, options=self._options)
        feed = Feed(match_id, desk, start)
        stop = self._tap(match_id, feed.deliver)
        if stop is None:
            return None
        feed.stop = stop
        self._feeds[match_id] = feed
        threading.Thread(target=feed.run, name=f"live-{match_id}", daemon=True).start()
        return feed

    def following(self) -> int:
        """Matches followed now (for tests and metrics)."""
        with self._lock:
            return len(self._feeds)


def _named(ref: str) -> tuple[str, str]:
    """A seat's name and version: ``BOT@N`` split, a person's ``person:AUTHOR`` whole."""
    bot, at, version = ref.rpartition("@")
    return (bot, version) if at else (ref, "")


def stored(store: CompetitionStore, match_id: str) -> StoredMatch | None:
    """The stored match, or ``None`` (a validation match, an unknown id)."""
    try:
        return store.match(match_id)
    except NotFound:
        return None
