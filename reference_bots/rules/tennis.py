"""Rule-based tennis (singles and doubles): return every ball you can, keep Kills for Smashes.

Policy, in order:

* Smash pending: answer with a Kill if any; else concede by passing with a discard.
* A shot card can answer: play it, towards the back court, to the area whose shots the
  opponents are least likely to hold (card counting from the face-up discards and our hands).
* Else Smash (the opponents then need one of the few Kills).
* Else a Kill only when it is worth it: the opponents are at 40, or we hold two or more.
* Doubles, ``control=players``: when the player cannot answer but the partner can, ``leave``.
* Else concede: pass, discarding the weakest card (an Out first, else a surplus shot card);
  a discard makes room for a fresh card at the next refill, and an Out dropped face down hides
  what it was.
* Doubles exchange: the Right player hands over the LF shots it can never hit, the Left player
  gives back RF shots, then the surplus.

Everything is read from the observation as plain data and the legal actions' text forms.
``python -m reference_bots.rules.tennis`` measures rules-bot self-play (docs/balance.md).
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Mapping, Sequence
from typing import Any

from engine import Game, OptionValue, get_game
from engine.games.tennis_cards import AREAS, PLAY_DECK_COUNTS, TYPE_INDEX
from reference_bots.rules.choice import Choice

#: Per card type, how much we like to keep it (higher = keep): Outs are worthless, Kills gold.
_SPECIAL_VALUE = {"OUT": 0.0, "SMASH": 8.0, "KILL": 9.0}
_BACK = {"RB", "LB"}


def _split(action: Choice) -> tuple[str, str]:
    """(player, card) of an action: ``shot:A1:RF-LB`` → (``A1``, ``RF-LB``)."""
    kind, arg = action.kind, action.arg
    if kind in ("shot", "pass", "give"):
        player, _, card = arg.rpartition(":")
        return player, card
    return arg, ""


def _my_counts(observation: Mapping[str, Any]) -> dict[str, int]:
    """Counts of every card type in the hands this seat can see on its own side."""
    side = observation["side"]
    counts: dict[str, int] = {}
    for p in observation["players"]:
        if p["side"] == side and p["visible"]:
            for c in p["hand"]:
                counts[c] = counts.get(c, 0) + 1
    return counts


def _hand_of(observation: Mapping[str, Any], name: str) -> list[str]:
    for p in observation["players"]:
        if p["name"] == name:
            return list(p["hand"])
    return []


def _unseen_from(observation: Mapping[str, Any], mine: Mapping[str, int], area: str) -> int:
    """Shot cards starting from ``area`` that are neither discarded face up nor ours."""
    seen = observation["discards_seen"]
    total = 0
    for dest in AREAS:
        card = f"{area}-{dest}"
        t = TYPE_INDEX[card]
        total += PLAY_DECK_COUNTS[t] - seen[t] - mine.get(card, 0)
    return total


def _keep_value(card: str, mine: Mapping[str, int]) -> float:
    """How much a card is worth keeping; duplicates of a shot are worth less."""
    if card in _SPECIAL_VALUE:
        return _SPECIAL_VALUE[card]
    origin = card.split("-")[0]
    base = 3.0 if origin in _BACK else 2.5  # most shots land in the back court
    return base - 0.5 * (mine.get(card, 1) - 1)


def _weakest_discard(
    discards: list[int], legal: Sequence[Choice], mine: Mapping[str, int]
) -> int | None:
    """Index of the pass that discards the least valuable card, unless it is a Smash or Kill."""
    best: tuple[float, int] | None = None
    for i in discards:
        card = _split(legal[i])[1]
        value = _keep_value(card, mine)
        if value < 8.0 and (best is None or value < best[0]):
            best = (value, i)
    return None if best is None else best[1]


def choose(observation: Mapping[str, Any], legal: Sequence[Choice], rng: random.Random) -> int:
    """Index into ``legal`` of the rules bot's choice."""
    if observation["phase"] == "exchange":
        return _exchange(observation, legal)
    return _rally(observation, legal)


