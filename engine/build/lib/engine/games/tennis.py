"""Tennis, the card game (``tennis``), singles and doubles, as ../shared/rules/tennis.md.

Players are numbered in serving order. Singles: P1 = 0, P2 = 1. Doubles: A1 = 0, B1 = 1,
A2 = 2, B2 = 3, so a player's side (team) is ``player % 2`` and the partner is ``player ^ 2``;
A1 and B1 play Right (they alone may hit shot cards from their team's RF), A2 and B2 play Left.

Seats: singles, the two players; doubles with ``control=team`` (default), one seat per team
(0 = A, 1 = B) that sees and plays both hands; with ``control=players``, one seat per player,
each seeing its partner's hand. Decisions, action texts and their canonical order are described
in docs/rules/tennis.md.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import compress
from typing import Final, cast

from engine._fast import quick_init
from engine.core import (
    JSON,
    Action,
    Event,
    Game,
    Holding,
    MatchConfig,
    MatchState,
    Observation,
    Presentation,
    Result,
    ScoreRow,
    number_actions,
    ranks_from_scores,
)
from engine.deal import shuffle
from engine.games.tennis_cards import (
    ACE,
    AREAS,
    DOUBLES_HAND,
    FAULT,
    IN,
    IS_FORE,
    KILL,
    LF,
    NUM_SHOT_TYPES,
    NUM_TYPES,
    OUT,
    PLAY_DECK_COUNTS,
    POINT_NAMES,
    POINTS_FOR_GAME,
    RB,
    RF,
    SERVE_DECK_COUNTS,
    SERVE_TEXT,
    SET_GAME_CAP,
    SET_GAMES,
    SET_MARGIN,
    SHOT_DEST,
    SHOTS_FROM,
    SINGLES_HAND,
    SMASH,
    TYPE_INDEX,
    TYPE_TEXT,
    counts_of,
    hand_texts,
)
from engine.options import OptionSpec

#: Events that recur (serves, points, passes, discards), interned as whist interns its plays
#: (tricks.PLAY_EVENTS): one Event per distinct content, shared by every match's log, since
#: events are immutable facts. Keyed by the content itself (names, seats, cards, scores), never
#: by what it is derived from: a few hundred at most.
_INTERNED: dict[tuple[object, ...], Event] = {}

SINGLES_NAMES: Final = ("P1", "P2")
DOUBLES_NAMES: Final = ("A1", "B1", "A2", "B2")
TEAM_NAMES: Final = ("A", "B")
#: The fore-court box each doubles player covers: A1, B1 Right (RF); A2, B2 Left (LF).
DOUBLES_BOX: Final = (RF, RF, LF, LF)
#: How many recent visible events an observation carries.
RECENT_EVENTS: Final = 12

# Phases.
RALLY: Final = 0
EXCHANGE: Final = 1
OVER: Final = 2
PHASE_NAMES: Final = ("rally", "exchange", "over")

# Action codes (first item of ACTION_INFO values).
C_PASS: Final = 0
C_SHOT: Final = 1
C_SMASH: Final = 2
C_KILL: Final = 3
C_OUT: Final = 4
C_LEAVE: Final = 5
C_GIVE: Final = 6
C_DONE: Final = 7

# Statistics counters, in Result.stats order.
STAT_NAMES: Final = (
    "points",
    "server_points",
    "aces",
    "double_faults",
    "in_serves",
    "returns",
    "answerable_serves",
    "opening_serves",
    "opening_answerable",
    "opening_returns",
    "games",
    "shots",
    "smashes",
    "kills",
)
(
    ST_POINTS,
    ST_SERVER_POINTS,
    ST_ACES,
    ST_DOUBLE_FAULTS,
    ST_IN_SERVES,
    ST_RETURNS,
    ST_ANSWERABLE,
    ST_OPENING,
    ST_OPENING_ANSWERABLE,
    ST_OPENING_RETURNS,
    ST_GAMES,
    ST_SHOTS,
    ST_SMASHES,
    ST_KILLS,
) = range(len(STAT_NAMES))

# --- interned actions -----------------------------------------------------------------------------

#: Concede the point without discarding (always legal in a rally, first in canonical order).
PASS: Final = Action("pass")
#: Doubles exchange: the team's first giver stops giving.
DONE: Final = Action("done")
#: Doubles, control=players: leave the ball to the partner.
LEAVE: Final = Action("leave")
#: Singles actions.
SHOT_ACTIONS: Final = tuple(Action("shot", TYPE_TEXT[t]) for t in range(NUM_SHOT_TYPES))
SMASH_ACTION: Final = Action("smash")
KILL_ACTION: Final = Action("kill")
OUT_ACTION: Final = Action("out")
PASS_DISCARD: Final = tuple(Action("pass", TYPE_TEXT[t]) for t in range(NUM_TYPES))
#: Doubles actions name the player whose card is used: ``shot:A1:RF-LB``, ``kill:B2`` …
D_SHOT: Final = tuple(
    tuple(Action("shot", f"{n}:{TYPE_TEXT[t]}") for t in range(NUM_SHOT_TYPES))
    for n in DOUBLES_NAMES
)
D_SMASH: Final = tuple(Action("smash", n) for n in DOUBLES_NAMES)
D_KILL: Final = tuple(Action("kill", n) for n in DOUBLES_NAMES)
D_OUT: Final = tuple(Action("out", n) for n in DOUBLES_NAMES)
D_PASS_DISCARD: Final = tuple(
    tuple(Action("pass", f"{n}:{TYPE_TEXT[t]}") for t in range(NUM_TYPES)) for n in DOUBLES_NAMES
)
D_GIVE: Final = tuple(
    tuple(Action("give", f"{n}:{TYPE_TEXT[t]}") for t in range(NUM_TYPES)) for n in DOUBLES_NAMES
)


def _action_info() -> dict[Action, tuple[int, int, int]]:
    # (code, player or -1 for "the player to act", card type or -1).
    info: dict[Action, tuple[int, int, int]] = {
        PASS: (C_PASS, -1, -1),
        DONE: (C_DONE, -1, -1),
        LEAVE: (C_LEAVE, -1, -1),
        SMASH_ACTION: (C_SMASH, -1, SMASH),
        KILL_ACTION: (C_KILL, -1, KILL),
        OUT_ACTION: (C_OUT, -1, OUT),
    }
    for t in range(NUM_SHOT_TYPES):
        info[SHOT_ACTIONS[t]] = (C_SHOT, -1, t)
    for t in range(NUM_TYPES):
        info[PASS_DISCARD[t]] = (C_PASS, -1, t)
    for p in range(4):
        info[D_SMASH[p]] = (C_SMASH, p, SMASH)
        info[D_KILL[p]] = (C_KILL, p, KILL)
        info[D_OUT[p]] = (C_OUT, p, OUT)
        for t in range(NUM_SHOT_TYPES):
            info[D_SHOT[p][t]] = (C_SHOT, p, t)
        for t in range(NUM_TYPES):
            info[D_PASS_DISCARD[p][t]] = (C_PASS, p, t)
            info[D_GIVE[p][t]] = (C_GIVE, p, t)
    return info


#: What each action means: (code, player or -1, card type or -1). Read-only after import.
ACTION_INFO: Final = _action_info()

#: The action spaces. Pass is 0 in all three (it is shared); doubles with control=players adds
#: leave at the end, so the team space is its prefix and no action needs two numbers.
SINGLES_SPACE: Final = number_actions(
    (PASS,), SHOT_ACTIONS, (SMASH_ACTION, KILL_ACTION, OUT_ACTION), PASS_DISCARD
)
TEAM_SPACE: Final = number_actions(
    (PASS, DONE), *D_SHOT, D_SMASH, D_KILL, D_OUT, *D_PASS_DISCARD, *D_GIVE
)
PLAYERS_SPACE: Final = number_actions(TEAM_SPACE, (LEAVE,))


# --- observation ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TennisPlayerView:
    """One player as a seat sees it."""

    #: Player name: ``P1``/``P2`` in singles; ``A1``, ``B1``, ``A2``, ``B2`` in doubles.
    name: str
    #: The player's side: 0 (P1, team A) or 1 (P2, team B).
    side: int
    #: Doubles court role, ``R`` (covers RF) or ``L`` (covers LF); ``""`` in singles.
    role: str
    #: Cards held (public).
    hand_size: int
    #: The cards, canonical order, when this seat may see them; else empty.
    hand: tuple[str, ...]
    #: Whether ``hand`` is shown to this seat.
    visible: bool


@quick_init
@dataclass(frozen=True, slots=True)
class TennisObservation(Observation):
    """What one tennis seat knows."""

    #: ``singles``, ``doubles-team`` (one seat per team) or ``doubles-players``.
    mode: str
    #: The seat's side: 0 (P1, team A) or 1 (P2, team B).
    side: int
    #: Indices into ``players`` of the players this seat decides for.
    controls: tuple[int, ...]
    #: ``rally`` (answering the ball), ``exchange`` (doubles card exchange) or ``over``.
    phase: str
    #: Who must decide now: a player name, or the team name in doubles team mode; ``""`` at the end.
    acting: str
    #: Every player, in player order (serving order in doubles: A1, B1, A2, B2).
    players: tuple[TennisPlayerView, ...]
    #: The ball's area (``RF``, ``LF``, ``RB``, ``LB``) or ``""`` (no ball, or a Smash pending).
    ball_area: str
    #: The side whose court the ball is in (who must answer), or -1 outside a rally.
    ball_side: int
    #: Whether a Smash was just played: only a Kill answers it (or concede with Out or pass).
    smash_pending: bool
    #: Whether the ball is the In serve itself (nothing played on it yet).
    serve_ball: bool
    #: Doubles, control=players: the partner who left this ball to the player acting, or ``""``.
    left_by: str
    #: Doubles exchange: cards the first giver has passed so far (the partner returns as many).
    exchange_given: int
    #: Doubles exchange: 0 while the team's first player gives, 1 while the partner gives back.
    exchange_stage: int
    #: Points in the current game per side (0..3 = 0, 15, 30, 40).
    points: tuple[int, int]
    #: Games in the current set per side.
    games: tuple[int, int]
    #: Sets won per side.
    sets: tuple[int, int]
    #: Finished sets' scores, side 0 first: ``6-4``; a trailing ``*`` marks a set decided on
    #: points at the safety cap (60 games).
    set_scores: tuple[str, ...]
    #: Sets needed to win the match.
    sets_to_win: int
    #: Game number in the match, from 1.
    game_number: int
    #: Point number in the current game, from 1 (0 before the first serve).
    point_number: int
    #: The serving player's index (into ``players``).
    server: int
    #: Where the current (or next) point is served from: ``right`` or ``left``.
    serve_from: str
    #: Cards left in the Serve Deck.
    serve_deck_size: int
    #: The turned serve cards in the public pile: (Aces, Faults, Ins).
    serve_pile: tuple[int, int, int]
    #: Play Deck cards in the stock.
    stock_size: int
    #: Cards in the discard pile (played face up and pass discards).
    discard_size: int
    #: Face-up cards in the discard pile per card type (canonical order); pass discards excluded.
    discards_seen: tuple[int, ...]
    #: The latest events this seat may see, oldest first, as ``kind key=value …`` lines.
    recent: tuple[str, ...]

    def render(self) -> str:
        names = [p.name for p in self.players]
        sides = TEAM_NAMES if self.mode != "singles" else SINGLES_NAMES
        pts = (
            f"{POINT_NAMES[min(self.points[0], 3)]}-{POINT_NAMES[min(self.points[1], 3)]}"
            if self.phase != "over"
            else "-"
        )
        lines = [
            f"You are {sides[self.side]} ({self.mode}); {self.phase}, acting: {self.acting or '-'}",
            f"Score {sides[0]}-{sides[1]}: sets {self.sets[0]}-{self.sets[1]} "
            f"{' '.join(self.set_scores)} games {self.games[0]}-{self.games[1]} points {pts}",
            f"Server {names[self.server]} from the {self.serve_from}; serve deck "
            f"{self.serve_deck_size}, stock {self.stock_size}, discards {self.discard_size}",
        ]
        for p in self.players:
            role = f" ({p.role})" if p.role else ""
            cards = " ".join(p.hand) if p.visible else "?"
            lines.append(f"{p.name}{role}: {p.hand_size} cards {cards}")
        if self.smash_pending:
            lines.append(f"Smash pending against {sides[self.ball_side]}: Kill or concede")
        elif self.ball_area:
            lines.append(f"Ball in {sides[self.ball_side]}'s {self.ball_area}")
        lines.extend(f"  {line}" for line in self.recent[-4:])
        return "\n".join(lines)


def event_text(event: Event) -> str:
    """A compact one-line form of an event: ``kind key=value …`` (lists comma-joined)."""
    parts = [event.kind]
    for key, value in event.data.items():
        if isinstance(value, list | tuple):
            value = ",".join(str(v) for v in value)
        parts.append(f"{key}={value}")
    return " ".join(parts)


# --- presentation: what a viewer shows -----------------------------------------------------------


def _items(value: JSON) -> list[JSON]:
    return list(value) if isinstance(value, list | tuple) else []


def _players(public: Mapping[str, JSON]) -> list[Mapping[str, JSON]]:
    return [p for p in _items(public.get("players")) if isinstance(p, Mapping)]


def said_points(public: Mapping[str, JSON]) -> list[str]:
    """Each side's points in the current game as said on court (0, 15, 30, 40; the rules have no
    deuce: at 40-40 the next point wins); ``–`` once the match is over."""
    over = public.get("phase") == PHASE_NAMES[OVER]
    points = _items(public.get("points")) or [0, 0]
    return [
        "–" if over else POINT_NAMES[min(p, 3)] if isinstance(p, int) else str(p) for p in points
    ]


def court_sketch(public: Mapping[str, JSON]) -> str:
    """An ASCII court, side 0 at the bottom, the ball marked ``(o)``.

    Areas are named from each side's player facing the net, so the far side's right is on the
    left of the drawing: an In serve from the right crosses diagonally, as in the rules.
    """
    players = _players(public)

    def side_label(side: int) -> str:
        who = [str(p.get("name")) for p in players if p.get("side") == side]
        return " + ".join(who) or f"side {side}"

    ball_side = public.get("ball_side", -1)
    ball_area = public.get("ball_area", "")

    def cell(side: int, area: str) -> str:
        mark = "(o)" if side == ball_side and area == ball_area else "   "
        return f"  {area} {mark} "

    rf, lf, rb, lb = AREAS
    rule = "+" + "-" * 9 + "+" + "-" * 9 + "+"
    lines = [
        f"court ({side_label(1)} at the top):",
        rule,
        f"|{cell(1, rb)}|{cell(1, lb)}|",
        rule,
        f"|{cell(1, rf)}|{cell(1, lf)}|",
        "=" * len(rule) + " net",
        f"|{cell(0, lf)}|{cell(0, rf)}|",
        rule,
        f"|{cell(0, lb)}|{cell(0, rb)}|",
        rule,
        f"({side_label(0)} at the bottom)",
    ]
    if public.get("smash_pending") and isinstance(ball_side, int) and 0 <= ball_side <= 1:
        lines.append(f"Smash pending against {side_label(ball_side)}: only a Kill answers it")
    elif not ball_area:
        lines.append("no ball in play")
    elif public.get("serve_ball"):
        lines.append("the ball is the In serve")
    return "\n".join(lines)


def present_tennis(config: MatchConfig, public: Mapping[str, JSON]) -> Presentation:
    """The scoreboard as said on court, the players as everyone sees them (hand sizes, not
    hands), the face-up discards by card name, and the court as text."""
    sides = SINGLES_NAMES if config.players == 2 else TEAM_NAMES
    score: dict[str, JSON] = {
        "points": said_points(public),
        "games": _items(public.get("games")) or [0, 0],
        "sets": _items(public.get("sets")) or [0, 0],
        "set_scores": _items(public.get("set_scores")),
    }

    def row(label: str, values: list[JSON]) -> ScoreRow:
        return ScoreRow(label, tuple((w, str(v)) for w, v in zip(sides, values, strict=False)))

    rows = (
        row("Points", _items(score["points"])),
        row("Games (this set)", _items(score["games"])),
        row("Sets", _items(score["sets"])),
    )
    facts = (
        ("Finished sets", " ".join(str(s) for s in _items(score["set_scores"])) or "none yet"),
        ("Sets to win", str(public.get("sets_to_win"))),
        ("Game", f"{public.get('game_number')}, point {public.get('point_number')}"),
    )
    seen = _items(public.get("discards_seen"))
    drawing: dict[str, JSON] = {
        "sides": list(sides),
        "score": score,
        "players": [
            {key: p.get(key) for key in ("name", "side", "role", "hand_size")}
            for p in _players(public)
        ],
        # Counts are in canonical card order; the viewer gets the cards' names.
        "discards_seen": [
            {"card": t, "count": n} for t, n in zip(TYPE_TEXT, seen, strict=False) if n
        ],
    }
    return Presentation(rows, facts, drawing={"tennis": drawing}, sketch=court_sketch(public))


def tennis_holdings(views: Sequence[Mapping[str, JSON]]) -> tuple[Holding, ...]:
    """Each player's hand, from a seat allowed to see it (in doubles, a team's seat sees both
    partners' hands), with the seats that see it."""
    rows = []
    for p, player in enumerate(_players(views[0])):
        shown = [_players(v)[p] if p < len(_players(v)) else {} for v in views]
        seen_by = tuple(s for s, seat_view in enumerate(shown) if seat_view.get("visible"))
        hand = _items(shown[seen_by[0]].get("hand")) if seen_by else []
        role = f" ({player['role']})" if player.get("role") else ""
        rows.append(Holding(f"{player.get('name', p)}{role}", tuple(str(c) for c in hand), seen_by))
    return tuple(rows)


