"""The search bot: determinized Monte Carlo tree search (SO-ISMCTS) over the engine.

One module per idea, each short enough to read at a sitting (docs/bots.md walks through them):

* :mod:`~reference_bots.search.belief`: what the seat has been sent (its observation and the
  events it saw) and full states sampled from it, with the engine's ``Game.restore``;
* :mod:`~reference_bots.search.rollout`: how a simulation ends and what it is worth: play on
  to the end of the deal (the point, in tennis), then score it for every seat;
* :mod:`~reference_bots.search.ismcts`: the search itself, over those samples;
* :mod:`~reference_bots.search.bot`: the :class:`SearchBot` that puts them together within a
  time or iteration budget.

It reads only what the protocol sends: the observation, the events and the legal actions.
"""

from reference_bots.search.bot import SearchBot

__all__ = ["SearchBot"]
