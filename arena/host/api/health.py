"""The host watched by its operators: ``/healthz`` (for a monitor or a supervisor's probe) and
``/metrics`` (Prometheus's text format, arena/host/metrics.py). Public and read-only, as
``/status`` is, at the root (where monitors look), outside the API's schema."""

from __future__ import annotations

from typing import cast

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from arena.host.api.deps import Host
from arena.host.metrics import CONTENT_TYPE, HostMetrics
from arena.host.store import CompetitionStoreError

router = APIRouter()


@router.get("/healthz", include_in_schema=False)
def healthz(host: Host) -> JSONResponse:
    """200 ``{"status": "ok", …}`` when the store reads and every part runs; else 503 with
    ``"status": "unhealthy"`` and what is wrong (a part in its restart pause, say)."""
    problems: list[str] = []
    try:
        host.store.ladder_state()  # one row of one table: the store answers
    except CompetitionStoreError as err:
        problems.append(f"store: {err}")
    parts = host.parts()
    problems += [
        f"{name}: restarting after a failure (the log has why)"
        for name, state in sorted(parts.items())
        if state == "restarting"
    ]
    body = {"status": "unhealthy" if problems else "ok", "parts": parts, "problems": problems}
    return JSONResponse(body, status_code=503 if problems else 200)


@router.get("/metrics", include_in_schema=False)
def metrics(request: Request) -> Response:
    """The host's metrics in Prometheus's text format."""
    found = cast(HostMetrics, request.app.state.metrics)
    return Response(found.scrape(), media_type=CONTENT_TYPE)