# --- the game -------------------------------------------------------------------------------------


class Tennis(Game):
    """The tennis card game referee (singles with 2 players, doubles with 4)."""

    id = "tennis"
    version = "1.0"
    title = "Tennis (card game)"
    player_counts = (2, 4)
    default_players = 2
    presentation_kind = "tennis_court"
    # ``recent`` repeats the events as text lines (and would double a doubles match's document).
    undrawn_fields = ("recent",)
    options = (
        OptionSpec("sets_to_win", "int", 1, "sets that win the match (2 = best of three)", 1, 3),
        OptionSpec(
            "control",
            "choice",
            "team",
            "doubles: 'team' = one seat per team seeing both hands, 'players' = four seats",
            choices=("team", "players"),
        ),
    )

    def num_seats(self, config: MatchConfig) -> int:
        return 4 if config.players == 4 and config.option("control") == "players" else 2

    def seat_names(self, config: MatchConfig) -> tuple[str, ...]:
        if config.players == 2:
            return SINGLES_NAMES
        return DOUBLES_NAMES if self.num_seats(config) == 4 else TEAM_NAMES

    def sides(self, config: MatchConfig) -> tuple[tuple[int, ...], ...] | None:
        return ((0, 2), (1, 3)) if self.num_seats(config) == 4 else None

    def action_space(self, config: MatchConfig) -> tuple[Action, ...]:
        if config.players == 2:
            return SINGLES_SPACE
        return PLAYERS_SPACE if self.num_seats(config) == 4 else TEAM_SPACE

    def summarize_stats(self, totals: Mapping[str, int], matches: int) -> dict[str, float]:
        def rate(num: str, den: str) -> float:
            d = totals.get(den, 0)
            return totals.get(num, 0) / d if d else 0.0

        return {
            "server_point_win_rate": rate("server_points", "points"),
            "ace_rate": rate("aces", "points"),
            "double_fault_rate": rate("double_faults", "points"),
            "return_rate": rate("returns", "in_serves"),
            "answerable_rate": rate("answerable_serves", "in_serves"),
            "opening_answerable_rate": rate("opening_answerable", "opening_serves"),
            "opening_return_rate": rate("opening_returns", "opening_serves"),
            "shots_per_point": rate("shots", "points"),
            "points_per_match": totals.get("points", 0) / matches if matches else 0.0,
        }

    def present(self, config: MatchConfig, public: Mapping[str, JSON]) -> Presentation:
        return present_tennis(config, public)

    def holdings(
        self, config: MatchConfig, views: Sequence[Mapping[str, JSON]]
    ) -> tuple[Holding, ...]:
        return tennis_holdings(views)

    def new_match(self, config: MatchConfig, seed: int) -> TennisState:
        return TennisState(self, config, seed)

    # ``recent`` comes from the events given, so a restore from fewer than all the seat's events
    # (or none) cannot reproduce it; with all of them it is exact.
    restore_unchecked = frozenset({"recent"})

    def _restore(
        self,
        config: MatchConfig,
        observation: Mapping[str, JSON],
        events: Sequence[Event],
        rng: random.Random,
    ) -> TennisState:
        o = observation
        seat = _int(o["seat"])
        state = TennisState.bare(self, config, rng)
        state._set_table()
        n = state.n
        views = cast(list[Mapping[str, JSON]], o["players"])
        if len(views) != n:
            raise ValueError(f"{len(views)} players shown, not {n}")
        state.sizes = [_int(v["hand_size"]) for v in views]
        state.points = _ints(o["points"])
        state.games = _ints(o["games"])
        state.sets = _ints(o["sets"])
        state.set_scores = [str(x) for x in cast(list[JSON], o["set_scores"])]
        state.game_number = _int(o["game_number"])
        state.point_number = _int(o["point_number"])
        state.server = _int(o["server"])
        state.serve_right = o["serve_from"] == "right"
        state.serve_pile = _ints(o["serve_pile"])
        state.seen = _ints(o["discards_seen"])

        # Who decides: ``acting`` names the team (team control) or the player.
        phase = PHASE_NAMES.index(str(o["phase"]))
        state.phase = phase
        who = TEAM_NAMES if state.team_control else state.names
        acting = str(o["acting"])
        state.answering = 0  # outside a rally nothing reads these until the next serve sets them
        state.ball = -1
        state.smash = False
        state.actor = 0
        state.left = False
        state.at_serve = False
        state.exch_side = 0
        state.exch_stage = 0
        state.exch_given = 0
        if phase == RALLY:
            state.answering = _int(o["ball_side"])
            area = str(o["ball_area"])
            state.ball = AREAS.index(area) if area else -1
            state.smash = bool(o["smash_pending"])
            state.at_serve = bool(o["serve_ball"])
            state.left = bool(o["left_by"])
            state.actor = who.index(acting)
            state.to_move = state.seat_of[state.actor]
        elif phase == EXCHANGE:
            state.exch_side = who.index(acting) % 2
            state.exch_stage = _int(o["exchange_stage"])
            state.exch_given = _int(o["exchange_given"])
            state.to_move = state.seat_of[state.exch_side + 2 * state.exch_stage]
        else:
            state.to_move = None

        # The Serve Deck holds every serve card not in the public pile; its order is redealt.
        deck = [SERVE_DECK_COUNTS[c] - state.serve_pile[c] for c in range(3)]
        if min(deck) < 0 or sum(deck) != _int(o["serve_deck_size"]):
            raise ValueError("the serve deck and pile do not make up the Serve Deck")
        state.serve_deck = [c for c in range(3) for _ in range(deck[c])]

        # Play Deck cards: the hands the seat sees, the face-up discards and its side's face-down
        # discards are known; the rest (other hands, the stock, other face-down discards) are
        # dealt here in any arrangement of the right sizes, for _redeal_hidden to redeal.
        known = known_discards(events)
        unseen = [PLAY_DECK_COUNTS[t] - state.seen[t] - known[t] for t in range(NUM_TYPES)]
        hands = [[0] * NUM_TYPES for _ in range(n)]
        hidden_players = []
        for p, view in enumerate(views):
            if seat in state.hand_seats[p]:
                hands[p] = counts_of([str(c) for c in cast(list[JSON], view["hand"])])
                unseen = [u - h for u, h in zip(unseen, hands[p], strict=True)]
            else:
                hidden_players.append(p)
        stock_size = _int(o["stock_size"])
        face_down = _int(o["discard_size"]) - sum(state.seen) - sum(known)
        places = sum(state.sizes[p] for p in hidden_players) + stock_size + face_down
        if min(unseen) < 0 or face_down < 0 or sum(unseen) != places:
            raise ValueError("the cards shown do not fit in the Play Deck")
        pool = [t for t in range(NUM_TYPES) for _ in range(unseen[t])]
        for p in hidden_players:
            for t in pool[: state.sizes[p]]:
                hands[p][t] += 1
            del pool[: state.sizes[p]]
        state.hands = hands
        state.stock = pool[:stock_size]
        state.hidden = known
        for t in pool[stock_size:]:
            state.hidden[t] += 1
        _restore_history(state, seat, events)
        return state


