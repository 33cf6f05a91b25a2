"""Whist (``whist``): four players in two partnerships, one rubber, as ../shared/rules/whist.md.

Seats 0..3 are North, East, South, West (clockwise); North–South play East–West.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from engine._fast import quick_init
from engine.cards import (
    ACE,
    CARD_TEXT,
    JACK,
    KING,
    QUEEN,
    SUIT_LETTERS,
    SUIT_MASKS,
    card,
    mask_texts,
    parse_card,
)
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
    side_row,
)
from engine.deal import deal_unseen
from engine.errors import ConfigError
from engine.games.tricks import (
    PLAY_ACTIONS,
    PLAY_EVENTS,
    SUIT_PLAYS,
    TrickView,
    deal_hands,
    deal_tricks,
    follow_suit_voids,
    mask_card_texts,
    play_actions,
    played_by,
    shuffled_pack,
    trick_from_dict,
    tricks_so_far,
)
from engine.options import OptionSpec

SEAT_NAMES = ("N", "E", "S", "W")
SIDE_NAMES = ("N+S", "E+W")
TRICKS_PER_DEAL = 13
#: Rank indices of the honours: A K Q J.
HONOUR_RANKS = (ACE, KING, QUEEN, JACK)
#: The honours of each suit as a card mask, by suit.
HONOUR_MASKS = tuple(sum(1 << card(rank, suit) for rank in HONOUR_RANKS) for suit in range(4))


@quick_init
@dataclass(frozen=True, slots=True)
class WhistObservation(Observation):
    """What one whist seat knows."""

    #: The seat's own cards, ascending (clubs, diamonds, hearts, spades; 2 … A).
    hand: tuple[str, ...]
    #: Seat of the current dealer.
    dealer: int
    #: The dealer's turned-up last card, which fixed trumps.
    turn_up: str
    #: Whether the dealer still holds the turn-up (it stays face up until played).
    turn_up_in_hand: bool
    #: The trump suit's letter: ``C``, ``D``, ``H`` or ``S``.
    trump: str
    #: Tricks of this deal: finished ones first, then the one being played (winner -1).
    tricks: tuple[TrickView, ...]
    #: Tricks won this deal, per side (N+S, E+W).
    tricks_won: tuple[int, int]
    #: Points in the current game, per side.
    score: tuple[int, int]
    #: Games won in the rubber, per side.
    games: tuple[int, int]
    #: Deal number in the match, from 1.
    deal_number: int

    def render(self) -> str:
        lines = [
            f"You are {SEAT_NAMES[self.seat]}; dealer {SEAT_NAMES[self.dealer]}; "
            f"trumps {self.trump} (turn-up {self.turn_up}"
            f"{', still in hand' if self.turn_up_in_hand else ''})",
            f"Score N+S {self.score[0]} – E+W {self.score[1]}; games {self.games[0]}–"
            f"{self.games[1]}; tricks {self.tricks_won[0]}–{self.tricks_won[1]}",
            f"Hand: {' '.join(self.hand)}",
        ]
        if self.tricks and self.tricks[-1].winner == -1:
            current = self.tricks[-1]
            shown = " ".join(
                f"{SEAT_NAMES[s]}:{c}" for s, c in zip(current.seats, current.cards, strict=True)
            )
            lines.append(f"Trick: {shown}")
        return "\n".join(lines)


class Whist(Game):
    """The whist referee."""

    id = "whist"
    version = "1.0"
    title = "Whist"
    presentation_kind = "trick_table"
    player_counts = (4,)
    default_players = 4
    options = (
        OptionSpec("points_to_win", "int", 7, "points that win a game (5 = short whist)", 1, 50),
        OptionSpec("games_per_rubber", "int", 3, "a rubber is best of this many games", 1, 9),
    )

    def check_config(self, config: MatchConfig) -> None:
        if config.int_option("games_per_rubber") % 2 == 0:
            raise ConfigError("option 'games_per_rubber' must be odd (a rubber is best of N)")

    def seat_names(self, config: MatchConfig) -> tuple[str, ...]:
        return SEAT_NAMES

    def sides(self, config: MatchConfig) -> tuple[tuple[int, ...], ...]:
        return ((0, 2), (1, 3))

    def action_space(self, config: MatchConfig) -> tuple[Action, ...]:
        return PLAY_ACTIONS

    def present(self, config: MatchConfig, public: Mapping[str, JSON]) -> Presentation:
        rows = (
            side_row(self, config, "Tricks this deal", public.get("tricks_won")),
            side_row(self, config, "Points this game", public.get("score")),
            side_row(self, config, "Games won (rubber)", public.get("games")),
        )
        facts = (("Deal", str(public["deal_number"])),) if "deal_number" in public else ()
        # The dealer keeps the turn-up until it is played: the table sees where it is.
        notes = (
            ("The turn-up is still in the dealer's hand",) if public.get("turn_up_in_hand") else ()
        )
        return Presentation(tuple(r for r in rows if r), facts, notes)

    def new_match(self, config: MatchConfig, seed: int) -> WhistState:
        return WhistState(self, config, seed)

    def _restore(
        self,
        config: MatchConfig,
        observation: Mapping[str, JSON],
        events: Sequence[Event],
        rng: random.Random,
    ) -> WhistState:
        o = observation
        seat = int(cast(int, o["seat"]))
        state = WhistState.bare(self, config, rng)
        state.points_to_win = config.int_option("points_to_win")
        state.games_to_win = config.int_option("games_per_rubber") // 2 + 1
        state.score = [int(x) for x in _ints(o["score"])]
        state.games = [int(x) for x in _ints(o["games"])]
        state.game_number = sum(state.games) + 1
        state.deal_number = int(cast(int, o["deal_number"]))
        state.dealer = int(cast(int, o["dealer"]))
        state.turn_up = parse_card(str(o["turn_up"]))
        state.trump = SUIT_LETTERS.index(str(o["trump"]))
        state.turn_up_in_hand = bool(o["turn_up_in_hand"])
        views = [trick_from_dict(t) for t in cast(list[Mapping[str, JSON]], o["tricks"])]
        state.finished_tricks = [v for v in views if v.winner >= 0]
        current = views[-1] if views and views[-1].winner < 0 else None
        state.trick_cards = [parse_card(c) for c in current.cards] if current else []
        state.trick_seats = list(current.seats) if current else []
        state.tricks_won = [int(x) for x in _ints(o["tricks_won"])]
        if current is not None:
            state.trick_leader = current.leader
            state.to_move = (current.seats[-1] + 1) % 4
        else:
            done = state.finished_tricks
            state.trick_leader = done[-1].winner if done else (state.dealer + 1) % 4
            over = max(state.games) == state.games_to_win
            state.to_move = None if over else state.trick_leader
        # The hidden hands, of the right sizes, in any order (restore re-deals them).
        tricks = deal_tricks(state.finished_tricks, state.trick_cards, state.trick_seats)
        played = played_by(4, tricks)
        own = sum(1 << parse_card(c) for c in cast(list[str], o["hand"]))
        hands = [0, 0, 0, 0]
        hands[seat] = own
        seen = own
        for cards in played:
            if seen & cards:
                raise ValueError("a card is both held and played, or played twice")
            seen |= cards
        turn_up = 1 << state.turn_up
        if state.turn_up_in_hand and (seat == state.dealer) != bool(own & turn_up):
            raise ValueError("the turn-up is not where the observation says")
        if state.turn_up_in_hand and state.dealer != seat:
            if seen & turn_up:
                raise ValueError("the turn-up is not where the observation says")
            hands[state.dealer] = turn_up
            seen |= turn_up
        loose = [c for c in range(52) if not seen >> c & 1]
        for s in range(4):
            if s != seat:
                need = TRICKS_PER_DEAL - played[s].bit_count() - hands[s].bit_count()
                hands[s] |= sum(1 << c for c in loose[:need])
                loose = loose[need:]
        if loose or own.bit_count() != TRICKS_PER_DEAL - played[seat].bit_count():
            raise ValueError("the hand, the tricks and the turn-up do not make one pack")
        state.hands = hands
        state.dealt = [hands[s] | played[s] for s in range(4)]
        return state


class WhistState(MatchState):
    """A rubber of whist in progress."""

    #: Lists of cards, seats and counts, and the frozen tricks: clone() copies them flat.
    _flat_lists = MatchState._flat_lists | {
        "hands",
        "dealt",
        "score",
        "games",
        "trick_cards",
        "trick_seats",
        "finished_tricks",
        "tricks_won",
    }

    def __init__(self, game: Game, config: MatchConfig, seed: int) -> None:
        super().__init__(game, config, seed)
        self.points_to_win = config.int_option("points_to_win")
        self.games_to_win = config.int_option("games_per_rubber") // 2 + 1
        self.hands = [0, 0, 0, 0]
        self.dealt = [0, 0, 0, 0]
        self.score = [0, 0]
        self.games = [0, 0]
        self.game_number = 1
        self.deal_number = 0
        self.dealer = self.rng.randrange(4)
        self._emit("dealer", seat=self.dealer, how="draw")
        self.trump = 0
        self.turn_up = 0
        self.turn_up_in_hand = True
        self.trick_cards: list[int] = []
        self.trick_seats: list[int] = []
        self.trick_leader = 0
        self.finished_tricks: list[TrickView] = []
        self.tricks_won = [0, 0]
        self._deal()

    # --- flow ------------------------------------------------------------------------------

    def _deal(self) -> None:
        self.deal_number += 1
        deck = shuffled_pack(self.rng)
        hands = deal_hands(deck, (self.dealer + 1) % 4, 4, 13)
        self.hands = hands
        self.dealt = list(hands)
        self.turn_up = deck[51]  # the 52nd card, dealt to the dealer face up
        self.trump = self.turn_up // 13
        self.turn_up_in_hand = True
        self.finished_tricks = []
        self.trick_cards, self.trick_seats = [], []
        self.tricks_won = [0, 0]
        for seat in range(4):
            self._emit("deal", to=(seat,), seat=seat, hand=mask_card_texts(hands[seat]))
        self._emit(
            "turn_up",
            dealer=self.dealer,
            card=CARD_TEXT[self.turn_up],
            trump=SUIT_LETTERS[self.trump],
            deal=self.deal_number,
        )
        self.trick_leader = (self.dealer + 1) % 4
        self.to_move = self.trick_leader

    def _legal_actions(self) -> tuple[Action, ...]:
        seat = self.to_move
        assert seat is not None
        hand = self.hands[seat]
        if self.trick_cards:  # follow suit when able: one table look-up
            led = self.trick_cards[0] // 13
            same = hand >> 13 * led & 0x1FFF
            if same:
                return SUIT_PLAYS[led][same]
        return play_actions(hand)

    def _why_illegal(self, text: str) -> str:
        kind, _, arg = text.partition(":")
        c = _parse_card_or_none(arg) if kind == "play" else None
        seat = self.to_move
        if c is None or seat is None:
            return super()._why_illegal(text)
        legal = ", ".join(a.text for a in self.legal_actions())
        if not self.hands[seat] >> c & 1:
            return f"{arg} is not in your hand (legal: {legal})"
        if arg != CARD_TEXT[c] or not self.trick_cards:  # e.g. "play:as" or "play:10S"
            return f"write the card as {CARD_TEXT[c]} (legal: {legal})"
        led = SUIT_LETTERS[self.trick_cards[0] // 13]
        return f"must follow suit {led} (legal: {legal})"

    def _apply(self, action: Action) -> None:
        # The hot path of every playout: plain attribute work and an interned event.
        seat = self.to_move
        assert seat is not None
        arg = action.arg
        c = CARD_INDEX[arg]
        self.hands[seat] &= ~(1 << c)
        if c == self.turn_up:
            self.turn_up_in_hand = False
        cards = self.trick_cards
        cards.append(c)
        self.trick_seats.append(seat)
        self.events.append(PLAY_EVENTS[seat][c])  # the same as _emit("play", …), interned
        if len(cards) < 4:
            self.to_move = (seat + 1) % 4
            return
        self._finish_trick()

    def _finish_trick(self) -> None:
        cards = self.trick_cards
        c0, c1, c2, c3 = cards
        played = 1 << c0 | 1 << c1 | 1 << c2 | 1 << c3
        # Highest trump, else highest card of the suit led (ranks ascend with card numbers).
        best = played & SUIT_MASKS[self.trump] or played & SUIT_MASKS[c0 // 13]
        winner = self.trick_seats[cards.index(best.bit_length() - 1)]
        self.tricks_won[winner % 2] += 1
        texts = tuple(map(CARD_TEXT.__getitem__, cards))
        view = TrickView(self.trick_leader, texts, tuple(self.trick_seats), winner)
        self.finished_tricks.append(view)
        self._emit("trick", number=len(self.finished_tricks), winner=winner, cards=list(texts))
        self.trick_cards, self.trick_seats = [], []
        if len(self.finished_tricks) == TRICKS_PER_DEAL:
            self._score_deal()
        else:
            self.trick_leader = winner
            self.to_move = winner

    def _score_deal(self) -> None:
        trick_points = [0, 0]
        honour_points = [0, 0]
        side = 0 if self.tricks_won[0] >= 7 else 1
        trick_points[side] = self.tricks_won[side] - 6
        self.score[side] += trick_points[side]
        game_winner: int | None = side if self.score[side] >= self.points_to_win else None
        held = honours_by_side(self.dealt, self.trump)
        if game_winner is None:  # tricks score first; a side that made game stops the count
            for s in (0, 1):
                honour_points[s] = {3: 2, 4: 4}.get(held[s], 0)
                self.score[s] += honour_points[s]
                if self.score[s] >= self.points_to_win:
                    game_winner = s
        self._emit(
            "deal_score",
            tricks=list(self.tricks_won),
            trick_points=trick_points,
            honours_held=list(held),
            honour_points=honour_points,
            score=list(self.score),
        )
        if game_winner is not None:
            self.games[game_winner] += 1
            self._emit(
                "game_won",
                side=SIDE_NAMES[game_winner],
                game=self.game_number,
                final_score=list(self.score),
                games=list(self.games),
            )
            self.score = [0, 0]  # points beyond the target do not carry over
            self.game_number += 1
            if self.games[game_winner] == self.games_to_win:
                self._emit("rubber_won", side=SIDE_NAMES[game_winner], games=list(self.games))
                self.to_move = None
                return
        self.dealer = (self.dealer + 1) % 4
        self._deal()

    # --- views -----------------------------------------------------------------------------

    def observation(self, seat: int) -> WhistObservation:
        tricks = tricks_so_far(
            self.finished_tricks, self.trick_leader, self.trick_cards, self.trick_seats
        )
        return WhistObservation(
            seat=seat,
            hand=mask_texts(self.hands[seat]),
            dealer=self.dealer,
            turn_up=CARD_TEXT[self.turn_up],
            turn_up_in_hand=self.turn_up_in_hand,
            trump=SUIT_LETTERS[self.trump],
            tricks=tricks,
            tricks_won=(self.tricks_won[0], self.tricks_won[1]),
            score=(self.score[0], self.score[1]),
            games=(self.games[0], self.games[1]),
            deal_number=self.deal_number,
        )

    def _final_result(self) -> Result:
        g = self.games
        scores = (float(g[0]), float(g[1]), float(g[0]), float(g[1]))
        win = 0 if g[0] > g[1] else 1
        ranks = (1, 2, 1, 2) if win == 0 else (2, 1, 2, 1)
        return Result(
            scores=scores,
            ranks=ranks,
            summary=f"{SIDE_NAMES[win]} win the rubber {g[win]}-{g[1 - win]}",
            stats={"deals": self.deal_number, "games": g[0] + g[1]},
        )

    def _redeal_hidden(self, seat: int, rng: random.Random) -> None:
        # Hidden from ``seat``: the other three hands, less the turn-up while the dealer holds
        # it (it lies face up). Every card is dealt, so there is no stock.
        tricks = deal_tricks(self.finished_tricks, self.trick_cards, self.trick_seats)
        voids = follow_suit_voids(4, tricks)
        shown = 1 << self.turn_up if self.turn_up_in_hand else 0
        others = [s for s in range(4) if s != seat]
        unseen = 0
        for s in others:
            unseen |= self.hands[s] & ~shown
        places = [((self.hands[s] & ~shown).bit_count(), voids[s]) for s in others]
        for s, mask in zip(others, deal_unseen(rng, unseen, places), strict=True):
            self.hands[s] = mask | self.hands[s] & shown
        # Honours are scored from the cards dealt: what is held now and what was played.
        played = played_by(4, tricks)
        self.dealt = [self.hands[s] | played[s] for s in range(4)]


CARD_INDEX = {t: i for i, t in enumerate(CARD_TEXT)}


def _ints(value: JSON) -> list[int]:
    return [int(cast(int, x)) for x in cast(list[JSON], value)]


def honours_by_side(dealt: list[int], trump: int) -> tuple[int, int]:
    """How many of A K Q J of trumps each side was dealt (the turn-up counts as the dealer's)."""
    honours = HONOUR_MASKS[trump]
    return (
        ((dealt[0] | dealt[2]) & honours).bit_count(),
        ((dealt[1] | dealt[3]) & honours).bit_count(),
    )


def _parse_card_or_none(text: str) -> int | None:
    try:
        return parse_card(text)
    except ValueError:
        return None


GAME = Whist()
