"""What the coordinator keeps of a match a worker played: its record and its seat logs, written
where a local match writes them, so records, replays and the web pages find them as always."""

from __future__ import annotations

from pathlib import Path

from arena.cluster.task import ClusterResult
from arena.layout import LOGS_DIR, RECORDS_DIR, record_name, seat_log_name, write_atomically
from arena.records.format import RecordError, write_record_bytes


def keep_result(directory: Path, got: ClusterResult) -> tuple[str, list[str]]:
    """Write ``got``'s record and seat logs under ``directory`` (blocking); their paths relative
    to it. Raises :class:`RecordError` (an ``ArenaError``: the match stays pending) when they
    cannot be written."""
    record = Path(RECORDS_DIR) / record_name(got.match_id)
    write_record_bytes(directory / record, got.record)
    logs: list[str] = []
    for seat, data in enumerate(got.logs):
        path = Path(LOGS_DIR) / seat_log_name(got.match_id, seat)
        write_atomically(directory / path, data, RecordError)
        logs.append(str(path))
    return str(record), logs
