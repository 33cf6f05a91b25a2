"""``arena replay html``: one self-contained HTML page that steps through a recorded match.

Everything is computed here, in Python, from the verified replay (:mod:`arena.records.view`):
for every step the public observation fields, each seat's private rows, each seat's ``render()``
text, the events with who may see them, and the decision. The data is embedded as JSON in the
page and drawn by a small vanilla script (``templates/replay.html``): no network, no libraries.

The page's URL fragment selects what is shown, ``#step=5&seat=2`` (``seat=all`` for the whole
table), and the page keeps the fragment current, so a view can be linked or loaded headless.
A seat view draws only what that seat could know; the embedded data holds the whole record (as
the record file itself does).

``-o`` writes a new file, or replaces an empty one or a page this command wrote (it carries
:data:`SIGNATURE`); anything else, the record itself first of all, is refused. The page is
written to a temporary file and renamed, so a failed write leaves the old file whole.
"""

from __future__ import annotations

import html
import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.layout import write_atomically
from arena.records.view import (
    Frame,
    Replayed,
    event_text,
    extra_view,
    hand_rows,
    load_replay,
    result_lines,
)

#: Observation fields drawn in their own panel (the trick) rather than in the score table.
_OWN_PANEL = ("tricks",)


def _step_data(rep: Replayed, frame: Frame) -> dict[str, Any]:
    names = rep.seat_names
    private = set(rep.private_fields)
    public = {k: v for k, v in frame.data[0].items() if k != "seat" and k not in private}
    courts = [extra_view(rep.game.id, d, names) for d in frame.data]
    return {
        "n": frame.number,
        "end": frame.is_end,
        "seat": frame.seat,
        "action": frame.action,
        "fallback": frame.fallback,
        "legal": list(frame.legal),
        "public": public,
        "hands": [
            {"label": r.label, "text": r.text, "seats": list(r.seats)}
            for r in hand_rows(rep, frame)
        ],
        "text": [o.render() for o in frame.observations],
        # The court is public: store it once unless the drawing depends on the seat.
        "court": (courts[:1] if len(set(courts)) == 1 else courts) if any(courts) else None,
        "events": [
            {
                "i": i,
                "to": None if e.to is None else list(e.to),
                "text": event_text(e, names),
            }
            for i, e in frame.events
        ],
        "faults": [
            {"seat": f.get("seat"), "kind": f.get("kind"), "detail": f.get("detail")}
            for f in frame.faults
        ],
    }


def page_data(rep: Replayed) -> dict[str, Any]:
    """Everything the page shows, as JSON-ready data: ``meta`` and one entry per step."""
    header = rep.record.header
    seats = header.get("seats") or []
    bots = {s.get("seat"): s.get("bot_name", "") for s in seats if isinstance(s, dict)}
    return {
        "meta": {
            "game": rep.game.id,
            "title": rep.game.title,
            "match_id": header.get("match_id", ""),
            # A string: seeds are 63-bit and JavaScript numbers are exact only to 2**53.
            "seed": None if header.get("seed") is None else str(header["seed"]),
            "options": header.get("options") or {},
            "seat_names": list(rep.seat_names),
            "bots": [bots.get(s, "") for s in range(rep.num_seats)],
            "decisions": rep.decisions,
            "own_panel": list(_OWN_PANEL),
            "result": result_lines(rep),
        },
        "steps": [_step_data(rep, frame) for frame in rep.frames],
    }


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


def _embed(data: Any) -> str:
    # Inside <script type="application/json"> only "</" could end the element early; escaping
    # every "<" (and the JS line separators) keeps the JSON valid and inert.
    text = json.dumps(_js_exact(data), separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _template() -> str:
    return (
        resources.files("arena.records")
        .joinpath("templates/replay.html")
        .read_text(encoding="utf-8")
    )


def render_page(rep: Replayed) -> str:
    """The complete HTML page for a replayed record."""
    meta = rep.record.header
    title = f"{rep.game.title} · {meta.get('match_id') or 'match'}"
    page = _template().replace("__TITLE__", html.escape(title), 1)
    # The data goes in last so nothing inside it is ever taken for a placeholder.
    head, sep, tail = page.partition("__REPLAY_DATA__")
    if not sep:
        raise ArenaError("the replay page template lacks its data placeholder")
    return head + _embed(page_data(rep)) + tail


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


def write_html(record: Path, out: Path) -> int:
    """Replay ``record`` and write its page to ``out``; returns the number of steps.

    ``out`` may be new, empty or a page this command wrote; anything else (the record itself
    included) is refused before the record is read.
    """
    _check_output(record, out)
    rep = load_replay(record)
    page = render_page(rep)
    # Through a temporary file renamed over it: a failure (a full disk, Ctrl-C) leaves the old
    # file as it was. A symlink keeps pointing at the page: the rename happens beside its target.
    write_atomically(
        out.resolve(), page.encode(), lambda why: ArenaError(f"{out}: cannot write: {why}")
    )
    return len(rep.frames)
