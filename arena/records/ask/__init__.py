"""``arena replay ask``: put recorded decisions to a bot over the real protocol.

For debugging a bot on a position it (or another bot) met in a match: the record is replayed
(and verified), the bot command is launched in a boxed arena as ``arena match`` launches a seat's
bot (sandboxed unless told not to, :func:`arena.bots.launch.start_bot`; ``ARENA_ADDRESS``,
``ARENA_TOKEN``, ``ARENA_SEED`` = the seat's seed in that match), and it is sent what it would
have got in the match, encoded by :mod:`arena.protocol.codec`.

``--at K`` (:func:`ask`): MatchStart, every event its seat could see up to decision K, then the
DecisionRequest with the seat's observation and legal actions; its answer is printed next to the
recorded action, and a MatchEnd lets the bot finish cleanly. ``--replay-all``
(:func:`ask_all_command`) takes a fresh bot per seat through the whole match instead: the events
in order, every decision asked and the recorded action played whatever the answer, then MatchEnd.
A bot that keeps state (its generator seeded from ``bot_seed``, cards counted from events) is
then asked each decision in the state the match had left it in.

Either way the bot plays through the arena server's own hub (Hello, token, Welcome, reconnection
and Ping as in a live match): the record becomes a script (``script``) that
:class:`arena.server.scripted.ScriptedSeat` plays for its seat, since a live match always starts
from the deal and referees every answer, where here the match starts from a replayed state and
the record decides. ``bot`` starts and watches the bot; ``command`` judges and prints.
"""

from __future__ import annotations

from arena.records.ask.command import (
    Answered,
    AskOutcome,
    SeatRun,
    ask,
    ask_all_command,
    ask_command,
    replay_seat,
    report,
)
from arena.records.ask.script import MatchScript, Position, find_position, match_script

__all__ = [
    "Answered",
    "AskOutcome",
    "MatchScript",
    "Position",
    "SeatRun",
    "ask",
    "ask_all_command",
    "ask_command",
    "find_position",
    "match_script",
    "replay_seat",
    "report",
]
