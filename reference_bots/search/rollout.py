"""How a simulation ends and what it is worth.

A match runs to hundreds of decisions, and its final result says little about one card. So a
simulation stops at a horizon: the end of the deal (whist, forty-five, spoil five), of the round
(tennis whist) or of the game (tennis: a hand lasts the game, and a point's horizon would spend a
Kill on any point and then miss it). It is scored there for every seat, in [-1, 1], from the
events that end it: the share of the deal's tricks, the pool won, surviving the round, the game
won. A match that ends there or before is scored by its returns.

Until the horizon the moves come from a playout policy. Random moves make a noisy rollout: a
random partner throws away the winners the search meant to cash. In the trick games the policy
follows the trick as it goes (from the ``play`` and ``trick`` events) and plays as a careful
beginner would: beat the card winning the trick as cheaply as possible, throw the lowest card
when it cannot or when a partner is winning, lead at random; one move in :data:`EPSILON` is
random, so a rollout never follows one script. In tennis the policy returns every ball it can
(:func:`rally_move`): a random player passes away most points.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from engine import Event, MatchState
from engine.games.spoil_rules import CARD_INDEX, RULES

#: 0 for a 2 ... 12 for an ace.
RANK_OF = {r: i for i, r in enumerate("23456789TJQKA")}

#: Per-seat values of one simulation's end.
Values = list[float]
#: A game's scorer: the events that ended the horizon and the state there -> values by seat.
Scorer = Callable[[Event, MatchState], Values]

#: Longest rollout, in decisions: a guard, far past any horizon.
MAX_STEPS = 2_000


def _trick_share(event: Event, state: MatchState) -> Values:
    """Whist and forty-five: each side's tricks of the deal against the others' mean."""
    tricks = [int(t) for t in _list(event.data["tricks"])]
    total = sum(tricks) or 1
    k = len(tricks)
    out = []
    for seat in range(state.num_seats):
        mine = tricks[seat % k]
        out.append((mine - (total - mine) / (k - 1)) / total)
    return out


def _pool(event: Event, state: MatchState) -> Values:
    """Spoil five: the pool's winner gains what the others lose; a spoiled deal is even."""
    n = state.num_seats
    if event.kind != "pool_won":
        return [0.0] * n
    winner = cast(int, event.data["seat"])
    return [1.0 if seat == winner else -1.0 / (n - 1) for seat in range(n)]


def _round(event: Event, state: MatchState) -> Values:
    """Tennis whist: eliminated is the worst; survivors gain by their share of the tricks."""
    tricks = [int(t) for t in _list(event.data["tricks"])]
    out = {int(s) for s in _list(event.data["out"])}
    best = max(tricks) or 1
    return [-1.0 if s in out else 0.5 * tricks[s] / best for s in range(state.num_seats)]


def _game(event: Event, state: MatchState) -> Values:
    """Tennis: the side that won the game (``P1``/``A`` is side 0) against the other."""
    side = 0 if str(event.data["winner"]) in ("P1", "A") else 1
    return [1.0 if seat % 2 == side else -1.0 for seat in range(state.num_seats)]


#: Per game: the event kinds that end a simulation, and how it is scored there.
HORIZONS: dict[str, tuple[frozenset[str], Scorer]] = {
    "whist": (frozenset({"deal_score"}), _trick_share),
    "forty_five": (frozenset({"deal_score"}), _trick_share),
    "spoil_five": (frozenset({"pool_won", "spoil"}), _pool),
    "tennis_whist": (frozenset({"round_end"}), _round),
    "tennis": (frozenset({"game"}), _game),
}


def _list(value: Any) -> Sequence[Any]:
    if not isinstance(value, list | tuple):
        raise TypeError(f"expected a list, got {value!r}")
    return value


#: Share of a trick-game rollout's moves chosen at random.
EPSILON = 0.1

#: A card's strength in a trick led by another card (0: it cannot win that trick).
Power = Callable[[str, str], int]


def plain_power(trump: str) -> Power:
    """Whist and tennis whist: trumps beat the suit led, which beats the rest; then rank."""

    def power(card: str, led: str) -> int:
        if card[1] == trump:
            return 100 + RANK_OF[card[0]]
        return 1 + RANK_OF[card[0]] if card[1] == led[1] else 0

    return power


def spoil_power(trump: str, demoted: bool) -> Power:
    """Spoil five and forty-five: the engine's own rank tables (five and jack of trumps, the
    ace of hearts, red and black suits ranked differently)."""
    rules = RULES["CDHS".index(trump)][demoted]
    index = CARD_INDEX

    def power(card: str, led: str) -> int:
        c = index[card]
        return rules.power[c] if rules.win_mask[index[led]] >> c & 1 else 0

    return power


