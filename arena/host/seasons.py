"""Seasons: the ladder cut in seasons (``[seasons]``), each archived at its end with its frozen
standings, and which matches a season's leaderboard fits.

One task of the host checks, every second, whether the current season's planned end has passed
(by the clock it is given: tests pass their own) and rolls over: the season's standings are
fitted and frozen, the season archived and the next one made current, and its result announced,
all in one transaction of the store (:meth:`CompetitionStore.roll_season`), so a kill -9 around
it neither loses a season nor makes one twice, and a host that was down at the boundary rolls
over when it starts. The admin may end the current season at any time (``POST
/admin/seasons/end``).
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import structlog
import trio

from arena.host.announce import Announcer
from arena.host.config import CompetitionConfig
from arena.host.leaderboard import ProvisionalRule, leader_rows
from arena.host.store import CompetitionStore, Season
from arena.ratings import RatingTable, fit_ratings

log = structlog.get_logger("arena.host.seasons")

#: Seconds between two looks at the clock for the current season's end.
SEASON_POLL_S = 1.0

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso(when: datetime) -> str:
    """The stores' time format: ``2027-03-01T00:00:00.000Z``."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


def fitted_season(config: CompetitionConfig, number: int) -> int | None:
    """Whose matches season ``number``'s ladder leaderboard fits: its own (``reset``), or every
    match to date (``None``: ``carry``, or no ``[seasons]`` at all)."""
    seasons = config.seasons
    return number if seasons.enabled and seasons.ratings == "reset" else None


def season_fit(store: CompetitionStore, config: CompetitionConfig, number: int) -> RatingTable:
    entries, units = store.rated_matches("ladder", fitted_season(config, number))
    return fit_ratings(entries, clusters=units)


def frozen_standings(
    store: CompetitionStore, config: CompetitionConfig, table: RatingTable
) -> tuple[list[dict[str, Any]], list[str]]:
    """A season's leaderboard rows as the API shows them, and its winners: the established
    versions ranked first (none while every version is provisional)."""
    names = {a.id: a.name for a in store.authors()}
    rows = leader_rows(table.ratings, store.versions(), names, ProvisionalRule.of(config.ladder))
    winners = [r.ref for r in rows if r.rank == 1 and not r.provisional and r.matches > 0]
    return [r.model_dump(mode="json") for r in rows], winners


def following(
    config: CompetitionConfig, current: Season, now: datetime, name: str | None
) -> tuple[str, str, str | None]:
    """The season after ``current``, rolled over ``now``: its name, start and planned end.

    A season ended on time is followed from its planned end; one ended early by the admin from
    ``now``. With ``length_days`` the next runs a full length (after a host down over several
    periods: the period holding ``now``); with a schedule it is the next entry not yet over (its
    end after the current one's planned end), and after the last one an unnamed season with no
    end.
    """
    seasons, number = config.seasons, current.number + 1
    planned = None if current.ends is None else parse_time(current.ends)
    on_time = planned is not None and planned <= now
    starts = planned if planned is not None and on_time else now
    if seasons.length_s is not None:
        length = timedelta(seconds=seasons.length_s)
        if on_time:
            starts += length * math.floor((now - starts) / length)
        return name or f"Season {number}", iso(starts), iso(starts + length)
    for entry in seasons.schedule:
        if entry.end > now and (planned is None or entry.end > planned):
            return name or entry.name, iso(starts), iso(entry.end)
    return name or "", iso(starts), None


class Seasons:
    """Keeps the current season's end (the config's), rolls over at it, and ends it on demand."""

    def __init__(
        self,
        store: CompetitionStore,
        config: CompetitionConfig,
        announcer: Announcer,
        clock: Clock = utc_now,
    ) -> None:
        self._store, self._config, self._announcer, self._clock = store, config, announcer, clock

    def plan(self) -> None:
        """Give the current season the config's name and end, if it has no end planned (a new
        competition, or one that gets ``[seasons]`` later)."""
        seasons, current = self._config.seasons, self._store.current_season()
        if not seasons.enabled or current.ends is not None:
            return
        starts = parse_time(current.starts)
        if seasons.length_s is not None:
            ends = starts + timedelta(seconds=seasons.length_s)
            name = current.name or f"Season {current.number}"
            self._store.plan_season(current.number, name, iso(ends))
            return
        for entry in seasons.schedule:
            if entry.end > self._clock():
                self._store.plan_season(current.number, current.name or entry.name, iso(entry.end))
                return

    def check(self) -> list[Season]:
        """Roll over while the current season's planned end has passed; the seasons ended."""
        ended: list[Season] = []
        while True:
            self.plan()
            current, now = self._store.current_season(), self._clock()
            if current.ends is None or parse_time(current.ends) > now:
                return ended
            season = self._roll(current, parse_time(current.ends), None)
            if season is None:
                return ended
            ended.append(season)

    def end_now(self, name: str | None = None) -> Season:
        """End the current season now and start the next (named ``name``, if given)."""
        ended = self.check()  # an end already passed rolls over as planned, not early
        if ended:
            return ended[0]
        current = self._store.current_season()
        season = self._roll(current, self._clock(), name)
        if season is None:  # ended by the clock at the same moment: that roll-over stands
            return self._store.season(current.number)
        return season

    def _roll(self, current: Season, at: datetime, name: str | None) -> Season | None:
        store, config = self._store, self._config
        nxt = following(config, current, self._clock(), name)

        def freeze(number: int) -> tuple[list[dict[str, Any]], list[str]]:
            return frozen_standings(store, config, season_fit(store, config, number))

        season = store.roll_season(current.number, iso(at), freeze, nxt, self._announcer.url)
        if season is not None:
            self._announcer.announced(
                "season", season.title, season.winners, season=season.number, matches=season.matches
            )
            log.info("season started", season=season.number + 1, name=nxt[0], ends=nxt[2])
        return season

    async def run(self, refit: Callable[[], Awaitable[None]]) -> None:
        """Forever: roll over at each season's end; after a roll-over (this task's or the
        admin's), ``refit()`` the ladder so its leaderboard is the new season's."""
        seen = None
        while True:
            await trio.to_thread.run_sync(self.check)
            current = await trio.to_thread.run_sync(self._store.current_season)
            if seen is not None and current.number != seen:
                await refit()
            seen = current.number
            await trio.sleep(SEASON_POLL_S)
