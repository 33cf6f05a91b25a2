"""The API's errors as the one-line ``{"detail": ...}`` bodies every client reads: a store's
refusal with its status, a request that fails validation with its first problems."""

from __future__ import annotations

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from arena.host.store import (
    CompetitionStore,
    CompetitionStoreError,
    Conflict,
    DatabaseLocked,
    Forbidden,
    NotFound,
)


def add_error_handlers(app: FastAPI) -> None:
    """Answer the store's errors and invalid requests on ``app`` in one line each."""

    @app.exception_handler(CompetitionStoreError)
    async def store_error(request: Request, err: CompetitionStoreError) -> JSONResponse:
        return JSONResponse({"detail": str(err)}, status_code=status_of(err))

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, err: RequestValidationError) -> JSONResponse:
        return JSONResponse({"detail": validation_line(err)}, status_code=422)


def status_of(err: CompetitionStoreError) -> int:
    if isinstance(err, NotFound):
        return 404
    if isinstance(err, Forbidden):
        return 403
    if isinstance(err, Conflict):
        return 409
    if isinstance(err, DatabaseLocked):
        return 503
    return 400


def validation_line(err: RequestValidationError) -> str:
    problems = []
    for e in err.errors()[:3]:
        where = ".".join(str(p) for p in e.get("loc", ()) if p != "body")
        problems.append(f"{where}: {e.get('msg', 'invalid')}" if where else str(e.get("msg")))
    return "; ".join(problems) or "invalid request"


def gone_if_pruned(store: CompetitionStore, path: str, what: str) -> None:
    """410 when the host's retention removed ``path`` (relative to the competition directory):
    the match and its result stay, the file is gone for good."""
    at = store.pruned_at(path)
    if at is not None:
        raise HTTPException(410, f"{what} was pruned by the host's retention ({at})")
