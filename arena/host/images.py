"""Bot versions submitted as Docker image tarballs (``docker save``), where the host has Docker.

An upload is an image tarball when it is a tar (or gzip-compressed tar) with ``manifest.json`` at
its root and no ``cardarena.toml`` (:func:`is_image_tarball`); anything else is an archive of
source (:mod:`arena.snapshots.archive`). :func:`store_image` checks it and keeps a rebuilt copy as
``IMAGES/<id>.tar``, read-only; :func:`image_program` loads it into the Docker engine when the
engine does not have it (again) and says how to start it. The bot then runs in a locked-down
container (:mod:`arena.bots.docker`), as an ``image:`` bot of ``arena match`` does.

The content address is the image id: the SHA-256 of the image's configuration, which names
every layer's digest, so the engine itself checks on every load that the layers are the ones
submitted (a changed tarball loads as another id, and is refused).

What a tarball may be (decided here once):

- Exactly one image in ``manifest.json``; its configuration and layers are members of the
  tarball, regular files, their paths checked as an archive's (no absolute path, no ``..``). Only
  those members are kept: the rebuilt tarball has no tags (``RepoTags``, ``repositories``, the
  OCI index), so a submission can never retag an image the host has.
- Layers uncompressed (as ``docker save`` writes them), so the unpacked limit bounds what the
  engine unpacks: a gzip layer is refused rather than expanded on the engine's disk.
- Built for this machine (``linux`` and its architecture), with a command (``CMD`` or
  ``ENTRYPOINT``). The image's user, network and mounts do not matter: the container runs as
  uid nobody with no network, a read-only root and no capabilities.
- The upload limits of archives apply: upload size, member count, unpacked bytes. Images are
  large; a host taking them raises ``max_upload_mib`` and ``max_unpacked_mib``.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import importlib
import io
import json
import os
import platform
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from arena.bots.command import BotProgram
from arena.bots.docker import docker_client
from arena.snapshots.archive import (
    MANIFEST_NAME,
    ArchiveError,
    ArchiveLimits,
    archive_format,
    member_path,
)
from arena.snapshots.tree import SnapshotError, is_sha256

#: The image tarball's own manifest, at its root.
IMAGE_MANIFEST = "manifest.json"
#: Largest manifest or image configuration read.
MAX_JSON_BYTES = 1 << 20
#: Most layers an image may have.
MAX_LAYERS = 127
#: Repository under which stored images are tagged on the engine (``cardarena/version:<id>``):
#: untagged images are "dangling", and ``docker image prune`` would remove them.
TAG_REPOSITORY = "cardarena/version"
_CHUNK = 1 << 20
#: Tar bytes allowed per member beyond its data (header, padding, a pax header).
_MEMBER_OVERHEAD = 16 * 1024
#: Python's names for machines → Docker's (``platform.machine()``).
_ARCHITECTURES = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}


@dataclass(frozen=True, slots=True)
class StoredImage:
    """A checked image tarball, kept under its id."""

    #: The image id without ``sha256:`` (hex of the configuration's SHA-256).
    sha256: str
    #: The rebuilt tarball.
    path: Path
    #: What a version keeps of it: runtime ``image``, the id, its command.
    manifest: dict[str, str]


def _error(problem: str) -> ArchiveError:
    return ArchiveError(f"image tarball: {problem}")


def host_architecture() -> str:
    """This machine's architecture as Docker names it (``amd64``, ``arm64``)."""
    machine = platform.machine().lower()
    return _ARCHITECTURES.get(machine, machine)


def image_path(images_dir: Path, sha256: str) -> Path:
    """Where the tarball of image ``sha256`` is kept (refuses anything but an id)."""
    if not is_sha256(sha256):
        raise SnapshotError(f"{sha256[:80]!r} is not an image id")
    return images_dir / f"{sha256}.tar"


def _names(data: bytes, limits: ArchiveLimits) -> list[str] | None:
    """The member names of a tar ``data`` (``None``: not a tar or gzip'd tar, or unreadable)."""
    try:
        kind = archive_format(data)
    except ArchiveError:
        return None
    if kind == "zip":
        return None
    names = []
    try:
        with _opened(data, limits) as archive:
            for member in archive:
                names.append(member.name.removeprefix("./"))
    except (tarfile.TarError, OSError, EOFError, ArchiveError):
        return None
    return names


def is_image_tarball(data: bytes, limits: ArchiveLimits) -> bool:
    """Whether an upload is a ``docker save`` tarball rather than an archive of source."""
    names = _names(data, limits)
    if names is None or IMAGE_MANIFEST not in names:
        return False
    return not any(n == MANIFEST_NAME or n.endswith("/" + MANIFEST_NAME) for n in names)


