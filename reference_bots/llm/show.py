"""``arena bot llm --show-prompt``: what the harness sends at a match's first decision."""

from __future__ import annotations

from engine import MatchConfig, get_game
from engine.text import render
from reference_bots.llm.options import Settings
from reference_bots.llm.prompt import HARNESS, system_prompt


def show_prompt(config: MatchConfig, settings: Settings, seed: int) -> str:
    """The system prompt and the first decision's view of a match of ``config`` dealt from
    ``seed``, as the two messages the model gets."""
    state = get_game(config.game_id).new_match(config, seed)
    seat = state.to_move
    assert seat is not None  # a new match waits for a decision
    observation = state.observation(seat).to_dict()
    view = render(
        config.game_id, config, observation, state.legal_actions(), list_legal=settings.list_legal
    )
    return "\n".join(
        [
            f"harness {HARNESS}",
            "--- system ---",
            system_prompt(config.game_id),
            "--- user ---",
            view.text,
        ]
    )