class Simulation:
    """One iteration's walk from the root to the horizon: applies actions, follows the trick
    being played, scores the horizon, and picks rollout moves."""

    __slots__ = (
        "gone",
        "kinds",
        "masters",
        "partners",
        "players",
        "power",
        "rally",
        "scorer",
        "side",
        "trick",
    )

    def __init__(self, rollout: Rollout) -> None:
        self.kinds = rollout.kinds
        self.scorer = rollout.scorer
        self.power = rollout.power
        self.masters = rollout.masters
        self.players = rollout.players
        self.partners = rollout.partners
        self.rally = rollout.rally
        self.side = rollout.side
        self.trick = list(rollout.trick)  # (card, seat) of the trick being played
        self.gone = set(rollout.gone)  # cards played this deal

    def step(self, state: MatchState, action: Any) -> Values | None:
        """Apply ``action``; the values by seat if that reached the horizon, else ``None``."""
        for event in state.apply(action):
            kind = event.kind
            if kind == "play":
                card = str(event.data["card"])
                self.trick.append((card, cast(int, event.data["seat"])))
                self.gone.add(card)
            elif kind == "trick":
                self.trick.clear()
            elif kind in self.kinds:
                # A horizon that ends the match is worth the match itself (a one-deal match is
                # won by the seventh trick, not by the margin).
                if state.to_move is None:
                    return list(state.returns())
                return self.scorer(event, state)
        if state.to_move is None:
            return list(state.returns())
        return None

    def play_out(self, state: MatchState, rng: random.Random) -> Values:
        """Policy moves from ``state`` to the horizon; the values there."""
        for _ in range(MAX_STEPS):
            if state.to_move is None:
                return list(state.returns())
            values = self.step(state, self.policy(state, rng))
            if values is not None:
                return values
        return [0.0] * state.num_seats

    def policy(self, state: MatchState, rng: random.Random) -> Any:
        """The rollout's move for the seat to move."""
        legal = state.legal_actions()
        if self.rally:
            return rally_move(legal, rng)
        power, trick = self.power, self.trick
        if power is None or len(legal) == 1 or rng.random() < EPSILON:
            return legal[rng.randrange(len(legal))]
        plays = [a for a in legal if a.kind == "play"]
        if len(plays) != len(legal):  # a bid, a rob, a claim: not a card to a trick
            return legal[rng.randrange(len(legal))]
        if self.masters:
            return self.plain_lead(plays) if not trick else self.plain_follow(plays, state)
        if not trick:
            return plays[rng.randrange(len(plays))]
        led = trick[0][0]
        best, best_seat = 0, -1
        for card, seat in trick:
            p = power(card, led)
            if p > best:
                best, best_seat = p, seat
        side = self.side
        mover = state.to_move
        assert mover is not None
        lowest = min(plays, key=lambda a: power(a.arg, a.arg))
        if best_seat >= 0 and best_seat != mover and side[best_seat] == side[mover]:
            return lowest  # a partner is winning
        winners = [a for a in plays if power(a.arg, led) > best]
        if winners:
            return min(winners, key=lambda a: power(a.arg, led))
        return lowest

    # Whist and tennis whist: the rules bot's card play (reference_bots/rules/whist.py), on
    # what the simulation tracks. Leading, every card held is legal, so ``plays`` is the hand;
    # following, it is the cards of the suit led (or the hand, when void).

    def _master(self, card: str, held: set[str]) -> bool:
        """No card of its suit that is neither played nor held ranks higher."""
        suit, gone = card[1], self.gone
        return all(r + suit in gone or r + suit in held for r in HIGHER[card[0]])

    def plain_lead(self, plays: list[Any]) -> Any:
        """Cash a plain master from the longest suit; draw trumps holding four and the top one;
        else lead low from the longest plain suit."""
        trump = self.masters
        held = {a.arg for a in plays}
        length = {s: 0 for s in "CDHS"}
        for card in held:
            length[card[1]] += 1
        masters = [a for a in plays if self._master(a.arg, held)]
        plain_masters = [a for a in masters if a.arg[1] != trump]
        if plain_masters:
            return max(plain_masters, key=lambda a: (length[a.arg[1]], RANK_OF[a.arg[0]]))
        trumps = [a for a in plays if a.arg[1] == trump]
        if len(trumps) >= 4 and any(a.arg[1] == trump for a in masters):
            return max(trumps, key=lambda a: RANK_OF[a.arg[0]])
        plain = [a for a in plays if a.arg[1] != trump] or plays
        suit = max(plain, key=lambda a: (length[a.arg[1]], -RANK_OF[a.arg[0]])).arg[1]
        return min((a for a in plain if a.arg[1] == suit), key=lambda a: RANK_OF[a.arg[0]])

    def plain_follow(self, plays: list[Any], state: MatchState) -> Any:
        """Duck when a partner wins safely; else win as cheaply as is safe; second hand low."""
        trump, trick, side = self.masters, self.trick, self.side
        mover = state.to_move
        assert mover is not None
        led = trick[0][0][1]
        best, best_seat = trick[0]
        for card, seat in trick[1:]:
            if _beats(card, best, led, trump):
                best, best_seat = card, seat
        held = {a.arg for a in plays}
        length = {s: 0 for s in "CDHS"}
        for card in held:
            length[card[1]] += 1

        def cost(a: Any) -> tuple[int, int, int]:
            card = a.arg
            return (card[1] == trump, RANK_OF[card[0]], length[card[1]])

        lowest = min(plays, key=cost)
        last = len(trick) == self.players - 1
        partner = best_seat != mover and side[best_seat] == side[mover]
        if partner and (last or best[1] == trump or self._master(best, held)):
            return lowest
        winners = [a for a in plays if _beats(a.arg, best, led, trump)]
        if not winners:
            return lowest
        cheapest = min(winners, key=cost)
        if last:
            return cheapest
        safe = [a for a in winners if a.arg[1] == trump or self._master(a.arg, held)]
        if safe:
            return min(safe, key=cost)
        if self.partners and len(trick) == 1:
            return lowest  # second hand low: the partner plays after
        return cheapest


