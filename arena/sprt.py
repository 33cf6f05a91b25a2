"""The SPRT's statistics, as the arena uses them: defined in :mod:`engine.sprt` (the engine's
distribution, pure), so that an in-process duel (:func:`engine.local.duel`) runs the same test."""

from engine.sprt import (
    MODELS,
    NELO_PER_T,
    Z95,
    Model,
    SprtParams,
    SprtStatus,
    SprtTally,
    Verdict,
    bounds,
    elo_of_score,
    expected_scores,
    llr,
    score_of_elo,
    status,
    verdict_of,
)

__all__ = [
    "MODELS",
    "NELO_PER_T",
    "Z95",
    "Model",
    "SprtParams",
    "SprtStatus",
    "SprtTally",
    "Verdict",
    "bounds",
    "elo_of_score",
    "expected_scores",
    "llr",
    "score_of_elo",
    "status",
    "verdict_of",
]
