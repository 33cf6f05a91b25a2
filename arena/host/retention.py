"""Retention: a competition's match records and seat logs removed by age or size
(``[retention]``, :class:`arena.host.config.RetentionConfig`), in a running host every
``interval_s`` (:func:`keep_pruning`) and on demand (``arena host prune``).

Only the files of what is over go: the records and seat logs of finished matches, and the
validation log, records and seat logs of versions past their validation; anything else in
``records/`` and ``logs/`` (a match being written, a file the host does not know) is left, though
it counts towards the size. The records of published results
(:data:`arena.host.store.retention.PUBLISHED`) stay unless ``published = true``. Oldest first
(by the time the file was written): everything older than the age limit, then, while the
directory's size on disk is over its limit, the oldest left. Each removed file is noted in the
store (``pruned``) before it goes, so the API answers it 410, "pruned", and the match's row, its
result and the ratings stay as they were.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import structlog
import trio

from arena.host.analyses import ANALYSES_DIR, match_of_analysis
from arena.host.config import RetentionConfig
from arena.host.store import CompetitionStore, DatabaseLocked
from arena.host.store.retention import Settled
from arena.host.validation import validated_by
from arena.layout import LOGS_DIR, RECORDS_DIR, match_of_file

log = structlog.get_logger("arena.host.retention")

MIB = 1024 * 1024
DAY_S = 86400
#: Removed files named in a pass's log line at most (the count and bytes are always whole).
LOGGED_FILES = 50


@dataclass(frozen=True, slots=True)
class Removal:
    """One file a pass removes (or, dry, would remove)."""

    #: Relative to the competition directory: ``records/u12-r1.jsonl.gz``.
    path: str
    #: Its size on disk.
    bytes: int
    #: When it was written (seconds since the epoch).
    mtime: float
    #: ``age`` or ``size``: which limit it went for.
    why: str


@dataclass(frozen=True, slots=True)
class PassReport:
    """What one pass did."""

    removed: tuple[Removal, ...]
    dry_run: bool
    #: Published records an age or size limit would have removed.
    kept_published: int = 0
    #: The directories still above their size limit after the pass (what is left may not go).
    over: tuple[str, ...] = field(default=())

    @property
    def bytes(self) -> int:
        return sum(r.bytes for r in self.removed)


@dataclass(frozen=True, slots=True)
class _File:
    path: str
    bytes: int
    mtime: float
    #: Its match or validation is over.
    settled: bool
    #: A published result's record.
    published: bool


def prune(
    store: CompetitionStore,
    config: RetentionConfig,
    *,
    dry_run: bool = False,
    clock: Callable[[], float] = time.time,
) -> PassReport:
    """One retention pass over ``store``'s directory (blocking: run it in a thread); logged."""
    settled = store.settled()
    directory = store.directory
    limits = (
        (RECORDS_DIR, config.records_days, config.records_mib, not config.published),
        (LOGS_DIR, config.logs_days, config.logs_mib, False),
        # Authors' analyses go by the rules of the records they analyse.
        (ANALYSES_DIR, config.records_days, config.records_mib, not config.published),
    )
    removed: list[Removal] = []
    kept = 0
    over: list[str] = []
    for sub, days, mib, keep_published in limits:
        if not (days or mib):
            continue
        files = _scan(directory, sub, settled)
        chosen, protected, still_over = _choose(
            files, days * DAY_S, mib * MIB, keep_published, clock()
        )
        removed += chosen
        kept += protected
        if still_over:
            over.append(sub)
    report = PassReport(tuple(removed), dry_run, kept, tuple(over))
    if not dry_run and removed:
        store.mark_pruned([(r.path, r.bytes) for r in removed])
        for r in removed:
            try:
                (directory / r.path).unlink(missing_ok=True)
            except OSError as err:  # noted as pruned; the next pass tries again
                log.warning("retention could not remove a file", path=r.path, error=str(err))
    _log(report)
    return report


def _scan(directory: Path, sub: str, settled: Settled) -> list[_File]:
    """The files of ``directory/sub`` (not below it), oldest first, each with whether it may go."""
    found = []
    try:
        entries = list(os.scandir(directory / sub))
    except FileNotFoundError:
        return []
    for entry in entries:
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
            st = entry.stat(follow_symlinks=False)
        except FileNotFoundError:  # renamed or removed meanwhile
            continue
        match = match_of_file(entry.name) or match_of_analysis(entry.name)
        version = validated_by(match if match is not None else entry.name)
        if version is not None:
            over, published = version in settled.validated, False
        else:
            flag = settled.matches.get(match) if match is not None else None
            over, published = flag is not None, bool(flag) and sub != LOGS_DIR
        found.append(_File(f"{sub}/{entry.name}", st.st_blocks * 512, st.st_mtime, over, published))
    return sorted(found, key=lambda f: (f.mtime, f.path))


def _choose(
    files: list[_File], max_age_s: int, max_bytes: int, keep_published: bool, now: float
) -> tuple[list[Removal], int, bool]:
    """The files to remove, oldest first; how many published ones were kept that would have
    gone; whether the directory stays above ``max_bytes``. A limit of 0 is none."""
    total = sum(f.bytes for f in files)
    chosen: list[Removal] = []
    kept = 0
    for f in files:
        old = bool(max_age_s) and f.mtime < now - max_age_s
        big = bool(max_bytes) and total > max_bytes
        if not (old or big):
            break  # oldest first: every later file is younger, and the total only shrinks
        if not f.settled:
            continue
        if f.published and keep_published:
            kept += 1
            continue
        chosen.append(Removal(f.path, f.bytes, f.mtime, "age" if old else "size"))
        total -= f.bytes
    return chosen, kept, bool(max_bytes) and total > max_bytes


def _log(report: PassReport) -> None:
    paths = [r.path for r in report.removed]
    log.info(
        "retention pass",
        dry_run=report.dry_run,
        removed=len(paths),
        bytes=report.bytes,
        records=sum(p.startswith(f"{RECORDS_DIR}/") for p in paths),
        logs=sum(p.startswith(f"{LOGS_DIR}/") for p in paths),
        kept_published=report.kept_published,
        files=paths[:LOGGED_FILES],
        more=max(0, len(paths) - LOGGED_FILES),
    )
    for sub in report.over:
        log.warning(
            "retention: still above the size limit (what is left is published or in play)",
            directory=sub,
        )


async def keep_pruning(store: CompetitionStore, config: RetentionConfig) -> None:
    """A running host's retention: a pass now, then every ``config.interval_s`` seconds; a pass
    the database's lock holds up is put off to the next."""
    while True:
        try:
            await trio.to_thread.run_sync(prune, store, config)
        except DatabaseLocked as err:
            log.warning("retention pass put off", error=str(err))
        await trio.sleep(config.interval_s)
