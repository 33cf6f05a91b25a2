"""Bots on their way to the workers, as content-addressed snapshots (arena/snapshots/).

**The coordinator** makes each bot a snapshot before the first match: a competition's versions
already are one; a tournament bot's is its command, as the manifest, and the files it names
(:func:`bundle_bot`). :func:`pack_snapshot` turns a verified snapshot into the bytes offered on
the cluster.

**A worker** keeps a :class:`SnapshotCache`: a snapshot is fetched on its first use, unpacked
through the same checks as an upload, and kept only if its files hash to the address the task
names; one that does not is refused, never run. A cached snapshot is checked again the first
time each worker process uses it, so a copy changed on the worker's disk is thrown away and
fetched afresh.
"""

from __future__ import annotations

import io
import os
import shlex
import tarfile
import threading
import tomllib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import structlog

from arena.bots.command import BotProgram, BotProtocol
from arena.cluster.task import BotRef
from arena.errors import ArenaError
from arena.snapshots.archive import MANIFEST_NAME, ArchiveError, read_manifest
from arena.snapshots.tree import (
    Snapshot,
    SnapshotError,
    open_snapshot,
    remove_tree,
    snapshot_path,
    store_snapshot,
    verify_snapshot,
)

log = structlog.get_logger("arena.cluster")

#: Directory names left out of a tournament bot's files: caches that differ by machine.
_SKIPPED = frozenset({"__pycache__", ".git", ".mypy_cache", ".pytest_cache", ".ruff_cache"})


class BundleError(ArenaError):
    """A bot cannot be made a snapshot for the cluster."""


def named_files(command: str) -> list[str]:
    """The relative paths ``command`` names that exist here (run in the current directory): the
    files a tournament bot takes to the workers unless its config lists them (``files``)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return []
    return [
        w for w in dict.fromkeys(words) if os.sep in w and not os.path.isabs(w) and Path(w).exists()
    ]


def _inside(rel: str) -> str:
    parts = [p for p in Path(rel).parts if p not in ("", ".")]
    if not parts or ".." in parts or os.path.isabs(rel):
        raise BundleError(f"{rel!r} is not a path inside the current directory")
    return "/".join(parts)


def _walk(base: Path, rel: str) -> Iterator[tuple[Path, str]]:
    path = base / rel
    if not path.exists():
        raise BundleError(f"{rel!r} not found")
    yield path, rel
    if path.is_dir():
        for directory, dirs, files in os.walk(path, followlinks=False):
            dirs[:] = sorted(d for d in dirs if d not in _SKIPPED)
            for name in [*dirs, *sorted(files)]:
                full = Path(directory) / name
                if name.endswith(".pyc"):
                    continue
                yield full, full.relative_to(base).as_posix()


def _tar_member(tar: tarfile.TarFile, path: Path | None, arcname: str, data: bytes = b"") -> None:
    """Add one member with nothing but its name, kind, executable bit and bytes."""
    info = tarfile.TarInfo(arcname)
    if path is not None and path.is_dir():
        info.type = tarfile.DIRTYPE
        info.mode = 0o755
        tar.addfile(info)
        return
    if path is not None:
        data = path.read_bytes()  # follows a link: the bot gets the file it names
        info.mode = 0o755 if os.access(path, os.X_OK) else 0o644
    else:
        info.mode = 0o644
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def bundle_bot(
    name: str,
    command: str,
    files: Sequence[str],
    snapshots_dir: Path,
    base: Path | None = None,
    protocol: BotProtocol = "grpc",
) -> Snapshot:
    """Tournament bot ``name`` as a snapshot in ``snapshots_dir``: a manifest holding
    ``command`` (and ``protocol`` when the bot speaks stdio) and the ``files`` (paths relative to
    ``base``, the command's directory, by default the current one; directories whole), each at
    its relative path, so the command runs in the snapshot as it runs here. A bot's absolute
    paths are the worker's own: they travel as names, not files."""
    base = base if base is not None else Path.cwd()
    buf = io.BytesIO()
    manifest = f"command = {_toml_string(command)}\n".encode()
    if protocol != "grpc":
        manifest += f"protocol = {_toml_string(protocol)}\n".encode()
    try:
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
            _tar_member(tar, None, MANIFEST_NAME, manifest)
            seen = {MANIFEST_NAME}
            for rel in files:
                for path, arcname in _walk(base, _inside(rel)):
                    if arcname not in seen:
                        seen.add(arcname)
                        _tar_member(tar, path, arcname)
        return store_snapshot(buf.getvalue(), snapshots_dir)
    except (ArchiveError, BundleError, OSError) as err:
        raise BundleError(f'bot "{name}": its files cannot go to the cluster: {err}') from None


def _toml_string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    out = f'"{escaped}"'
    assert tomllib.loads(f"k = {out}")["k"] == text  # a control character would not survive
    return out


def pack_snapshot(snapshot: Snapshot) -> bytes:
    """The snapshot's files as an uncompressed tar (what a worker unpacks), after checking
    that they still hash to its address."""
    if not verify_snapshot(snapshot.root):
        raise SnapshotError(f"snapshot {snapshot.sha256} was changed: its files no longer match")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path, arcname in _walk(snapshot.root.parent, snapshot.root.name):
            if arcname != snapshot.root.name:
                _tar_member(tar, path, arcname.split("/", 1)[1])
    return buf.getvalue()


#: A snapshot's packed bytes, by its cluster key.
Fetch = Callable[[str], bytes]


class SnapshotCache:
    """A worker's verified snapshots, under ``directory/<sha256>/``."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._verified: set[str] = set()
        self._lock = threading.Lock()

    def program(self, ref: BotRef, fetch: Fetch) -> BotProgram:
        """How the snapshot ``ref`` starts here: fetched (``fetch(ref.key)``) and checked on
        first use. Raises
        :class:`SnapshotError` (one line) for a snapshot that does not match its address, and
        :class:`ArchiveError` when its command cannot start on this machine."""
        with self._lock:
            root = snapshot_path(self.directory, ref.sha256)
            if ref.sha256 not in self._verified:
                if root.exists() and not verify_snapshot(root):
                    log.warning("cached snapshot changed: fetching it again", sha256=ref.sha256)
                    remove_tree(root)
                if not root.exists():
                    self._store(ref, fetch)
                self._verified.add(ref.sha256)
            snapshot = open_snapshot(self.directory, ref.sha256, verify=False)
        read_manifest(snapshot.root)  # its command can start here
        return snapshot.program

    def _store(self, ref: BotRef, fetch: Fetch) -> None:
        data = fetch(ref.key)
        try:
            got = store_snapshot(data, self.directory)
        except ArchiveError as err:
            raise SnapshotError(
                f"snapshot {ref.sha256} from the cluster is refused: {err}"
            ) from None
        if got.sha256 != ref.sha256:
            if got.sha256 not in self._verified:
                remove_tree(got.root)
            raise SnapshotError(
                f"snapshot {ref.sha256} from the cluster does not match its address (its files "
                f"hash to {got.sha256}): refused"
            )
        log.info("snapshot fetched", sha256=ref.sha256, files=got.file_count)
