"""New versions: an archive or image uploaded (``PUT /bots/NAME/versions``), or a live bot
(``POST /bots/NAME/live``); an author's, while the competition is open."""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Literal

import anyio.to_thread
from fastapi import APIRouter, HTTPException, Request

from arena.bots.docker import DockerUnavailable
from arena.errors import ArenaError
from arena.host.api.deps import PREFIX, Authed, Host, HostState
from arena.host.api.limits import check_quota
from arena.host.api.views import version_out
from arena.host.apitypes import LiveVersion, VersionOut
from arena.host.config import CompetitionConfig
from arena.host.images import is_image_tarball, load_image, store_image
from arena.host.store import Author, CompetitionStore, Version
from arena.layout import IMAGES_DIR, SNAPSHOTS_DIR
from arena.snapshots.archive import ArchiveLimits
from arena.snapshots.tree import store_snapshot

router = APIRouter(prefix=PREFIX)

#: How arena/snapshots/archive.py and arena/host/images.py say an upload unpacks past its cap.
_TOO_BIG = ("unpacks to more than", "larger than its limit")

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
    # Over a quota, refused before the body is read.
    left = await anyio.to_thread.run_sync(_quota, host, author, 0)
    limits = _limits(host.config)
    if 0 <= left < limits.max_unpacked_bytes:
        limits = dataclasses.replace(limits, max_unpacked_bytes=left)
    data = await _body(request, limits.max_upload_bytes)
    v = await anyio.to_thread.run_sync(_stored, host, author, name, data, limits)
    host.changed()
    return version_out(v, author)


@router.post("/bots/{name}/live", response_model=LiveVersion, status_code=201)
def live(name: str, host: Host, author: Authed) -> LiveVersion:
    _open_for_submissions(host.store)
    with host.quota_lock:
        _quota(host, author, None)
        v, token = host.store.add_live_version(author.id, name, {"runtime": "live"})
    host.changed()
    return LiveVersion(version=version_out(v, author), token=token)


def _quota(host: HostState, author: Author, adding: int | None) -> int:
    """The bytes ``author`` may still store (-1: no limit), or the error over a quota;
    ``adding`` ``None``: a version that stores nothing (a live bot)."""
    q = host.config.limits
    return check_quota(
        lambda since: host.store.author_usage(author.id, since),
        host.clock(),
        q.versions_per_day,
        0 if adding is None else q.stored_bytes_per_author,
        adding or 0,
    )


def _stored(
    host: HostState, author: Author, name: str, data: bytes, limits: ArchiveLimits
) -> Version:
    """The upload checked, stored (a snapshot, or an image loaded into the engine) and added as
    the next version of ``name`` (blocking: run in a thread)."""
    try:
        kind, sha256, manifest = _unpacked(host, data, limits)
    except ArenaError as err:
        if limits.max_unpacked_bytes < host.config.submissions.max_unpacked_bytes and any(
            words in str(err) for words in _TOO_BIG
        ):
            # Cut down to what the author's quota leaves: said as the quota it is.
            raise HTTPException(
                409,
                "quota: this upload is more than what is left of your "
                f"{host.config.limits.stored_bytes_per_author:,} bytes of stored uploads "
                f"(limits.stored_mib_per_author): {err}",
            ) from None
        raise HTTPException(400, str(err)) from None
    with host.quota_lock:
        _quota(host, author, int(manifest["bytes"]))
        return host.store.add_version(author.id, name, kind, sha256, manifest)


def _unpacked(
    host: HostState, data: bytes, limits: ArchiveLimits
) -> tuple[Literal["archive", "image"], str, dict[str, Any]]:
    """The upload checked and stored: its kind, content address and manifest (with the
    ``bytes`` it holds, which the stored-bytes quota counts)."""
    directory = host.directory
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
            size = os.stat(image.path).st_size
            return "image", image.sha256, {**image.manifest, "bytes": size}
        snap = store_snapshot(data, directory / SNAPSHOTS_DIR, limits)
    except DockerUnavailable as err:
        raise HTTPException(503, str(err)) from None
    return "archive", snap.sha256, {**snap.manifest.to_dict(), "bytes": snap.total_bytes}


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
