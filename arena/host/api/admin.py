"""The host's own routes (``/admin``, with the admin token): adding authors, steering the
ladder."""

from __future__ import annotations

from fastapi import APIRouter, Depends, HTTPException

from arena.host.api.deps import PREFIX, Host, require_admin
from arena.host.api.views import author_out, host_status
from arena.host.apitypes import Control, NewAuthor, NewToken, Status
from arena.host.config import check_units_per_minute

router = APIRouter(prefix=f"{PREFIX}/admin", dependencies=[Depends(require_admin)])


@router.post("/authors", response_model=NewToken, status_code=201)
def add_author(body: NewAuthor, host: Host) -> NewToken:
    author, token = host.store.add_author(body.name)
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
    if body.state is not None and body.state != store.ladder_state():
        store.set_ladder_state(body.state)
    if pace is not None:
        store.set_units_per_minute(pace)
    host.changed()
    return host_status(host)
