"""Bot versions stored as immutable, content-addressed snapshots: ``SNAPSHOTS/<sha256>/``.

:func:`store_snapshot` unpacks an upload (:mod:`arena.snapshots.archive`) into a temporary directory
inside the snapshots directory, checks it, hashes it, makes it read-only and renames it into
place in one step, so a snapshot directory is either absent or complete. Storing the same files
again (another archive format, order, owner or time) finds the existing snapshot and keeps it.
A version runs from its snapshot, sandboxed as any bot command: :attr:`Snapshot.program` is the
manifest's command with the snapshot as its directory.

The content address (:func:`tree_digest`) is the SHA-256 of a canonical form of the tree, so it
can be recomputed anywhere from the files alone: the header ``cardarena-snapshot-v1`` and a NUL,
then for each entry but the root, in the byte order of their paths (UTF-8, ``/`` between
components), one record::

    d PATH NUL                               a directory
    f PATH NUL SIZE DATA                     a file (``x`` instead of ``f``: executable)

where ``SIZE`` is the file's length as 8 bytes, big-endian, and ``DATA`` its bytes. Nothing else
counts: not times, not owners, not any mode bit but the executable one.

Read-only (files 0o444 or 0o555, directories 0o555) makes changing a snapshot by mistake hard,
not impossible: :func:`verify_snapshot` recomputes the address, before a version runs and on
workers that receive one. A temporary directory is named ``.tmp-…`` and locked (``flock``) by the
process filling it; a process killed mid-upload leaves one unlocked, which the next call removes.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import re
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from arena.bots.command import BotProgram
from arena.errors import ArenaError
from arena.snapshots.archive import (
    DEFAULT_LIMITS,
    ArchiveLimits,
    Manifest,
    read_manifest,
    unpack_archive,
)

#: Prefix of the temporary directories uploads are unpacked in.
TEMP_PREFIX = ".tmp-"
#: The canonical form's first bytes; a new form gets a new header.
DIGEST_HEADER = b"cardarena-snapshot-v1\0"
_SHA256_RE = re.compile(r"[0-9a-f]{64}")
_CHUNK = 1 << 20


class SnapshotError(ArenaError):
    """A stored snapshot is missing or does not match its content address."""


@dataclass(frozen=True, slots=True)
class TreeDigest:
    """A tree's content address and what it counted."""

    #: SHA-256 of the canonical form, hex.
    sha256: str
    #: Regular files.
    file_count: int
    #: Their bytes.
    total_bytes: int


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One stored version's files."""

    #: Content address, hex; also the directory's name.
    sha256: str
    #: The snapshot's directory, the bot's working directory.
    root: Path
    #: Its ``cardarena.toml``.
    manifest: Manifest
    #: Regular files in it.
    file_count: int
    #: Their bytes.
    total_bytes: int

    @property
    def program(self) -> BotProgram:
        """How the version starts: its command, run in its snapshot, over its protocol."""
        return BotProgram(
            command=self.manifest.command,
            workdir=str(self.root),
            protocol=self.manifest.protocol,
        )


def is_sha256(text: str) -> bool:
    """Whether ``text`` is a content address (64 lower-case hex digits)."""
    return _SHA256_RE.fullmatch(text) is not None


def _entries(root: Path) -> list[tuple[bytes, bool]]:
    """Every entry under ``root`` as (path bytes, is a directory), never following a link;
    raises :class:`SnapshotError` on anything but files and directories."""
    found: list[tuple[bytes, bool]] = []
    pending: list[tuple[str, bytes]] = [(str(root), b"")]
    while pending:
        directory, prefix = pending.pop()
        with os.scandir(directory) as it:
            for entry in it:
                rel = prefix + os.fsencode(entry.name)
                if entry.is_dir(follow_symlinks=False):
                    found.append((rel, True))
                    pending.append((entry.path, rel + b"/"))
                elif entry.is_file(follow_symlinks=False):
                    found.append((rel, False))
                else:
                    raise SnapshotError(
                        f"{entry.path}: not a regular file or directory in a snapshot"
                    )
    found.sort()
    return found


def tree_digest(root: Path) -> TreeDigest:
    """The content address of the tree at ``root`` (the module's docstring gives the form)."""
    digest = hashlib.sha256(DIGEST_HEADER)
    files = total = 0
    for rel, is_dir in _entries(root):
        if is_dir:
            digest.update(b"d" + rel + b"\0")
            continue
        path = os.path.join(os.fsencode(root), rel)
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with open(fd, "rb", closefd=True) as f:
            info = os.fstat(fd)
            kind = b"x" if info.st_mode & 0o111 else b"f"
            digest.update(kind + rel + b"\0" + info.st_size.to_bytes(8, "big"))
            seen = 0
            while chunk := f.read(_CHUNK):
                seen += len(chunk)
                digest.update(chunk)
        if seen != info.st_size:
            raise SnapshotError(f"{os.fsdecode(path)}: changed while it was hashed")
        files += 1
        total += seen
    return TreeDigest(sha256=digest.hexdigest(), file_count=files, total_bytes=total)


def verify_snapshot(root: Path) -> bool:
    """Whether the snapshot at ``root`` still hashes to its name (before a version runs)."""
    if not is_sha256(root.name) or root.is_symlink() or not root.is_dir():
        return False
    try:
        return tree_digest(root).sha256 == root.name
    except (OSError, SnapshotError):
        return False


