"""Cards, deal, robbing and play shared by Spoil Five and Forty-Five (rules: spoil-five.md).

One implementation, two scorings: :class:`SpoilTableState` deals, runs the robbing decisions and
plays tricks; ``spoil_five`` (pool of chips, claim or jinx) and ``forty_five`` (two sides, game to
45) subclass it and only decide what a finished trick means.

Rank and follow rules live in :class:`SpoilRules`, one precomputed table per trump suit and
demoted-ace flag, so the hot path is a few mask operations and list look-ups.
"""

from __future__ import annotations

import random
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, cast

from engine._fast import quick_init
from engine.cards import (
    ACE,
    CARD_TEXT,
    CLUBS,
    DIAMONDS,
    FULL_DECK_MASK,
    HEARTS,
    JACK,
    RANK_LETTERS,
    SPADES,
    SUIT_LETTERS,
    SUIT_MASKS,
    SUITS,
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
    name_of,
    number_actions,
)
from engine.deal import deal_unseen
from engine.games.tricks import (
    MAX_SEATS,
    PLAY_ACTIONS,
    PLAY_EVENTS,
    TrickView,
    deal_tricks,
    play_actions,
    played_by,
    shuffled_pack,
    trick_from_dict,
    trick_view,
    tricks_so_far,
)
from engine.options import OptionSpec

#: The ace of hearts: always a trump, never a heart.
ACE_OF_HEARTS: Final = card(ACE, HEARTS)
_AH_BIT: Final = 1 << ACE_OF_HEARTS
FIVE: Final = 3  # rank index of the 5
TRICKS_PER_DEAL: Final = 5
HAND_SIZE: Final = 5

#: Trump orders, high to low: ``AH`` is the ace of hearts, a bare letter a card of the trump suit.
TRUMP_ORDERS: Final = {
    CLUBS: "5 J AH A K Q 2 3 4 6 7 8 9 T",
    DIAMONDS: "5 J AH A K Q T 9 8 7 6 4 3 2",
    HEARTS: "5 J A K Q T 9 8 7 6 4 3 2",
    SPADES: "5 J AH A K Q 2 3 4 6 7 8 9 T",
}
#: Plain-suit orders, high to low: "high in red, low in black"; the ace of hearts is no heart.
PLAIN_ORDERS: Final = {
    CLUBS: "K Q J A 2 3 4 5 6 7 8 9 T",
    DIAMONDS: "K Q J T 9 8 7 6 5 4 3 2 A",
    HEARTS: "K Q J T 9 8 7 6 5 4 3 2",
    SPADES: "K Q J A 2 3 4 5 6 7 8 9 T",
}
#: Trumps rank above every plain card: power = TRUMP_BASE + place from the bottom (>= 1).
TRUMP_BASE: Final = 100


