"""Forty-Five (``forty_five``): two sides, game to 45, with Spoil Five's cards and play.

Rules: ../shared/rules/spoil-five.md; decisions: docs/rules/forty_five.md. Two players play
heads-up, four play in partnerships with partners opposite (seats 0+2 against 1+3), so a seat's
side is always ``seat % 2``. All five tricks are played; the side with three or more scores.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from engine.core import (
    JSON,
    Action,
    Event,
    Game,
    MatchConfig,
    Observation,
    Presentation,
    Result,
    seat_row,
    side_row,
)
from engine.games.spoil_rules import (
    COMMON_OPTIONS,
    TABLE_ACTIONS,
    TRICKS_PER_DEAL,
    SpoilTableObservation,
    SpoilTableState,
    obs_ints,
    turn_up_notes,
)
from engine.options import OptionSpec

SEAT_NAMES_4 = ("N", "E", "S", "W")
SEAT_NAMES_2 = ("P1", "P2")


def side_names(players: int) -> tuple[str, str]:
    """Names of the two sides: ``N+S``/``E+W`` with four players, ``P1``/``P2`` with two."""
    return ("N+S", "E+W") if players == 4 else SEAT_NAMES_2


def deal_points(tricks: int, scoring: str) -> int:
    """Points for the side that took ``tricks`` (3, 4 or 5) of the five."""
    if scoring == "difference":
        return 5 * (tricks - (TRICKS_PER_DEAL - tricks))
    return 10 if tricks == TRICKS_PER_DEAL else 5


@dataclass(frozen=True, slots=True)
class FortyFiveObservation(SpoilTableObservation):
    """What one Forty-Five seat knows."""

    #: This seat's side: 0 (seats 0 and 2) or 1 (seats 1 and 3).
    side: int
    #: Tricks won this deal, per side.
    side_tricks: tuple[int, int]
    #: Points per side.
    score: tuple[int, int]
    #: Points that win the game.
    points_to_win: int

    def render(self) -> str:
        lines = self.table_lines(SEAT_NAMES_4 if len(self.tricks_won) == 4 else SEAT_NAMES_2)
        lines.append(
            f"Your side {self.side}; score {self.score[0]}–{self.score[1]} "
            f"(game at {self.points_to_win}); tricks {self.side_tricks[0]}–{self.side_tricks[1]}"
        )
        return "\n".join(lines)


class FortyFive(Game):
    """The Forty-Five referee."""

    id = "forty_five"
    version = "1.0"
    title = "Forty-Five"
    presentation_kind = "trick_table"
    player_counts = (2, 4)
    default_players = 4
    options = (
        OptionSpec("points_to_win", "int", 45, "points that win the game", 5, 500),
        OptionSpec(
            "scoring",
            "choice",
            "standard",
            "standard: 3-4 tricks score 5, all 5 score 10; difference: 5 × trick difference",
            choices=("standard", "difference"),
        ),
        *COMMON_OPTIONS,
    )

    def seat_names(self, config: MatchConfig) -> tuple[str, ...]:
        return SEAT_NAMES_4 if config.players == 4 else SEAT_NAMES_2

    def sides(self, config: MatchConfig) -> tuple[tuple[int, ...], ...] | None:
        return ((0, 2), (1, 3)) if config.players == 4 else None

    def action_space(self, config: MatchConfig) -> tuple[Action, ...]:
        return TABLE_ACTIONS

    def present(self, config: MatchConfig, public: Mapping[str, JSON]) -> Presentation:
        rows = (
            seat_row(self, config, "Tricks this deal", public.get("tricks_won")),
            side_row(self, config, "Side tricks this deal", public.get("side_tricks")),
            side_row(self, config, "Points", public.get("score")),
        )
        facts = [("Game at", f"{public.get('points_to_win')} points")]
        if "deal_number" in public:
            facts.append(("Deal", str(public["deal_number"])))
        notes = turn_up_notes(self.seat_names(config), public)
        return Presentation(tuple(r for r in rows if r), tuple(facts), tuple(notes))

    def new_match(self, config: MatchConfig, seed: int) -> FortyFiveState:
        return FortyFiveState(self, config, seed)

    def _restore(
        self,
        config: MatchConfig,
        observation: Mapping[str, JSON],
        events: Sequence[Event],
        rng: random.Random,
    ) -> FortyFiveState:
        o = observation
        state = FortyFiveState.bare(self, config, rng)
        # From the configuration: the check in Game.restore refuses an observation that differs.
        state.points_to_win = config.int_option("points_to_win")
        state.scoring = str(config.option("scoring"))
        state.score = obs_ints(o["score"], 2)
        # A side reaching the target ends the game at once; otherwise the next deal follows.
        state._restore_table(o, events, over=max(state.score) >= state.points_to_win)
        # Slams: every deal scored is in the events (the observation shows the last at most).
        state.stats["slams"] = sum(
            e.kind == "deal_score" and TRICKS_PER_DEAL in obs_ints(e.data["tricks"], 2)
            for e in events
        )
        return state

    def summarize_stats(self, totals: Mapping[str, int], matches: int) -> dict[str, float]:
        deals = totals.get("deals", 0)
        if not deals:
            return {}
        return {
            "slam_rate": totals.get("slams", 0) / deals,
            "rob_rate": totals.get("robs", 0) / deals,
            "deals_per_match": deals / matches if matches else 0.0,
        }


class FortyFiveState(SpoilTableState):
    """A game of Forty-Five in progress."""

    #: Points per side: clone() copies it flat.
    _flat_lists = SpoilTableState._flat_lists | {"score"}

    def __init__(self, game: Game, config: MatchConfig, seed: int) -> None:
        super().__init__(game, config, seed)
        self.points_to_win = config.int_option("points_to_win")
        self.scoring = str(config.option("scoring"))
        self.score = [0, 0]
        self.stats["slams"] = 0
        self._start()

    def side_tricks(self) -> tuple[int, int]:
        """Tricks won this deal, per side."""
        t = self.tricks_won
        return (sum(t[0::2]), sum(t[1::2]))

    def _after_trick(self, winner: int) -> None:
        if len(self.finished_tricks) < TRICKS_PER_DEAL:
            self._lead(winner)
            return
        tricks = self.side_tricks()
        side = 0 if tricks[0] >= 3 else 1
        points = deal_points(tricks[side], self.scoring)
        self.score[side] += points
        if tricks[side] == TRICKS_PER_DEAL:
            self.stats["slams"] += 1
        self._emit(
            "deal_score",
            side=side_names(self.n)[side],
            tricks=list(tricks),
            points=points,
            score=list(self.score),
        )
        self._end_deal()

    def _next_deal_or_end(self) -> None:
        for side in (0, 1):
            if self.score[side] >= self.points_to_win:
                self._emit("game_won", side=side_names(self.n)[side], score=list(self.score))
                return
        self._next_dealer()
        self._deal()

    def observation(self, seat: int) -> Observation:
        return FortyFiveObservation(
            **self.table_view(seat),
            side=seat % 2,
            side_tricks=self.side_tricks(),
            score=(self.score[0], self.score[1]),
            points_to_win=self.points_to_win,
        )

    def _final_result(self) -> Result:
        sc = self.score
        win = 0 if sc[0] > sc[1] else 1
        names = side_names(self.n)
        return Result(
            scores=tuple(float(sc[s % 2]) for s in range(self.n)),
            ranks=tuple(1 if s % 2 == win else 2 for s in range(self.n)),
            summary=f"{names[win]} {'wins' if self.n == 2 else 'win'} {sc[win]}-{sc[1 - win]} "
            f"after {self.deal_number} deal{'' if self.deal_number == 1 else 's'}",
            stats=dict(self.stats),
        )


GAME = FortyFive()
