"""Records for the replay viewer's tests: a played match of every game, some with a time control,
bot times that draw on the bank, and faults (a timeout, an illegal action) answered by the
referee's fallback, so the timeline's marks and the bank arithmetic have something to show."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

from arena.records.format import Recorder, match_header, write_record
from engine import get_game
from tests.arena.replay_truth import OPTIONS

#: Every game the viewer draws, as (label, game id, players): tennis singles and doubles apart.
VIEWER_GAMES: list[tuple[str, str, int | None]] = [
    ("whist", "whist", None),
    ("tennis_whist", "tennis_whist", None),
    ("spoil_five", "spoil_five", None),
    ("forty_five", "forty_five", None),
    ("tennis-singles", "tennis", 2),
    ("tennis-doubles", "tennis", 4),
]

MOVE_MS = 1000
BANK_MS = 2500


@dataclass
class TimedRecord:
    """A written record and what its writer knows: per decision the bank left, tracked here
    under the referee's rules as the writer charged the times."""

    path: Path
    banks: list[float] = field(default_factory=list)
    fault_steps: list[int] = field(default_factory=list)
    fallback_steps: list[int] = field(default_factory=list)


def timed_record(
    tmp_path: Path, game_id: str, seed: int, players: int | None = None, faults: bool = True
) -> TimedRecord:
    """A random match of ``game_id`` with ``move_ms`` 1000 and a 2500 ms bank: decision times
    drawn from 0-1600 ms; with ``faults``, decision 3 times out and decision 5 answers an
    illegal action, each followed by the referee's fallback."""
    default_players, options = OPTIONS[game_id]
    game = get_game(game_id)
    config = game.configure(players or default_players, options)
    state = game.new_match(config, seed)
    recorder = Recorder(state)
    rng = random.Random(seed)
    banks = [float(BANK_MS)] * state.num_seats
    out = TimedRecord(tmp_path / f"{game_id}-{players or 'd'}-{seed}.jsonl.gz")
    listed: list[dict[str, object]] = []
    k = 0
    while (seat := state.to_move) is not None:
        legal = state.legal_actions()
        fallback = False
        if faults and k == 3:
            # A timeout: the whole move time and bank went by; the bank is empty after it.
            ms = MOVE_MS + banks[seat] + 0.5
            detail = f"no answer within {ms:.0f} ms"
            recorder.fault(seat, "timeout", detail)
            listed.append({"seat": seat, "kind": "timeout", "detail": detail})
            banks[seat] = 0.0
            fallback = True
        elif faults and k == 5:
            ms = 12.25
            recorder.fault(seat, "illegal", '"nonsense" is not a legal action')
            listed.append(
                {"seat": seat, "kind": "illegal", "detail": '"nonsense" is not a legal action'}
            )
            fallback = True
        else:
            ms = round(rng.uniform(0, 1600), 3)
            banks[seat] = max(0.0, banks[seat] - max(0.0, ms - MOVE_MS))
        if fallback:
            out.fault_steps.append(k)
            out.fallback_steps.append(k)
        action = state.fallback_action() if fallback else rng.choice(legal)
        recorder.decision(seat, len(legal), action.text, ms, fallback)
        out.banks.append(banks[seat])
        state.apply(action)
        k += 1
    recorder.sync()
    result = state.result()
    assert result is not None
    bots = [(f"bot{s}", "1") for s in range(state.num_seats)]
    header = match_header(
        f"viewer-{game_id}-{seed}",
        game,
        config,
        seed,
        bots,
        {"move_ms": MOVE_MS, "bank_ms": BANK_MS},
        "lenient",
    )
    write_record(out.path, header, recorder.entries, {**result.to_dict(), "faults": listed})
    return out
