"""``arena replay html``: one self-contained HTML page that plays back a recorded match.

The page is the replay viewer (``arena/web/static/viewer.js`` and ``viewer.css``, our own plain
JavaScript and CSS, no build step, no libraries) with its document, :func:`page_data`, inlined:
no network, nothing fetched. The competition pages mount the same viewer on the same document,
served as JSON (:func:`viewer_document`).

Everything that needs the record or the rules is computed here, in Python, from the verified
replay (:mod:`arena.records.view`): per step the observation fields every seat shares
(``public``), each seat's own fields (``private``, its hand), the events with who may see them,
and each decision's time and the bank left under the record's time control (the referee's
arithmetic, :func:`decision_times`). What the numbers mean (labelled scores, facts, notes, and
what the game's drawing needs, e.g. a tennis score said as on court) is the game's own word,
:meth:`engine.Game.present`, given only what every seat shares; ``meta.presentation`` names the
drawing (``trick_table``, ``tennis_court``, or ``fields``). The viewer only draws: in a seat view
it draws from that seat's ``private`` entry and ``public``, nothing else. The embedded data holds
the whole record, as the record file itself does.

The page's URL fragment selects what is shown, ``#step=5&seat=2`` (``seat=all`` for the whole
table), and the page keeps the fragment current, so a view can be linked or loaded headless.

``-o`` writes a new file, or replaces an empty one or a page this command wrote (it carries
:data:`SIGNATURE`); anything else, the record itself first of all, is refused. The page is
written to a temporary file and renamed, so a failed write leaves the old file whole.
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Callable, Container, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.layout import write_atomically
from arena.records.format import read_record, without_notes
from arena.records.view import (
    Frame,
    Replayed,
    event_text,
    load_replay,
    presentation,
    replayed_from_record,
    result_lines,
)

#: The document's format, for hosts that cache or check it.
DOC_FORMAT = "card-arena-viewer/1"

# --- time: what each decision used and what it left ---------------------------------------------


def decision_times(rep: Replayed) -> list[dict[str, Any]]:
    """Per recorded decision: the seat, the milliseconds it used and the seat's bank left after
    it (``None`` without a time control, as in self-play).

    The referee's rules (``arena/server/referee.py``, ``LiveMatch._settle``): each decision has
    ``move_ms``; time beyond it is taken from the seat's bank, which never goes below zero; a
    ``timeout`` fault empties the bank. The record's times are rounded to a microsecond, so the
    bank here can differ from the referee's by that much per decision.
    """
    tc = rep.record.header.get("time_control")
    move = bank_start = None
    if isinstance(tc, Mapping):
        move, bank_start = float(tc.get("move_ms", 0)), float(tc.get("bank_ms", 0))
    banks = [bank_start] * rep.num_seats
    out: list[dict[str, Any]] = []
    faults: list[Mapping[str, Any]] = []
    for entry in rep.record.entries:
        kind = entry.get("type")
        if kind == "fault":
            faults.append(entry)
            continue
        if kind != "decision":
            continue
        seat = int(entry["seat"])
        ms = float(entry.get("ms") or 0.0)
        timed_out = any(f.get("seat") == seat and f.get("kind") == "timeout" for f in faults)
        faults = []
        bank = banks[seat]
        over = 0.0
        if bank is not None and move is not None:
            over = max(0.0, ms - move)
            bank = 0.0 if timed_out else max(0.0, bank - over)
            banks[seat] = bank
        out.append(
            {
                "seat": seat,
                "ms": round(ms, 3),
                "from_bank_ms": None if bank is None else round(over, 3),
                "bank_left_ms": None if bank is None else round(bank, 3),
                "timeout": timed_out,
            }
        )
    return out


def _who(names: Sequence[str], seat: Any) -> str | None:
    if isinstance(seat, int) and not isinstance(seat, bool) and 0 <= seat < len(names):
        return names[seat]
    return None


# --- the document ---------------------------------------------------------------------------------


def _step_data(
    rep: Replayed, frame: Frame, decision: dict[str, Any] | None, hand_sizes: list[int] | None
) -> dict[str, Any]:
    names = rep.seat_names
    private = set(rep.private_fields)
    undrawn = set(rep.game.undrawn_fields)
    first = frame.data[0]
    public = {k: v for k, v in first.items() if k != "seat" and k not in private}
    step: dict[str, Any] = {
        "n": frame.number,
        "end": frame.is_end,
        "seat": frame.seat,
        "action": frame.action,
        "fallback": frame.fallback,
        # The bot's note and its SDK's fallback reason ("" for none): text for textContent.
        "note": frame.note,
        "sdk_fallback": frame.sdk_fallback,
        "legal": list(frame.legal),
        "decision": decision,
        "public": public,
        # What only that seat knows: the one source a seat view draws hands from.
        "private": [
            {k: d[k] for k in rep.private_fields if k in d and k not in undrawn} for d in frame.data
        ],
        "events": [
            {"i": i, "to": None if e.to is None else list(e.to), "text": event_text(e, names)}
            for i, e in frame.events
        ],
        "faults": [
            {"seat": f.get("seat"), "kind": f.get("kind"), "detail": f.get("detail")}
            for f in frame.faults
        ],
    }
    shown = presentation(rep, frame).to_dict()
    step["scores"] = {"rows": shown["rows"], "facts": shown["facts"]}
    step["notes"] = shown["notes"]
    # How many cards each seat holds is plain to see at a table, so it is public here.
    step["hand_sizes"] = hand_sizes
    # What the game's drawing reads besides the fields (tennis: its scoreboard, under "tennis").
    drawing = shown["drawing"]
    assert isinstance(drawing, dict)
    for key, value in drawing.items():
        if key in step:
            raise ArenaError(f"{rep.game.id}'s presentation would replace the step's {key!r}")
        step[key] = value
    return step


def _hand_sizes(frame: Frame) -> list[int] | None:
    hands = [d.get("hand") for d in frame.data]
    if all(isinstance(h, list) for h in hands):
        return [len(h) for h in hands if isinstance(h, list)]
    return None


def _result(rep: Replayed) -> dict[str, Any]:
    res = rep.record.result
    names = rep.seat_names
    bots = _bots(rep)
    scores = res.get("scores") or []
    ranks = res.get("ranks") or []
    return {
        "summary": res.get("summary") or res.get("reason", ""),
        "reason": res.get("reason", ""),
        "forfeited_by": _who(names, res.get("forfeited_by")),
        "seats": [
            {
                "seat": s,
                "name": names[s],
                "bot": bots[s],
                "score": scores[s] if s < len(scores) else None,
                "rank": ranks[s] if s < len(ranks) else None,
            }
            for s in range(len(names))
        ],
        "lines": result_lines(rep),
    }


def _bots(rep: Replayed) -> list[str]:
    seats = rep.record.header.get("seats") or []
    bots = {s.get("seat"): s.get("bot_name", "") for s in seats if isinstance(s, dict)}
    return [str(bots.get(s, "")) for s in range(rep.num_seats)]


def page_data(rep: Replayed, analysis: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The viewer's document, JSON-ready: ``meta`` and one entry per step (each decision, then
    the end), and with ``analysis`` (``replay analyze --json``'s object, checked against the
    record: :mod:`arena.records.analysis_doc`) that too, under ``analysis``. Big integers are
    still Python ints; :func:`viewer_document` makes them exact."""
    header = rep.record.header
    times = decision_times(rep)
    tc = header.get("time_control")
    steps = [
        _step_data(
            rep,
            frame,
            times[frame.number] if not frame.is_end and frame.number < len(times) else None,
            _hand_sizes(frame),
        )
        for frame in rep.frames
    ]
    marks = (
        [
            {"step": st["n"], "seat": f["seat"], "kind": f["kind"], "fallback": False}
            for st in steps
            for f in st["faults"]
        ]
        + [
            {"step": st["n"], "seat": st["seat"], "kind": "fallback", "fallback": True}
            for st in steps
            if st["fallback"]
        ]
        + [
            {"step": st["n"], "seat": st["seat"], "kind": "sdk_fallback", "fallback": False}
            for st in steps
            if st["sdk_fallback"]
        ]
    )
    doc: dict[str, Any] = {
        "format": DOC_FORMAT,
        "meta": {
            "game": rep.game.id,
            "title": rep.game.title,
            # Which drawing the viewer uses: its board, not the game's id, decides it.
            "presentation": rep.game.presentation_kind,
            "match_id": header.get("match_id", ""),
            # A string: seeds are 63-bit and JavaScript numbers are exact only to 2**53.
            "seed": None if header.get("seed") is None else str(header["seed"]),
            "options": header.get("options") or {},
            "players": rep.config.players,
            "seat_names": list(rep.seat_names),
            "bots": _bots(rep),
            "sides": [list(s) for s in rep.game.sides(rep.config) or ()],
            "decisions": rep.decisions,
            "private_fields": list(rep.private_fields),
            "time_control": dict(tc) if isinstance(tc, Mapping) else None,
            "marks": sorted(marks, key=lambda m: m["step"]),
            "result": _result(rep),
        },
        "steps": steps,
    }
    if analysis is not None:  # without it the document, and so the page, is as before
        doc["analysis"] = dict(analysis)
    return doc


