"""The analysis a viewer document carries: ``arena replay analyze --json``'s object, computed by
:mod:`arena.records.analyze` (one definition) or read back from a file it wrote, checked
against the record it is shown with.

The viewer (``arena/web/static/viewer.js``) draws ``doc["analysis"]``: a bar per legal action
at each analysed decision and the costly decisions on the timeline (docs/analysis.md, *In the
viewer*).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.records.analyze import Settings, analyze_record, report_json
from arena.records.format import Record
from arena.records.view import Replayed
from engine.analysis import Policy

#: The most an analysis file may hold (a long match's full analysis is a few megabytes).
MAX_ANALYSIS_BYTES = 64 * 1024 * 1024


def compute(
    rep: Replayed, settings: Settings, rollout: Policy | None, where: str = "record"
) -> dict[str, Any]:
    """The replayed record's analysis as ``analyze --json`` prints it (``where``: its file)."""
    return report_json(analyze_record(rep.record, where, settings, rollout))


def read_analysis(path: Path, rep: Replayed) -> dict[str, Any]:
    """The analysis in ``path`` (``analyze --json``'s output), checked against ``record``;
    :class:`ArenaError` in one line when it cannot be read or is another match's."""
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_ANALYSIS_BYTES + 1)
    except OSError as err:
        raise ArenaError(f"{path}: cannot read the analysis: {err.strerror or err}") from None
    if len(raw) > MAX_ANALYSIS_BYTES:
        raise ArenaError(f"{path}: larger than {MAX_ANALYSIS_BYTES} bytes: not an analysis")
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        raise ArenaError(
            f"{path}: not JSON: give the output of `arena replay analyze --json`"
        ) from None
    check_analysis(data, rep.record, str(path))
    return data  # type: ignore[no-any-return]


def check_analysis(data: Any, record: Record, where: str) -> None:
    """Raise :class:`ArenaError` in one line unless ``data`` is an analysis of ``record``: its
    match id, game and number of decisions, and every analysed decision's played action the
    record's at that step."""
    if not isinstance(data, dict) or not isinstance(data.get("decisions"), list):
        raise ArenaError(f"{where}: not an analysis (the output of `arena replay analyze --json`)")
    match_id = str(record.header.get("match_id", ""))
    if data.get("match_id") != match_id or data.get("game") != record.header.get("game"):
        raise ArenaError(
            f"{where}: an analysis of match {data.get('match_id')!r}, not of this record's "
            f"{match_id!r}"
        )
    actions = [str(e.get("action")) for _, e in record.decisions()]
    if data.get("steps") != len(actions):
        raise ArenaError(
            f"{where}: analyses {data.get('steps')!r} decisions, the record has {len(actions)}: "
            "not this record's analysis"
        )
    for d in data["decisions"]:
        step = d.get("step") if isinstance(d, dict) else None
        if not (isinstance(step, int) and 0 <= step < len(actions)) or not _well_formed(d):
            raise ArenaError(f"{where}: a malformed decision in the analysis ({_short(d)})")
        if d["chosen"] != actions[step]:
            raise ArenaError(
                f"{where}: decision {step} played {actions[step]} in the record, "
                f"{d['chosen']} in the analysis: not this record's analysis"
            )


def summary_lines(data: dict[str, Any]) -> list[str]:
    """A short text of an analysis object: per seat its expected loss and classes, and its
    costliest decisions (as ``replay analyze`` ends its table)."""
    unit, span = data.get("unit", ""), data.get("span", "deal")
    lines = []
    for x in data.get("seats", []):
        c = x.get("classes", {})
        lines.append(
            f"{x.get('seat_name')} ({x.get('bot')}): {x.get('decisions')} decisions analysed; "
            f"expected loss {x.get('loss_per_deal', 0):.2f} {unit} per {span}; "
            f"{c.get('blunder', 0)} blunders, {c.get('mistake', 0)} mistakes, "
            f"{c.get('inaccuracy', 0)} inaccuracies"
        )
        for d in x.get("costliest", []):
            lines.append(
                f"    step {d.get('step')}: played {d.get('chosen')}, best {d.get('best')}: "
                f"-{d.get('loss', 0):.2f} {unit} ({d.get('class')})"
            )
    return lines


def _well_formed(d: dict[str, Any]) -> bool:
    number = (int, float)
    return (
        isinstance(d.get("seat"), int)
        and isinstance(d.get("chosen"), str)
        and isinstance(d.get("best"), str)
        and isinstance(d.get("loss"), number)
        and isinstance(d.get("class"), str)
        and isinstance(d.get("actions"), list)
        and all(
            isinstance(a, dict) and isinstance(a.get("action"), str)
            and isinstance(a.get("mean"), number)
            for a in d["actions"]
        )
    )  # fmt: skip


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


__all__ = [
    "MAX_ANALYSIS_BYTES",
    "check_analysis",
    "compute",
    "read_analysis",
    "summary_lines",
]