@contextlib.contextmanager
def _opened(data: bytes, limits: ArchiveLimits) -> Iterator[tarfile.TarFile]:
    """The tarball, seekable: ``data`` itself, or a gzip'd one decompressed into a temporary
    file, cut off past the unpacked limit (and an allowance per member for headers)."""
    if not data.startswith(b"\x1f\x8b"):
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
            yield archive
        return
    cap = limits.max_unpacked_bytes + (limits.max_files + 4) * _MEMBER_OVERHEAD
    with tempfile.TemporaryFile() as plain:
        with gzip.GzipFile(fileobj=io.BytesIO(data), mode="rb") as source:
            total = 0
            while chunk := source.read(_CHUNK):
                total += len(chunk)
                if total > cap:
                    raise _error(f"it unpacks to more than the limit of {cap} bytes")
                plain.write(chunk)
        plain.seek(0)
        with tarfile.open(fileobj=plain, mode="r:") as archive:
            yield archive


def _read_json(archive: tarfile.TarFile, member: tarfile.TarInfo, what: str) -> tuple[Any, bytes]:
    """A JSON member, parsed, and its bytes."""
    if member.size > MAX_JSON_BYTES:
        raise _error(f"its {what} is larger than {MAX_JSON_BYTES} bytes")
    f = archive.extractfile(member)
    assert f is not None  # a regular file
    raw = f.read()
    try:
        return json.loads(raw), raw
    except (ValueError, UnicodeDecodeError) as err:
        raise _error(f"its {what} is not JSON ({err})") from None


def _members(archive: tarfile.TarFile, limits: ArchiveLimits) -> dict[str, tarfile.TarInfo]:
    """The tarball's regular files by checked path; refuses what no image tarball holds."""
    files: dict[str, tarfile.TarInfo] = {}
    count = total = 0
    for member in archive:
        count += 1
        if count > limits.max_files:
            raise _error(f"more than {limits.max_files} members")
        path = member_path(member.name, limits)
        if member.isdir():
            continue
        if not member.isreg():
            # docker save writes none; one would need following where it points.
            raise _error(f'member "{member.name}" is not a regular file or directory')
        if path in files:
            raise _error(f'member "{member.name}" appears twice')
        total += member.size
        if total > limits.max_unpacked_bytes:
            raise _error(f"it unpacks to more than the limit of {limits.max_unpacked_bytes} bytes")
        files[path] = member
    return files


def _one_image(manifest: Any) -> tuple[str, list[str]]:
    if not isinstance(manifest, list) or len(manifest) != 1 or not isinstance(manifest[0], dict):
        n = len(manifest) if isinstance(manifest, list) else 0
        raise _error(f"{IMAGE_MANIFEST} must name exactly one image (it names {n}); save one")
    entry = manifest[0]
    config, layers = entry.get("Config"), entry.get("Layers")
    if not isinstance(config, str) or not isinstance(layers, list):
        raise _error(f"{IMAGE_MANIFEST} has no Config and Layers")
    if not all(isinstance(layer, str) for layer in layers) or len(layers) > MAX_LAYERS:
        raise _error(f"{IMAGE_MANIFEST}'s Layers must be at most {MAX_LAYERS} paths")
    return config, layers


def _check_config(config: Any, n_layers: int) -> list[str]:
    """The image's command, from its configuration; refuses one this host cannot run."""
    if not isinstance(config, dict):
        raise _error("its configuration is not a JSON object")
    os_name, arch = config.get("os"), config.get("architecture")
    if os_name != "linux" or arch != host_architecture():
        raise _error(f"built for {os_name}/{arch}; this host runs linux/{host_architecture()}")
    rootfs = config.get("rootfs")
    diff_ids = rootfs.get("diff_ids") if isinstance(rootfs, dict) else None
    if not isinstance(diff_ids, list) or len(diff_ids) != n_layers:
        raise _error("its configuration's layer digests do not match its layers")
    run = config.get("config")
    if not isinstance(run, dict):
        run = {}
    command: list[str] = []
    for key in ("Entrypoint", "Cmd"):
        part = run.get(key)
        if isinstance(part, list) and all(isinstance(p, str) for p in part):
            command += part
    if not command:
        raise _error("the image has no command (give it a CMD or ENTRYPOINT)")
    return command


def _check_layer(archive: tarfile.TarFile, member: tarfile.TarInfo) -> None:
    f = archive.extractfile(member)
    assert f is not None
    head = f.read(512)
    # An uncompressed tar starts with a ustar header (or is an empty layer: zeros).
    if not (head[257:262] == b"ustar" or head == bytes(len(head))):
        raise _error(f'layer "{member.name}" is compressed or not a tar (save with docker save)')


