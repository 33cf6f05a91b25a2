"""New versions: an archive or image uploaded (``PUT /bots/NAME/versions``), or a live bot
(``POST /bots/NAME/live``); an author's, while the competition is open."""

from __future__ import annotations

import anyio.to_thread
from fastapi import APIRouter, HTTPException, Request

from arena.bots.docker import DockerUnavailable
from arena.errors import ArenaError
from arena.host.api.deps import PREFIX, Authed, Host, HostState
from arena.host.api.views import version_out
from arena.host.apitypes import LiveVersion, VersionOut
from arena.host.config import CompetitionConfig
from arena.host.images import is_image_tarball, load_image, store_image
from arena.host.store import Author, CompetitionStore, Version
from arena.layout import IMAGES_DIR, SNAPSHOTS_DIR
from arena.snapshots.archive import ArchiveLimits
from arena.snapshots.tree import store_snapshot

router = APIRouter(prefix=PREFIX)

_OCTET_STREAM_BODY = {
    "requestBody": {
        "required": True,
        "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}},
    }
}


@router.put(
    "/bots/{name}/versions",
    response_model=VersionOut,
    status_code=201,
    openapi_extra=_OCTET_STREAM_BODY,
)
async def submit(name: str, request: Request, host: Host, author: Authed) -> VersionOut:
    await anyio.to_thread.run_sync(_open_for_submissions, host.store)
    limits = _limits(host.config)
    data = await _body(request, limits.max_upload_bytes)
    v = await anyio.to_thread.run_sync(_stored, host, author, name, data, limits)
    host.changed()
    return version_out(v, author)


@router.post("/bots/{name}/live", response_model=LiveVersion, status_code=201)
def live(name: str, host: Host, author: Authed) -> LiveVersion:
    _open_for_submissions(host.store)
    v, token = host.store.add_live_version(author.id, name, {"runtime": "live"})
    host.changed()
    return LiveVersion(version=version_out(v, author), token=token)


def _stored(
    host: HostState, author: Author, name: str, data: bytes, limits: ArchiveLimits
) -> Version:
    """The upload checked, stored (a snapshot, or an image loaded into the engine) and added as
    the next version of ``name`` (blocking: run in a thread)."""
    store, directory = host.store, host.directory
    try:
        if is_image_tarball(data, limits):
            if not host.config.submissions.allow_images:
                raise HTTPException(
                    400,
                    "this competition takes archives of source only, not Docker image "
                    "tarballs (its host has not set submissions.allow_images)",
                )
            image = store_image(data, directory / IMAGES_DIR, limits)
            # Loaded now, so an image the engine refuses is refused at once.
            load_image(directory / IMAGES_DIR, image.sha256)
            return store.add_version(author.id, name, "image", image.sha256, image.manifest)
        snap = store_snapshot(data, directory / SNAPSHOTS_DIR, limits)
    except DockerUnavailable as err:
        raise HTTPException(503, str(err)) from None
    except ArenaError as err:
        raise HTTPException(400, str(err)) from None
    return store.add_version(author.id, name, "archive", snap.sha256, snap.manifest.to_dict())


def _limits(config: CompetitionConfig) -> ArchiveLimits:
    s = config.submissions
    return ArchiveLimits(
        max_upload_bytes=s.max_upload_bytes,
        max_files=s.max_files,
        max_unpacked_bytes=s.max_unpacked_bytes,
    )


async def _body(request: Request, limit: int) -> bytes:
    """The request's body, refused (413) as soon as it passes ``limit`` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise HTTPException(413, f"the upload is larger than {limit:,} bytes")
    parts: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HTTPException(413, f"the upload is larger than {limit:,} bytes")
        parts.append(chunk)
    if size == 0:
        raise HTTPException(400, "no archive in the request's body")
    return b"".join(parts)


def _open_for_submissions(store: CompetitionStore) -> None:
    """409 once the host has closed the competition: its versions are frozen for the final."""
    if store.ladder_state() == "closed":
        raise HTTPException(409, "the competition is closed: no more submissions")