class TennisState(MatchState):
    """A tennis match in progress.

    Hands are lists of 19 counts per card type; the stock is a list of card types whose end is
    the top; the discard pile is kept as counts, face-up (``seen``) and face-down (``hidden``).
    """

    #: Lists of counts, card types and texts (not ``hands``, lists of lists): copied flat.
    _flat_lists = MatchState._flat_lists | {
        "sizes",
        "stock",
        "seen",
        "hidden",
        "serve_deck",
        "serve_pile",
        "points",
        "games",
        "sets",
        "set_points",
        "set_scores",
        "st",
    }

    def __init__(self, game: Game, config: MatchConfig, seed: int) -> None:
        super().__init__(game, config, seed)
        self._set_table()
        n = self.n
        self.hands = [[0] * NUM_TYPES for _ in range(n)]
        self.sizes = [0] * n
        self.stock = [t for t in range(NUM_TYPES) for _ in range(PLAY_DECK_COUNTS[t])]
        self.seen = [0] * NUM_TYPES
        self.hidden = [0] * NUM_TYPES
        self.serve_deck = [c for c in range(3) for _ in range(SERVE_DECK_COUNTS[c])]
        self.serve_pile = [0, 0, 0]
        self.points = [0, 0]
        self.games = [0, 0]
        self.sets = [0, 0]
        self.set_points = [0, 0]
        self.set_scores: list[str] = []
        self.game_number = 0
        self.point_number = 0
        self.serve_right = True
        self.server = 0
        self.phase = RALLY
        self.answering = 0  # side that must answer the ball
        self.ball = -1
        self.smash = False
        self.actor = 0  # player deciding (singles, control=players; team mode: the side)
        self.left = False
        self.at_serve = False
        self.opened = False  # an In serve was already turned in this game
        self.opening_ball = False  # the ball in play came from the game's first In serve
        self.exch_side = 0
        self.exch_stage = 0
        self.exch_given = 0
        self.st = [0] * len(STAT_NAMES)
        self._draw_first_server()
        self.rng.shuffle(self.stock)
        self._emit("play_shuffle", stock=len(self.stock), why="start")
        if self._new_game():
            self._play_on()

    def _set_table(self) -> None:
        """The attributes that follow from the configuration alone (shared with restore)."""
        config = self.config
        n = config.players
        self.n = n
        self.doubles = n == 4
        self.team_control = self.doubles and self.num_seats == 2
        self.sets_to_win = config.int_option("sets_to_win")
        self.hand_limit = DOUBLES_HAND if self.doubles else SINGLES_HAND
        self.names = DOUBLES_NAMES if self.doubles else SINGLES_NAMES
        self.side_names = TEAM_NAMES if self.doubles else SINGLES_NAMES
        # Seat deciding for each player, and the seats that may see each player's hand.
        if self.team_control:
            self.seat_of: tuple[int, ...] = (0, 1, 0, 1)
            self.hand_seats: tuple[tuple[int, ...], ...] = ((0,), (1,), (0,), (1,))
        elif self.doubles:
            self.seat_of = (0, 1, 2, 3)
            self.hand_seats = ((0, 2), (1, 3), (0, 2), (1, 3))
        else:
            self.seat_of = (0, 1)
            self.hand_seats = ((0,), (1,))

    # --- setup and chance -------------------------------------------------------------------------

    def _draw_first_server(self) -> None:
        """Deal the Serve Deck face up alternately (to teams in doubles): the first Ace serves."""
        deck = self.serve_deck
        self.rng.shuffle(deck)
        first = self.rng.randrange(2)
        shown: list[JSON] = []
        side = first
        for i in range(len(deck)):
            side = (first + i) % 2
            card = deck[-1 - i]
            shown.append(SERVE_TEXT[card])
            if card == ACE:
                break
        self.server = side  # singles: that player; doubles: the team's first player (A1 or B1)
        self._emit(
            "first_server_draw",
            first=self.side_names[first],
            cards=shown,
            server=self.names[self.server],
        )
        self.rng.shuffle(deck)
        self._emit("serve_shuffle", serve_deck=len(deck), why="start")

    def _turn_serve(self, turn: int) -> int:
        card = self.serve_deck.pop()
        self.serve_pile[card] += 1
        server = self.names[self.server]
        key = ("serve", server, self.serve_right, turn, card)
        event = _INTERNED.get(key)
        if event is None:
            event = _INTERNED[key] = Event(
                "serve",
                {
                    "server": server,
                    "side": "right" if self.serve_right else "left",
                    "turn": turn,
                    "card": SERVE_TEXT[card],
                },
            )
        self.events.append(event)
        if len(self.serve_deck) == 1:  # the used cards go, shuffled, under the last one
            pile = [c for c in range(3) for _ in range(self.serve_pile[c])]
            self.rng.shuffle(pile)
            self.serve_deck[:0] = pile
            self.serve_pile = [0, 0, 0]
            self._emit("serve_shuffle", serve_deck=len(self.serve_deck), why="one card left")
        return card

    def _reshuffle_play(self, why: str) -> None:
        cards = self.stock
        for t in range(NUM_TYPES):
            k = self.seen[t] + self.hidden[t]
            if k:
                cards.extend([t] * k)
        self.seen = [0] * NUM_TYPES
        self.hidden = [0] * NUM_TYPES
        self.rng.shuffle(cards)
        self._emit("play_shuffle", stock=len(cards), why=why)

    def _refill(self) -> None:
        """Fill every hand to the limit, one card at a time, starting after the server."""
        n, limit = self.n, self.hand_limit
        need = [limit - s for s in self.sizes]
        total = sum(need)
        if total > len(self.stock):
            self._reshuffle_play("stock too small")
        dealt: list[list[JSON]] = [[] for _ in range(n)]
        order = [(self.server + 1 + i) % n for i in range(n)]
        stock, hands = self.stock, self.hands
        while total:
            for p in order:
                if need[p]:
                    t = stock.pop()
                    hands[p][t] += 1
                    dealt[p].append(TYPE_TEXT[t])
                    need[p] -= 1
                    total -= 1
        for p in order:
            self.sizes[p] = limit
            if dealt[p]:
                self._emit(
                    "deal",
                    to=self.hand_seats[p],
                    player=self.names[p],
                    cards=sorted_cards(dealt[p]),
                )
        self._emit(
            "refill",
            cards=[len(d) for d in dealt],
            stock=len(stock),
            order=[self.names[p] for p in order],
        )

    # --- flow -------------------------------------------------------------------------------------

    def _new_game(self) -> bool:
        """Start a game (``self.server`` serves); True when serving can start at once."""
        self.game_number += 1
        self.point_number = 0
        self.serve_right = True
        self.points = [0, 0]
        self.opened = False
        self.phase = RALLY
        self.ball = -1
        self.smash = False
        if self.doubles and self.game_number > 1 and self.game_number % 2 == 1:
            self._reshuffle_play("every second game")
        self._refill()
        self._emit(
            "game_start",
            game=self.game_number,
            set=len(self.set_scores) + 1,
            server=self.names[self.server],
        )
        if self.doubles:
            self._begin_exchange(self.server % 2)
            return False
        return True

    def _play_on(self) -> None:
        """Serve points (chance) until a seat must decide or the match is over."""
        while True:
            winner, how = self._serve()
            if winner < 0 or not self._award(winner, how):
                return

    def _serve(self) -> tuple[int, str]:
        """Turn serve cards; the point's winner side and how, or (-1, "") for a ball in play."""
        self.point_number += 1
        self.serve_right = self.point_number % 2 == 1
        side = self.server % 2
        card = self._turn_serve(1)
        if card == FAULT:
            card = self._turn_serve(2)
            if card == FAULT:
                self.st[ST_DOUBLE_FAULTS] += 1
                return 1 - side, "double_fault"
        if card == ACE:
            self.st[ST_ACES] += 1
            return side, "ace"
        st = self.st
        st[ST_IN_SERVES] += 1
        self.ball = RF if self.serve_right else LF
        self.smash = False
        self.at_serve = True
        receiver = 1 - side
        answerable = self._can_answer(receiver)
        st[ST_ANSWERABLE] += answerable
        self.opening_ball = not self.opened
        if not self.opened:
            self.opened = True
            st[ST_OPENING] += 1
            st[ST_OPENING_ANSWERABLE] += answerable
        self._to_answer(receiver)
        return -1, ""

    def _to_answer(self, side: int) -> None:
        """Hand the ball to ``side``: whoever decides for it now."""
        self.answering = side
        self.left = False
        if not self.doubles or self.team_control or self.smash or self.ball in (RF, RB):
            self.actor = side  # in doubles the Right player covers RF, RB and Smashes
        else:
            self.actor = side + 2
        self.to_move = self.seat_of[self.actor]

    def _can_answer(self, side: int) -> bool:
        """Whether ``side`` holds a card that may answer the ball (shot, Smash or Kill)."""
        shots = SHOTS_FROM[self.ball]
        players = (side, side + 2) if self.doubles else (side,)
        for p in players:
            h = self.hands[p]
            if h[SMASH] or h[KILL]:
                return True
            if self.doubles and IS_FORE[self.ball] and DOUBLES_BOX[p] != self.ball:
                continue
            if h[shots[0]] or h[shots[1]] or h[shots[2]] or h[shots[3]]:
                return True
        return False

    def _award(self, side: int, how: str) -> bool:
        """Score a point for ``side``; True when the next point is to be served at once."""
        self.ball = -1
        self.smash = False
        self.at_serve = False
        st = self.st
        st[ST_POINTS] += 1
        if side == self.server % 2:
            st[ST_SERVER_POINTS] += 1
        self.points[side] += 1
        self.set_points[side] += 1
        points, winner = self.points, self.side_names[side]
        key = ("point", winner, how, points[0], points[1])
        event = _INTERNED.get(key)
        if event is None:
            data: dict[str, JSON] = {"winner": winner, "how": how, "points": [*points]}
            event = _INTERNED[key] = Event("point", data)
        self.events.append(event)
        if self.points[side] < POINTS_FOR_GAME:  # first to 4: at 40-40 the next point wins
            return True
        st[ST_GAMES] += 1
        self.games[side] += 1
        self._emit(
            "game", winner=self.side_names[side], game=self.game_number, games=list(self.games)
        )
        g, o = self.games[side], self.games[1 - side]
        if g >= SET_GAMES and g - o >= SET_MARGIN:
            if self._end_set(side, capped=False):
                return False
        elif g + o >= SET_GAME_CAP:
            sp = self.set_points
            if sp[0] == sp[1]:  # cannot be decided: the match ends here
                self.set_scores.append(f"{self.games[0]}-{self.games[1]}*")
                self._emit("set", winner="", games=list(self.games), capped=True, drawn=True)
                self._finish()
                return False
            if self._end_set(0 if sp[0] > sp[1] else 1, capped=True):
                return False
        self.server = (self.server + 1) % self.n  # singles: the other player; doubles: A1 B1 A2 B2
        return self._new_game()

    def _end_set(self, side: int, capped: bool) -> bool:
        """Record a set won by ``side``; True when that ends the match."""
        self.sets[side] += 1
        self.set_scores.append(f"{self.games[0]}-{self.games[1]}{'*' if capped else ''}")
        self._emit(
            "set",
            winner=self.side_names[side],
            games=list(self.games),
            sets=list(self.sets),
            capped=capped,
        )
        self.games = [0, 0]
        self.set_points = [0, 0]
        if self.sets[side] >= self.sets_to_win:
            self._finish()
            return True
        return False

    def _finish(self) -> None:
        self.phase = OVER
        self.to_move = None
        self._emit("match", sets=list(self.sets), set_scores=list(self.set_scores))

    # --- doubles exchange -------------------------------------------------------------------------

    def _begin_exchange(self, side: int) -> None:
        self.phase = EXCHANGE
        self.exch_side = side
        self.exch_stage = 0
        self.exch_given = 0
        self.to_move = self.seat_of[side]

    def _end_exchange(self, moved: int) -> None:
        """Close a team's exchange (``moved`` cards went each way) and go on."""
        side = self.exch_side
        self._emit("exchange", team=TEAM_NAMES[side], cards_each_way=moved)
        if side == self.server % 2:  # the serving team first, then the receivers
            self._begin_exchange(1 - side)
            return
        self.phase = RALLY
        self._play_on()

    def _apply_exchange(self, code: int, p: int, t: int) -> None:
        side = self.exch_side
        if code == C_GIVE:
            q = p ^ 2
            self.hands[p][t] -= 1
            self.sizes[p] -= 1
            self.hands[q][t] += 1
            self.sizes[q] += 1
            self._emit(
                "give",
                to=self.hand_seats[p],
                player=self.names[p],
                partner=self.names[q],
                card=TYPE_TEXT[t],
            )
            if self.exch_stage == 1:
                if self.sizes[p] == self.hand_limit:
                    self._end_exchange(self.exch_given)
                return
            self.exch_given += 1
            if self.sizes[p]:
                return
        # ``done``, or the first giver has given every card: the partner gives back as many.
        if self.exch_given == 0:
            self._end_exchange(0)
            return
        self.exch_stage = 1
        self.to_move = self.seat_of[side + 2]

    # --- the interface ----------------------------------------------------------------------------

    def _legal_actions(self) -> tuple[Action, ...]:
        if self.phase == EXCHANGE:
            if self.exch_stage == 0:
                p = self.exch_side
                return (DONE, *compress(D_GIVE[p], self.hands[p]))
            p = self.exch_side + 2
            return tuple(compress(D_GIVE[p], self.hands[p]))
        if not self.doubles:
            return self._singles_legal()
        if self.team_control:
            side = self.answering
            return self._doubles_legal((side, side + 2), False)
        return self._doubles_legal((self.actor,), not self.left)

    def _singles_legal(self) -> tuple[Action, ...]:
        p = self.actor
        if not self.sizes[p]:
            return (PASS,)
        h = self.hands[p]
        if self.smash:
            out = [PASS]
            if h[KILL]:
                out.append(KILL_ACTION)
            if h[OUT]:
                out.append(OUT_ACTION)
        else:
            out = [PASS, *[SHOT_ACTIONS[t] for t in SHOTS_FROM[self.ball] if h[t]]]
            if h[SMASH]:
                out.append(SMASH_ACTION)
            if h[KILL]:
                out.append(KILL_ACTION)
            if h[OUT]:
                out.append(OUT_ACTION)
        out += compress(PASS_DISCARD, h)  # one per card type held, in type order
        return tuple(out)

    def _doubles_legal(self, players: tuple[int, ...], may_leave: bool) -> tuple[Action, ...]:
        hands = self.hands
        out = [PASS]
        if self.smash:
            out += [D_KILL[p] for p in players if hands[p][KILL]]
            out += [D_OUT[p] for p in players if hands[p][OUT]]
        else:
            ball = self.ball
            fore = IS_FORE[ball]
            for p in players:
                if not fore or DOUBLES_BOX[p] == ball:
                    h, shots = hands[p], D_SHOT[p]
                    out += [shots[t] for t in SHOTS_FROM[ball] if h[t]]
            out += [D_SMASH[p] for p in players if hands[p][SMASH]]
            out += [D_KILL[p] for p in players if hands[p][KILL]]
            out += [D_OUT[p] for p in players if hands[p][OUT]]
        if may_leave:
            out.append(LEAVE)
        for p in players:
            out += compress(D_PASS_DISCARD[p], hands[p])
        return tuple(out)

    def _why_illegal(self, text: str) -> str:
        base = super()._why_illegal(text)
        if self.phase != RALLY:
            return base
        if self.smash and text.startswith(("shot", "smash")):
            return f"only a Kill answers a Smash (or concede with out or pass); {base}"
        kind, _, arg = text.partition(":")
        if kind == "shot" and self.ball >= 0:
            card = arg.rpartition(":")[2]
            area = AREAS[self.ball]
            if not card.startswith(area + "-"):
                return f"the ball is in {area}: a shot card must start from {area}; {base}"
            if self.doubles and IS_FORE[self.ball]:
                box = next(
                    self.names[p]
                    for p in (self.answering, self.answering + 2)
                    if DOUBLES_BOX[p] == self.ball
                )
                return f"only {box} may hit a shot from {area}; {base}"
        return base

    def _apply(self, action: Action) -> None:
        code, p, t = ACTION_INFO[action]
        if self.phase == EXCHANGE:
            self._apply_exchange(code, p if p >= 0 else self.exch_side, t)
            return
        team_pass = p < 0 and self.team_control
        if p < 0:
            p = self.actor
        side = self.answering
        name = self.names[p]
        st = self.st
        if code == C_SHOT:
            self._take(p, t)
            self.seen[t] += 1
            st[ST_SHOTS] += 1
            self._emit("shot", player=name, card=TYPE_TEXT[t], dest=AREAS[SHOT_DEST[t]])
            self._returned()
            self.ball = SHOT_DEST[t]
            self._to_answer(1 - side)
            return
        if code == C_SMASH:
            self._take(p, t)
            self.seen[t] += 1
            st[ST_SMASHES] += 1
            self._emit("smash", player=name)
            self._returned()
            self.ball = -1
            self.smash = True
            self._to_answer(1 - side)
            return
        if code == C_LEAVE:
            self._emit("leave", player=name, partner=self.names[p ^ 2])
            self.actor = p ^ 2
            self.left = True
            self.to_move = self.seat_of[self.actor]
            return
        how = "smash" if self.smash else ""
        if code == C_KILL:
            self._take(p, t)
            self.seen[t] += 1
            st[ST_KILLS] += 1
            self._emit("kill", player=name)
            self._returned()
            winner, how = side, "kill"
        elif code == C_OUT:
            self._take(p, t)
            self.seen[t] += 1
            self._emit("out", player=name)
            winner, how = 1 - side, how or "out"
        else:
            if t >= 0:
                self._take(p, t)
                self.hidden[t] += 1
                seats = self.hand_seats[p]
                key: tuple[object, ...] = ("discard", name, seats, t)
                event = _INTERNED.get(key)
                if event is None:
                    data = {"player": name, "card": TYPE_TEXT[t]}
                    event = _INTERNED[key] = Event("discard", data, seats)
                self.events.append(event)
            who = self.side_names[side] if team_pass else name
            key = ("pass", who, t >= 0)
            event = _INTERNED.get(key)
            if event is None:
                event = _INTERNED[key] = Event("pass", {"player": who, "discard": t >= 0})
            self.events.append(event)
            winner, how = 1 - side, how or "pass"
        if self._award(winner, how):
            self._play_on()

    def _take(self, p: int, t: int) -> None:
        self.hands[p][t] -= 1
        self.sizes[p] -= 1

    def _returned(self) -> None:
        """Count a return when the In serve itself is answered with a shot, Smash or Kill."""
        if self.at_serve:
            self.at_serve = False
            self.st[ST_RETURNS] += 1
            if self.opening_ball:
                self.st[ST_OPENING_RETURNS] += 1

    # --- views ------------------------------------------------------------------------------------

    def observation(self, seat: int) -> TennisObservation:
        side = seat % 2
        if self.doubles:
            sees = [seat in self.hand_seats[p] for p in range(4)]
            roles: tuple[str, ...] = ("R", "R", "L", "L")
            controls = (side, side + 2) if self.team_control else (seat,)
            mode = "doubles-team" if self.team_control else "doubles-players"
        else:
            sees = [p == seat for p in range(2)]
            roles = ("", "")
            controls = (seat,)
            mode = "singles"
        players = tuple(
            TennisPlayerView(
                name=self.names[p],
                side=p % 2,
                role=roles[p],
                hand_size=self.sizes[p],
                hand=hand_texts(self.hands[p]) if sees[p] else (),
                visible=sees[p],
            )
            for p in range(self.n)
        )
        if self.phase == OVER:
            acting = ""
        elif self.phase == EXCHANGE:
            giver = self.exch_side + 2 * self.exch_stage
            acting = TEAM_NAMES[self.exch_side] if self.team_control else self.names[giver]
        else:
            acting = TEAM_NAMES[self.answering] if self.team_control else self.names[self.actor]
        in_rally = self.phase == RALLY and self.to_move is not None
        recent: list[str] = []
        for e in reversed(self.events):
            if e.to is None or seat in e.to:
                recent.append(event_text(e))
                if len(recent) == RECENT_EVENTS:
                    break
        recent.reverse()
        return TennisObservation(
            seat=seat,
            mode=mode,
            side=side,
            controls=controls,
            phase=PHASE_NAMES[self.phase],
            acting=acting,
            players=players,
            ball_area=AREAS[self.ball] if in_rally and self.ball >= 0 else "",
            ball_side=self.answering if in_rally else -1,
            smash_pending=in_rally and self.smash,
            serve_ball=in_rally and self.at_serve,
            left_by=self.names[self.actor ^ 2] if in_rally and self.left else "",
            exchange_given=self.exch_given if self.phase == EXCHANGE else 0,
            exchange_stage=self.exch_stage if self.phase == EXCHANGE else 0,
            points=(self.points[0], self.points[1]),
            games=(self.games[0], self.games[1]),
            sets=(self.sets[0], self.sets[1]),
            set_scores=tuple(self.set_scores),
            sets_to_win=self.sets_to_win,
            game_number=self.game_number,
            point_number=self.point_number,
            server=self.server,
            serve_from="right" if self.serve_right else "left",
            serve_deck_size=len(self.serve_deck),
            serve_pile=(self.serve_pile[0], self.serve_pile[1], self.serve_pile[2]),
            stock_size=len(self.stock),
            discard_size=sum(self.seen) + sum(self.hidden),
            discards_seen=tuple(self.seen),
            recent=tuple(recent),
        )

    def _final_result(self) -> Result:
        s = self.sets
        scores = tuple(float(s[seat % 2]) for seat in range(self.num_seats))
        ranks = ranks_from_scores(scores)
        sets_text = " ".join(self.set_scores)
        if s[0] == s[1]:
            summary = f"draw {s[0]}-{s[1]} ({sets_text}): equal points at the safety cap"
        else:
            w = 0 if s[0] > s[1] else 1
            summary = f"{self.side_names[w]} wins {s[w]}-{s[1 - w]} ({sets_text})"
            if "*" in sets_text:
                summary += "; * = set decided on points at the safety cap"
        return Result(
            scores=scores,
            ranks=ranks,
            summary=summary,
            stats=dict(zip(STAT_NAMES, self.st, strict=True)),
        )

    # --- determinize -----------------------------------------------------------------------------

    def _redeal_hidden(self, seat: int, rng: random.Random) -> None:
        # Hidden from ``seat``: the hands it may not see, the stock (order and cards), the
        # face-down pass discards it did not see made, and the Serve Deck's order (its cards are
        # known: the deck less the public pile). Nobody's play obliges anything (a pass is always
        # legal), so the unseen cards may lie anywhere: one shuffle deals them.
        unseen_players = [p for p in range(self.n) if seat not in self.hand_seats[p]]
        # The copy's log holds only what ``seat`` saw: its side's discards since the last
        # reshuffle of the Play Deck (which takes the discard pile back).
        known = known_discards(self.events)
        pool = list(self.stock)
        for t in range(NUM_TYPES):
            pool += [t] * (self.hidden[t] - known[t])
            for p in unseen_players:
                pool += [t] * self.hands[p][t]
        shuffle(rng, pool)
        at = 0
        for p in unseen_players:
            hand = [0] * NUM_TYPES
            for t in pool[at : at + self.sizes[p]]:
                hand[t] += 1
            self.hands[p] = hand
            at += self.sizes[p]
        self.stock = pool[at : at + len(self.stock)]
        hidden = known
        for t in pool[at + len(self.stock) :]:
            hidden[t] += 1
        self.hidden = hidden
        shuffle(rng, self.serve_deck)

    # --- test support -----------------------------------------------------------------------------

    def serve_point(self) -> None:
        """Test support (the referee never calls it): drop any rally in progress and serve the
        next point at the current score, from the current state of hands and decks."""
        self.phase = RALLY
        self.ball = -1
        self.smash = False
        self.at_serve = False
        self._legal = None
        self._play_on()


