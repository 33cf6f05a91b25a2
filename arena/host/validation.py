"""Validation at submission: a new version's short match against a reference bot, as Kaggle
plays a validation episode. A version whose seats are charged any fault (it crashed, timed out,
answered illegally, sent garbage, never connected) fails, with the first fault as its reason and
its seat's log kept for its author; one that plays clean is validated and enters the ladder.

Every verdict leaves the version its validation log (``logs/validation-ID.log``: each match, its
result, the version's seats' output, the verdict; or why nothing was played), and each match its
record (``records/validate-ID-N.jsonl.gz``), both for the version's author alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import structlog
import trio

from arena.bots.command import BotProgram
from arena.errors import ArenaError, is_host_trouble
from arena.host.config import CompetitionConfig
from arena.host.play import Entrant, MatchPlayer, version_program
from arena.host.store import CompetitionStore, Version
from arena.layout import LOGS_DIR, RECORDS_DIR, record_name
from arena.seeds import derive_seed

log = structlog.get_logger("arena.host.validation")

Verdict = Literal["validated", "failed"]


def validation_log(version_id: int) -> str:
    """A version's validation log, relative to the competition directory."""
    return f"{LOGS_DIR}/validation-{version_id}.log"


def validation_match_id(version_id: int, n: int) -> str:
    """The id of version ``version_id``'s validation match ``n`` (from 1)."""
    return f"validate-{version_id}-{n}"


def validated_by(name: str) -> int | None:
    """The version whose validation a file name or match id belongs to: its log's name
    (:func:`validation_log`'s) or one of its matches' ids (:func:`validation_match_id`'s);
    ``None`` for any other."""
    for prefix, suffix in (("validation-", ".log"), ("validate-", "")):
        if name.startswith(prefix) and name.endswith(suffix):
            number = name[len(prefix) : len(name) - len(suffix)]
            if prefix == "validate-":
                number, _, n = number.partition("-")
                if not (n.isascii() and n.isdigit()):
                    return None
            return int(number) if number.isascii() and number.isdigit() else None
    return None


def validation_records(directory: Path, version_id: int, matches: int) -> list[str]:
    """The validation matches of a version whose records are kept, by id."""
    ids = [validation_match_id(version_id, n) for n in range(1, matches + 1)]
    return [i for i in ids if (directory / RECORDS_DIR / record_name(i)).is_file()]


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
        verdict, reason, journal = await _verdict(store, player, config, version)
        journal.append(f"{verdict}" + (f": {reason}" if reason else ""))
        log_path = validation_log(version.id)
        await trio.to_thread.run_sync(_write, store.directory / log_path, journal)
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
) -> tuple[Verdict, str, list[str]]:
    """The verdict, why, and the validation log's paragraphs so far."""
    if version.kind == "live":
        # Nothing to start: a live bot is checked by playing, while it is connected.
        return "validated", "", [f"{version.ref} is a live bot: it is checked as it plays"]
    try:
        program = await trio.to_thread.run_sync(version_program, store.directory, version)
    except ArenaError as err:
        if is_host_trouble(err):
            raise
        return "failed", f"it cannot be started: {err}", []
    mine = Entrant(version.ref, program)
    opponent = Entrant(config.validation.opponent, BotProgram(config.validation.opponent_command))
    places = config.places
    journal: list[str] = []
    for n in range(config.validation.matches):
        by_place = [mine if w == 0 else opponent for w in validation_seats(len(places), n)]
        entrants = _seated(places, by_place)
        match_id = validation_match_id(version.id, n + 1)
        my_seats = [s for s, e in enumerate(entrants) if e is mine]
        journal.append(
            f"validation match {match_id} against {opponent.name}, {version.ref} in seats "
            + ", ".join(map(str, my_seats))
        )
        seed = derive_seed(store.secret_seed(), "validation", version.id, n)
        try:
            played = await player.play(match_id, seed, entrants)
        except ArenaError as err:
            if is_host_trouble(err):
                raise
            # The arena failed, not the bot: say so rather than blame the version.
            return "failed", f"the validation match could not be played: {err}", journal
        journal.append(f"result: {played.result.summary or played.result.reason}")
        journal += await trio.to_thread.run_sync(_outputs, store.directory, played.logs, my_seats)
        for fault in played.faults:
            if fault.seat in my_seats:
                return "failed", f"{fault.kind} in its validation match: {fault.detail}", journal
    return "validated", "", journal


def _outputs(directory: Path, logs: Sequence[str | None], seats: Sequence[int]) -> list[str]:
    """What the version wrote in each of its seats, headed by the seat."""
    out = []
    for seat in seats:
        path = logs[seat] if seat < len(logs) else None
        try:
            text = (directory / path).read_bytes().decode("utf-8", "replace") if path else ""
        except FileNotFoundError:
            text = ""
        out.append(
            f"--- seat {seat}'s output ---\n{text.rstrip()}" if text else f"seat {seat}: no output"
        )
    return out


def _write(path: Path, journal: Sequence[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(journal) + "\n", encoding="utf-8")


def _seated(places: Sequence[Sequence[int]], by_place: Sequence[Entrant]) -> list[Entrant]:
    """The entrant of each engine seat, from the entrant of each place."""
    n_seats = sum(len(group) for group in places)
    seats: list[Entrant | None] = [None] * n_seats
    for place, group in enumerate(places):
        for seat in group:
            seats[seat] = by_place[place]
    assert all(e is not None for e in seats)
    return [e for e in seats if e is not None]
