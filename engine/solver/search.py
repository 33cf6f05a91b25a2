"""The solver's core: alpha-beta over the rest of one deal with every card known.

A :class:`Deal` is the position as the search sees it (hands as card masks, the trick in
progress, who wins what) and plays and takes back cards in place. :class:`Search` walks it:
fail-soft alpha-beta with a transposition table at trick starts, equivalent cards merged and a
cheap move order, driven by MTD(f) (null-window probes) for exact values. One side maximises:
the seat to move at the root and its partners; every other seat minimises (docs/engine.md,
*Solving a deal*, says why). Values are ints in the game's units; which games score how lives
in :mod:`engine.solver.deals`, which builds the :class:`Deal` from a game's state.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable

from engine.cards import cards_list
from engine.errors import EngineError

#: Beyond every value a deal can take (chips, points or tricks).
INF = 1 << 20


class SolverError(EngineError, ValueError):
    """The position is not one the solver handles (no trick play, an unknown game, …)."""


class SolverLimit(SolverError):
    """The search visited more nodes than its ``max_nodes`` allowed."""


class Deal(ABC):
    """One deal's trick play from a position, for the search.

    Seats keep their numbers; ``nxt[s]`` is the seat after ``s`` in play (eliminated seats of
    tennis whist are skipped). Cards are 0..51 (``suit * 13 + rank``), sets of them int masks.
    """

    #: Scored by tricks only, one per trick won by the maximising side (whist, tennis whist):
    #: values are "tricks from here" and the table needs no tricks-so-far in its keys.
    additive = False

    def __init__(
        self,
        hands: list[int],
        nxt: list[int],
        maxside: list[bool],
        trick_cards: list[int],
        trick_seats: list[int],
        leader: int,
        tricks_won: list[int],
    ) -> None:
        self.hands = hands
        self.nxt = nxt
        self.maxside = maxside
        self.trick_cards = trick_cards
        self.trick_seats = trick_seats
        self.leader = leader
        self.tricks_won = tricks_won
        #: Tricks finished this deal.
        self.done = sum(tricks_won)
        #: Players per trick.
        self.players = sum(1 for s in range(len(hands)) if nxt[s] >= 0)

    # --- the rules a game supplies -------------------------------------------------------------

    @abstractmethod
    def legal(self, seat: int) -> int:
        """The cards ``seat`` may play now (the game's own legality function)."""

    @abstractmethod
    def winner(self) -> int:
        """Index in ``trick_cards`` of the card that wins the full trick."""

    @abstractmethod
    def trick_power(self, c: int, led: int) -> int:
        """How strongly ``c`` plays to a trick led by ``led``: higher wins, -1 cannot win."""

    @abstractmethod
    def order_key(self, c: int) -> int:
        """Card ``c``'s place in the order that decides equivalence: ``class * 64 + strength``,
        a class being a suit (or every trump, in spoil's games)."""

    @abstractmethod
    def end_value(self, winner: int) -> int | None:
        """After a trick won by ``winner`` (already counted): the deal's final value when it is
        over, else ``None`` (for additive deals, the value of what is left: 0)."""

    def bounds(self) -> tuple[int, int]:
        """At a trick start: bounds on the value from here (additive deals: within 0 to the
        tricks left, tighter by a game's sure tricks; others: the best and worst outcomes still
        possible)."""
        return -INF, INF

    def present(self) -> int:
        """Every card still in play: the hands and the trick (a card that waits to join a hand
        counts too)."""
        m = 0
        for h in self.hands:
            m |= h
        for c in self.trick_cards:
            m |= 1 << c
        return m

    def unmergeable(self) -> int:
        """Cards never treated as equivalent to a neighbour (spoil's privileged trumps)."""
        return 0

    def key(self) -> tuple[int, ...]:
        """The transposition-table key at a trick start."""
        return (*self.hands, self.leader)

    def decision(self) -> tuple[int, list[Callable[[], Callable[[], None]]]] | None:
        """A non-card choice due now (spoil's ace of trumps, claim or jinx): the seat deciding
        and, per option, a function that applies it and returns its undo; else ``None``."""
        return None

    def decision_value(self, seat: int, option: int) -> int | None:
        """The final value of choosing ``option`` at a decision, when it ends the deal."""
        return None

    def after_trick(self) -> None:
        """Called once a trick is counted (spoil's pending ace joins the dealer's hand)."""

    def before_untrick(self) -> None:
        """Undoes :meth:`after_trick`."""

    # --- moves -------------------------------------------------------------------------------

    def to_move(self) -> int:
        seats = self.trick_seats
        return self.nxt[seats[-1]] if seats else self.leader

    def play(self, c: int) -> tuple[int, int] | None:
        """Play ``c`` for the seat to move. When it completes the trick, the trick is counted and
        cleared and the return is ``(winner, gain)``, gain 1 when an additive deal's maximising
        side won it; else ``None``."""
        seat = self.to_move()
        self.hands[seat] ^= 1 << c
        self.trick_cards.append(c)
        self.trick_seats.append(seat)
        if len(self.trick_cards) < self.players:
            return None
        winner = self.trick_seats[self.winner()]
        self.tricks_won[winner] += 1
        self.done += 1
        self._saved = (self.trick_cards, self.trick_seats, self.leader)
        self.trick_cards, self.trick_seats = [], []
        self.leader = winner
        self.after_trick()
        return winner, 1 if self.additive and self.maxside[winner] else 0

    def unplay(
        self, completed: tuple[int, int] | None, saved: tuple[list[int], list[int], int]
    ) -> None:
        """Take back the last card (``saved``: the trick as :meth:`play` left it in ``_saved``)."""
        if completed is not None:
            self.before_untrick()
            self.trick_cards, self.trick_seats, self.leader = saved
            self.tricks_won[completed[0]] -= 1
            self.done -= 1
        c = self.trick_cards.pop()
        seat = self.trick_seats.pop()
        self.hands[seat] |= 1 << c

    def runs(self, seat: int) -> list[list[int]]:
        """The legal cards of ``seat`` in runs of equivalent cards, each run's top first: cards
        adjacent in :meth:`order_key` among the cards still in play (every card between them is
        gone) play alike now and leave the same position up to their names, so one is searched.
        """
        legal = self.legal(seat)
        keyf = self.order_key
        fixed = self.unmergeable()
        ordered = sorted(cards_list(self.present()), key=keyf)
        runs: list[list[int]] = []
        run: list[int] = []
        prev = -1
        for c in ordered:
            if not legal >> c & 1:
                prev = -1
                continue
            if (
                prev >= 0
                and keyf(prev) >> 6 == keyf(c) >> 6
                and not (fixed >> prev | fixed >> c) & 1
            ):
                run.insert(0, c)
            else:
                if run:
                    runs.append(run)
                run = [c]
            prev = c
        if run:
            runs.append(run)
        return runs

    def moves(self, seat: int) -> list[int]:
        """One card of each run of equivalent legal cards (:meth:`runs`), best guess first."""
        reps = [run[0] for run in self.runs(seat)]
        if len(reps) < 2:
            return reps
        return self.order(seat, reps)

    def order(self, seat: int, cards: list[int]) -> list[int]:
        """Move ordering: leading, strongest first; following, the cheapest card that takes the
        trick for a side not yet winning it, else the cheapest card."""
        tc = self.trick_cards
        power = self.trick_power
        if not tc:
            return sorted(cards, key=lambda c: -self.order_key(c))
        led = tc[0]
        best_i = max(range(len(tc)), key=lambda i: power(tc[i], led))
        best = power(tc[best_i], led)
        ours = self.maxside[self.trick_seats[best_i]] == self.maxside[seat]
        last = len(tc) == self.players - 1
        if ours and last:
            return sorted(cards, key=lambda c: power(c, led))
        winners = sorted((c for c in cards if power(c, led) > best), key=lambda c: power(c, led))
        rest = sorted((c for c in cards if power(c, led) <= best), key=self.order_key)
        return winners + rest if not ours else rest + winners


class Search:
    """Alpha-beta over a :class:`Deal`, with a transposition table of value bounds."""

    def __init__(self, deal: Deal, max_nodes: int | None = None) -> None:
        self.deal = deal
        self.max_nodes = max_nodes if max_nodes is not None else 1 << 62
        self.nodes = 0
        #: Trick-start key -> (lower bound, upper bound) of the value from there.
        self.table: dict[tuple[int, ...], tuple[int, int]] = {}

    def exact(self, probe: Callable[[int, int], int], guess: int = 0) -> int:
        """The exact value ``probe`` (a fail-soft search given its window, such as :meth:`value`
        or a bound :meth:`after`) converges to, by MTD(f): null-window probes from ``guess``."""
        lo, hi = -INF, INF
        g = guess
        while lo < hi:
            beta = g + 1 if g == lo else g
            g = probe(beta - 1, beta)
            if g < beta:
                hi = g
            else:
                lo = g
        return g

    def value(self, alpha: int, beta: int) -> int:
        """Fail-soft alpha-beta: the value from here when inside (alpha, beta), else a bound on
        the side that failed."""
        deal = self.deal
        self.nodes += 1
        if self.nodes > self.max_nodes:
            raise SolverLimit(f"the search took more than {self.max_nodes} nodes")
        start = not deal.trick_cards
        if start:
            key = deal.key()
            bounds = self.table.get(key)
            if bounds is not None:
                lo, hi = bounds
                if lo >= beta or lo == hi:
                    return lo
                if hi <= alpha:
                    return hi
                alpha, beta = max(alpha, lo), min(beta, hi)
            else:
                lo, hi = deal.bounds()
                if lo >= beta or lo == hi:
                    return lo
                if hi <= alpha:
                    return hi
                alpha, beta = max(alpha, lo), min(beta, hi)
            a0, b0 = alpha, beta
        choice = deal.decision()
        if choice is not None:
            v = self._decide(choice, alpha, beta)
        else:
            v = self._play_node(alpha, beta)
        if start:
            if v <= a0:
                hi = min(hi, v)
            elif v >= b0:
                lo = max(lo, v)
            else:
                lo = hi = v
            self.table[key] = (lo, hi)
        return v

    def _play_node(self, alpha: int, beta: int) -> int:
        deal = self.deal
        seat = deal.to_move()
        maximise = deal.maxside[seat]
        best = -INF if maximise else INF
        for c in deal.moves(seat):
            v = self.after(c, alpha, beta)
            if maximise:
                if v > best:
                    best = v
                    if v > alpha:
                        alpha = v
            elif v < best:
                best = v
                if v < beta:
                    beta = v
            if alpha >= beta:
                break
        return best

    def after(self, c: int, alpha: int, beta: int) -> int:
        """The value of playing card ``c`` now (within the window, as :meth:`value`)."""
        deal = self.deal
        done = deal.play(c)
        saved = deal._saved if done is not None else _NO_TRICK
        try:
            if done is None:
                return self.value(alpha, beta)
            winner, gain = done
            end = deal.end_value(winner)
            if end is not None:
                return end + gain
            return gain + self.value(alpha - gain, beta - gain)
        finally:
            deal.unplay(done, saved)

    def _decide(
        self, choice: tuple[int, list[Callable[[], Callable[[], None]]]], alpha: int, beta: int
    ) -> int:
        seat, options = choice
        maximise = self.deal.maxside[seat]
        best = -INF if maximise else INF
        for i in range(len(options)):
            v = self.option(choice, i, alpha, beta)
            if maximise:
                best = max(best, v)
                alpha = max(alpha, v)
            else:
                best = min(best, v)
                beta = min(beta, v)
            if alpha >= beta:
                break
        return best

    def option(
        self,
        choice: tuple[int, list[Callable[[], Callable[[], None]]]],
        i: int,
        alpha: int,
        beta: int,
    ) -> int:
        """The value of option ``i`` of a decision (within the window, as :meth:`value`)."""
        seat, options = choice
        end = self.deal.decision_value(seat, i)
        if end is not None:
            return end
        undo = options[i]()
        try:
            return self.value(alpha, beta)
        finally:
            undo()


_NO_TRICK: tuple[list[int], list[int], int] = ([], [], -1)