def _rally(observation: Mapping[str, Any], legal: Sequence[Choice]) -> int:
    mine = _my_counts(observation)
    shots: list[int] = []
    smashes: list[int] = []
    kills: list[int] = []
    discards: list[int] = []
    leave = plain_pass = -1
    for i, a in enumerate(legal):
        if a.kind == "shot":
            shots.append(i)
        elif a.kind == "smash":
            smashes.append(i)
        elif a.kind == "kill":
            kills.append(i)
        elif a.kind == "leave":
            leave = i
        elif a.kind == "pass":
            if a.arg:
                discards.append(i)
            else:
                plain_pass = i
    if observation["smash_pending"]:
        if kills:
            return kills[0]
    elif shots:
        return _best_shot(observation, legal, shots, mine)
    elif smashes:
        return smashes[0]
    elif kills:
        them = 1 - observation["side"]
        if observation["points"][them] >= 3 or mine.get("KILL", 0) >= 2:
            return kills[0]
    if leave >= 0 and _partner_can_answer(observation):
        return leave
    weakest = _weakest_discard(discards, legal, mine)
    return plain_pass if weakest is None else weakest


def _best_shot(
    observation: Mapping[str, Any],
    legal: Sequence[Choice],
    shots: list[int],
    mine: Mapping[str, int],
) -> int:
    sizes = {p["name"]: p["hand_size"] for p in observation["players"]}

    def key(i: int) -> tuple[int, int, int, int]:
        player, card = _split(legal[i])
        dest = card.split("-")[1]
        return (
            1 if dest in _BACK else 0,
            -_unseen_from(observation, mine, dest),
            mine.get(card, 0),
            sizes.get(player, 0),
        )

    return max(shots, key=key)


def _partner_can_answer(observation: Mapping[str, Any]) -> bool:
    """Doubles, control=players: whether the partner (visible) holds an answer."""
    me = observation["acting"]
    partner = next(
        p for p in observation["players"] if p["side"] == observation["side"] and p["name"] != me
    )
    hand = partner["hand"]
    if "KILL" in hand:
        return True
    if observation["smash_pending"]:
        return False
    area = observation["ball_area"]
    if "SMASH" in hand:
        return True
    # The partner may hit a shot only from the back court (the fore-court box is ours).
    return area in _BACK and any(c.startswith(area + "-") for c in hand)


def _exchange(observation: Mapping[str, Any], legal: Sequence[Choice]) -> int:
    """Right player (stage 0) gives its LF shots; Left player (stage 1) returns RF shots first."""
    if observation["exchange_stage"] == 0:
        for i, a in enumerate(legal):
            if a.kind == "give" and _split(a)[1].startswith("LF-"):
                return i
        return next(i for i, a in enumerate(legal) if a.kind == "done")
    hand = _hand_of(observation, _split(legal[0])[0])
    counts = {c: hand.count(c) for c in set(hand)}

    def key(i: int) -> tuple[int, float]:
        card = _split(legal[i])[1]
        if card.startswith("RF-"):  # only the Right player may hit these from RF
            return (0, 0.0)
        if card.startswith("LF-"):  # the Left player's own box: keep
            return (2, 0.0)
        return (1, _keep_value(card, counts))

    return min(range(len(legal)), key=key)


# --- balance measurement -------------------------------------------------------------------------


def selfplay_stats(
    matches: int = 200,
    seed: int = 0,
    players: int = 2,
    options: Mapping[str, OptionValue] | None = None,
) -> dict[str, float]:
    """Rules bot against itself in-process: the game's derived figures over ``matches``."""
    game: Game = get_game("tennis")
    config = game.configure(players, options or {})
    totals: dict[str, int] = {}
    rng = random.Random(seed ^ 0x7E55)
    for i in range(matches):
        state = game.new_match(config, seed + i)
        while (seat := state.to_move) is not None:
            legal = state.legal_actions()
            obs = state.observation(seat).to_dict()
            state.apply(legal[choose(obs, legal, rng)])
        result = state.result()
        assert result is not None
        for key, value in result.stats.items():
            totals[key] = totals.get(key, 0) + value
    return game.summarize_stats(totals, matches)


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m reference_bots.rules.tennis [--games N] [--seed S] [--players 2|4]``."""
    parser = argparse.ArgumentParser(description="tennis rules-bot self-play figures")
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--option", action="append", default=[], metavar="K=V")
    args = parser.parse_args(argv)
    options = dict(o.split("=", 1) for o in args.option)
    figures = selfplay_stats(args.games, args.seed, args.players, options)
    print(json.dumps({k: round(v, 4) for k, v in figures.items()}))


if __name__ == "__main__":
    main()