def _int(value: JSON) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"not a number: {value!r}")
    return value


def _ints(value: JSON) -> list[int]:
    return [_int(x) for x in cast(list[JSON], value)]


def _restore_history(state: TennisState, seat: int, events: Sequence[Event]) -> None:
    """Set what no observation shows from ``events``: the points won in this set (``set_points``,
    for the safety cap), whether this game's first In serve was turned (``opened``,
    ``opening_ball``) and the statistics counters. ``state.hands`` must be set already.

    Exact from all the seat's events, except whether the opponents could answer the In serves
    they received (their hands then are unknown): only those they returned are counted. With
    fewer events (not from the match's start) the points and counters are lower bounds."""
    st = [0] * len(STAT_NAMES)
    set_points = [0, 0]
    names = state.names
    # From the match's start the hands the seat sees can be followed card by card, so whether
    # its side could answer each In serve it received is known.
    full = bool(events) and events[0].kind == "first_server_draw"
    held = [[0] * NUM_TYPES for _ in range(state.n)]
    server_side = -1  # unknown until a game_start
    ins = -1  # In serves turned in this game; -1 until a game_start says which game
    unreturned = opening = counted = False  # the In serve in play, and whether st counted it
    for e in events:
        kind, data = e.kind, e.data
        if kind == "deal":
            for c in cast(list[JSON], data["cards"]):
                held[names.index(str(data["player"]))][TYPE_INDEX[str(c)]] += 1
        elif kind == "give":
            t = TYPE_INDEX[str(data["card"])]
            held[names.index(str(data["player"]))][t] -= 1
            held[names.index(str(data["partner"]))][t] += 1
        elif kind == "discard":
            held[names.index(str(data["player"]))][TYPE_INDEX[str(data["card"])]] -= 1
        elif kind == "game_start":
            server_side = names.index(str(data["server"])) % 2
            ins = 0
        elif kind == "serve" and data["card"] == SERVE_TEXT[IN]:
            st[ST_IN_SERVES] += 1
            opening = ins == 0
            st[ST_OPENING] += opening
            ins += ins >= 0
            unreturned = True
            counted = full and server_side == 1 - seat % 2
            if counted:
                answerable = _could_answer(state, held, 1 - server_side, data["side"] == "right")
                st[ST_ANSWERABLE] += answerable
                st[ST_OPENING_ANSWERABLE] += answerable and opening
        elif kind in ("shot", "smash", "kill", "out"):
            t = TYPE_INDEX[str(data["card"])] if kind == "shot" else TYPE_INDEX[kind.upper()]
            held[names.index(str(data["player"]))][t] -= 1
            if kind == "out":
                continue
            st[(ST_SHOTS, ST_SMASHES, ST_KILLS)[("shot", "smash", "kill").index(kind)]] += 1
            if unreturned:  # a returned serve could be answered
                st[ST_RETURNS] += 1
                st[ST_OPENING_RETURNS] += opening
                if not counted:
                    st[ST_ANSWERABLE] += 1
                    st[ST_OPENING_ANSWERABLE] += opening
                unreturned = False
        elif kind == "point":
            unreturned = False
            side = state.side_names.index(str(data["winner"]))
            set_points[side] += 1
            st[ST_POINTS] += 1
            st[ST_SERVER_POINTS] += side == server_side
            st[ST_ACES] += data["how"] == "ace"
            st[ST_DOUBLE_FAULTS] += data["how"] == "double_fault"
        elif kind == "game":
            st[ST_GAMES] += 1
        elif kind == "set" and not data.get("drawn"):  # a drawn set ends the match as it is
            set_points = [0, 0]
    if unreturned and not counted and state.answering == seat % 2:
        # The serve in play, received by the seat's side: its hands are as they were then.
        answerable = state._can_answer(state.answering)
        st[ST_ANSWERABLE] += answerable
        st[ST_OPENING_ANSWERABLE] += answerable and opening
    # Each won game took at least four points: a floor when the events start mid-set (not once
    # the match is over: nothing reads them then, and the last game's points outlive its set).
    if state.phase != OVER:
        set_points = [
            max(set_points[s], POINTS_FOR_GAME * state.games[s] + state.points[s]) for s in range(2)
        ]
    state.set_points = set_points
    if ins >= 0:
        state.opened = ins > 0
        state.opening_ball = opening
    else:  # no game_start seen: a guess (both only feed the opening counters)
        state.opened = state.at_serve or state.point_number > 1
        state.opening_ball = state.at_serve and state.point_number == 1
    state.st = st


def _could_answer(state: TennisState, hands: list[list[int]], side: int, right: bool) -> bool:
    """``state._can_answer(side)`` against an In serve from the ``right`` (or left) with
    ``hands`` instead of the state's own: the receivers' hands as they were at that serve."""
    own, ball = state.hands, state.ball
    state.hands, state.ball = hands, RF if right else LF
    try:
        return state._can_answer(side)
    finally:
        state.hands, state.ball = own, ball


def known_discards(events: Sequence[Event]) -> list[int]:
    """Counts per card type of the face-down discards in ``events`` (a seat's log: its side's)
    still in the discard pile, i.e. made since the last reshuffle of the Play Deck."""
    known = [0] * NUM_TYPES
    for e in reversed(events):
        if e.kind == "play_shuffle":
            break
        if e.kind == "discard":
            known[TYPE_INDEX[str(e.data["card"])]] += 1
    return known


def sorted_cards(texts: list[JSON]) -> list[JSON]:
    """Card texts in canonical card-type order."""
    return sorted(texts, key=lambda x: TYPE_INDEX[str(x)])


GAME = Tennis()
