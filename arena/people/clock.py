"""The time control of a match with people in it, unless one is given (``arena play``'s
defaults): a minute a move and ten minutes of bank. It is the match's, every seat's: the referee
and the record know one time control per match, and bots answer well within it anyway."""

from __future__ import annotations

from cardarena.messages import TimeControl

PEOPLE_TIME = TimeControl(move_ms=60_000, bank_ms=600_000)
