"""Each game's deal as the solver sees it: its rules (the referee's own legality and trick-winner
functions) and what its deal is worth, built from a match state.

Values, for the side that maximises (the seat to move at the root and its partners):

* whist: tricks that side wins from here to the end of the deal;
* tennis whist: tricks the seat to move wins from here to the end of the round;
* forty-five: the deal's points for that side minus the other side's (one side scores);
* spoil five: chips the seat gains when the deal is settled: the pool when it wins it (plus one
  from every other player for a jinx won), -1 when another player wins a jinx, 0 when another
  player wins the pool, and its own stake in the pool when the deal is spoiled (what it would be
  returned if the session ended now: the pool is not lost, it carries over).
"""

from __future__ import annotations

from collections.abc import Callable

from engine.cards import JACK, SUIT_MASKS, card, cards_list
from engine.core import MatchState
from engine.games.forty_five import FortyFiveState, deal_points
from engine.games.spoil_five import SpoilFiveState
from engine.games.spoil_rules import (
    ACE_CHOICE,
    ACE_OF_HEARTS,
    CLAIM,
    FIVE,
    PLAY,
    RULES,
    TRICKS_PER_DEAL,
    SpoilRules,
    SpoilTableState,
)
from engine.games.tennis_whist import PHASE_PLAY, TennisWhistState
from engine.games.tricks import follow_suit_mask, standard_trick_winner
from engine.games.whist import WhistState
from engine.solver.search import Deal, SolverError

#: Each game's unit of value.
UNITS = {"whist": "tricks", "tennis_whist": "tricks", "forty_five": "points", "spoil_five": "chips"}

Options = list[Callable[[], Callable[[], None]]]


