"""Events (arena/host/events): ``/events`` and ``/events/{name}`` (public), and the host's
``/admin/events/{name}/start``."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi import Path as PathParam

from arena.host.api.deps import PREFIX, Host, require_admin
from arena.host.apitypes import EventDetail, EventOut
from arena.host.events.rounds import start_now
from arena.host.events.views import event_detail, event_list

router = APIRouter(prefix=PREFIX)

EventName = Annotated[str, PathParam(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$")]


@router.get("/events", response_model=list[EventOut])
def events(host: Host) -> list[EventOut]:
    """Every started event (running or finished), then the configured ones still to start."""
    return event_list(host.store, host.config)


@router.get("/events/{name}", response_model=EventDetail)
def event(name: EventName, host: Host) -> EventDetail:
    """One event: its rounds, each tie with its deals and their match ids, who went through;
    a Swiss event's standings; the winner once finished."""
    return event_detail(host.store, host.config, name)


@router.post(
    "/admin/events/{name}/start",
    response_model=EventDetail,
    dependencies=[Depends(require_admin)],
)
def start(name: EventName, host: Host) -> EventDetail:
    """Start a configured event now (its entrants: the ladder's best at this moment)."""
    start_now(host.store, host.config, host.standings().ladder, name)
    host.changed()
    return event_detail(host.store, host.config, name)
