"""The protocol's messages as plain values: one frozen dataclass per message kind.

No protobuf here: a module that needs a :class:`TimeControl` or a :class:`FaultInfo` imports this
one and loads nothing else. :mod:`cardarena.codec` translates what a bot sends and receives, the
arena's ``arena.protocol.codec`` what a server does. :class:`Action` and :class:`Result` are the
protocol's own, not the engine's: a bot needs no rules engine (the arena converts at its edge).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final, TypeAlias

#: A JSON value, as observations, events and results carry them.
JSON: TypeAlias = bool | int | float | str | Sequence["JSON"] | Mapping[str, "JSON"] | None

#: The longest move time or bank a time control may give, in ms: a day. The protocol's fields
#: are uint32 (49 days); a match a bot may stall for longer than a day is no use to anyone.
MAX_TIME_MS: Final = 86_400_000

#: The protocol version this arena speaks.
PROTOCOL_VERSION: Final = 1


@dataclass(frozen=True, slots=True)
class Action:
    """One legal action of a decision request: ``kind`` and ``arg``, and the text form
    ``kind`` or ``kind:arg`` (``play:QS``, ``trump:H``, ``pass``) records and logs use."""

    #: What sort of choice: ``play``, ``trump``, ``rob``, ``shot`` …
    kind: str
    #: The choice's argument (a card, a suit letter, a court move), or ``""``.
    arg: str = ""
    #: The canonical text form; derived from ``kind`` and ``arg``.
    text: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", f"{self.kind}:{self.arg}" if self.arg else self.kind)

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class Result:
    """How a finished match came out, per seat, as MatchEnd carries it."""

    #: Each seat's score in the game's own unit (points, sets, chips); higher is better.
    scores: tuple[float, ...]
    #: Each seat's rank, 1 = best; equal ranks are ties.
    ranks: tuple[int, ...]
    #: Why the match ended: ``normal``, or ``forfeit`` when a seat forfeited.
    reason: str = "normal"
    #: The forfeiting seat when ``reason`` is ``forfeit``.
    forfeited_by: int | None = None
    #: One line for people: ``N+S win the rubber 2-1``.
    summary: str = ""

    @property
    def winners(self) -> tuple[int, ...]:
        """The seats ranked first."""
        return tuple(s for s, r in enumerate(self.ranks) if r == 1)


@dataclass(frozen=True, slots=True)
class Hello:
    """A bot introduces itself (first message of a stream)."""

    #: Display name of the bot.
    bot_name: str
    #: Free-form version.
    bot_version: str = ""
    #: The secret naming the bot's seats.
    token: str = ""
    #: Protocol version the bot speaks (0 when it did not say).
    protocol_version: int = PROTOCOL_VERSION
    #: Games the bot can play; empty for any.
    games: tuple[str, ...] = ()
    #: Matches the bot will play on this connection before leaving; 0 for no limit.
    max_matches: int = 0
    #: Events ride in the next DecisionRequest (``Decision.events``) instead of coming one by one.
    batch_events: bool = False
    #: The observations' plain-text rendering is left empty.
    omit_text: bool = False
    #: The observations' JSON rendering is left empty (when the game has a typed message).
    omit_json: bool = False


@dataclass(frozen=True, slots=True)
class Answer:
    """A bot's answer to a decision request: an index, a text, or (garbage) neither."""

    #: The request answered.
    request_id: int
    #: Index into the request's legal actions, when the bot sent one.
    index: int | None = None
    #: Text form of an action, when the bot sent one.
    text: str | None = None
    #: The bot's note on the decision ("" for none), as :func:`clean_note` leaves it.
    note: str = ""
    #: Why the bot's SDK played a fallback instead of its strategy's choice ("" if it did not).
    sdk_fallback: str = ""


#: The most bytes (UTF-8) of a note or an SDK fallback reason an answer keeps.
NOTE_BYTES: Final = 500

# Controls reach no terminal or page: line breaks and tabs become spaces, the rest (and the
# bidirectional overrides, which would reorder what a reader sees) U+FFFD.
_NOTE_SPACES = {ord(c): " " for c in "\t\n\r"}
_NOTE_BAD = {
    c: "\ufffd"
    for c in (*range(0x20), *range(0x7F, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A))
    if c not in _NOTE_SPACES
}
_NOTE_TABLE = {**_NOTE_BAD, **_NOTE_SPACES}


def clean_note(text: str) -> str:
    """``text`` fit for a note: controls replaced (see above), a lone surrogate by "?", and cut to
    :data:`NOTE_BYTES` of UTF-8 at a character boundary, ending in "…" when it was cut."""
    data = text.translate(_NOTE_TABLE).encode("utf-8", "replace")  # a lone surrogate: "?"
    if len(data) <= NOTE_BYTES:
        return data.decode()
    return data[: NOTE_BYTES - 3].decode("utf-8", "ignore") + "…"


@dataclass(frozen=True, slots=True)
class Ping:
    """A bot's liveness check."""

    #: Echoed in the Pong.
    nonce: int = 0


@dataclass(frozen=True, slots=True)
class Garbage:
    """A bot message with no recognisable content."""

    #: What was wrong with it.
    why: str


#: Whatever a bot may send.
BotMessage = Hello | Answer | Ping | Garbage


@dataclass(frozen=True, slots=True)
class Welcome:
    """The server accepted a Hello."""

    #: Version of the server software.
    server_version: str
    #: Connection id for logs.
    session_id: str
    #: Protocol version the server speaks.
    protocol_version: int = PROTOCOL_VERSION
    #: The secret to reconnect with (Hello.token of the next stream), see arena.proto.
    resume_token: str = ""