def _write_tarball(
    archive: tarfile.TarFile,
    files: dict[str, tarfile.TarInfo],
    config_path: str,
    layers: list[str],
    out: IO[bytes],
) -> None:
    """The kept members and a manifest without tags, as a new tar."""
    manifest = json.dumps([{"Config": config_path, "RepoTags": None, "Layers": layers}]).encode()
    with tarfile.open(fileobj=out, mode="w:", format=tarfile.PAX_FORMAT) as new:
        for path in dict.fromkeys([config_path, *layers]):
            old = files[path]
            info = tarfile.TarInfo(path)
            info.size, info.mode = old.size, 0o644
            new.addfile(info, archive.extractfile(old))
        info = tarfile.TarInfo(IMAGE_MANIFEST)
        info.size, info.mode = len(manifest), 0o644
        new.addfile(info, io.BytesIO(manifest))


def store_image(data: bytes, images_dir: Path, limits: ArchiveLimits) -> StoredImage:
    """Check an image tarball and keep it (rebuilt, see the module's docstring) under its id;
    idempotent. Raises :class:`ArchiveError` in one line when it is refused."""
    if len(data) > limits.max_upload_bytes:
        raise _error(f"larger than the upload limit of {limits.max_upload_bytes} bytes")
    images_dir.mkdir(parents=True, exist_ok=True)
    try:
        with _opened(data, limits) as archive:
            files = _members(archive, limits)
            if IMAGE_MANIFEST not in files:
                raise _error(f"no {IMAGE_MANIFEST} at its root (make it with docker save)")
            manifest, _ = _read_json(archive, files[IMAGE_MANIFEST], IMAGE_MANIFEST)
            config_name, layer_names = _one_image(manifest)
            config_path = member_path(config_name, limits)
            layers = [member_path(name, limits) for name in layer_names]
            for path in [config_path, *layers]:
                if path not in files:
                    raise _error(f'{IMAGE_MANIFEST} names "{path}", which it does not hold')
            config, raw = _read_json(archive, files[config_path], "configuration")
            command = _check_config(config, len(layers))
            sha256 = hashlib.sha256(raw).hexdigest()
            named = Path(config_path).name.removesuffix(".json")
            if is_sha256(named) and named != sha256:
                raise _error("its configuration does not match its name (the tarball was altered)")
            for path in dict.fromkeys(layers):
                _check_layer(archive, files[path])
            final = image_path(images_dir, sha256)
            if not final.exists():
                fd, part = tempfile.mkstemp(prefix=".tmp-", suffix=".tar", dir=images_dir)
                try:
                    with os.fdopen(fd, "wb") as out:
                        _write_tarball(archive, files, config_path, layers, out)
                        out.flush()
                        os.fsync(out.fileno())
                    os.chmod(part, 0o444)
                    os.replace(part, final)
                finally:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(part)
    except (tarfile.TarError, EOFError, gzip.BadGzipFile) as err:
        raise _error(f"unreadable ({err})") from None
    manifest_out = {
        "runtime": "image",
        "image": f"sha256:{sha256}",
        "command": " ".join(command),
    }
    return StoredImage(sha256, final, manifest_out)


def load_image(images_dir: Path, sha256: str) -> None:
    """Make sure the Docker engine has image ``sha256``, tagged: it is loaded from its stored
    tarball when the engine lacks it (pruned, or a fresh engine). Blocking. Raises
    :class:`~arena.bots.docker.DockerUnavailable`, :class:`SnapshotError` (the tarball is gone or
    changed) or :class:`ArchiveError` (the engine refused it), each in one line."""
    docker = importlib.import_module("docker")
    image_id = f"sha256:{sha256}"
    client = docker_client()
    try:
        try:
            client.images.get(image_id).tag(TAG_REPOSITORY, sha256)
            return
        except docker.errors.ImageNotFound:
            pass
        path = image_path(images_dir, sha256)
        if not path.is_file():
            raise SnapshotError(f"no stored tarball of image {sha256} in {images_dir}")
        try:
            with path.open("rb") as f:
                loaded = client.images.load(f)
        except docker.errors.DockerException as err:
            text = str(err).strip().splitlines()
            raise _error(f"the Docker engine refused it ({text[0] if text else err})") from None
        ids = {image.id for image in loaded}
        if image_id not in ids:
            with contextlib.suppress(Exception):
                for other in ids:
                    client.images.remove(other, force=True)
            raise SnapshotError(f"image {sha256}: its stored tarball loads as another image")
        client.images.get(image_id).tag(TAG_REPOSITORY, sha256)
    finally:
        client.close()


def image_program(images_dir: Path, sha256: str) -> BotProgram:
    """How a version submitted as image ``sha256`` starts (the engine gets it first)."""
    load_image(images_dir, sha256)
    return BotProgram(image=f"sha256:{sha256}")


def remove_partial_tarballs(images_dir: Path) -> None:
    """Remove the half-written tarballs of a host killed mid-upload (at start, before any
    upload can be under way)."""
    with contextlib.suppress(FileNotFoundError):
        for name in os.listdir(images_dir):
            if name.startswith(".tmp-"):
                with contextlib.suppress(OSError):
                    os.unlink(images_dir / name)