class TrickDeal(Deal):
    """Whist and tennis whist: follow suit, highest trump or else highest of the suit led wins,
    scored by tricks."""

    additive = True

    def __init__(self, trump: int, hands: list[int], nxt: list[int], maxside: list[bool]) -> None:
        self.trump = trump
        super().__init__(hands, nxt, maxside, [], [], 0, [0] * len(hands))
        #: Packed suit holdings (13 bits per hand) -> their relative code (:func:`_suit_code`).
        self.codes: dict[int, int] = {}

    def legal(self, seat: int) -> int:
        tc = self.trick_cards
        return follow_suit_mask(self.hands[seat], tc[0] // 13 if tc else None)

    def winner(self) -> int:
        return standard_trick_winner(self.trick_cards, self.trump)

    def trick_power(self, c: int, led: int) -> int:
        suit = c // 13
        if suit == self.trump:
            return 100 + c % 13
        return c % 13 if suit == led // 13 else -1

    def order_key(self, c: int) -> int:
        return (c // 13) * 64 + c % 13

    def end_value(self, winner: int) -> int | None:
        return None if self.hands[winner] else 0

    def key(self) -> tuple[int, ...]:
        # By relative ranks: per suit, who holds each card still in play, top down. The 2 and the
        # 5 held by one hand when the 3 and 4 are gone play as the 2 and the 3 would: one entry.
        hands = self.hands
        codes = self.codes
        out = [self.leader]
        for shift in (0, 13, 26, 39):
            packed = 0
            for i, h in enumerate(hands):
                packed |= (h >> shift & 0x1FFF) << 13 * i
            code = codes.get(packed)
            if code is None:
                code = codes[packed] = _suit_code(packed, len(hands))
            out.append(code)
        return tuple(out)

    def bounds(self) -> tuple[int, int]:
        # The leader's quick tricks, and the top trumps of another player (the leader's own are
        # among its quick tricks already): each wins a trick of its own.
        left = self.hands[self.leader].bit_count()
        ours = self.maxside[self.leader]
        lead_side, other = self.quick_tricks(), 0
        holder, trumps = self.top_trumps()
        if holder >= 0 and self.maxside[holder] != ours:
            other = trumps
        elif holder >= 0 and holder != self.leader:
            lead_side += trumps
        lead_side = min(lead_side, left)
        other = min(other, left - lead_side)
        return (lead_side, left - other) if ours else (other, left - lead_side)

    def top_trumps(self) -> tuple[int, int]:
        """The player holding the top trump and how many top trumps it holds in sequence: each
        wins a trick whoever leads (nothing beats them; each is played in a trick of its own).
        (-1, 0) when no trump is left."""
        mask = SUIT_MASKS[self.trump]
        trumps = 0
        for h in self.hands:
            trumps |= h & mask
        if not trumps:
            return -1, 0
        top = trumps.bit_length() - 1
        holder = next(s for s, h in enumerate(self.hands) if h >> top & 1)
        held, seq = self.hands[holder], 0
        while trumps and held >> (trumps.bit_length() - 1) & 1:
            seq += 1
            trumps ^= 1 << (trumps.bit_length() - 1)
        return holder, seq

    def quick_tricks(self) -> int:
        """Tricks the leader is sure to cash with its top cards (see below)."""
        # The leader's top cards, cashed one after the other: each trump at the top of the
        # trumps, and each card at the top of a plain suit while every opponent holding trumps
        # still has a card of that suit to follow with (so cannot ruff it yet).
        hands, leader, trump = self.hands, self.leader, self.trump
        mine = hands[leader]
        side = self.maxside[leader]
        ruffers = [
            h for s, h in enumerate(hands) if self.maxside[s] != side and h & SUIT_MASKS[trump]
        ]
        present = 0
        for h in hands:
            present |= h
        total = 0
        for suit in range(4):
            mask = SUIT_MASKS[suit]
            there = present & mask
            held = mine & mask
            seq = 0
            while there:
                top = there.bit_length() - 1
                if not held >> top & 1:
                    break
                seq += 1
                there ^= 1 << top
            if seq and suit != trump:
                for h in ruffers:
                    seq = min(seq, (h & mask).bit_count())
            total += seq
        return total

    def runs(self, seat: int) -> list[list[int]]:
        # The same runs as Deal.runs, on bits: within a suit, card numbers ascend with rank.
        legal = self.legal(seat)
        present = self.present()
        runs: list[list[int]] = []
        for suit in range(4):
            mine = legal & SUIT_MASKS[suit]
            if not mine:
                continue
            there = present & SUIT_MASKS[suit]
            run: list[int] = []
            c = mine.bit_length() - 1  # downwards from the top legal card
            while True:
                run.append(c)
                below = there & ((1 << c) - 1)
                if not below:
                    break
                nxt = below.bit_length() - 1
                if not mine >> nxt & 1:
                    runs.append(run)
                    run = []
                    rest = mine & ((1 << nxt) - 1)
                    if not rest:
                        break
                    nxt = rest.bit_length() - 1
                c = nxt
            if run:
                runs.append(run)
        return runs


class SpoilDeal(Deal):
    """Spoil five and forty-five: the referee's :class:`SpoilRules` (follow or trump, reneging
    privileges, the ace of hearts), the dealer's robbed ace joining after trick 1, and the ace of
    trumps' holder choosing at its first turn (announce, rob or stay silent) when still due."""

    def __init__(self, state: SpoilTableState, mover: int, maxside: list[bool]) -> None:
        n = state.n
        super().__init__(
            list(state.hands),
            [(s + 1) % n for s in range(n)],
            maxside,
            list(state.trick_cards),
            list(state.trick_seats),
            state.trick_leader,
            list(state.tricks_won),
        )
        self.mover = mover
        self.rules: SpoilRules = state.rules
        self.pending = state.pending_ace
        self.dealer = state.dealer
        self.turn_up = state.turn_up
        self.must_rob = state.must_rob
        self.ace_wait = state.ace_wait
        trump = state.trump
        self.fixed = 1 << card(FIVE, trump) | 1 << card(JACK, trump) | 1 << ACE_OF_HEARTS

    def legal(self, seat: int) -> int:
        tc = self.trick_cards
        return self.rules.legal_mask(self.hands[seat], tc[0] if tc else -1)

    def winner(self) -> int:
        return self.rules.winner(self.trick_cards)

    def trick_power(self, c: int, led: int) -> int:
        rules = self.rules
        return rules.power[c] if rules.win_mask[led] >> c & 1 else -1

    def order_key(self, c: int) -> int:
        rules = self.rules
        if rules.trump_mask >> c & 1:
            return 4 * 64 + rules.power[c] - 100
        return (c // 13) * 64 + rules.power[c]

    def unmergeable(self) -> int:
        return self.fixed

    def runs(self, seat: int) -> list[list[int]]:
        # Deal.runs without sorting every card in play: each legal card looks up its class's
        # cards above it (a table per SpoilRules) for the first one still in play.
        legal = self.legal(seat)
        present = self.present()
        fixed = self.fixed
        above = _above(self.rules)
        power = self.rules.power
        top: dict[int, int] = {}
        for c in sorted(cards_list(legal), key=power.__getitem__, reverse=True):
            top[c] = c
            if fixed >> c & 1:
                continue
            nxt = next((a for a in above[c] if present >> a & 1), -1)
            if nxt >= 0 and legal >> nxt & 1 and not fixed >> nxt & 1:
                top[c] = top[nxt]
        runs: dict[int, list[int]] = {}
        for c, t in top.items():  # descending power: each run's top comes first
            runs.setdefault(t, []).append(c)
        return list(runs.values())

    def present(self) -> int:
        m = super().present()
        return m | (1 << self.pending if self.pending >= 0 else 0)

    def after_trick(self) -> None:
        if self.pending >= 0 and self.done == 1:
            self.hands[self.dealer] |= 1 << self.pending

    def before_untrick(self) -> None:
        if self.pending >= 0 and self.done == 1:
            self.hands[self.dealer] &= ~(1 << self.pending)

    def key(self) -> tuple[int, ...]:
        return (*self.hands, self.leader, self.rules.demoted, self.ace_wait, *self.tricks_won)

    def decision(self) -> tuple[int, Options] | None:
        seat = self.to_move()
        if seat != self.ace_wait:
            return None
        # As SpoilTableState offers them: announce, rob discarding each card, stay silent.
        options: Options = [self._announce]
        options += [self._robber(c) for c in cards_list(self.hands[seat])]
        if not self.must_rob:
            options.append(self._silent)
        return seat, options

    def _announce(self) -> Callable[[], None]:
        seat = self.ace_wait
        self.ace_wait = -1
        return lambda: setattr(self, "ace_wait", seat)

    def _silent(self) -> Callable[[], None]:
        seat, rules = self.ace_wait, self.rules
        self.ace_wait = -1
        self.rules = RULES[rules.trump][1]

        def undo() -> None:
            self.ace_wait, self.rules = seat, rules

        return undo

    def _robber(self, discard: int) -> Callable[[], Callable[[], None]]:
        def rob() -> Callable[[], None]:
            seat = self.ace_wait
            hand = self.hands[seat]
            self.ace_wait = -1
            self.hands[seat] = hand & ~(1 << discard) | 1 << self.turn_up

            def undo() -> None:
                self.ace_wait = seat
                self.hands[seat] = hand

            return undo

        return rob


class FortyFiveDeal(SpoilDeal):
    """Forty-five: all five tricks are played; the side with three or more scores."""

    def __init__(self, state: FortyFiveState, mover: int) -> None:
        super().__init__(state, mover, [s % 2 == mover % 2 for s in range(state.n)])
        self.scoring = state.scoring

    def end_value(self, winner: int) -> int | None:
        if self.done < TRICKS_PER_DEAL:
            return None
        ours = sum(t for s, t in enumerate(self.tricks_won) if self.maxside[s])
        return _side_points(ours, self.scoring)

    def bounds(self) -> tuple[int, int]:
        # Between winning no more tricks and winning all that are left (points rise with tricks).
        ours = sum(t for s, t in enumerate(self.tricks_won) if self.maxside[s])
        left = TRICKS_PER_DEAL - self.done
        return _side_points(ours, self.scoring), _side_points(ours + left, self.scoring)


class SpoilFiveDeal(SpoilDeal):
    """Spoil five: three tricks win the pool (claim or jinx after tricks 1-3), else a spoil."""

    def __init__(self, state: SpoilFiveState, mover: int) -> None:
        super().__init__(state, mover, [s == mover for s in range(state.n)])
        self.n = state.n
        self.pool = state.pool
        self.stake = state.stakes[mover]
        self.jinxer = state.jinxer

    def won(self, seat: int, jinx: bool) -> int:
        """The mover's chips when ``seat`` wins the pool (by a jinx when ``jinx``)."""
        if seat == self.mover:
            return self.pool + (self.n - 1 if jinx else 0)
        return -1 if jinx else 0

    def end_value(self, winner: int) -> int | None:
        # As SpoilFiveState._after_trick.
        done, won = self.done, self.tricks_won
        if self.jinxer >= 0:
            if winner != self.jinxer:
                return self.stake
            return self.won(winner, True) if done == TRICKS_PER_DEAL else None
        if won[winner] == 3:
            return None if done == 3 else self.won(winner, False)  # tricks 1-3: claim or jinx
        if max(won) + TRICKS_PER_DEAL - done < 3:
            return self.stake
        return None

    def key(self) -> tuple[int, ...]:
        return (*super().key(), self.jinxer)

    def bounds(self) -> tuple[int, int]:
        # Worst: another player's jinx won (-1); best: the pool with a jinx, or a spoil when the
        # mover cannot take three tricks any more (or another's jinx can at best fail).
        mover, jinxer = self.mover, self.jinxer
        if jinxer == mover:
            return self.stake, self.won(mover, True)
        if jinxer >= 0:
            return -1, self.stake
        can_win = self.tricks_won[mover] + TRICKS_PER_DEAL - self.done >= 3
        return -1, self.won(mover, True) if can_win else self.stake

    def decision(self) -> tuple[int, Options] | None:
        leader = self.leader
        if not self.trick_cards and self.jinxer < 0 and self.tricks_won[leader] == 3:
            return leader, [self._claim, self._jinx]  # as the state offers them: claim, jinx
        return super().decision()

    def decision_value(self, seat: int, option: int) -> int | None:
        if option == 0 and self.jinxer < 0 and self.tricks_won[seat] == 3 and not self.trick_cards:
            return self.won(seat, False)  # a claim ends the deal
        return None

    def _claim(self) -> Callable[[], None]:
        raise AssertionError("a claim ends the deal: decision_value gives its value")

    def _jinx(self) -> Callable[[], None]:
        self.jinxer = self.leader
        return lambda: setattr(self, "jinxer", -1)


def _suit_code(packed: int, hands: int) -> int:
    """Who holds each card of one suit still in play, from the top: a base-``hands`` number
    after a leading 1 (so that lengths differ)."""
    code = 1
    for rank in range(12, -1, -1):
        for i in range(hands):
            if packed >> (13 * i + rank) & 1:
                code = code * hands + i
    return code


#: Per SpoilRules: for each card, the cards of its class (its plain suit, or the trumps) that
#: rank above it, weakest first (SpoilDeal.runs).
_ABOVE: dict[SpoilRules, tuple[tuple[int, ...], ...]] = {}


def _above(rules: SpoilRules) -> tuple[tuple[int, ...], ...]:
    table = _ABOVE.get(rules)
    if table is None:
        power = rules.power

        def cls(c: int) -> int:
            return 4 if rules.trump_mask >> c & 1 else c // 13

        table = _ABOVE[rules] = tuple(
            tuple(
                sorted(
                    (a for a in range(52) if cls(a) == cls(c) and power[a] > power[c]),
                    key=power.__getitem__,
                )
            )
            for c in range(52)
        )
    return table


def _side_points(tricks: int, scoring: str) -> int:
    """Forty-five's deal value for a side that ends with ``tricks`` of the five."""
    if tricks >= 3:
        return deal_points(tricks, scoring)
    return -deal_points(TRICKS_PER_DEAL - tricks, scoring)


def build(state: MatchState) -> Deal:
    """The solver's deal for ``state``'s position, valued for the seat to move's side.

    Raises :class:`SolverError` where there is nothing to solve: the match is over, the game has
    no trick play here, or the decision due is no part of trick play (a dealer robbing a turned
    ace before the first lead, tennis whist's nomination of trumps).
    """
    mover = state.to_move
    if mover is None:
        raise SolverError("the match is over: no decision to solve")
    game = state.game.id
    deal: Deal
    if isinstance(state, WhistState):
        deal = TrickDeal(
            state.trump, list(state.hands), [1, 2, 3, 0], [s % 2 == mover % 2 for s in range(4)]
        )
    elif isinstance(state, TennisWhistState):
        if state.phase != PHASE_PLAY:
            raise SolverError("tennis_whist: the dealer is nominating trumps, not playing a card")
        n = state.n
        alive = [s for s in range(n) if state.alive[s]]
        nxt = [-1] * n
        for i, s in enumerate(alive):
            nxt[s] = alive[(i + 1) % len(alive)]
        deal = TrickDeal(state.trump, list(state.hands), nxt, [s == mover for s in range(n)])
    elif isinstance(state, SpoilTableState):
        if state.phase not in (PLAY, ACE_CHOICE, CLAIM):
            raise SolverError(f"{game}: an ace is turned up and the dealer has not yet robbed")
        if isinstance(state, FortyFiveState):
            return FortyFiveDeal(state, mover)
        if isinstance(state, SpoilFiveState):
            return SpoilFiveDeal(state, mover)
        raise SolverError(f"no solver for {game}: it solves {', '.join(sorted(UNITS))}")
    else:
        raise SolverError(f"no solver for {game}: it solves {', '.join(sorted(UNITS))}")
    deal.trick_cards = list(state.trick_cards)
    deal.trick_seats = list(state.trick_seats)
    deal.leader = state.trick_leader
    return deal