def _beats(a: str, b: str, led: str, trump: str) -> bool:
    """Whether card ``a`` beats card ``b`` in a trick of suit ``led`` (plain ranking)."""
    if a[1] == b[1]:
        return RANK_OF[a[0]] > RANK_OF[b[0]]
    if a[1] == trump:
        return True
    if b[1] == trump:
        return False
    return a[1] == led


def rally_move(legal: Sequence[Any], rng: random.Random) -> Any:
    """Tennis: return the ball with any shot that can; else Smash; else a Kill half the time;
    else leave it to the partner; else pass, dropping an Out when there is one."""
    shots = [a for a in legal if a.kind == "shot"]
    if shots:
        return shots[rng.randrange(len(shots))]
    passes = []
    for a in legal:
        kind = a.kind
        if kind == "smash" or (kind == "kill" and rng.random() < 0.5) or kind == "leave":
            return a
        if kind == "pass":
            if a.arg.endswith("OUT"):
                return a
            passes.append(a)
    if passes and len(passes) < len(legal):  # the exchange (give, done) has no pass
        return passes[0]
    return legal[rng.randrange(len(legal))]


#: The ranks above each rank.
HIGHER = {r: "23456789TJQKA"[i + 1 :] for i, r in enumerate("23456789TJQKA")}


class Rollout:
    """One decision's horizon and rollout policy, built from the root observation."""

    def __init__(self, game_id: str, observation: Mapping[str, Any], sides: Sequence[int]) -> None:
        self.kinds, self.scorer = HORIZONS[game_id]
        #: Each seat's side (partners share one), for the policy's "partner is winning".
        self.side = tuple(sides)
        self.power: Power | None = None
        #: The trump letter where plain masters are worth cashing (ranks in plain order), or "".
        self.masters = ""
        #: Tennis: rollouts return the ball when they can (:func:`rally_move`).
        self.rally = game_id == "tennis"
        #: Players taking part in a trick (tennis whist's survivors), and whether they have
        #: partners.
        eliminated = observation.get("eliminated")
        out = sum(1 for e in eliminated if e) if isinstance(eliminated, list) else 0
        self.players = len(sides) - out
        self.partners = len(set(sides)) < len(sides)
        self.trick: list[tuple[str, int]] = []
        tricks = observation.get("tricks") or []
        self.gone = {str(c) for t in tricks for c in t["cards"]}
        trump = observation.get("trump")
        if isinstance(trump, str) and len(trump) == 1:
            if game_id in ("spoil_five", "forty_five"):
                self.power = spoil_power(trump, bool(observation.get("ace_demoted")))
            elif game_id in ("whist", "tennis_whist"):
                self.power = plain_power(trump)
                self.masters = trump
        if tricks and tricks[-1]["winner"] == -1:
            last = tricks[-1]
            self.trick = [
                (str(c), int(s)) for c, s in zip(last["cards"], last["seats"], strict=True)
            ]

    def start(self) -> Simulation:
        """A fresh simulation from the root."""
        return Simulation(self)


def side_of_seats(state: MatchState) -> list[int]:
    """Each seat's side: partners share one, a seat playing alone has its own."""
    sides = state.game.sides(state.config) or [(s,) for s in range(state.num_seats)]
    return [next(i for i, side in enumerate(sides) if s in side) for s in range(state.num_seats)]


def supported(game_id: str) -> bool:
    """Whether the search knows ``game_id``'s horizon."""
    return game_id in HORIZONS
