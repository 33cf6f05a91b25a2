"""``arena host backup`` and ``arena host restore``: a consistent copy of a competition directory
taken while its host runs, and a competition directory made from one.

A backup is a directory: the database (SQLite's online backup: the database at one moment, while
the host writes on), the snapshots and image tarballs of the versions that copy holds, the
records, the logs and ``private/`` (mode 0700 kept), and :data:`MANIFEST_NAME` (when, which
arena, which schema, counts, the database copy's SHA-256). It is written into ``DEST.partial``
and renamed to ``DEST`` at the end, so a directory named ``DEST`` is always a whole backup.
Restoring checks the manifest and the database, then copies the rest the same way; a plain copy
of a backup is also a competition directory (the manifest beside it is ignored by the host).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.host.store.schema import DB_NAME
from arena.layout import IMAGES_DIR, LOGS_DIR, PRIVATE_DIR, RECORDS_DIR, SNAPSHOTS_DIR, TEMP_SUFFIX
from arena.sqlite import backup_database, now, quick_check, read_rows
from arena.version import arena_version

#: The backup's own file: what it holds, and the database copy's SHA-256.
MANIFEST_NAME = "backup.json"
#: Ending of the directory a backup or a restore is written into before it is renamed.
PARTIAL_SUFFIX = ".partial"
#: What ``private/`` holds that belongs to a running host, not to the competition: where it
#: listens (arena/host/service.py's ``HOST_FILE``), rewritten by the host that starts.
RUNNING_FILES = frozenset({"host.json"})

#: The manifest's counts: name → query on the database copy.
COUNTS = {
    "authors": "SELECT count(*) FROM authors",
    "versions": "SELECT count(*) FROM versions",
    "units": "SELECT count(*) FROM units",
    "matches": "SELECT count(*) FROM matches",
    "matches_done": "SELECT count(*) FROM matches WHERE state = 'done'",
}


class BackupError(ArenaError):
    """A backup or a restore refused or failed, in one line."""


def backup(directory: Path, dest: Path) -> dict[str, Any]:
    """Copy the competition directory ``directory`` (its host may be running) to ``dest``, which
    must not exist or be empty; the manifest written."""
    database = directory / DB_NAME
    if not database.is_file():
        raise BackupError(f"{directory}: no {DB_NAME} here; is it a competition directory?")
    _outside(dest, directory)
    with _partial(dest) as partial:
        copy = partial / DB_NAME
        backup_database(database, copy, BackupError)
        problem = quick_check(copy)
        if problem is not None:
            raise BackupError(f"{database}: the copy fails SQLite's quick_check ({problem})")
        # Snapshots and image tarballs are stored before the version that names them and never
        # change: the copy's versions are the ones to take (what the ladder stores meanwhile is
        # not in the copy, and a half-stored snapshot is never taken).
        versions = read_rows(copy, "SELECT kind, sha256 FROM versions", BackupError)
        for kind, sha256 in versions:
            if kind == "archive":
                name = Path(SNAPSHOTS_DIR) / str(sha256)
                shutil.copytree(directory / name, partial / name, symlinks=True)
            elif kind == "image":
                name = Path(IMAGES_DIR) / f"{sha256}.tar"
                (partial / IMAGES_DIR).mkdir(exist_ok=True)
                shutil.copy2(directory / name, partial / name)
        # Records and logs after the database: a match is stored as finished only once its record
        # and seat logs are written, so every match the copy holds as done has its files here.
        # Files of matches finished after the copy come along too, rowless: the restored host
        # plays those matches again and writes them over.
        for sub in (RECORDS_DIR, LOGS_DIR, PRIVATE_DIR):
            _copy_tree(directory / sub, partial / sub, skip=RUNNING_FILES)
        manifest = _manifest(copy)
        (partial / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def restore(source: Path, directory: Path) -> dict[str, Any]:
    """Make the competition directory ``directory`` (not existing, or empty) from the backup
    ``source``, once its manifest and database check; the manifest."""
    manifest = check_backup(source)
    _outside(directory, source)
    with _partial(directory) as partial:
        for entry in sorted(source.iterdir()):
            if entry.name == MANIFEST_NAME:
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.copytree(entry, partial / entry.name, symlinks=True)
            else:
                shutil.copy2(entry, partial / entry.name, follow_symlinks=False)
    return manifest


def check_backup(source: Path) -> dict[str, Any]:
    """The manifest of the backup ``source``, once its database matches it and passes SQLite's
    ``quick_check``."""
    try:
        manifest = json.loads((source / MANIFEST_NAME).read_text())
        expected = manifest["database_sha256"]
    except FileNotFoundError:
        raise BackupError(
            f"{source}: no {MANIFEST_NAME}; not a backup made by `arena host backup`"
        ) from None
    except (OSError, ValueError, TypeError, KeyError) as err:
        raise BackupError(f"{source / MANIFEST_NAME}: not a backup's manifest ({err})") from None
    database = source / DB_NAME
    try:
        digest = _sha256(database)
    except OSError as err:
        raise BackupError(f"{database}: cannot be read ({err.strerror})") from None
    if digest != expected:
        raise BackupError(
            f"{database}: its SHA-256 is not the manifest's; the backup is damaged or was changed"
        )
    problem = quick_check(database)
    if problem is not None:
        raise BackupError(f"{database}: damaged (SQLite's quick_check: {problem})")
    return dict(manifest)


# --- the pieces ----------------------------------------------------------------------------------


def _outside(target: Path, source: Path) -> None:
    """A copy is never written inside what it copies (it would copy itself)."""
    if target.resolve().is_relative_to(source.resolve()):
        raise BackupError(f"{target}: inside {source}; give a directory outside it")


@contextmanager
def _partial(target: Path) -> Iterator[Path]:
    """A new directory beside ``target`` to write into, renamed to ``target`` when the block
    ends well and removed when it does not: ``target`` is never half written. ``target`` must
    not exist or be an empty directory (one line otherwise)."""
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise BackupError(f"{target}: exists and is not a directory; give a new one")
    if target.is_dir() and any(target.iterdir()):
        raise BackupError(f"{target}: exists and is not empty; give a new or empty directory")
    partial = target.with_name(target.name + PARTIAL_SUFFIX)
    if partial.exists():
        raise BackupError(
            f"{partial}: exists (an interrupted backup or restore?); remove it and try again"
        )
    try:
        partial.parent.mkdir(parents=True, exist_ok=True)
        partial.mkdir(mode=0o700)
    except OSError as err:
        raise BackupError(f"{partial}: cannot be created ({err.strerror})") from None
    try:
        yield partial
        partial.chmod(0o755)  # as a competition directory the host creates
        os.replace(partial, target)  # an empty directory is replaced
    except BaseException as err:
        _remove(partial)
        if isinstance(err, (OSError, shutil.Error)):
            raise BackupError(f"{target}: not made ({_why(err)})") from None
        raise


def _why(err: OSError | shutil.Error) -> str:
    if isinstance(err, shutil.Error):
        return "some files could not be copied"
    where = f" ({err.filename})" if err.filename else ""
    return f"{err.strerror or err}{where}"


def _remove(tree: Path) -> None:
    """Remove a partial copy, its read-only snapshot directories included."""

    def writable(function: Callable[..., Any], path: str, _: object) -> None:
        os.chmod(os.path.dirname(path), 0o700)
        function(path)

    shutil.rmtree(tree, onerror=writable)


def _copy_tree(source: Path, target: Path, skip: frozenset[str]) -> None:
    """``source``'s files into ``target`` (modes kept), as they are while a host writes beside:
    a file gone meanwhile (a temporary file renamed) is left out, as are the temporary files of
    atomic writes (``.NAME.….tmp``) and ``skip``."""
    if not source.is_dir():
        return
    modes: list[tuple[Path, int]] = []
    for root, _dirs, files in os.walk(source):
        out = target / Path(root).relative_to(source)
        out.mkdir(exist_ok=True)
        modes.append((out, stat.S_IMODE(os.stat(root).st_mode)))
        for name in files:
            if name in skip or (name.startswith(".") and name.endswith(TEMP_SUFFIX)):
                continue
            try:
                shutil.copy2(os.path.join(root, name), out / name, follow_symlinks=False)
            except FileNotFoundError:
                continue
    for out, mode in reversed(modes):  # a read-only directory's mode once it is filled
        out.chmod(mode)


def _manifest(database: Path) -> dict[str, Any]:
    counts = {
        name: int(read_rows(database, sql, BackupError)[0][0]) for name, sql in COUNTS.items()
    }
    (schema,) = read_rows(database, "SELECT value FROM meta WHERE key = 'schema'", BackupError)
    return {
        "time": now(),
        "arena_version": arena_version(),
        "schema_version": int(schema[0]),
        "counts": counts,
        "database_sha256": _sha256(database),
    }


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
