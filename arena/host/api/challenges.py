"""Challenges (``[challenges]``, arena/host/challenges.py): a signed-in author starts a match
against the ladder's versions (``POST /challenges``) and plays it on its page, ``/play/SECRET/``,
which this router passes through to the page's bridge on loopback (the people's page of
``arena play``: its feed as Server-Sent Events, the person's answers as POSTs). Anyone may read a
challenge (``GET /challenges/{id}``, the list): a human match, labelled ``human``; its record is
public once it is over (a challenge's deal is its own, played once).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated

import httpx
from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import FileResponse, JSONResponse, Response, StreamingResponse

from arena.host.api.deps import MAX_ID, PREFIX, Authed, Host, HostState, MatchId, Viewer
from arena.host.api.errors import gone_if_pruned
from arena.host.apitypes import ChallengeIn, ChallengeOut
from arena.host.challenges import CHALLENGE_PREFIX, PERSON_PREFIX, ChallengeRefused, Challenges
from arena.host.store import Challenge

router = APIRouter(prefix=PREFIX)
#: The person's pages, outside the API's prefix (a page, not JSON).
pages = APIRouter()

#: The largest answer a page sends (the bridge reads 1 KiB at most anyway).
MAX_ANSWER = 1024
#: The headers passed back from the bridge (its Content-Security-Policy above all).
PASSED = (
    "content-type",
    "content-security-policy",
    "cache-control",
    "x-content-type-options",
    "referrer-policy",
)


def _challenges(host: HostState) -> Challenges:
    if host.challenges is None or not host.config.challenges.enabled:
        raise HTTPException(404, "this host takes no challenges ([challenges] enabled = false)")
    return host.challenges


def is_challenge(match_id: str) -> bool:
    """Whether ``match_id`` names a challenge (their ids are theirs alone)."""
    return match_id.startswith(CHALLENGE_PREFIX)


def play_path(secret: str) -> str:
    return f"/play/{secret}/"


def challenge_out(host: HostState, c: Challenge, play_url: str | None = None) -> ChallengeOut:
    """A stored challenge as the API shows it."""
    refs = host.store.version_refs([v for v in c.seats if v is not None])
    author = host.store.author(c.author_id).name
    result = c.result or {}
    return ChallengeOut(
        match_id=c.match_id,
        unit=0,
        phase="challenge",
        rotation=0,
        seats=[PERSON_PREFIX + author if v is None else refs.get(v, str(v)) for v in c.seats],
        state=c.state,
        summary=result.get("summary"),
        reason=result.get("reason") or c.reason or None,
        ranks=result.get("ranks"),
        faults=c.faults,
        finished=c.finished,
        record_available=c.state == "done" and c.record_path is not None,
        human=True,
        author=author,
        person_seat=c.person_seat,
        rated=c.rated,
        created=c.created,
        play_url=play_url,
    )


@router.post("/challenges", response_model=ChallengeOut, status_code=201)
def start_challenge(
    body: ChallengeIn, request: Request, host: Host, author: Authed
) -> ChallengeOut:
    """Start a challenge: the author at ``seat`` against ``opponents``; its ``play_url`` is the
    author's page (keep it: it is the seat). 404 when the host takes none, 409 a version that
    cannot be challenged, 429 over ``[challenges]``' limits (``Retry-After``)."""
    runner = _challenges(host)
    for name in body.opponents:
        if not 1 <= len(name) <= 100:
            raise HTTPException(422, "opponents: each a bot's name or BOT@N")
    try:
        started = runner.start(author.id, author.name, body.opponents, body.seat)
    except ChallengeRefused as err:
        headers = {"Retry-After": str(err.retry_after)} if err.retry_after else None
        raise HTTPException(err.status, str(err), headers=headers) from None
    url = str(request.base_url).rstrip("/") + play_path(started.secret)
    return challenge_out(host, host.store.challenge(started.match_id), url)


@router.get("/challenges", response_model=list[ChallengeOut])
def list_challenges(
    host: Host,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[int, Query(ge=0, le=MAX_ID)] = 0,
) -> list[ChallengeOut]:
    """The challenges, newest first: human matches, never the ladder's."""
    return [challenge_out(host, c) for c in host.store.challenges(limit=limit, offset=offset)]


