"""What a rule-based strategy reads of a legal action: its kind, argument and text. The SDK's
:class:`cardarena.Action` (a bot over the wire) and the engine's ``Action`` (self-play, the
search's rollouts) both are one, so one strategy serves both."""

from __future__ import annotations

from typing import Protocol


class Choice(Protocol):
    @property
    def kind(self) -> str: ...

    @property
    def arg(self) -> str: ...

    @property
    def text(self) -> str: ...
