"""Bots and their versions: public reads (``/bots``, ``/versions/ID``, its head-to-head), and
what an author does with their own versions (retire, read the validation log, download)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from fastapi import APIRouter, HTTPException
from fastapi.responses import FileResponse, PlainTextResponse, Response

from arena.host.api.deps import PREFIX, Authed, Host, VersionId, Viewer
from arena.host.api.errors import gone_if_pruned
from arena.host.api.views import all_refs, bots_out, owned, pairwise, read_text, version_out
from arena.host.apitypes import BotOut, HeadToHead, VersionOut
from arena.host.images import image_path
from arena.host.validation import validated_by, validation_records
from arena.layout import IMAGES_DIR, RECORDS_DIR, SNAPSHOTS_DIR, record_name
from arena.snapshots.tree import snapshot_path

router = APIRouter(prefix=PREFIX)


@router.get("/bots", response_model=list[BotOut])
def bots(host: Host) -> list[BotOut]:
    return bots_out(host.store, None, None)


@router.get("/versions/{version_id}", response_model=VersionOut)
def version(version_id: VersionId, host: Host, viewer: Viewer) -> VersionOut:
    return version_out(host.store.version(version_id), viewer)


@router.get("/versions/{version_id}/head-to-head", response_model=list[HeadToHead])
def head_to_head(version_id: VersionId, host: Host) -> list[HeadToHead]:
    store = host.store
    store.version(version_id)  # 404 for an unknown one
    names = all_refs(store)
    tally = pairwise(store.finished_matches(version_id=version_id))
    return [
        HeadToHead(
            opponent=names.get(other, str(other)),
            matches=sum(row),
            wins=row[0],
            losses=row[1],
            draws=row[2],
        )
        for (mine, other), row in sorted(tally.items())
        if mine == version_id
    ]


@router.post("/versions/{version_id}/retire", response_model=VersionOut)
def retire(version_id: VersionId, host: Host, author: Authed) -> VersionOut:
    owned(host.store, version_id, author)
    v = host.store.set_status(version_id, "retired", "retired by its author")
    host.changed()
    return version_out(v, author)


@router.get("/versions/{version_id}/log", response_class=PlainTextResponse)
def version_log(version_id: VersionId, host: Host, author: Authed) -> PlainTextResponse:
    v = owned(host.store, version_id, author)
    if not v.log_path:
        raise HTTPException(404, f"version {v.ref} has no validation log")
    if not (host.directory / v.log_path).is_file():
        gone_if_pruned(host.store, v.log_path, f"the validation log of {v.ref}")
    return PlainTextResponse(read_text(host.directory / v.log_path))


@router.get("/versions/{version_id}/validation", response_model=list[str])
def validation(version_id: VersionId, host: Host, author: Authed) -> list[str]:
    """The ids of one's own version's validation matches whose records are kept."""
    v = owned(host.store, version_id, author)
    return validation_records(host.directory, v.id, host.config.validation.matches)


@router.get(
    "/versions/{version_id}/validation/{match_id}/record",
    response_class=FileResponse,
    responses={200: {"content": {"application/gzip": {}}}},
)
def validation_record(
    version_id: VersionId, match_id: str, host: Host, author: Authed
) -> FileResponse:
    """The record of one of one's own version's validation matches."""
    v = owned(host.store, version_id, author)
    if match_id not in validation_records(host.directory, v.id, host.config.validation.matches):
        if validated_by(match_id) == v.id:
            gone_if_pruned(
                host.store, f"{RECORDS_DIR}/{record_name(match_id)}", f"the record of {match_id}"
            )
        raise HTTPException(404, f"version {v.ref} has no validation match {match_id!r}")
    path = host.directory / RECORDS_DIR / record_name(match_id)
    return FileResponse(path, media_type="application/gzip", filename=path.name)


@router.get(
    "/versions/{version_id}/archive",
    response_class=Response,
    responses={200: {"content": {"application/gzip": {}, "application/x-tar": {}}}},
)
def archive(version_id: VersionId, host: Host, author: Authed) -> Response:
    v = owned(host.store, version_id, author)
    if v.sha256 is None:
        raise HTTPException(404, f"version {v.ref} is a live bot: it has no archive")
    if v.kind == "image":
        # The image tarball as stored (what was uploaded, without its tags).
        return FileResponse(
            image_path(host.directory / IMAGES_DIR, v.sha256), media_type="application/x-tar"
        )
    root = snapshot_path(host.directory / SNAPSHOTS_DIR, v.sha256)
    return Response(_tar_gz(root), media_type="application/gzip")


def _tar_gz(root: Path) -> bytes:
    """The snapshot as a .tar.gz of its files (what its author uploaded, re-packed)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for path in sorted(root.rglob("*")):
            tar.add(path, arcname=str(path.relative_to(root)), recursive=False)
    return out.getvalue()