@router.get("/challenges/{match_id}", response_model=ChallengeOut)
def read_challenge(match_id: MatchId, request: Request, host: Host, who: Viewer) -> ChallengeOut:
    """A challenge's state; to its author while it is played, its ``play_url`` again."""
    c = host.store.challenge(match_id)
    url = None
    if who is not None and who.id == c.author_id and host.challenges is not None:
        secret = host.challenges.secret_of(match_id)
        if secret is not None:
            url = str(request.base_url).rstrip("/") + play_path(secret)
    return challenge_out(host, c, url)


@router.get(
    "/challenges/{match_id}/record",
    response_class=FileResponse,
    responses={200: {"content": {"application/gzip": {}}}},
)
def challenge_record(match_id: MatchId, host: Host) -> Response:
    """A finished challenge's record: a normal record, public at once (its deal is its own)."""
    return FileResponse(challenge_record_path(host, match_id), media_type="application/gzip")


def challenge_record_path(host: HostState, match_id: str) -> Path:
    """Where a finished challenge's record is; 404 before (or 410 once pruned)."""
    c = host.store.challenge(match_id)
    if c.state != "done" or c.record_path is None:
        raise HTTPException(404, f"challenge {match_id!r} is not finished")
    path = host.directory / c.record_path
    if not path.is_file():
        gone_if_pruned(host.store, c.record_path, f"the record of {match_id}")
        raise HTTPException(404, f"the record of {match_id} is gone")
    return path


# --- the person's page, passed through to its bridge --------------------------------------------


def _port(host: HostState, secret: str) -> int:
    port = None if host.challenges is None else host.challenges.page_port(secret)
    if port is None:
        raise HTTPException(404, "no such page (a challenge's page lives while it is played)")
    return port


def _headers(response: httpx.Response) -> dict[str, str]:
    return {k: v for k, v in response.headers.items() if k.lower() in PASSED}


def _client(read: float | None = 10.0) -> httpx.AsyncClient:
    # Plain HTTP on loopback: no certificates to load, no proxy taken from the environment.
    return httpx.AsyncClient(timeout=httpx.Timeout(10.0, read=read), verify=False, trust_env=False)


def _unreachable(host: HostState, secret: str, err: httpx.HTTPError) -> HTTPException:
    """The bridge did not answer: the match has just ended (its page is gone), or the bridge
    failed; either way one line, never the host's generic error."""
    _port(host, secret)  # 404 if the page has gone meanwhile
    return HTTPException(502, f"the table's page did not answer ({type(err).__name__}); reload")


@pages.get("/play/{secret}/", include_in_schema=False)
async def play_page(secret: str, host: Host) -> Response:
    port = _port(host, secret)
    try:
        async with _client() as client:
            got = await client.get(f"http://127.0.0.1:{port}/play/{secret}/")
    except httpx.HTTPError as err:
        raise _unreachable(host, secret, err) from None
    return Response(got.content, got.status_code, headers=_headers(got))


@pages.get("/play/{secret}/feed", include_in_schema=False)
async def play_feed(secret: str, host: Host) -> Response:
    port = _port(host, secret)
    client = _client(read=None)
    try:
        upstream = await client.send(
            client.build_request("GET", f"http://127.0.0.1:{port}/play/{secret}/feed"), stream=True
        )
    except httpx.HTTPError as err:
        await client.aclose()
        raise _unreachable(host, secret, err) from None

    async def relay() -> AsyncIterator[bytes]:
        try:
            async for chunk in upstream.aiter_raw():
                yield chunk
        except httpx.HTTPError:
            return  # the bridge has closed: the page has had the match's end
        finally:
            await upstream.aclose()
            await client.aclose()

    return StreamingResponse(relay(), upstream.status_code, headers=_headers(upstream))


@pages.post("/play/{secret}/answer", include_in_schema=False)
async def play_answer(secret: str, request: Request, host: Host) -> Response:
    port = _port(host, secret)
    body = await request.body()
    if len(body) > MAX_ANSWER:
        return JSONResponse({"error": "an answer is a few bytes"}, 413)
    try:
        async with _client() as client:
            got = await client.post(
                f"http://127.0.0.1:{port}/play/{secret}/answer",
                content=body,
                headers={"content-type": "application/json"},
            )
    except httpx.HTTPError as err:
        raise _unreachable(host, secret, err) from None
    return Response(got.content, got.status_code, headers=_headers(got))