#: The largest integer a JavaScript number holds exactly (``Number.MAX_SAFE_INTEGER``).
_JS_EXACT = 2**53 - 1


def _js_exact(data: Any) -> Any:
    """``data`` with every integer JavaScript would round (a seed in an option or an
    observation) as its decimal string: the page shows the record's values, not neighbours."""
    if isinstance(data, dict):
        return {k: _js_exact(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [_js_exact(v) for v in data]
    if isinstance(data, int) and not isinstance(data, bool) and abs(data) > _JS_EXACT:
        return str(data)
    return data


def viewer_document(record_path: Path, notes_of: Container[int] | None = None) -> dict[str, Any]:
    """Read, verify and replay ``record_path`` (``RecordError`` if it does not verify) and
    return the viewer's document, every number exact in JavaScript: what the host serves as
    ``/api/v1/matches/{id}/viewer`` and what :func:`render_page` inlines. With ``notes_of``,
    only those seats' notes stay in it (a competition shows a note to its bot's author only)."""
    if notes_of is None:
        rep = load_replay(record_path)
    else:
        record = read_record(record_path)
        rep = replayed_from_record(without_notes(record, notes_of) or record, str(record_path))
    data: dict[str, Any] = _js_exact(page_data(rep))
    return data


def _embed(data: Any) -> str:
    # Inside <script type="application/json"> only "</" could end the element early; escaping
    # every "<" (and the JS line separators) keeps the JSON valid and inert.
    text = json.dumps(_js_exact(data), separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _resource(package: str, name: str) -> str:
    return resources.files(package).joinpath(name).read_text(encoding="utf-8")


def _inline(text: str, tag: str) -> str:
    """``text`` for the inside of a ``<tag>`` element; our own asset, so a closing tag in it is
    a bug to report, not something to escape."""
    if f"</{tag}".lower() in text.lower():
        raise ArenaError(f"the viewer's asset contains </{tag}; it cannot be inlined")
    return text


def render_page(
    rep: Replayed, analysis: Mapping[str, Any] | None = None, record_file: str | None = None
) -> str:
    """The complete HTML page for a replayed record: template, styles, script and document
    (with ``analysis``, see :func:`page_data`; ``record_file``: the record's path as given, for
    the viewer's "play from here" command)."""
    meta = rep.record.header
    title = f"{rep.game.title} · {meta.get('match_id') or 'match'}"
    page = _resource("arena.records", "templates/replay.html")
    page = page.replace("__TITLE__", html.escape(title), 1)
    page = page.replace(
        "__VIEWER_CSS__", _inline(_resource("arena.web", "static/viewer.css"), "style"), 1
    )
    # The script and the data go in last so nothing inside them is ever taken for a placeholder.
    head, sep, tail = page.partition("__VIEWER_JS__")
    before, sep2, after = tail.partition("__REPLAY_DATA__")
    if not sep or not sep2:
        raise ArenaError("the replay page template lacks its script or data placeholder")
    script = _inline(_resource("arena.web", "static/viewer.js"), "script")
    data = page_data(rep, analysis)
    if record_file is not None:
        data["meta"]["record_file"] = record_file
    return head + script + before + _embed(data) + after


#: In the first lines of every page this command writes (templates/replay.html): the only kind
#: of existing file ``-o`` replaces, so a slip of the argument cannot destroy a record or a
#: document.
SIGNATURE = "Written by `arena replay html`"
#: How much of an existing file is read looking for :data:`SIGNATURE`.
_SIGNATURE_WITHIN = 512


def _check_output(record: Path, out: Path) -> None:
    """Raise :class:`ArenaError`, touching nothing, unless writing ``out`` loses nothing: it is
    new, empty, or a page this command wrote earlier, and never the record itself."""
    if not out.exists():
        return
    if record.exists() and os.path.samefile(record, out):
        raise ArenaError(f"{out}: is the record itself; choose another -o")
    if out.is_dir():
        raise ArenaError(f"{out}: is a directory; give the page's file name with -o")
    if not out.is_file():
        raise ArenaError(f"{out}: not a regular file; choose another -o")
    try:
        with out.open("rb") as f:
            head = f.read(_SIGNATURE_WITHIN)
    except OSError as err:
        raise ArenaError(f"{out}: cannot read it to check it ({err.strerror})") from None
    if head and SIGNATURE.encode() not in head:
        raise ArenaError(
            f"{out}: exists and is not a page written by `arena replay html`; not overwriting "
            "it (remove it or choose another -o)"
        )


#: What gives the analysis a page embeds, from the record read (``None`` for none).
AnalysisOf = Callable[[Replayed], Mapping[str, Any] | None]


def write_html(record: Path, out: Path, analysis: AnalysisOf | None = None) -> int:
    """Replay ``record`` and write its page to ``out``; returns the number of steps.

    ``out`` may be new, empty or a page this command wrote; anything else (the record itself
    included) is refused before the record is read. ``analysis``, given the replayed record,
    gives the analysis to embed (computed, or read from a file and checked).
    """
    _check_output(record, out)
    rep = load_replay(record)
    page = render_page(rep, None if analysis is None else analysis(rep), str(record))
    # Through a temporary file renamed over it: a failure (a full disk, Ctrl-C) leaves the old
    # file as it was. A symlink keeps pointing at the page: the rename happens beside its target.
    write_atomically(
        out.resolve(), page.encode(), lambda why: ArenaError(f"{out}: cannot write: {why}")
    )
    return len(rep.frames)
