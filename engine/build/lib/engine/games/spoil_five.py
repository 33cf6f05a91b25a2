"""Spoil Five (``spoil_five``): 2–10 players, each for themselves, for a pool of chips.

Rules: ../shared/rules/spoil-five.md; decisions: docs/rules/spoil_five.md. Cards, deal, robbing
and play come from :mod:`engine.games.spoil_rules`; this module adds the pool, claim and jinx.
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
    name_of,
    number_actions,
    ranks_from_scores,
    seat_row,
)
from engine.games.spoil_rules import (
    CLAIM,
    COMMON_OPTIONS,
    TABLE_ACTIONS,
    TRICKS_PER_DEAL,
    SpoilTableObservation,
    SpoilTableState,
    obs_int,
    obs_ints,
    turn_up_notes,
)
from engine.options import OptionSpec

#: The winner of tricks 1–3 takes the pool now …
CLAIM_ACTION = Action("claim")
#: … or leads on and must win tricks 4 and 5 too.
JINX_ACTION = Action("jinx")
_CLAIM_OR_JINX = (CLAIM_ACTION, JINX_ACTION)
#: The table's actions (plays, robs, ace decisions), then claim and jinx: 0..108.
ACTION_SPACE = number_actions(TABLE_ACTIONS, _CLAIM_OR_JINX)


@dataclass(frozen=True, slots=True)
class SpoilFiveObservation(SpoilTableObservation):
    """What one Spoil Five seat knows."""

    #: Chips in the pool.
    pool: int
    #: Chips each seat has put into the current pool (returned if the session ends unwon).
    stakes: tuple[int, ...]
    #: Net chips per seat since the match began: the standings.
    balances: tuple[int, ...]
    #: Seat that jinxed this deal (it must win tricks 4 and 5), or -1.
    jinxer: int
    #: Deals in the session proper (rounds × players); up to players more may settle a pool.
    scheduled_deals: int

    def render(self) -> str:
        lines = self.table_lines()
        lines.append(
            f"Deal {self.deal_number} of {self.scheduled_deals}; pool {self.pool}; chips "
            + " ".join(f"P{s + 1}:{b:+d}" for s, b in enumerate(self.balances))
            + (f"; P{self.jinxer + 1} jinxed" if self.jinxer >= 0 else "")
        )
        return "\n".join(lines)


class SpoilFive(Game):
    """The Spoil Five referee."""

    id = "spoil_five"
    version = "1.0"
    title = "Spoil Five"
    presentation_kind = "trick_table"
    player_counts = tuple(range(2, 11))
    default_players = 5
    options = (
        OptionSpec(
            "rounds",
            "int",
            1,
            "each player deals this many times: the session is rounds × players deals",
            1,
            20,
        ),
        *COMMON_OPTIONS,
    )

    def new_match(self, config: MatchConfig, seed: int) -> SpoilFiveState:
        return SpoilFiveState(self, config, seed)

    def action_space(self, config: MatchConfig) -> tuple[Action, ...]:
        return ACTION_SPACE

    def _restore(
        self,
        config: MatchConfig,
        observation: Mapping[str, JSON],
        events: Sequence[Event],
        rng: random.Random,
    ) -> SpoilFiveState:
        o = observation
        n = config.players
        state = SpoilFiveState.bare(self, config, rng)
        # From the configuration: the check in Game.restore refuses an observation that differs.
        state.scheduled = config.int_option("rounds") * n
        state.pool = obs_int(o["pool"])
        state.stakes = obs_ints(o["stakes"], n)
        state.balances = obs_ints(o["balances"], n)
        state.jinxer = obs_int(o["jinxer"])
        # A deal always holds antes, and a pool is only emptied (won or returned) for good when
        # no deal follows: an empty pool means the session is over.
        past = state._restore_table(o, events, over=state.pool == 0)
        done = state.finished_tricks
        if state.to_move is not None and not state.trick_cards and len(done) == 3:
            leader = done[-1].winner
            if state.jinxer < 0 and state.tricks_won[leader] == 3:
                state.phase = CLAIM  # the winner of tricks 1-3, as leader of trick 4
        stats = state.stats
        # Jinxes: earlier deals from the events, this one from the observation; the outcomes
        # of deals (only a finished session's last deal is in the observation) from the events.
        stats["jinxes"] = sum(e.kind == "jinx" for e in past) + (state.jinxer >= 0)
        stats["extra_deals"] = max(0, state.deal_number - state.scheduled)
        for key in ("pools_won", "spoils", "claims", "jinx_wins", "pools_returned"):
            stats[key] = 0
        stats["chips_returned"] = 0
        for e in events:
            if e.kind == "pool_won":
                stats["pools_won"] += 1
                stats["jinx_wins"] += obs_int(e.data.get("jinx_bonus", 0)) > 0
            elif e.kind == "spoil":
                stats["spoils"] += 1
            elif e.kind == "claim":
                stats["claims"] += 1
            elif e.kind == "pool_returned":
                stats["pools_returned"] += 1
                stats["chips_returned"] += sum(obs_ints(e.data["chips"], n))
        return state

    def present(self, config: MatchConfig, public: Mapping[str, JSON]) -> Presentation:
        names = self.seat_names(config)
        rows = (
            seat_row(self, config, "Tricks this deal", public.get("tricks_won")),
            seat_row(self, config, "Chips won/lost", public.get("balances")),
            seat_row(self, config, "Chips in this pool", public.get("stakes")),
        )
        facts = (
            ("Pool", f"{public.get('pool')} chips"),
            ("Deal", f"{public.get('deal_number')} of {public.get('scheduled_deals')}"),
        )
        notes = turn_up_notes(names, public)
        if (who := name_of(names, public.get("jinxer"))) is not None:
            notes.append(f"{who} jinxed: must win the last tricks")
        return Presentation(tuple(r for r in rows if r), facts, tuple(notes))

    def summarize_stats(self, totals: Mapping[str, int], matches: int) -> dict[str, float]:
        deals = totals.get("deals", 0)
        jinxes = totals.get("jinxes", 0)
        if not deals:
            return {}
        return {
            "spoil_rate": totals.get("spoils", 0) / deals,
            "rob_rate": totals.get("robs", 0) / deals,
            "jinx_success_rate": totals.get("jinx_wins", 0) / jinxes if jinxes else 0.0,
            "deals_per_match": deals / matches if matches else 0.0,
        }


class SpoilFiveState(SpoilTableState):
    """A Spoil Five session in progress."""

    #: Chip counts: clone() copies them flat.
    _flat_lists = SpoilTableState._flat_lists | {"stakes", "balances"}

    def __init__(self, game: Game, config: MatchConfig, seed: int) -> None:
        super().__init__(game, config, seed)
        self.scheduled = config.int_option("rounds") * self.n
        self.pool = 0
        self.stakes = [0] * self.n  # contributions to the current pool
        self.balances = [0] * self.n
        self.jinxer = -1
        for key in (
            "pools_won",
            "spoils",
            "claims",
            "jinxes",
            "jinx_wins",
            "extra_deals",
            "pools_returned",
            "chips_returned",
        ):
            self.stats[key] = 0
        self._start()

    def _before_deal(self) -> None:
        self.jinxer = -1
        if self.deal_number > self.scheduled:
            self.stats["extra_deals"] += 1
        # A fresh pool gets a chip from everyone; a carried-over pool only from the dealer.
        payers = list(range(self.n)) if self.pool == 0 else [self.dealer]
        for s in payers:
            self.balances[s] -= 1
            self.stakes[s] += 1
        self.pool += len(payers)
        self._emit("ante", seats=payers, pool=self.pool)

    def _after_trick(self, winner: int) -> None:
        done = len(self.finished_tricks)
        if self.jinxer >= 0:
            if winner != self.jinxer:
                self._spoil("jinx lost")
            elif done == TRICKS_PER_DEAL:
                self._win_pool(winner, jinx=True)
            else:
                self._lead(winner)
            return
        if self.tricks_won[winner] == 3:
            if done == 3:  # tricks 1-3: claim or jinx, as leader of trick 4
                self.trick_leader = winner
                self.to_move = winner
                self.phase = CLAIM
            else:
                self._win_pool(winner, jinx=False)
            return
        if max(self.tricks_won) + TRICKS_PER_DEAL - done < 3:
            self._spoil("nobody can take three tricks")
            return
        self._lead(winner)

    def _legal_extra(self) -> tuple[Action, ...]:
        return _CLAIM_OR_JINX

    def _apply_extra(self, action: Action) -> None:
        seat = self.to_move
        assert seat is not None
        if action.kind == "claim":
            self.stats["claims"] += 1
            self._emit("claim", seat=seat)
            self._win_pool(seat, jinx=False)
        else:
            self.stats["jinxes"] += 1
            self.jinxer = seat
            self._emit("jinx", seat=seat)
            self._lead(seat)

    def _win_pool(self, seat: int, jinx: bool) -> None:
        won = self.pool
        self.balances[seat] += won
        bonus = 0
        if jinx:
            self.stats["jinx_wins"] += 1
            for s in range(self.n):
                if s != seat:
                    self.balances[s] -= 1
                    bonus += 1
            self.balances[seat] += bonus
        self.pool = 0
        self.stakes = [0] * self.n
        self.stats["pools_won"] += 1
        self._emit("pool_won", seat=seat, chips=won, jinx_bonus=bonus, balances=list(self.balances))
        self._end_deal()

    def _spoil(self, why: str) -> None:
        self.stats["spoils"] += 1
        self._emit("spoil", why=why, pool=self.pool, tricks=list(self.tricks_won))
        self._end_deal()

    def _next_deal_or_end(self) -> None:
        d = self.deal_number
        if d < self.scheduled or (self.pool > 0 and d < self.scheduled + self.n):
            self._next_dealer()
            self._deal()
            return
        if self.pool > 0:
            # The pool only ever grows by whole contributions and is won whole, so pro rata
            # means exactly: everyone gets back what they put in. No rounding arises.
            back = list(self.stakes)
            for s in range(self.n):
                self.balances[s] += back[s]
            self.stats["pools_returned"] += 1
            self.stats["chips_returned"] += self.pool
            self.pool = 0
            self.stakes = [0] * self.n
            self._emit("pool_returned", chips=back, balances=list(self.balances))
        self._emit("session_over", deals=d, balances=list(self.balances))

    def observation(self, seat: int) -> Observation:
        return SpoilFiveObservation(
            **self.table_view(seat),
            pool=self.pool,
            stakes=tuple(self.stakes),
            balances=tuple(self.balances),
            jinxer=self.jinxer,
            scheduled_deals=self.scheduled,
        )

    def _final_result(self) -> Result:
        scores = tuple(float(b) for b in self.balances)
        ranks = ranks_from_scores(scores)
        names = self.game.seat_names(self.config)
        best = max(self.balances)
        leaders = [names[s] for s in range(self.n) if self.balances[s] == best]
        verb = "wins" if len(leaders) == 1 else "tie"
        summary = (
            f"{', '.join(leaders)} {verb} with {best:+d} chips after {self.deal_number} deals "
            f"({self.stats['spoils']} spoiled)"
        )
        return Result(scores=scores, ranks=ranks, summary=summary, stats=dict(self.stats))


GAME = SpoilFive()
