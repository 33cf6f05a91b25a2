"""What a Python bot is: one object with one method that picks among the legal actions.

A strategy sees the observation as plain data (the same keys as the engine's observation
``to_dict()``, whether it runs in-process or behind the gRPC SDK) and the legal actions in
canonical order; it returns the index of its choice.
"""

from __future__ import annotations

import random
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cardarena.messages import Action, Result


@dataclass(frozen=True, slots=True)
class Turn:
    """The decision ``choose`` is answering, beyond its arguments: the match, the seat, the table
    and the clock. ``run_bot`` sets :attr:`Bot.turn` to one just before each ``choose``."""

    #: The match the decision belongs to.
    match_id: str
    #: The seat deciding.
    seat: int
    #: Seats at the table (MatchStart's players).
    seats: int
    #: The match's options as MatchStart gives them: text (``"true"``, ``"5"``).
    options: Mapping[str, str]
    #: Milliseconds for this decision before the bank is used.
    deadline_ms: int
    #: The match's remaining bank, milliseconds.
    bank_ms: int
    #: ``time.monotonic()`` when the request arrived: the deadline runs from then.
    received: float
    #: The notes :meth:`note` was given for this decision, in order.
    notes: list[str] = field(default_factory=list)

    def elapsed_ms(self) -> float:
        """Milliseconds since the request arrived."""
        return (time.monotonic() - self.received) * 1000.0

    def note(self, text: str) -> None:
        """Attach ``text`` to this decision's answer: why the bot chose it, for its author. It
        is kept in the match's record and shown by ``arena replay show`` and the viewer (on a
        competition to the bot's author only). Several calls are joined with "; "; the whole
        is cut at 500 bytes of UTF-8, control characters replaced."""
        self.notes.append(str(text))

    def note_text(self) -> str:
        """The notes given so far, joined ("" for none)."""
        return "; ".join(self.notes)


class Bot(ABC):
    """A bot: ``choose`` is called once per decision."""

    #: The bot's name as shown in results.
    name: str = "bot"
    #: The bot's version string.
    version: str = "1"

    def __init__(self, seed: int | None = None) -> None:
        #: The bot's own generator. Unless ``seed`` is given, ``run_bot`` seeds it again from
        #: each match's ``bot_seed`` as the match starts: the bot then plays the same moves in
        #: a match whether its process is fresh or has played others before.
        self.rng = random.Random(seed)
        #: Whether the author fixed the seed (``run_bot`` then leaves the generator alone).
        self.seeded = seed is not None
        #: The decision being answered (match, seat, clock), set by ``run_bot`` before each
        #: ``choose``; ``None`` when the bot is driven some other way.
        self.turn: Turn | None = None

    def start_match(self, game: str, seat: int, options: Mapping[str, str]) -> None:
        """Called when a match starts, once per seat the bot plays in it (optional)."""

    def on_event(self, match_id: str, kind: str, data: Mapping[str, Any], private: bool) -> None:
        """Called for each event of a match the bot may see, in order, before the decision that
        follows it (optional). ``private``: only this seat (or team) saw it. A bot that does not
        override it costs the SDK nothing: events are then not decoded at all."""

    def end_match(self, match_id: str, result: Result) -> None:
        """Called when a match the bot played ends, with its result (optional): where a bot
        that learns looks at how it did, and forgets what it kept for the match."""

    @classmethod
    def wants_events(cls) -> bool:
        """Whether this bot overrides :meth:`on_event`."""
        return cls.on_event is not Bot.on_event

    @abstractmethod
    def choose(self, game: str, observation: Mapping[str, Any], legal: Sequence[Action]) -> int:
        """Index into ``legal`` of the chosen action."""


class RandomBot(Bot):
    """Uniformly random legal actions."""

    name = "random"

    def choose(self, game: str, observation: Mapping[str, Any], legal: Sequence[Action]) -> int:
        return self.rng.randrange(len(legal))
