"""The matches in progress: who plays which, and nothing of what happens in them.

A unit plays one deal in every rotation of its places, so what is public in one rotation (the
cards played) is another rotation's hidden hands: nothing of a match's play may be shown before
its unit is over and its record published (``/matches/ID/viewer``). This list says only which
matches are being played, by whom. Only the host's own arena's matches are known as they play;
with ``[workers] dask`` the ladder's are on the cluster's workers (``on_workers``).
"""

from __future__ import annotations

from fastapi import APIRouter

from arena.host.api.deps import PREFIX, Host
from arena.host.apitypes import Live, LiveMatch
from arena.host.store import NotFound, StoredMatch

router = APIRouter(prefix=PREFIX)


@router.get("/live", response_model=Live)
def live(host: Host) -> Live:
    store = host.store
    found: list[StoredMatch] = []
    for match_id in host.running():
        try:
            m = store.match(match_id)
        except NotFound:
            continue  # a validation match: not the competition's
        if m.state == "pending":
            found.append(m)
    refs = store.version_refs([v for m in found for v in m.seats])
    return Live(
        matches=[
            LiveMatch(
                match_id=m.match_id,
                unit=m.unit_id,
                phase=m.phase,
                rotation=m.rotation,
                seats=[refs.get(v, str(v)) for v in m.seats],
            )
            for m in found
        ],
        on_workers=host.config.workers.dask is not None,
    )