@dataclass(frozen=True, slots=True)
class Rejected:
    """The server refused a Hello; the stream ends."""

    #: Why, in one line.
    reason: str


@dataclass(frozen=True, slots=True)
class Pong:
    """Answer to a Ping."""

    #: The ping's nonce.
    nonce: int


@dataclass(frozen=True, slots=True)
class TimeControl:
    """How much time a bot has: per-move time plus a bank shared by the match's decisions.

    Each is at most :data:`MAX_TIME_MS`.
    """

    #: Milliseconds for each decision before the bank is drawn on.
    move_ms: int = 1000
    #: Extra milliseconds shared by all of a seat's decisions in the match.
    bank_ms: int = 10000

    def to_dict(self) -> dict[str, JSON]:
        """JSON-ready form."""
        return {"move_ms": self.move_ms, "bank_ms": self.bank_ms}


@dataclass(frozen=True, slots=True)
class PlayerInfo:
    """One seat at the table."""

    #: Seat number.
    seat: int
    #: The seat's name in the game (``N``).
    seat_name: str
    #: The bot playing it.
    bot_name: str
    #: The bot's version, if known.
    bot_version: str = ""


@dataclass(frozen=True, slots=True)
class MatchStart:
    """A match involving the bot begins."""

    #: Unique id of the match.
    match_id: str
    #: Game id.
    game: str
    #: Version of the game's rules implementation.
    game_version: str
    #: Every option with its value as text.
    options: Mapping[str, str]
    #: The seats this connection plays.
    seats: tuple[int, ...]
    #: Everyone at the table.
    players: tuple[PlayerInfo, ...]
    #: The time control.
    time_control: TimeControl
    #: ``lenient`` or ``strict``.
    fault_policy: str
    #: Seed for the bot's own randomness.
    bot_seed: int


@dataclass(frozen=True, slots=True)
class Decision:
    """A decision request as a bot sees it (decoded by the SDK)."""

    #: Echo in the answer.
    request_id: int
    #: The match.
    match_id: str
    #: The deciding seat.
    seat: int
    #: The game id (which typed observation was sent; ``""`` if none).
    game: str
    #: The observation as the engine's ``to_dict()``.
    observation: dict[str, Any]
    #: The observation's plain-text rendering (``""`` when the Hello set ``omit_text``).
    text: str
    #: The legal actions in canonical order.
    legal: tuple[Action, ...]
    #: Milliseconds for this decision before the bank is used.
    deadline_ms: int
    #: Remaining bank in milliseconds.
    bank_ms: int
    #: Events that rode in the request, oldest first (only when the Hello set ``batch_events``):
    #: they happened before the decision, as if each had come alone just before it.
    events: tuple[EventInfo, ...] = ()


@dataclass(frozen=True, slots=True)
class EventInfo:
    """An event as a bot sees it."""

    #: The match.
    match_id: str
    #: Position among the events this connection (or spectator) may see: 0, 1, 2, ….
    seq: int
    #: What happened.
    kind: str
    #: The details.
    data: dict[str, Any]
    #: Whether only this seat (or team) sees it.
    private: bool


@dataclass(frozen=True, slots=True)
class FaultInfo:
    """A fault charged to a seat."""

    #: The seat at fault.
    seat: int
    #: ``timeout``, ``illegal``, ``garbage`` … (see the proto's Fault.kind).
    kind: str
    #: One line of detail.
    detail: str

    def to_dict(self) -> dict[str, JSON]:
        """JSON-ready form."""
        return {"seat": self.seat, "kind": self.kind, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class MatchEnd:
    """A match ended."""

    #: The match.
    match_id: str
    #: The result (``stats`` are not sent on the wire).
    result: Result
    #: Every fault charged.
    faults: tuple[FaultInfo, ...] = ()


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """The bot did something wrong."""

    #: Machine-readable code: ``illegal_action``, ``timeout``, ``protocol``, ``unknown_request``,
    #: ``flood``, ``disconnected``, ``wrong_seat``.
    code: str
    #: One line for people.
    message: str
    #: Strikes of the seat in the match after this error.
    strikes: int = 0
    #: The match concerned, or ``""``.
    match_id: str = ""
    #: The request concerned, or 0.
    request_id: int = 0
    #: Fault kind charged, or ``""`` when this is only a warning.
    fault: str = ""
    #: Seat charged when ``fault`` is set.
    seat: int = 0


#: Whatever the server may send on a bot stream.
ServerMessage = Welcome | Rejected | Pong | MatchStart | Decision | EventInfo | MatchEnd | ErrorInfo


class MatchStatus(StrEnum):
    """Where a match on the server's board stands (``MatchSummary.status`` on the wire)."""

    RUNNING = "running"
    FINISHED = "finished"


@dataclass(frozen=True, slots=True)
class MatchSummary:
    """A match as spectators see it."""

    #: The match.
    match_id: str
    #: Game id.
    game: str
    #: Everyone at the table.
    players: tuple[PlayerInfo, ...]
    #: Running or finished.
    status: MatchStatus
    #: The result once finished.
    result: Result | None = None


@dataclass(frozen=True, slots=True)
class Standing:
    """One bot's totals in one game."""

    #: Bot name.
    bot_name: str
    #: Game id.
    game: str
    #: Matches played.
    matches: int = 0
    #: Matches ranked first.
    wins: int = 0
    #: Mean match score (share of opponents ranked below, ties half).
    mean_score: float = 0.0
    #: Faults charged.
    faults: int = 0
    #: Sum of match scores (for the mean).
    score_sum: float = field(default=0.0, compare=False)