class SpoilRules:
    """Rank and follow tables for one trump suit, with or without the ace of trumps demoted.

    Shared and immutable: states hold a reference, ``clone()`` keeps sharing it.
    """

    __slots__ = ("ace", "demoted", "exempt", "follow", "power", "trump", "trump_mask", "win_mask")

    def __init__(self, trump: int, demoted: bool) -> None:
        #: The trump suit.
        self.trump = trump
        #: Whether the ace of trumps is demoted to the lowest trump.
        self.demoted = demoted
        #: The ace of trumps (the ace of hearts when hearts are trumps).
        self.ace = card(ACE, trump)
        self.trump_mask = SUIT_MASKS[trump] | _AH_BIT
        power = [0] * 52
        order = TRUMP_ORDERS[trump].split()
        for i, token in enumerate(order):
            c = ACE_OF_HEARTS if token == "AH" else card(RANK_LETTERS.index(token), trump)
            power[c] = TRUMP_BASE + len(order) - i
        if demoted:
            power[self.ace] = TRUMP_BASE  # below every other trump (those are >= BASE + 1)
        for s in SUITS:
            if s != trump:
                tokens = PLAIN_ORDERS[s].split()
                for i, token in enumerate(tokens):
                    power[card(RANK_LETTERS.index(token), s)] = len(tokens) - i
        #: Strength of every card: trumps > TRUMP_BASE, plain cards 1..13 within their suit.
        self.power: tuple[int, ...] = tuple(power)
        privileged = card(FIVE, trump), card(JACK, trump), ACE_OF_HEARTS
        follow = [0] * 52
        exempt = [0] * 52
        win_mask = [0] * 52
        for c in range(52):
            if (self.trump_mask >> c) & 1:
                win_mask[c] = self.trump_mask
                # Reneging privilege: 5, J of trumps and AH need not be played to a LOWER trump
                # led; a demoted ace has lost it.
                for p in privileged:
                    if power[p] > power[c] and not (demoted and p == self.ace):
                        exempt[c] |= 1 << p
            else:
                follow[c] = SUIT_MASKS[c // 13] & ~_AH_BIT
                win_mask[c] = follow[c] | self.trump_mask
        #: For a plain card led: the cards that follow it (its suit without the ace of hearts).
        self.follow: tuple[int, ...] = tuple(follow)
        #: For a trump led: the privileged trumps a player may hold back.
        self.exempt: tuple[int, ...] = tuple(exempt)
        #: For any card led: the cards that can win the trick (its suit and the trumps).
        self.win_mask: tuple[int, ...] = tuple(win_mask)

    def __deepcopy__(self, memo: dict[int, Any]) -> SpoilRules:
        return self

    def legal_mask(self, hand: int, led: int) -> int:
        """The cards of ``hand`` that may be played to a trick led by ``led`` (-1: leading)."""
        if led < 0:
            return hand
        tm = self.trump_mask
        if (tm >> led) & 1:
            trumps = hand & tm
            # Some trump must be played unless every trump held is privileged against ``led``.
            if trumps & ~self.exempt[led]:
                return trumps
            return hand
        follow = hand & self.follow[led]
        if follow:
            return follow | (hand & tm)  # follow suit or trump
        return hand

    def winner(self, cards: list[int]) -> int:
        """Index in ``cards`` (led first) of the winning card."""
        wm = self.win_mask[cards[0]]
        power = self.power
        best, best_power = 0, power[cards[0]]
        for i in range(1, len(cards)):
            c = cards[i]
            if (wm >> c) & 1 and power[c] > best_power:
                best, best_power = i, power[c]
        return best


#: RULES[trump][demoted]: the shared tables.
RULES: Final = tuple((SpoilRules(t, False), SpoilRules(t, True)) for t in SUITS)


def shown_voids(
    players: int, tricks: Sequence[tuple[list[int], tuple[int, ...]]], rules: SpoilRules
) -> tuple[list[int], list[bool]]:
    """What this deal's play has shown (determinize): per seat, the cards it cannot hold, and
    whether it ever failed to play a trump to a trump led.

    Failing to follow a plain suit and not trumping shows that suit void; failing to play a
    trump to a trump led shows every trump gone but those privileged against the card led. Give
    the undemoted ``rules``: a demoted ace differs only in having no privilege, and the second
    list tells who then cannot hold it.
    """
    forbidden = [0] * players
    failed_trump = [False] * players
    trumps = rules.trump_mask
    for cards, seats in tricks:
        led = cards[0]
        if trumps >> led & 1:
            shown = trumps & ~rules.exempt[led]
            for i in range(1, len(cards)):
                if not trumps >> cards[i] & 1:
                    forbidden[seats[i]] |= shown
                    failed_trump[seats[i]] = True
        else:
            follow = rules.follow[led]
            for i in range(1, len(cards)):
                if not (follow | trumps) >> cards[i] & 1:
                    forbidden[seats[i]] |= follow
    return forbidden, failed_trump


def legal_play_mask(hand: int, led: int, trump: int, demoted: bool = False) -> int:
    """Cards of ``hand`` playable to a trick led by card ``led`` (-1 when leading)."""
    return RULES[trump][demoted].legal_mask(hand, led)


def trick_winner(cards: list[int], trump: int, demoted: bool = False) -> int:
    """Index in ``cards`` (led first) of the card that wins the trick."""
    return RULES[trump][demoted].winner(cards)


def card_power(c: int, trump: int, demoted: bool = False) -> int:
    """Strength of card ``c``: trumps above ``TRUMP_BASE``, plain cards 1..13 within a suit."""
    return RULES[trump][demoted].power[c]


def is_trump(c: int, trump: int) -> bool:
    """Whether ``c`` is a trump (the trump suit or the ace of hearts)."""
    return c == ACE_OF_HEARTS or c // 13 == trump


# --- actions ---------------------------------------------------------------------------------

#: ``rob:<card>``: rob the turn-up, discarding that card face down.
ROB_ACTIONS: Final = tuple(Action("rob", t) for t in CARD_TEXT)
#: The dealer keeps the original hand when an ace is turned up.
DECLINE: Final = Action("decline")
#: The holder of the ace of trumps declines to rob and makes it known.
ANNOUNCE: Final = Action("announce")
#: The holder neither robs nor announces: the ace becomes the lowest trump.
SILENT: Final = Action("silent")
CARD_INDEX: Final = {t: i for i, t in enumerate(CARD_TEXT)}
#: Both games' action space up to here: plays, robs, then the ace decisions (0..106); spoil five
#: appends claim and jinx. Every option keeps all of them, so numbers never depend on options.
TABLE_ACTIONS: Final = number_actions(PLAY_ACTIONS, ROB_ACTIONS, (DECLINE, ANNOUNCE, SILENT))

#: What the seat to move is deciding.
PLAY, DEALER_ROB, ACE_CHOICE, CLAIM = 0, 1, 2, 3


def rob_actions(mask: int) -> tuple[Action, ...]:
    """``rob`` actions discarding each card of ``mask``, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(ROB_ACTIONS[low.bit_length() - 1])
        mask ^= low
    return tuple(out)


#: Options both games share.
COMMON_OPTIONS: Final = (
    OptionSpec(
        "dealer_ace_in_trick_1",
        "bool",
        False,
        "a turned-up ace robbed by the dealer joins at once and may be played in trick 1",
    ),
    OptionSpec(
        "must_rob",
        "bool",
        False,
        "robbing is compulsory: the dealer must rob a turned ace; the ace holder robs or announces",
    ),
)


# --- observation -------------------------------------------------------------------------------


@quick_init
@dataclass(frozen=True, slots=True)
class SpoilTableObservation(Observation):
    """What a seat knows of the current deal; each game adds its scores."""

    #: The seat's own playable cards, ascending (clubs, diamonds, hearts, spades; 2 … A).
    hand: tuple[str, ...]
    #: The turned-up ace this seat robbed as dealer, joining its hand after trick 1; else "".
    pending_ace: str
    #: The card this seat discarded face down to rob this deal (its own secret); else "".
    rob_discard: str
    #: Whether this seat stayed silent holding the ace of trumps, so that ace is the lowest trump
    #: (private until the ace is played).
    ace_demoted: bool
    #: Seat of the current dealer.
    dealer: int
    #: The trump suit's letter: ``C``, ``D``, ``H`` or ``S``.
    trump: str
    #: The turned-up card that fixed trumps.
    turn_up: str
    #: Seat that robbed the turn-up this deal (public), or -1.
    robbed_by: int
    #: Whether the dealer declined to rob a turned-up ace (it stays out of play).
    dealer_declined: bool
    #: Seat that announced holding the ace of trumps instead of robbing, or -1.
    announced_by: int
    #: The demoted ace of trumps once it has been played (it ranked as the lowest trump); else "".
    demoted_played: str
    #: Tricks of this deal: finished ones first, then the one being played (winner -1).
    tricks: tuple[TrickView, ...]
    #: Tricks won this deal, per seat.
    tricks_won: tuple[int, ...]
    #: Deal number in the match, from 1.
    deal_number: int

    def table_lines(self, names: Sequence[str] = ()) -> list[str]:
        """Render lines about the deal in progress (seats called ``names``, default P1 …)."""
        names = names or tuple(f"P{s + 1}" for s in range(len(self.tricks_won)))
        robbed = ""
        if self.robbed_by >= 0:
            robbed = f"; {names[self.robbed_by]} robbed"
        elif self.dealer_declined:
            robbed = "; dealer declined the ace"
        if self.announced_by >= 0:
            robbed += f"; {names[self.announced_by]} announced the ace"
        if self.demoted_played:
            robbed += f"; {self.demoted_played} was played demoted"
        lines = [
            f"You are {names[self.seat]}; dealer {names[self.dealer]}; trumps {self.trump} "
            f"(turn-up {self.turn_up}{robbed})",
            f"Hand: {' '.join(self.hand)}"
            + (f" (+{self.pending_ace} after trick 1)" if self.pending_ace else "")
            + (f"; you discarded {self.rob_discard}" if self.rob_discard else "")
            + ("; your ace is demoted" if self.ace_demoted else ""),
            "Tricks won: " + " ".join(f"{names[s]}:{n}" for s, n in enumerate(self.tricks_won)),
        ]
        if self.tricks and self.tricks[-1].winner == -1:
            current = self.tricks[-1]
            shown = " ".join(
                f"{names[s]}:{c}" for s, c in zip(current.seats, current.cards, strict=True)
            )
            lines.append(f"Trick {len(self.tricks)}: {shown}")
        return lines


def turn_up_notes(names: Sequence[str], public: Mapping[str, JSON]) -> list[str]:
    """The turn-up's story this deal, from the public fields, as sentences for a viewer."""
    notes = []
    if (who := name_of(names, public.get("robbed_by"))) is not None:
        notes.append(f"{who} robbed the turn-up")
    if public.get("dealer_declined"):
        notes.append("The dealer declined to rob the ace")
    if (who := name_of(names, public.get("announced_by"))) is not None:
        notes.append(f"{who} announced the ace of trumps")
    if public.get("demoted_played"):
        notes.append(f"{public['demoted_played']} was played as the lowest trump")
    return notes


# --- the shared state ------------------------------------------------------------------------


#: ``_PACKETS[n]``: for the k-th seat from the dealer's left, the deck positions where its packet
#: of three and its packet of two begin (all seats get three, then all get two).
_PACKETS: Final = tuple(
    tuple((3 * k, 3 * n + 2 * k) for k in range(n)) for n in range(MAX_SEATS + 1)
)


class SpoilTableState(MatchState):
    """Deal, robbing and trick play of the Spoil Five family; scoring is left to subclasses.

    Subclasses set up their scoring attributes, then call :meth:`_start`; they implement
    :meth:`_after_trick` (continue with :meth:`_lead` or end the deal with :meth:`_end_deal`
    once scored) and may add decisions through :meth:`_legal_extra`/:meth:`_apply_extra`.
    """

    #: Lists of cards, seats, counts and frozen tricks: clone() copies them flat.
    _flat_lists = MatchState._flat_lists | {
        "hands",
        "rob_discard",
        "trick_cards",
        "trick_seats",
        "finished_tricks",
        "tricks_won",
    }

    def __init__(self, game: Game, config: MatchConfig, seed: int) -> None:
        super().__init__(game, config, seed)
        n = config.players
        self.n = n
        self.ace_in_trick_1 = bool(config.option("dealer_ace_in_trick_1"))
        self.must_rob = bool(config.option("must_rob"))
        self.dealer = 0
        self.deal_number = 0
        self.hands = [0] * n
        self.stock = 0  # undealt cards under the turn-up
        self.played = 0  # cards played to tricks this deal
        self.discards = 0  # rob discards this deal
        self.rob_discard = [-1] * n
        self.trump = 0
        self.turn_up = 0
        self.turn_up_on_stock = True
        self.rules = RULES[0][0]
        self.phase = PLAY
        self.ace_holder = -1  # seat dealt the ace of trumps when the turn-up is no ace
        self.ace_wait = -1  # that seat, until it has decided at its first turn in trick 1
        self.silent_seat = -1  # the holder who stayed silent (private to that seat)
        self.pending_ace = -1  # the dealer's robbed ace waiting for the end of trick 1
        self.robbed_by = -1
        self.announced_by = -1
        self.dealer_declined = False
        self.demoted_played = -1
        self.trick_cards: list[int] = []
        self.trick_seats: list[int] = []
        self.trick_leader = 0
        self.finished_tricks: list[TrickView] = []
        self.tricks_won = [0] * n
        self.stats: dict[str, int] = dict.fromkeys(
            ("deals", "robs", "dealer_robs", "declines", "announces", "silents", "demoted_plays"),
            0,
        )

    # --- hooks for the games ---------------------------------------------------------------

    def _before_deal(self) -> None:
        """Called before each deal's cards are dealt (antes)."""

    @abstractmethod
    def _after_trick(self, winner: int) -> None:
        """A trick is over: lead the next one, start a decision, or score and end the deal."""

    @abstractmethod
    def _next_deal_or_end(self) -> None:
        """The deal is over and scored: deal again (``_deal``) or end the match."""

    def _legal_extra(self) -> tuple[Action, ...]:
        raise AssertionError(f"unknown phase {self.phase}")

    def _apply_extra(self, action: Action) -> None:
        raise AssertionError(f"unknown phase {self.phase}")

    # --- flow ------------------------------------------------------------------------------

    def _start(self) -> None:
        """Draw the first dealer and deal the first hand."""
        self.dealer = self.rng.randrange(self.n)
        self._emit("dealer", seat=self.dealer, how="draw")
        self._deal()

    def _deal(self) -> None:
        n = self.n
        self.deal_number += 1
        self.stats["deals"] += 1
        self._before_deal()
        deck = shuffled_pack(self.rng)  # the very deal rng.shuffle made, faster
        hands = [0] * n
        shift = (1).__lshift__
        # Clockwise from the dealer's left, 3 cards each, then 2 each (_PACKETS).
        for k, (first, second) in enumerate(_PACKETS[n], 1):
            hands[(self.dealer + k) % n] = sum(map(shift, deck[first : first + 3])) + sum(
                map(shift, deck[second : second + 2])
            )
        dealt = 5 * n
        self._install(hands, deck[dealt], sum(map(shift, deck[dealt + 1 :])))

    def arrange_deal(self, dealer: int, hands: Sequence[int], turn_up: int) -> None:
        """Test support: replace the current deal's cards with a chosen position.

        ``hands`` are bit masks, one per seat; they may hold fewer than five cards to stage a
        late position. Every card not in a hand and not ``turn_up`` goes to the stock. Chips,
        scores and the deal number stay as they are; robbing starts afresh.
        """
        used = 1 << turn_up
        for h in hands:
            assert not used & h, "a card is in two places"
            used |= h
        self.dealer = dealer
        self._legal = None
        self._install(list(hands), turn_up, FULL_DECK_MASK & ~used)

    def _install(self, hands: list[int], turn_up: int, stock: int) -> None:
        """Set up a freshly dealt hand: cards, trumps, events, and who decides first."""
        n = self.n
        self.hands = hands
        self.turn_up = turn_up
        self.stock = stock
        self.turn_up_on_stock = True
        self.played = 0
        self.discards = 0
        self.rob_discard = [-1] * n
        self.trump = self.turn_up // 13
        self.rules = RULES[self.trump][0]
        self.silent_seat = -1
        self.pending_ace = -1
        self.robbed_by = -1
        self.announced_by = -1
        self.dealer_declined = False
        self.demoted_played = -1
        self.trick_cards, self.trick_seats = [], []
        self.finished_tricks = []
        self.tricks_won = [0] * n
        for seat in range(n):
            self._emit("deal", to=(seat,), seat=seat, hand=list(mask_texts(hands[seat])))
        self._emit(
            "turn_up",
            dealer=self.dealer,
            card=CARD_TEXT[self.turn_up],
            trump=SUIT_LETTERS[self.trump],
            deal=self.deal_number,
        )
        self.trick_leader = (self.dealer + 1) % n
        self.ace_holder = self.ace_wait = -1
        if self.turn_up % 13 == ACE:
            self.phase = DEALER_ROB  # before the first lead
            self.to_move = self.dealer
            return
        ace_bit = 1 << self.rules.ace
        for seat in range(n):
            if hands[seat] & ace_bit:
                self.ace_holder = self.ace_wait = seat
        self._turn(self.trick_leader)

    def _turn(self, seat: int) -> None:
        """Give ``seat`` its turn to play; the ace holder first decides at its first turn."""
        self.to_move = seat
        self.phase = ACE_CHOICE if seat == self.ace_wait else PLAY

    def _lead(self, seat: int) -> None:
        """``seat`` leads the next trick."""
        self.trick_leader = seat
        self.to_move = seat
        self.phase = PLAY

    def _legal_actions(self) -> tuple[Action, ...]:
        seat = self.to_move
        assert seat is not None
        phase = self.phase
        if phase == PLAY:
            led = self.trick_cards[0] if self.trick_cards else -1
            return play_actions(self.rules.legal_mask(self.hands[seat], led))
        if phase == ACE_CHOICE:
            robs = rob_actions(self.hands[seat])
            return (ANNOUNCE, *robs) if self.must_rob else (ANNOUNCE, *robs, SILENT)
        if phase == DEALER_ROB:
            robs = rob_actions(self.hands[seat])
            return robs if self.must_rob else (DECLINE, *robs)
        return self._legal_extra()

    def _why_illegal(self, text: str) -> str:
        legal = ", ".join(a.text for a in self.legal_actions())
        if self.phase == ACE_CHOICE:
            why = "you hold the ace of trumps: first rob, announce" + (
                "" if self.must_rob else " or stay silent"
            )
        elif self.phase == DEALER_ROB:
            why = "an ace is turned up: the dealer first robs" + (
                "" if self.must_rob else " or declines"
            )
        elif self.phase == PLAY and self.trick_cards:
            led = self.trick_cards[0]
            if (self.rules.trump_mask >> led) & 1:
                why = (
                    "a trump was led: play a trump (5, J and AH may be held back from a lower one)"
                )
            else:
                why = "follow the suit led or trump"
        else:
            return super()._why_illegal(text)
        return f"{why} (legal: {legal})"

    def _apply(self, action: Action) -> None:
        seat = self.to_move
        assert seat is not None
        phase = self.phase
        if phase == PLAY:
            self._play(seat, CARD_INDEX[action.arg])
        elif phase == ACE_CHOICE:
            # Kinds, not identities: a clone()'s cached legal actions are deep copies.
            self.ace_wait = -1
            self.phase = PLAY  # the same seat now plays
            if action.kind == "announce":
                self.announced_by = seat
                self.stats["announces"] += 1
                self._emit("announce", seat=seat, card=CARD_TEXT[self.rules.ace])
            elif action.kind == "silent":
                self.silent_seat = seat
                self.rules = RULES[self.trump][1]
                self.stats["silents"] += 1
                self._emit("silent", to=(seat,), seat=seat, card=CARD_TEXT[self.rules.ace])
            else:
                self._rob(seat, CARD_INDEX[action.arg], at_once=True)
        elif phase == DEALER_ROB:
            if action.kind == "decline":
                self.dealer_declined = True
                self.stats["declines"] += 1
                self._emit("decline", seat=seat, card=CARD_TEXT[self.turn_up])
            else:
                self.stats["dealer_robs"] += 1
                self._rob(seat, CARD_INDEX[action.arg], at_once=self.ace_in_trick_1)
            self._turn(self.trick_leader)
        else:
            self._apply_extra(action)

    def _rob(self, seat: int, discard: int, at_once: bool) -> None:
        bit = 1 << discard
        self.hands[seat] &= ~bit
        self.discards |= bit
        self.rob_discard[seat] = discard
        self.turn_up_on_stock = False
        self.robbed_by = seat
        self.stats["robs"] += 1
        if at_once:
            self.hands[seat] |= 1 << self.turn_up
        else:
            self.pending_ace = self.turn_up
        turn_up = CARD_TEXT[self.turn_up]
        self._emit("rob", seat=seat, card=turn_up, joins="now" if at_once else "after trick 1")
        self._emit("rob_discard", to=(seat,), seat=seat, card=CARD_TEXT[discard])

    def _play(self, seat: int, c: int) -> None:
        bit = 1 << c
        self.hands[seat] &= ~bit
        self.played |= bit
        self.trick_cards.append(c)
        self.trick_seats.append(seat)
        if c == self.rules.ace and self.rules.demoted:
            self.demoted_played = c
            self.stats["demoted_plays"] += 1
            self._emit("play", seat=seat, card=CARD_TEXT[c], demoted=True)
        else:
            self.events.append(PLAY_EVENTS[seat][c])  # _emit("play", seat=…, card=…), interned
        if len(self.trick_cards) < self.n:
            nxt = seat + 1
            self._turn(0 if nxt == self.n else nxt)
            return
        cards = self.trick_cards
        winner = self.trick_seats[self.rules.winner(cards)]
        self.tricks_won[winner] += 1
        view = trick_view(self.trick_leader, cards, self.trick_seats, winner)
        self.finished_tricks.append(view)
        self._emit("trick", number=len(self.finished_tricks), winner=winner, cards=list(view.cards))
        self.trick_cards, self.trick_seats = [], []
        if self.pending_ace >= 0:
            self.hands[self.dealer] |= 1 << self.pending_ace
            self._emit("ace_joins", seat=self.dealer, card=CARD_TEXT[self.pending_ace])
            self.pending_ace = -1
        self._after_trick(winner)

    def _end_deal(self) -> None:
        """The deal is over and scored: the game deals again or ends the match."""
        self.to_move = None
        self.phase = PLAY
        self._next_deal_or_end()

    def _next_dealer(self) -> None:
        self.dealer = (self.dealer + 1) % self.n

    # --- views -----------------------------------------------------------------------------

    def table_view(self, seat: int) -> dict[str, Any]:
        """The observation fields of :class:`SpoilTableObservation` for ``seat``."""
        tricks = tricks_so_far(
            self.finished_tricks, self.trick_leader, self.trick_cards, self.trick_seats
        )
        own_discard = self.rob_discard[seat]
        return {
            "seat": seat,
            "hand": mask_texts(self.hands[seat]),
            "pending_ace": CARD_TEXT[self.pending_ace]
            if self.pending_ace >= 0 and seat == self.dealer
            else "",
            "rob_discard": CARD_TEXT[own_discard] if own_discard >= 0 else "",
            "ace_demoted": self.silent_seat == seat,
            "dealer": self.dealer,
            "trump": SUIT_LETTERS[self.trump],
            "turn_up": CARD_TEXT[self.turn_up],
            "robbed_by": self.robbed_by,
            "dealer_declined": self.dealer_declined,
            "announced_by": self.announced_by,
            "demoted_played": CARD_TEXT[self.demoted_played] if self.demoted_played >= 0 else "",
            "tricks": tricks,
            "tricks_won": tuple(self.tricks_won),
            "deal_number": self.deal_number,
        }

    def _redeal_hidden(self, seat: int, rng: random.Random) -> None:
        # Hidden from ``seat``: the other hands (less a robbed turn-up, and an announced ace of
        # trumps, whose places are public), the stock under the turn-up, and another player's
        # rob discard. Play has shown voids (shown_voids); the ace of trumps, when ``seat``
        # cannot know where it is, is dealt only where the robbing rules allow, and where it
        # lands decides whether its holder is still to choose or chose silence.
        n = self.n
        normal = RULES[self.trump][0]
        ace_bit = 1 << normal.ace
        tricks = deal_tricks(self.finished_tricks, self.trick_cards, self.trick_seats)
        forbidden, failed_trump = shown_voids(n, tricks, normal)
        played = 0
        for _, seats in tricks:
            for s in seats:
                played |= 1 << s
        public = 1 << self.turn_up
        if self.announced_by >= 0:
            public |= ace_bit
        others = [s for s in range(n) if s != seat]
        robber = self.robbed_by
        discard = robber >= 0 and robber != seat
        unseen = self.stock | (self.discards if discard else 0)
        for s in others:
            unseen |= self.hands[s] & ~public
        # Places: each other hand, then the stock, then the hidden discard.
        places = [((self.hands[s] & ~public).bit_count(), forbidden[s]) for s in others]
        places.append((self.stock.bit_count(), 0))
        if discard:
            places.append((1, 0))
        ace_open = bool(unseen & ace_bit)
        if ace_open:
            if robber >= 0:  # the turn-up is no ace: the robber held it, and may have discarded it
                allowed = {others.index(robber), len(places) - 1}
            else:  # in the stock, with a player still to choose, or one silent (unless must_rob)
                allowed = {len(others)}
                for i, s in enumerate(others):
                    if not played >> s & 1 or not (self.must_rob or failed_trump[s]):
                        allowed.add(i)
            places = [
                (size, bits if i in allowed else bits | ace_bit)
                for i, (size, bits) in enumerate(places)
            ]
        dealt = deal_unseen(rng, unseen, places)
        for s, mask in zip(others, dealt, strict=False):
            self.hands[s] = mask | self.hands[s] & public
        self.stock = dealt[len(others)]
        if discard:
            self.discards = dealt[-1]
            self.rob_discard[robber] = dealt[-1].bit_length() - 1
        if ace_open and robber < 0:
            if self.silent_seat >= 0:  # a silence ``seat`` could not see: undone, then redrawn
                self.stats["silents"] -= 1
            self.silent_seat = self.ace_holder = self.ace_wait = -1
            self.rules = normal
            holder = next((s for s in others if self.hands[s] & ace_bit), -1)
            if holder >= 0:
                self.ace_holder = holder
                if played >> holder & 1:
                    self.silent_seat = holder
                    self.rules = RULES[self.trump][1]
                    self.stats["silents"] += 1
                else:
                    self.ace_wait = holder
            if self.phase in (PLAY, ACE_CHOICE):
                self.phase = ACE_CHOICE if self.to_move == self.ace_wait else PLAY

    # --- restore (Game.restore) ------------------------------------------------------------

    def _restore_table(
        self, o: Mapping[str, JSON], events: Sequence[Event], over: bool
    ) -> list[Event]:
        """Set every attribute of this class on a :meth:`bare` state from the
        :class:`SpoilTableObservation` fields of ``o`` (``to_dict()`` form) and the seat's
        ``events``: what the seat sees as shown, every hidden card in some place of the right
        size (``Game.restore`` re-deals them), ``to_move`` and the phase of the deal in progress,
        or no one to move when ``over``. Returns the events of earlier deals, from which the
        statistics (no observation shows them) are counted; the games count their own too."""
        config = self.config
        n = self.n = config.players
        seat = obs_int(o["seat"])
        self.ace_in_trick_1 = bool(config.option("dealer_ace_in_trick_1"))
        self.must_rob = bool(config.option("must_rob"))
        dealer = self.dealer = obs_int(o["dealer"])
        self.deal_number = obs_int(o["deal_number"])
        turn_up = self.turn_up = parse_card(str(o["turn_up"]))
        # Derived, not read: the check in Game.restore then refuses a trump the turn-up denies.
        trump = self.trump = turn_up // 13
        robber = self.robbed_by = obs_int(o["robbed_by"])
        announcer = self.announced_by = obs_int(o["announced_by"])
        self.dealer_declined = bool(o["dealer_declined"])
        demoted = str(o["demoted_played"])
        self.demoted_played = parse_card(demoted) if demoted else -1
        self.tricks_won = obs_ints(o["tricks_won"], n)
        if not all(-1 <= s < n for s in (dealer, robber, announcer)) or dealer < 0:
            raise ValueError(f"a seat outside the table: {dealer}, {robber}, {announcer}")
        views = [trick_from_dict(t) for t in cast(list[Mapping[str, JSON]], o["tricks"])]
        finished = self.finished_tricks = [v for v in views if v.winner >= 0]
        current = views[-1] if views and views[-1].winner < 0 else None
        self.trick_cards = [parse_card(c) for c in current.cards] if current else []
        self.trick_seats = list(current.seats) if current else []
        tricks = deal_tricks(finished, self.trick_cards, self.trick_seats)
        if any(not 0 <= s < n for _, seats in tricks for s in seats):
            raise ValueError(f"a trick played by a seat outside the table: {o['tricks']!r}")
        by_seat = played_by(n, tricks)
        played = self.played = sum(by_seat)
        turn_bit = 1 << turn_up
        ace_turned = turn_up % 13 == ACE
        ace = RULES[trump][0].ace
        ace_bit = 1 << ace
        own = sum(1 << parse_card(str(c)) for c in cast(list[JSON], o["hand"]))

        # Who stayed silent: this seat (it knows), or whoever has played the demoted ace; a
        # silence neither shows is drawn by _redeal_hidden, with the ace's place.
        self.silent_seat = -1
        if o["ace_demoted"]:
            self.silent_seat = seat
        elif self.demoted_played >= 0:
            self.silent_seat = next(
                (s for cs, ss in tricks for c, s in zip(cs, ss, strict=True) if c == ace), -1
            )
            if self.silent_seat < 0 or self.demoted_played != ace:
                raise ValueError(f"the demoted ace {demoted} was never played")
        self.rules = RULES[trump][1 if self.silent_seat >= 0 else 0]

        # The turned-up ace a dealer robbed waits out trick 1 unless the option lets it join.
        waiting = ace_turned and robber == dealer and not self.ace_in_trick_1 and not finished
        self.pending_ace = turn_up if waiting else -1
        self.turn_up_on_stock = robber < 0

        # Cards whose place the seat knows: its hand, the tricks, the turn-up (on the stock,
        # waiting, or in the robber's hand), an announced ace, its own rob discard.
        hands = [0] * n
        hands[seat] = own
        known = own | played | turn_bit
        if robber >= 0 and robber != seat and not waiting and not played & turn_bit:
            hands[robber] |= turn_bit
        if announcer >= 0 and announcer != seat and not played & ace_bit:
            hands[announcer] |= ace_bit
            known |= ace_bit
        self.rob_discard = [-1] * n
        self.discards = 0
        if robber == seat:
            own_discard = parse_card(str(o["rob_discard"]))  # a robber always sees its own
            self.rob_discard[seat] = own_discard
            self.discards = 1 << own_discard
            known |= self.discards
        elif o["rob_discard"]:
            raise ValueError("a rob discard for a seat that did not rob")

        # The rest, in ascending order: the other hands, the stock, another robber's discard.
        loose = [c for c in range(52) if not known >> c & 1]
        at = 0
        for s in range(n):
            size = HAND_SIZE - by_seat[s].bit_count() - (1 if waiting and s == dealer else 0)
            need = size - hands[s].bit_count()
            if need < 0 or (s == seat and need):
                raise ValueError(f"seat {s} would hold {size} cards, not {hands[s].bit_count()}")
            if s != seat:
                hands[s] |= sum(1 << c for c in loose[at : at + need])
                at += need
        stock_size = 52 - HAND_SIZE * n - 1
        self.stock = sum(1 << c for c in loose[at : at + stock_size])
        at += stock_size
        if robber >= 0 and robber != seat:
            self.rob_discard[robber] = loose[at]
            self.discards = 1 << loose[at]
            at += 1
        if at != len(loose):
            raise ValueError(f"{len(loose)} unseen cards for {at} hidden places")
        self.hands = hands
        if self.card_count() != 52:  # the seat's hand holds a card placed elsewhere, or lacks one
            raise ValueError("the cards of this deal do not add up to one pack")

        # The ace of trumps' holder (bookkeeping only) and whether it is still to choose: a
        # hidden holder is drawn by _redeal_hidden.
        self.ace_holder = self.ace_wait = -1
        if not ace_turned:
            mine = own | (self.discards if robber == seat else 0)
            if mine & ace_bit:
                self.ace_holder = seat
            elif announcer >= 0 or robber >= 0:
                self.ace_holder = max(announcer, robber)  # only one of them can be set
            elif played & ace_bit:
                self.ace_holder = next(s for s in range(n) if by_seat[s] & ace_bit)
            decided = seat in (robber, announcer, self.silent_seat) or by_seat[seat]
            if own & ace_bit and not decided:
                self.ace_wait = seat

        self.trick_leader = (dealer + 1) % n
        if over:
            self.to_move = None
            self.phase = PLAY
            if finished:
                self.trick_leader = finished[-1].leader
        elif current is not None:
            self.trick_leader = current.leader
            self._turn((current.seats[-1] + 1) % n)
        elif finished:
            self._lead(finished[-1].winner)
        elif ace_turned and robber < 0 and not self.dealer_declined:
            self.phase = DEALER_ROB
            self.to_move = dealer
        else:
            self._turn(self.trick_leader)

        # Statistics: earlier deals from the events, this one from the observation.
        past = _earlier_deal_events(events, self.deal_number)
        stats = self.stats = dict.fromkeys(
            ("deals", "robs", "dealer_robs", "declines", "announces", "silents", "demoted_plays"),
            0,
        )
        stats["deals"] = self.deal_number
        silent_deal = ace_deal = False
        for e in past:
            kind = e.kind
            if kind == "turn_up":
                ace_deal = parse_card(str(e.data["card"])) % 13 == ACE
                silent_deal = False
            elif kind == "rob":
                stats["robs"] += 1
                stats["dealer_robs"] += ace_deal
            elif kind == "decline":
                stats["declines"] += 1
            elif kind == "announce":
                stats["announces"] += 1
            elif kind == "silent" or (kind == "play" and e.data.get("demoted")):
                stats["demoted_plays"] += kind == "play"
                stats["silents"] += not silent_deal  # the seat's own, or shown by the play
                silent_deal = True
        stats["robs"] += robber >= 0
        stats["dealer_robs"] += robber >= 0 and ace_turned
        stats["declines"] += self.dealer_declined
        stats["announces"] += announcer >= 0
        stats["silents"] += self.silent_seat >= 0
        stats["demoted_plays"] += self.demoted_played >= 0
        return past

    def card_count(self) -> int:
        """Cards accounted for: hands, played, stock, turn-up, pending ace, rob discards.

        Always 52 with no card in two places (a conservation check for tests).
        """
        parts = [*self.hands, self.played, self.stock, self.discards]
        if self.turn_up_on_stock:
            parts.append(1 << self.turn_up)
        if self.pending_ace >= 0:
            parts.append(1 << self.pending_ace)
        union = 0
        for p in parts:
            if union & p:
                return -1
            union |= p
        return union.bit_count()


def obs_int(value: JSON) -> int:
    """An observation's integer field; anything else is no observation these games show."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"not an integer: {value!r}")
    return value


def obs_ints(value: JSON, length: int) -> list[int]:
    """An observation's list of ``length`` integers (one per seat or side)."""
    out = [obs_int(x) for x in cast(list[JSON], value)]
    if len(out) != length:
        raise ValueError(f"{len(out)} values, not {length}: {value!r}")
    return out


def _earlier_deal_events(events: Sequence[Event], deal_number: int) -> list[Event]:
    """The events before deal ``deal_number``'s turn-up; none when that turn-up is not among
    them (then they are a window inside the current deal, which the observation shows)."""
    for i, e in enumerate(events):
        if e.kind == "turn_up" and e.data.get("deal") == deal_number:
            return list(events[:i])
    return []


__all__ = [
    "ACE_OF_HEARTS",
    "ANNOUNCE",
    "CLAIM",
    "COMMON_OPTIONS",
    "DECLINE",
    "ROB_ACTIONS",
    "RULES",
    "SILENT",
    "TABLE_ACTIONS",
    "SpoilRules",
    "SpoilTableObservation",
    "SpoilTableState",
    "card_power",
    "is_trump",
    "legal_play_mask",
    "trick_winner",
]
