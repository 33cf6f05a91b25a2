"""The host's own routes (``/admin``, with the admin token): adding, listing, suspending and
reinstating authors, retiring anyone's version, steering and reopening the ladder, playing a
failed unit again, the validation queue, and the audit of every one of these actions."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query

from arena.host.api.deps import MAX_ID, PREFIX, Host, HostState, VersionId, require_admin
from arena.host.api.limits import _epoch, _stamp
from arena.host.api.views import author_out, host_status, version_out
from arena.host.apitypes import (
    AdminAuthor,
    AdminQueue,
    AuditOut,
    Control,
    NewAuthor,
    NewToken,
    Queued,
    Quota,
    Status,
    Suspended,
    UnitOut,
    VersionOut,
    Why,
)
from arena.host.config import check_units_per_minute
from arena.host.ladder import match_id
from arena.host.store import Author, Standing, Unit
from arena.host.throttle import DAY_S

router = APIRouter(prefix=f"{PREFIX}/admin", dependencies=[Depends(require_admin)])


@router.post("/authors", response_model=NewToken, status_code=201)
def add_author(body: NewAuthor, host: Host) -> NewToken:
    author, token = host.store.add_author(body.name)
    host.store.record_audit("add-author", author.name, {"id": author.id})
    return NewToken(author=author_out(author), token=token)


@router.post("/ladder", response_model=Status)
def steer(body: Control, host: Host) -> Status:
    # A refused request changes nothing: the pace is checked before the state moves (which
    # may be refused), and stored after.
    store = host.store
    pace = body.units_per_minute
    if pace is not None:
        try:
            pace = check_units_per_minute(pace)
        except ValueError as err:
            raise HTTPException(400, f"units_per_minute: {err}") from None
    before = store.ladder_state()
    if body.state is not None and body.state != before:
        store.set_ladder_state(body.state)
    if pace is not None:
        store.set_units_per_minute(pace)
    changes: dict[str, Any] = {}
    if body.state is not None and body.state != before:
        changes |= {"state": body.state, "was": before}
    if pace is not None:
        changes["units_per_minute"] = pace
    if changes:
        store.record_audit("ladder", "ladder", changes)
    host.changed()
    return host_status(host)


@router.post("/reopen", response_model=Status)
def reopen(host: Host) -> Status:
    """A closed ladder running again; the final's pending units fail ("reopened by the host")."""
    host.store.reopen_ladder()
    host.changed()
    return host_status(host)


# --- authors ------------------------------------------------------------------------------------


def _admin_author(
    host: HostState, author: Author, live: set[int], standings: dict[int, Standing]
) -> AdminAuthor:
    store, limits = host.store, host.config.limits
    created, held = store.author_usage(author.id, _stamp(host.clock() - DAY_S))
    versions = store.versions(author_id=author.id)
    standing = standings.get(author.id)
    quota = Quota(
        versions_today=len(created),
        versions_per_day=limits.versions_per_day,
        live_bots=sum(1 for v in versions if v.id in live),
        live_bots_per_author=limits.live_bots_per_author,
        stored_bytes=held,
        stored_bytes_limit=limits.stored_bytes_per_author,
    )
    return AdminAuthor(
        id=author.id,
        name=author.name,
        created=author.created,
        suspended=standing.suspended if standing else None,
        suspended_reason=standing.reason if standing else "",
        versions=[version_out(v, author) for v in versions],
        quota=quota,
    )


@router.get("/authors", response_model=list[AdminAuthor])
def authors(host: Host) -> list[AdminAuthor]:
    live, standings = host.live_versions(), host.store.standings_of_authors()
    return [_admin_author(host, a, live, standings) for a in host.store.authors()]


@router.post("/authors/{name}/suspend", response_model=Suspended)
def suspend(name: str, body: Why, host: Host) -> Suspended:
    done = host.store.suspend_author(name, body.reason)
    disconnected = host.disconnect_live(done.live)
    host.changed()
    return Suspended(
        author=_admin_author(
            host, done.author, host.live_versions(), host.store.standings_of_authors()
        ),
        retired=list(done.retired),
        disconnected=disconnected,
    )


@router.post("/authors/{name}/reinstate", response_model=NewToken)
def reinstate(name: str, host: Host) -> NewToken:
    author, token = host.store.reinstate_author(name)
    return NewToken(author=author_out(author), token=token)


@router.post("/versions/{version_id}/retire", response_model=VersionOut)
def retire(version_id: VersionId, body: Why, host: Host) -> VersionOut:
    v = host.store.retire_version(version_id, body.reason or "retired by the host")
    host.changed()
    return version_out(v, host.store.author(v.author_id))


# --- units, the queue, the audit ----------------------------------------------------------------


def _units_out(host: HostState, units: list[Unit]) -> list[UnitOut]:
    store = host.store
    refs = store.version_refs([v for u in units for v in u.table])
    again = store.reruns()
    return [
        UnitOut(
            id=u.id,
            phase=u.phase,
            table=[refs.get(v, str(v)) for v in u.table],
            state=u.state,
            reason=u.reason,
            created=u.created,
            finished=u.finished,
            rerun_as=again.get(u.id),
        )
        for u in units
    ]


def _failed_units(host: HostState) -> list[UnitOut]:
    failed = [u for u in host.store.units(state="failed") if u.phase in ("ladder", "final")]
    return _units_out(host, failed[::-1])


@router.get("/units", response_model=list[UnitOut])
def failed_units(host: Host) -> list[UnitOut]:
    """The failed units of the ladder and the final, newest first, with why."""
    return _failed_units(host)


@router.post("/units/{unit_id}/rerun", response_model=UnitOut, status_code=201)
def rerun(unit_id: int, host: Host) -> UnitOut:
    if not 0 <= unit_id <= MAX_ID:
        raise HTTPException(404, f"no unit {unit_id}")
    unit = host.store.rerun_unit(unit_id, match_id)
    host.play_unit(unit.id)
    return _units_out(host, [unit])[0]


@router.get("/queue", response_model=AdminQueue)
def queue(host: Host) -> AdminQueue:
    store, now = host.store, host.clock()
    waiting = sorted(
        store.versions(status="pending") + store.versions(status="validating"), key=lambda v: v.id
    )
    owners = {a.id: a for a in store.authors()}
    return AdminQueue(
        validation=[
            Queued(
                version=version_out(v, owners.get(v.author_id)),
                age_s=round(max(0.0, now - _epoch(v.created)), 1),
            )
            for v in waiting
        ],
        failed_units=_failed_units(host),
    )


@router.get("/audit", response_model=list[AuditOut])
def audit(host: Host, limit: Annotated[int, Query(ge=1, le=1000)] = 200) -> list[AuditOut]:
    """The latest admin actions, newest first."""
    return [
        AuditOut(id=e.id, at=e.at, actor=e.actor, action=e.action, target=e.target, detail=e.detail)
        for e in host.store.audit_log(limit)
    ]
