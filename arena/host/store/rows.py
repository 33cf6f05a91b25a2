"""Rows read back as values, each held to the shape the store's callers rely on (a
``ValueError`` otherwise, which the store's reads word as damage), and the checks of values
given to the store."""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping, Sequence
from typing import cast

from arena.host.store.schema import (
    PHASES,
    UNIT_STATES,
    VERSION_KINDS,
    VERSION_STATUSES,
    CompetitionStoreError,
    MatchState,
    Phase,
    StoredMatch,
    Unit,
    UnitState,
    Version,
    VersionKind,
    VersionStatus,
)
from arena.registry import NAME_RE
from arena.sqlite import Row


def where_clause(*filters: tuple[str, object | None]) -> tuple[str, list[object]]:
    """`` WHERE col=? AND …`` for the filters whose value is given, and those values (column
    names come from this module only, never from a caller)."""
    given = [(column, value) for column, value in filters if value is not None]
    if not given:
        return "", []
    return " WHERE " + " AND ".join(f"{c}=?" for c, _ in given), [v for _, v in given]


def new_token(prefix: str) -> str:
    """A fresh secret token: 192 random bits, URL-safe, after its kind's prefix."""
    return prefix + secrets.token_urlsafe(24)


def check_name(what: str, name: object) -> None:
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        raise CompetitionStoreError(
            f"{what} must be 1-32 letters, digits, '_', '.' or '-' starting with a letter or "
            f"digit; got {name!r}"
        )


def read_version(row: Row) -> Version:
    manifest = json.loads(row["manifest"])
    if not isinstance(manifest, dict):
        raise ValueError(f"version {row['id']}: the manifest is not a JSON object")
    kind, status = str(row["kind"]), str(row["status"])
    if kind not in VERSION_KINDS or status not in VERSION_STATUSES:
        raise ValueError(f"version {row['id']}: kind {kind!r}, status {status!r}")
    return Version(
        id=int(row["id"]),
        bot_id=int(row["bot_id"]),
        bot=str(row["bot"]),
        author_id=int(row["author_id"]),
        number=int(row["number"]),
        kind=cast(VersionKind, kind),
        sha256=None if row["sha256"] is None else str(row["sha256"]),
        manifest=manifest,
        status=cast(VersionStatus, status),
        reason=str(row["reason"]),
        log_path=None if row["log_path"] is None else str(row["log_path"]),
        created=str(row["created"]),
        updated=str(row["updated"]),
    )


def int_list(text: str, what: str) -> tuple[int, ...]:
    values = json.loads(text)
    if not isinstance(values, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in values
    ):
        raise ValueError(f"{what} must be a list of version ids")
    return tuple(values)


def read_unit(row: Row) -> Unit:
    phase, state = str(row["phase"]), str(row["state"])
    if phase not in PHASES or state not in UNIT_STATES:
        raise ValueError(f"unit {row['id']}: phase {phase!r}, state {state!r}")
    return Unit(
        id=int(row["id"]),
        phase=cast(Phase, phase),
        seed=int(row["seed"]),
        table=int_list(row["table_versions"], "a table"),
        state=cast(UnitState, state),
        reason=str(row["reason"]),
        created=str(row["created"]),
        finished=None if row["finished"] is None else str(row["finished"]),
    )


def read_unit_state(value: object) -> UnitState:
    state = str(value)
    if state not in UNIT_STATES:
        raise ValueError(f"unit state {state!r}")
    return cast(UnitState, state)


def read_match(row: Row) -> StoredMatch:
    seats = int_list(row["seats"], "seats")
    result = None if row["result"] is None else json.loads(row["result"])
    faults = [] if row["faults"] is None else json.loads(row["faults"])
    problem = "" if result is None else result_problem(len(seats), result, faults)
    if problem:
        raise ValueError(problem)
    state = str(row["state"])
    if state not in ("pending", "done", "void"):
        raise ValueError(f"state {state!r}")
    return StoredMatch(
        match_id=str(row["match_id"]),
        unit_id=int(row["unit_id"]),
        phase=cast(Phase, str(row["phase"])),
        seed=int(row["seed"]),
        rotation=int(row["rotation"]),
        seats=seats,
        state=cast(MatchState, state),
        result=result,
        faults=faults,
        record_path=None if row["record_path"] is None else str(row["record_path"]),
        finished=None if row["finished"] is None else str(row["finished"]),
    )


def result_problem(n_seats: int, result: object, faults: object) -> str:
    """What is wrong with a result and its faults for a match of ``n_seats`` seats, ``""`` when
    nothing: the shape the ratings and reports rely on."""
    if not isinstance(result, Mapping):
        return "the result must be a JSON object (Result.to_dict())"
    ranks = result.get("ranks")
    if not (
        isinstance(ranks, list)
        and len(ranks) == n_seats
        and all(isinstance(r, int) and not isinstance(r, bool) and r >= 1 for r in ranks)
    ):
        return f"the result's ranks must be {n_seats} whole numbers from 1; got {ranks!r}"
    if not (
        isinstance(faults, Sequence)
        and not isinstance(faults, str)
        and all(
            isinstance(f, Mapping) and isinstance(f.get("seat"), int) and 0 <= f["seat"] < n_seats
            for f in faults
        )
    ):
        return "faults must be a list of {seat, kind, detail} of the match's seats"
    return ""
