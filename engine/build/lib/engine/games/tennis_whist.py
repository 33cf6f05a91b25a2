"""Tennis Whist (``tennis_whist``): knock-out whist in sets, as ../shared/rules/tennis-whist.md.

Seats 0..n-1 (2 to 6 players) sit clockwise. A set is a series of rounds of 8, 7, … 1 cards; a
player who takes no trick in a round is out for the rest of the set, and the last player standing
wins it. The first player to win ``sets_to_win`` sets wins the match.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from engine._fast import quick_init
from engine.cards import CARD_TEXT, FULL_DECK_MASK, SUIT_LETTERS, mask_texts, parse_card
from engine.core import (
    JSON,
    Action,
    Event,
    Game,
    MatchConfig,
    MatchState,
    Observation,
    Presentation,
    Result,
    ScoreRow,
    name_of,
    number_actions,
    seat_row,
)
from engine.deal import deal_unseen
from engine.games.tricks import (
    PLAY_ACTIONS,
    PLAY_EVENTS,
    TrickView,
    deal_tricks,
    follow_suit_plays,
    follow_suit_voids,
    played_by,
    standard_trick_winner,
    trick_from_dict,
    trick_view,
    tricks_so_far,
)
from engine.options import OptionSpec

#: Cards dealt in round 1; round ``k`` deals ``FIRST_HAND + 1 - k``.
FIRST_HAND = 8
#: ``trump:C`` … ``trump:S``, the dealer's nomination in rounds 2 and later (no no-trump).
TRUMP_ACTIONS: tuple[Action, ...] = tuple(Action("trump", s) for s in SUIT_LETTERS)
#: The plays (0..51), then the nominations (52..55).
ACTION_SPACE = number_actions(PLAY_ACTIONS, TRUMP_ACTIONS)
_SUIT_INDEX = {s: i for i, s in enumerate(SUIT_LETTERS)}
CARD_INDEX = {t: i for i, t in enumerate(CARD_TEXT)}
_PACK = range(52)

PHASE_TRUMP = "trump"
PHASE_PLAY = "play"


def draw_key(c: int) -> int:
    """Order of cards in a draw: rank first, then suit spades > hearts > diamonds > clubs."""
    return (c % 13) * 4 + c // 13


@quick_init
@dataclass(frozen=True, slots=True)
class TieBreakView:
    """A public tie-break draw for the win of a round."""

    #: The round whose tie it broke.
    round: int
    #: The tied players, in the order they were dealt a card (clockwise from the dealer's left).
    seats: tuple[int, ...]
    #: The card each of them drew, same order (text form).
    cards: tuple[str, ...]
    #: The player who won the draw and so the round.
    winner: int


@quick_init
@dataclass(frozen=True, slots=True)
class TennisWhistObservation(Observation):
    """What one tennis whist seat knows."""

    #: The seat's own cards, ascending (clubs, diamonds, hearts, spades; 2 … A); empty when out.
    hand: tuple[str, ...]
    #: Set number in the match, from 1.
    set_number: int
    #: Round number in the set, 1 … 8.
    round_number: int
    #: Cards dealt to each surviving player this round (9 - round number).
    hand_size: int
    #: Seat of this round's dealer.
    dealer: int
    #: ``trump`` while the dealer is nominating trumps, else ``play``.
    phase: str
    #: The trump suit's letter, or ``""`` while the dealer has not nominated yet.
    trump: str
    #: The card turned up for trumps in round 1 (it belongs to nobody), else ``""``.
    turn_up: str
    #: Tricks of this round: finished ones first, then the one being played (winner -1).
    tricks: tuple[TrickView, ...]
    #: Tricks won this round, per seat.
    tricks_won: tuple[int, ...]
    #: Per seat, whether it is out of the current set.
    eliminated: tuple[bool, ...]
    #: The draw for this set's first dealer: the card each seat drew, by seat.
    dealer_draw: tuple[str, ...]
    #: Tie-break draws of this set so far, oldest first.
    tie_breaks: tuple[TieBreakView, ...]
    #: Sets won in the match, per seat.
    sets_won: tuple[int, ...]
    #: Sets a player must win to take the match.
    sets_to_win: int
    #: Rounds survived (ended with at least one trick) over the whole match, per seat.
    rounds_survived: tuple[int, ...]
    #: Tricks taken over the whole match (this round's included), per seat.
    total_tricks: tuple[int, ...]
    #: Each seat's current standing, 1 = best: sets won, then rounds survived, then tricks.
    standing: tuple[int, ...]

    def render(self) -> str:
        trump = self.trump or "not nominated yet"
        turn = f" (turn-up {self.turn_up})" if self.turn_up else ""
        lines = [
            f"You are P{self.seat + 1}; set {self.set_number}, round {self.round_number} "
            f"({self.hand_size} cards); dealer P{self.dealer + 1}; trumps {trump}{turn}",
            "Tricks: "
            + ", ".join(
                f"P{s + 1} {'out' if out else t}"
                for s, (t, out) in enumerate(zip(self.tricks_won, self.eliminated, strict=True))
            ),
            "Sets: " + ", ".join(f"P{s + 1} {w}" for s, w in enumerate(self.sets_won)),
            f"Hand: {' '.join(self.hand) or '(none)'}",
        ]
        if self.tricks and self.tricks[-1].winner == -1:
            current = self.tricks[-1]
            shown = " ".join(
                f"P{s + 1}:{c}" for s, c in zip(current.seats, current.cards, strict=True)
            )
            lines.append(f"Trick: {shown}")
        if self.phase == PHASE_TRUMP and self.seat == self.dealer:
            lines.append("You deal: nominate trumps (C, D, H or S).")
        return "\n".join(lines)


class TennisWhist(Game):
    """The tennis whist referee."""

    id = "tennis_whist"
    version = "1.0"
    title = "Tennis Whist"
    presentation_kind = "trick_table"
    player_counts = (2, 3, 4, 5, 6)
    default_players = 4
    options = (
        OptionSpec("sets_to_win", "int", 3, "sets a player must win to take the match", 1, 9),
    )

    def summarize_stats(self, totals: Mapping[str, int], matches: int) -> dict[str, float]:
        sets = totals.get("sets", 0)
        rounds = totals.get("rounds", 0)
        return {
            "rounds_per_set": rounds / sets if sets else 0.0,
            "tie_breaks_per_round": totals.get("tie_breaks", 0) / rounds if rounds else 0.0,
        }

    def present(self, config: MatchConfig, public: Mapping[str, JSON]) -> Presentation:
        names = self.seat_names(config)
        rows: list[ScoreRow | None] = [
            seat_row(self, config, "Tricks this round", public.get("tricks_won")),
            seat_row(self, config, "Sets won", public.get("sets_won")),
            seat_row(self, config, "Rounds survived", public.get("rounds_survived")),
            seat_row(self, config, "Tricks in the match", public.get("total_tricks")),
            seat_row(self, config, "Standing (1 = best)", public.get("standing")),
        ]
        out = public.get("eliminated")
        if isinstance(out, list | tuple):
            rows.append(seat_row(self, config, "In this set", ["out" if e else "in" for e in out]))
        facts = [
            ("Set", str(public.get("set_number"))),
            ("Round", f"{public.get('round_number')} of {FIRST_HAND}"),
            ("Cards dealt", str(public.get("hand_size"))),
            ("Sets to win", str(public.get("sets_to_win"))),
        ]
        tie_breaks = public.get("tie_breaks")
        for tb in tie_breaks if isinstance(tie_breaks, list | tuple) else ():
            if not isinstance(tb, Mapping):
                continue
            seats, cards = tb.get("seats"), tb.get("cards")
            drawn = ", ".join(
                f"{name_of(names, s)} {c}"
                for s, c in zip(
                    seats if isinstance(seats, list | tuple) else (),
                    cards if isinstance(cards, list | tuple) else (),
                    strict=False,
                )
            )
            winner = name_of(names, tb.get("winner"))
            facts.append((f"Tie-break, round {tb.get('round')}", f"{drawn}: {winner}"))
        return Presentation(tuple(r for r in rows if r), tuple(facts))

    def action_space(self, config: MatchConfig) -> tuple[Action, ...]:
        return ACTION_SPACE

    def new_match(self, config: MatchConfig, seed: int) -> TennisWhistState:
        return TennisWhistState(self, config, seed)

    def _restore(
        self,
        config: MatchConfig,
        observation: Mapping[str, JSON],
        events: Sequence[Event],
        rng: random.Random,
    ) -> TennisWhistState:
        o = observation
        seat = int(cast(int, o["seat"]))
        state = TennisWhistState.bare(self, config, rng)
        n = state.num_seats
        state.n = n
        state.sets_to_win = config.int_option("sets_to_win")
        state.sets_won = _ints(o["sets_won"])
        state.rounds_survived = _ints(o["rounds_survived"])
        state.total_tricks = _ints(o["total_tricks"])
        state.set_number = int(cast(int, o["set_number"]))
        state.round_number = int(cast(int, o["round_number"]))
        state.hand_size = int(cast(int, o["hand_size"]))
        state.alive = [not bool(e) for e in cast(list[JSON], o["eliminated"])]
        if len(state.alive) != n:
            raise ValueError(f"eliminated has {len(state.alive)} seats, not {n}")
        state.n_alive = sum(state.alive)
        state.dealer = int(cast(int, o["dealer"]))
        state.phase = str(o["phase"])
        if state.phase not in (PHASE_TRUMP, PHASE_PLAY):
            raise ValueError(f"unknown phase {state.phase!r}")
        trump, turn_up = str(o["trump"]), str(o["turn_up"])
        state.trump = SUIT_LETTERS.index(trump) if trump else -1
        state.turn_up = parse_card(turn_up) if turn_up else -1
        state.tricks_won = _ints(o["tricks_won"])
        views = [trick_from_dict(t) for t in cast(list[Mapping[str, JSON]], o["tricks"])]
        state.finished_tricks = [v for v in views if v.winner >= 0]
        current = views[-1] if views and views[-1].winner < 0 else None
        state.trick_cards = [parse_card(c) for c in current.cards] if current else []
        state.trick_seats = list(current.seats) if current else []
        state.dealer_draw = tuple(str(c) for c in cast(list[JSON], o["dealer_draw"]))
        state.tie_breaks = [
            TieBreakView(
                int(cast(int, tb["round"])),
                tuple(_ints(tb["seats"])),
                tuple(str(c) for c in cast(list[JSON], tb["cards"])),
                int(cast(int, tb["winner"])),
            )
            for tb in cast(list[Mapping[str, JSON]], o["tie_breaks"])
        ]
        over = max(state.sets_won) >= state.sets_to_win
        # Who leads now: the current trick's leader, else the last trick's winner, else (first
        # trick, or trumps still to nominate) the survivor left of the dealer, as _start_play.
        if current is not None:
            state.trick_leader = current.leader
        elif state.finished_tricks:
            state.trick_leader = state.finished_tricks[-1].winner
        else:
            state.trick_leader = state._next_alive(state.dealer)
        if over:
            state.to_move = None
        elif state.phase == PHASE_TRUMP:
            state.to_move = state.dealer
        elif current is not None:
            state.to_move = state._next_alive(current.seats[-1])
        else:
            state.to_move = state.trick_leader
        state.stats = _restored_stats(state, events, over)
        # The hidden hands and the undealt stock, of the right sizes, in any arrangement
        # (restore re-deals them with _redeal_hidden).
        played = played_by(
            n, deal_tricks(state.finished_tricks, state.trick_cards, state.trick_seats)
        )
        own = sum(1 << parse_card(c) for c in cast(list[str], o["hand"]))
        if own.bit_count() != (
            state.hand_size - played[seat].bit_count() if state.alive[seat] else 0
        ):
            raise ValueError("the hand does not hold the cards the round dealt less those played")
        hands = [0] * n
        hands[seat] = own
        seen = own
        for cards in played:
            if seen & cards:
                raise ValueError("a card is both held and played, or played twice")
            seen |= cards
        seen |= 1 << state.turn_up if state.turn_up >= 0 else 0
        loose = [c for c in _PACK if not seen >> c & 1]
        for s in range(n):
            if s != seat and state.alive[s]:
                need = state.hand_size - played[s].bit_count()
                if need < 0:
                    raise ValueError(f"seat {s} played more cards than it was dealt")
                hands[s] = sum(1 << c for c in loose[:need])
                loose = loose[need:]
        state.hands = hands
        state.dealt = [hands[s] | played[s] for s in range(n)]
        state.stock = sum(1 << c for c in loose)
        return state


class TennisWhistState(MatchState):
    """A tennis whist match in progress.

    Tests may build positions by setting the round attributes (``hands``, ``alive``,
    ``n_alive``, ``trump``, ``trick_leader``, ``to_move``, ``tricks_won`` …) directly.
    """

    #: Lists of cards, seats, counts and frozen views: clone() copies them flat.
    _flat_lists = MatchState._flat_lists | {
        "sets_won",
        "rounds_survived",
        "total_tricks",
        "alive",
        "hands",
        "dealt",
        "tricks_won",
        "trick_cards",
        "trick_seats",
        "finished_tricks",
        "tie_breaks",
    }

    def __init__(self, game: Game, config: MatchConfig, seed: int) -> None:
        super().__init__(game, config, seed)
        n = config.players
        self.n = n
        self.sets_to_win = config.int_option("sets_to_win")
        self.sets_won = [0] * n
        self.rounds_survived = [0] * n
        self.total_tricks = [0] * n
        self.set_number = 0
        self.round_number = 0
        self.hand_size = 0
        self.alive = [True] * n
        self.n_alive = n
        self.dealer = 0
        self.phase = PHASE_PLAY
        self.trump = -1
        self.turn_up = -1
        #: Undealt cards of this round (never shown).
        self.stock = 0
        self.hands = [0] * n
        self.dealt = [0] * n
        self.tricks_won = [0] * n
        self.trick_cards: list[int] = []
        self.trick_seats: list[int] = []
        self.trick_leader = 0
        self.finished_tricks: list[TrickView] = []
        self.dealer_draw: tuple[str, ...] = ()
        self.tie_breaks: list[TieBreakView] = []
        self.stats = {"sets": 0, "rounds": 0, "tie_breaks": 0, "eliminations": 0}
        self._start_set()

    # --- flow ------------------------------------------------------------------------------

    def _next_alive(self, seat: int) -> int:
        """The first surviving seat clockwise after ``seat``."""
        n, alive = self.n, self.alive
        seat = (seat + 1) % n
        while not alive[seat]:
            seat = (seat + 1) % n
        return seat

    def _clockwise_from_left(self, seats: list[int]) -> list[int]:
        """``seats`` ordered clockwise starting left of the dealer (the dealer last)."""
        d, n = self.dealer, self.n
        return sorted(seats, key=lambda s: (s - d - 1) % n)

    def _start_set(self) -> None:
        self.set_number += 1
        self.alive = [True] * self.n
        self.n_alive = self.n
        self.tie_breaks = []
        self.round_number = 1
        draws = self.rng.sample(_PACK, self.n)  # the top cards of a freshly shuffled pack
        self.dealer = max(range(self.n), key=lambda s: draw_key(draws[s]))
        self.dealer_draw = tuple(CARD_TEXT[c] for c in draws)
        self._emit(
            "dealer_draw", set=self.set_number, cards=list(self.dealer_draw), dealer=self.dealer
        )
        self._deal()

    def _deal(self) -> None:
        """Deal this round's hands to the survivors; turn up trumps in round 1."""
        k = self.round_number
        size = FIRST_HAND + 1 - k
        self.hand_size = size
        order = self._clockwise_from_left([s for s in range(self.n) if self.alive[s]])
        m = len(order)
        # The top of a freshly shuffled pack: the hands, then (round 1) the turn-up.
        deck = self.rng.sample(_PACK, size * m + (1 if k == 1 else 0))
        hands = [0] * self.n
        for i in range(size * m):
            hands[order[i % m]] |= 1 << deck[i]
        self.hands = hands
        self.dealt = list(hands)
        self.tricks_won = [0] * self.n
        self.finished_tricks = []
        self.trick_cards, self.trick_seats = [], []
        undealt = FULL_DECK_MASK
        for h in hands:
            undealt ^= h
        self._emit(
            "round",
            set=self.set_number,
            round=k,
            dealer=self.dealer,
            hand_size=size,
            players=sorted(order),
        )
        for seat in order:
            self._emit("deal", to=(seat,), seat=seat, round=k, hand=list(mask_texts(hands[seat])))
        if k == 1:
            self.turn_up = deck[size * m]
            self.trump = self.turn_up // 13
            self.stock = undealt & ~(1 << self.turn_up)
            self._emit("turn_up", card=CARD_TEXT[self.turn_up], trump=SUIT_LETTERS[self.trump])
            self._start_play()
        else:
            self.turn_up = -1
            self.trump = -1
            self.stock = undealt
            self.phase = PHASE_TRUMP
            self.to_move = self.dealer

    def _start_play(self) -> None:
        self.phase = PHASE_PLAY
        self.trick_leader = self._next_alive(self.dealer)
        self.to_move = self.trick_leader

    def _legal_actions(self) -> tuple[Action, ...]:
        if self.phase == PHASE_TRUMP:
            return TRUMP_ACTIONS
        seat = self.to_move
        assert seat is not None
        led = self.trick_cards[0] // 13 if self.trick_cards else None
        return follow_suit_plays(self.hands[seat], led)

    def _why_illegal(self, text: str) -> str:
        legal = ", ".join(a.text for a in self.legal_actions())
        if self.phase == PHASE_TRUMP:
            return (
                f"the dealer must nominate a trump suit, no-trump is not offered (legal: {legal})"
            )
        kind, _, arg = text.partition(":")
        c = _parse_card_or_none(arg) if kind == "play" else None
        seat = self.to_move
        if c is None or seat is None:
            return f"not a legal action now (legal: {legal})"
        if not self.hands[seat] >> c & 1:
            return f"{arg} is not in your hand (legal: {legal})"
        if arg != CARD_TEXT[c] or not self.trick_cards:  # e.g. "play:as" or "play:10S"
            return f"write the card as {CARD_TEXT[c]} (legal: {legal})"
        led = SUIT_LETTERS[self.trick_cards[0] // 13]
        return f"must follow suit {led} (legal: {legal})"

    def _apply(self, action: Action) -> None:
        seat = self.to_move
        assert seat is not None
        if self.phase == PHASE_TRUMP:
            self.trump = _SUIT_INDEX[action.arg]
            self._emit("trump", seat=seat, suit=action.arg, round=self.round_number)
            self._start_play()
            return
        c = CARD_INDEX[action.arg]
        self.hands[seat] &= ~(1 << c)
        self.trick_cards.append(c)
        self.trick_seats.append(seat)
        self.events.append(PLAY_EVENTS[seat][c])  # _emit("play", seat=…, card=…), interned
        if len(self.trick_cards) < self.n_alive:
            self.to_move = self._next_alive(seat)
            return
        self._finish_trick()

    def _finish_trick(self) -> None:
        winner = self.trick_seats[standard_trick_winner(self.trick_cards, self.trump)]
        self.tricks_won[winner] += 1
        self.total_tricks[winner] += 1
        view = trick_view(self.trick_leader, self.trick_cards, self.trick_seats, winner)
        self.finished_tricks.append(view)
        self._emit("trick", number=len(self.finished_tricks), winner=winner, cards=list(view.cards))
        self.trick_cards, self.trick_seats = [], []
        if self.hands[winner]:  # every survivor holds as many cards as the winner
            self.trick_leader = winner
            self.to_move = winner
        else:
            self._end_round()

    def _end_round(self) -> None:
        playing = [s for s in range(self.n) if self.alive[s]]
        survivors = [s for s in playing if self.tricks_won[s]]
        out = [s for s in playing if not self.tricks_won[s]]
        for s in out:
            self.alive[s] = False
        for s in survivors:
            self.rounds_survived[s] += 1
        self.n_alive = len(survivors)
        self.stats["rounds"] += 1
        self.stats["eliminations"] += len(out)
        self._emit(
            "round_end",
            round=self.round_number,
            tricks=list(self.tricks_won),
            out=out,
            survivors=survivors,
        )
        if len(survivors) == 1:
            self._win_set(survivors[0])
            return
        best = max(self.tricks_won)
        tied = [s for s in survivors if self.tricks_won[s] == best]
        if len(tied) == 1:
            winner = tied[0]
            self._emit("round_won", round=self.round_number, seat=winner, by="tricks")
        else:
            winner = self._tie_break(self._clockwise_from_left(tied))
            self._emit("round_won", round=self.round_number, seat=winner, by="tie_break")
        self.round_number += 1
        self.dealer = winner
        self._deal()

    def _tie_break(self, tied: list[int]) -> int:
        """The dealer deals one card to each tied player from a fresh pack; the highest wins."""
        draws = self.rng.sample(_PACK, len(tied))
        best = max(range(len(tied)), key=lambda i: draw_key(draws[i]))
        view = TieBreakView(
            self.round_number, tuple(tied), tuple(CARD_TEXT[c] for c in draws), tied[best]
        )
        self.tie_breaks.append(view)
        self.stats["tie_breaks"] += 1
        self._emit(
            "tie_break",
            round=self.round_number,
            seats=list(tied),
            cards=list(view.cards),
            winner=view.winner,
        )
        return view.winner

    def _win_set(self, seat: int) -> None:
        self.sets_won[seat] += 1
        self.stats["sets"] += 1
        self._emit("set_won", set=self.set_number, seat=seat, sets_won=list(self.sets_won))
        if self.sets_won[seat] >= self.sets_to_win:
            self._emit("match_won", seat=seat, sets_won=list(self.sets_won))
            self.to_move = None
            return
        self._start_set()

    # --- views -----------------------------------------------------------------------------

    def standing(self) -> tuple[int, ...]:
        """Each seat's rank, 1 = best: sets won, then rounds survived, then total tricks."""
        keys = [
            (self.sets_won[s], self.rounds_survived[s], self.total_tricks[s]) for s in range(self.n)
        ]
        return tuple(1 + sum(1 for o in keys if o > k) for k in keys)

    def observation(self, seat: int) -> TennisWhistObservation:
        tricks = tricks_so_far(
            self.finished_tricks, self.trick_leader, self.trick_cards, self.trick_seats
        )
        return TennisWhistObservation(
            seat=seat,
            hand=mask_texts(self.hands[seat]),
            set_number=self.set_number,
            round_number=self.round_number,
            hand_size=self.hand_size,
            dealer=self.dealer,
            phase=self.phase,
            trump=SUIT_LETTERS[self.trump] if self.trump >= 0 else "",
            turn_up=CARD_TEXT[self.turn_up] if self.turn_up >= 0 else "",
            tricks=tricks,
            tricks_won=tuple(self.tricks_won),
            eliminated=tuple(not a for a in self.alive),
            dealer_draw=self.dealer_draw,
            tie_breaks=tuple(self.tie_breaks),
            sets_won=tuple(self.sets_won),
            sets_to_win=self.sets_to_win,
            rounds_survived=tuple(self.rounds_survived),
            total_tricks=tuple(self.total_tricks),
            standing=self.standing(),
        )

    def _final_result(self) -> Result:
        # Scores are sets won (the game's unit); ranks apply the full standings order, so two
        # players level on sets are separated by rounds survived, then by tricks.
        ranks = self.standing()
        winner = max(range(self.n), key=lambda s: self.sets_won[s])
        names = self.game.seat_names(self.config)
        won = self.sets_won[winner]
        sets = f"{won} set{'' if won == 1 else 's'}"
        if self.n == 2:
            summary = f"{names[winner]} wins the match {sets} to {self.sets_won[1 - winner]}"
        else:
            # A bare "3 sets to 2-1-0" does not say whose sets are whose: name each player.
            others = ", ".join(
                f"{names[s]} {w}" for s, w in enumerate(self.sets_won) if s != winner
            )
            summary = f"{names[winner]} wins the match with {sets} ({others})"
        return Result(
            scores=tuple(float(w) for w in self.sets_won),
            ranks=ranks,
            summary=summary,
            stats=dict(self.stats),
        )

    def _redeal_hidden(self, seat: int, rng: random.Random) -> None:
        # Hidden from ``seat``: the other players' hands and the undealt rest of this round's
        # pack (the turn-up lies apart, face up). Earlier rounds' packs do not matter: every
        # round, and every draw, takes a fresh pack.
        tricks = deal_tricks(self.finished_tricks, self.trick_cards, self.trick_seats)
        voids = follow_suit_voids(self.n, tricks)
        others = [s for s in range(self.n) if s != seat and self.hands[s]]
        unseen = self.stock
        for s in others:
            unseen |= self.hands[s]
        places = [(self.hands[s].bit_count(), voids[s]) for s in others]
        places.append((self.stock.bit_count(), 0))
        *hands, self.stock = deal_unseen(rng, unseen, places)
        for s, mask in zip(others, hands, strict=True):
            self.hands[s] = mask
        played = played_by(self.n, tricks)
        self.dealt = [self.hands[s] | played[s] for s in range(self.n)]


def _ints(value: JSON) -> list[int]:
    return [int(cast(int, x)) for x in cast(list[JSON], value)]


def _restored_stats(state: TennisWhistState, events: Sequence[Event], over: bool) -> dict[str, int]:
    """The match statistics (only ``Result.stats`` shows them) counted from the public events
    the seat saw; where those are missing, at least what the observation proves (this set's
    finished rounds, tie-breaks and eliminations; the sets, which are exactly the sets won)."""
    rounds = tie_breaks = eliminations = 0
    for e in events:
        if e.kind == "round_end":
            rounds += 1
            eliminations += len(cast(list[JSON], e.data.get("out", [])))
        elif e.kind == "tie_break":
            tie_breaks += 1
    # A finished match stops after its last round_end without starting a round.
    this_set = state.round_number if over else state.round_number - 1
    out_now = state.n - sum(state.alive)
    return {
        "sets": sum(state.sets_won),
        "rounds": max(rounds, this_set),
        "tie_breaks": max(tie_breaks, len(state.tie_breaks)),
        "eliminations": max(eliminations, out_now),
    }


def _parse_card_or_none(text: str) -> int | None:
    try:
        return parse_card(text)
    except ValueError:
        return None


GAME = TennisWhist()
