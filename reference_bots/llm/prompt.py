"""What the harness says to a model beside the text view: its system prompt and its re-ask.

:data:`HARNESS` names everything a model is sent: the text view's version
(:data:`engine.text.TEXT_VERSION`) and this module's wording (:data:`PROMPT_VERSION`), so a
result says which prompts it came from. Change the wording and both change.
"""

from __future__ import annotations

import hashlib
import math

from engine.registry import get_game
from engine.text import TEXT_VERSION
from engine.text.words import SUMMARY_KINDS

#: Characters a token, for counts a server does not report and for estimates.
CHARS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    """Tokens in ``text`` by :data:`CHARS_PER_TOKEN` (at least 1 for any text)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def summarized(kind: str, private: bool) -> bool:
    """Whether the view's summary of earlier deals reads this event (public ones of its kinds):
    the only events the harness keeps."""
    return not private and kind in SUMMARY_KINDS


#: The system prompt; ``{title}`` is the game's title.
SYSTEM = (
    "You are a player in a match of the card game {title}, refereed by a program. Each "
    "message shows your view of the table: what you may know now, and what you must decide. "
    "Answer as the view asks: exactly one legal action, by its code or, when the legal "
    "actions are listed, its number, on one line and nothing else. An answer that "
    "names no legal action is refused and you are asked again; after too many refusals a "
    "default action is played for you."
)

#: What the harness says after an answer it could not take; ``{reason}`` says why.
REASK = "That answer was refused: {reason}. Answer again with one legal action alone."

#: A hash of the wording above (8 hex digits).
PROMPT_VERSION = hashlib.sha256(f"{SYSTEM}\n{REASK}".encode()).hexdigest()[:8]

#: The harness's version: the text view's and the prompt's.
HARNESS = f"{TEXT_VERSION}-{PROMPT_VERSION}"


def system_prompt(game: str) -> str:
    """The system prompt for ``game``."""
    return SYSTEM.format(title=get_game(game).title)


def reask(reason: str) -> str:
    """The message after a refused answer."""
    return REASK.format(reason=reason.rstrip("."))
