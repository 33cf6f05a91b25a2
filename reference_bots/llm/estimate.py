"""Tokens per match before a match is played: the harness's prompts over random playouts.

The estimate plays ``playouts`` matches of the configuration in process (fewer for long
matches: none starts after :data:`RENDERS` decisions), every seat choosing uniformly at random,
renders each decision's view as the harness would send it (the system prompt and
:func:`engine.text.render` with its ``list_legal`` and the public events), and counts
characters: a prompt is the system prompt and the view, a completion the chosen action's text,
both at :data:`~reference_bots.llm.prompt.CHARS_PER_TOKEN` characters a token. It is a floor for
a model that answers at once: each retry sends the conversation again, a model that explains
(or reasons) writes more than an action, and a real tokenizer may count otherwise.
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass

from engine import Event, MatchConfig, get_game
from engine.text import render
from reference_bots.llm.options import Settings
from reference_bots.llm.prompt import HARNESS, estimate_tokens, summarized, system_prompt

#: Random playouts an estimate averages over.
PLAYOUTS = 4
#: No further playout starts once this many views were rendered (a long match has thousands).
RENDERS = 10_000


@dataclass(frozen=True, slots=True)
class Estimate:
    """What one seat of one match costs, on average."""

    decisions: float
    prompt_tokens: float
    completion_tokens: float
    #: What it was measured on: the game, players, playouts, whether actions were listed.
    basis: str

    def per_seat(self) -> str:
        """``180 decisions, ~95,000 prompt + ~400 completion tokens``."""
        return (
            f"{self.decisions:,.0f} decisions, ~{self.prompt_tokens:,.0f} prompt + "
            f"~{self.completion_tokens:,.0f} completion tokens"
        )

    def times(self, seats: float) -> str:
        """The tokens of ``seats`` seat-matches: ``~9,500,000 prompt + ~40,000 completion``."""
        return (
            f"~{self.prompt_tokens * seats:,.0f} prompt + "
            f"~{self.completion_tokens * seats:,.0f} completion tokens"
        )


def estimate_match(
    config: MatchConfig, settings: Settings, playouts: int = PLAYOUTS, seed: int = 0
) -> Estimate:
    """The average cost of one seat of a match of ``config`` (see the module's docstring)."""
    return _estimate(config, settings.list_legal, playouts, seed)


# Several model seats of one tournament (a long match takes seconds) share one estimate.
@functools.cache
def _estimate(config: MatchConfig, list_legal: bool, playouts: int, seed: int) -> Estimate:
    game = get_game(config.game_id)
    system = system_prompt(config.game_id)
    decisions = prompt = completion = 0
    seats = 0
    played = 0
    for n in range(playouts):
        if decisions >= RENDERS:
            break
        played += 1
        rng = random.Random(seed + n)
        state = game.new_match(config, seed + n)
        seats += state.num_seats
        public: list[Event] = []  # what the harness passes on (LLMBot.on_event)
        read = 0
        while (seat := state.to_move) is not None:
            public += [e for e in state.events[read:] if summarized(e.kind, e.to is not None)]
            read = len(state.events)
            legal = state.legal_actions()
            observation = state.observation(seat).to_dict()
            view = render(
                config.game_id, config, observation, legal, list_legal=list_legal, events=public
            )
            action = rng.choice(legal)
            decisions += 1
            prompt += estimate_tokens(system) + estimate_tokens(view.text)
            completion += estimate_tokens(action.text)
            state.apply(action)
    basis = (
        f"{config.game_id}, {config.players} players, {played} random playouts, harness "
        f"{HARNESS}, legal actions {'listed' if list_legal else 'not listed'}"
    )
    per = max(seats, 1)
    return Estimate(decisions / per, prompt / per, completion / per, basis)