def snapshot_path(snapshots_dir: Path, sha256: str) -> Path:
    """Where the snapshot ``sha256`` is kept; refuses anything but a content address, so a
    value from a request cannot name another path."""
    if not is_sha256(sha256):
        raise SnapshotError(f"{sha256[:80]!r} is not a snapshot's SHA-256")
    return snapshots_dir / sha256


def open_snapshot(snapshots_dir: Path, sha256: str, *, verify: bool = True) -> Snapshot:
    """The stored snapshot ``sha256``; with ``verify`` (the default), refused unless its files
    still hash to it. The manifest is read but its command not checked against this machine."""
    root = snapshot_path(snapshots_dir, sha256)
    if root.is_symlink() or not root.is_dir():
        raise SnapshotError(f"no snapshot {sha256} in {snapshots_dir}")
    try:
        digest = tree_digest(root)
    except OSError as err:
        raise SnapshotError(f"snapshot {sha256}: cannot be read ({err.strerror})") from None
    if verify and digest.sha256 != sha256:
        raise SnapshotError(f"snapshot {sha256} was changed: its files no longer match its hash")
    return Snapshot(
        sha256=sha256,
        root=root,
        manifest=read_manifest(root, check=False),
        file_count=digest.file_count,
        total_bytes=digest.total_bytes,
    )


def remove_tree(path: Path) -> None:
    """Remove a temporary tree, read-only parts included (the owner needs write access to a
    directory to empty it); never follows a link."""
    if path.is_symlink() or not path.is_dir():
        return
    for directory, _dirs, _files in os.walk(path):  # os.walk does not descend into links
        with contextlib.suppress(OSError):
            os.chmod(directory, 0o700)
    shutil.rmtree(path, ignore_errors=True)


def remove_stale_temporaries(snapshots_dir: Path) -> int:
    """Remove the temporary directories of uploads whose process died (their lock is free);
    the number removed. Those of uploads still running are locked, and kept."""
    removed = 0
    try:
        names = [n for n in os.listdir(snapshots_dir) if n.startswith(TEMP_PREFIX)]
    except FileNotFoundError:
        return 0
    for name in names:
        path = snapshots_dir / name
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue  # gone already, or not a directory of ours
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        try:
            remove_tree(path)
            removed += 1
        finally:
            os.close(fd)
    return removed


def _new_temporary(snapshots_dir: Path) -> tuple[Path, int]:
    """A fresh temporary directory, and the descriptor holding its lock until the upload ends."""
    while True:
        path = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX, dir=snapshots_dir))
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            continue  # another call took it for stale before it was locked
        fcntl.flock(fd, fcntl.LOCK_EX)
        with contextlib.suppress(FileNotFoundError):
            if os.stat(path).st_ino == os.fstat(fd).st_ino:
                return path, fd
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _seal(root: Path) -> None:
    """Make the tree read-only, all but ``root`` itself (moving a directory to another parent
    needs write access to it); directories synced so the names survive a power cut."""
    for directory, dirs, files in os.walk(root, topdown=False):
        for name in files:
            path = os.path.join(directory, name)
            os.chmod(path, 0o555 if os.lstat(path).st_mode & 0o111 else 0o444)
        for name in dirs:
            os.chmod(os.path.join(directory, name), 0o555)
        _fsync_dir(Path(directory))


def store_snapshot(
    data: bytes | Path, snapshots_dir: Path, limits: ArchiveLimits = DEFAULT_LIMITS
) -> Snapshot:
    """Unpack, check and store an uploaded archive as ``snapshots_dir/<sha256>/``, read-only.

    Idempotent: when that snapshot is already stored (and still matches its hash) it is kept
    and returned. Raises :class:`arena.snapshots.archive.ArchiveError` when the upload is refused,
    :class:`SnapshotError` when the stored copy of the same content was changed. Nothing of a
    refused upload stays behind.
    """
    snapshots_dir.mkdir(parents=True, exist_ok=True)
    snapshots_dir = snapshots_dir.resolve()
    remove_stale_temporaries(snapshots_dir)
    work, lock = _new_temporary(snapshots_dir)
    try:
        tree = work / "tree"
        tree.mkdir(mode=0o755)
        unpacked = unpack_archive(data, tree, limits)
        digest = tree_digest(unpacked.root)
        final = snapshots_dir / digest.sha256
        _seal(unpacked.root)
        try:
            os.rename(unpacked.root, final)
        except OSError as err:
            if err.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                raise
            # Stored before, by this call's twin or an earlier upload: keep that one.
            if tree_digest(final).sha256 != digest.sha256:
                raise SnapshotError(
                    f"snapshot {digest.sha256} was changed: its files no longer match its hash"
                ) from None
        final.chmod(0o555)  # also repairs a snapshot whose storer died right after its rename
        _fsync_dir(snapshots_dir)
        return Snapshot(
            sha256=digest.sha256,
            root=final,
            manifest=unpacked.manifest,
            file_count=digest.file_count,
            total_bytes=digest.total_bytes,
        )
    finally:
        remove_tree(work)
        os.close(lock)


def is_sealed(root: Path) -> bool:
    """Whether every entry of the snapshot at ``root`` is read-only for everyone."""
    for directory, dirs, files in os.walk(root):
        for name in [*dirs, *files, ""]:
            mode = os.lstat(os.path.join(directory, name)).st_mode
            if stat.S_IMODE(mode) & 0o222:
                return False
    return True
