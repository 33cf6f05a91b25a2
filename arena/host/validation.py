"""Validation at submission: a new version's short match against a reference bot, as Kaggle
plays a validation episode. A version whose seats are charged any fault (it crashed, timed out,
answered illegally, sent garbage, never connected) fails, with the first fault as its reason and
its seat's log kept for its author; one that plays clean is validated and enters the ladder.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import structlog
import trio

from arena.bots.command import BotProgram
from arena.errors import ArenaError, is_host_trouble
from arena.host.config import CompetitionConfig
from arena.host.play import Entrant, MatchPlayer, version_program
from arena.host.store import CompetitionStore, Version
from arena.seeds import derive_seed

log = structlog.get_logger("arena.host.validation")


def validation_seats(n_places: int, match: int) -> list[int]:
    """The place of the version (0) or the opponent (1) at each place of validation match
    ``match``: the version takes each place in turn, the opponent the others."""
    mine = match % n_places
    return [0 if place == mine else 1 for place in range(n_places)]


async def validate(
    store: CompetitionStore, player: MatchPlayer, config: CompetitionConfig, version: Version
) -> Version:
    """Play ``version``'s validation matches and store the verdict (the version must be pending
    or validating: a validation cut short by a crash of the host is played again)."""
    if version.status == "pending":
        version = store.set_status(version.id, "validating")
    try:
        verdict, reason, log_path = await _verdict(store, player, config, version)
    except (ArenaError, OSError) as err:
        if not is_host_trouble(err):
            raise
        # The arena is out of descriptors, disk or memory: no verdict on the version; it stays
        # validating and is validated again at the validator's next look.
        log.warning("validation put off", version=version.ref, error=str(err))
        return version
    log.info("validated", version=version.ref, verdict=verdict, reason=reason)
    return store.set_status(version.id, verdict, reason, log_path)


async def _verdict(
    store: CompetitionStore, player: MatchPlayer, config: CompetitionConfig, version: Version
) -> tuple[Literal["validated", "failed"], str, str | None]:
    if version.kind == "live":
        # Nothing to start: a live bot is checked by playing, while it is connected.
        return "validated", "", None
    try:
        program = await trio.to_thread.run_sync(version_program, store.directory, version)
    except ArenaError as err:
        if is_host_trouble(err):
            raise
        return "failed", f"it cannot be started: {err}", None
    mine = Entrant(version.ref, program)
    opponent = Entrant(config.validation.opponent, BotProgram(config.validation.opponent_command))
    places = config.places
    for n in range(config.validation.matches):
        by_place = [mine if w == 0 else opponent for w in validation_seats(len(places), n)]
        entrants = _seated(places, by_place)
        match_id = f"validate-{version.id}-{n + 1}"
        seed = derive_seed(store.secret_seed(), "validation", version.id, n)
        try:
            played = await player.play(match_id, seed, entrants)
        except ArenaError as err:
            if is_host_trouble(err):
                raise
            # The arena failed, not the bot: say so rather than blame the version.
            return "failed", f"the validation match could not be played: {err}", None
        my_seats = {s for s, e in enumerate(entrants) if e is mine}
        for fault in played.faults:
            if fault.seat in my_seats:
                why = f"{fault.kind} in its validation match: {fault.detail}"
                return "failed", why, played.logs[fault.seat]
    return "validated", "", None


def _seated(places: Sequence[Sequence[int]], by_place: Sequence[Entrant]) -> list[Entrant]:
    """The entrant of each engine seat, from the entrant of each place."""
    n_seats = sum(len(group) for group in places)
    seats: list[Entrant | None] = [None] * n_seats
    for place, group in enumerate(places):
        for seat in group:
            seats[seat] = by_place[place]
    assert all(e is not None for e in seats)
    return [e for e in seats if e is not None]
