"""``arena replay html``: one self-contained HTML page that steps through a recorded match.

Everything is computed here, in Python, from the verified replay (:mod:`arena.replay_view`):
for every step the public observation fields, each seat's private rows, each seat's ``render()``
text, the events with who may see them, and the decision. The data is embedded as JSON in the
page and drawn by a small vanilla script (``templates/replay.html``): no network, no libraries.

The page's URL fragment selects what is shown, ``#step=5&seat=2`` (``seat=all`` for the whole
table), and the page keeps the fragment current, so a view can be linked or loaded headless.
A seat view draws only what that seat could know; the embedded data holds the whole record (as
the record file itself does).
"""

from __future__ import annotations

import html
import json
from importlib import resources
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.replay_view import (
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
            "seed": header.get("seed"),
            "options": header.get("options") or {},
            "seat_names": list(rep.seat_names),
            "bots": [bots.get(s, "") for s in range(rep.num_seats)],
            "decisions": rep.decisions,
            "own_panel": list(_OWN_PANEL),
            "result": result_lines(rep),
        },
        "steps": [_step_data(rep, frame) for frame in rep.frames],
    }


def _embed(data: Any) -> str:
    # Inside <script type="application/json"> only "</" could end the element early; escaping
    # every "<" (and the JS line separators) keeps the JSON valid and inert.
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _template() -> str:
    return resources.files("arena").joinpath("templates/replay.html").read_text(encoding="utf-8")


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


def write_html(record: Path, out: Path) -> int:
    """Replay ``record`` and write its page to ``out``; returns the number of steps."""
    rep = load_replay(record)
    page = render_page(rep)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(page, encoding="utf-8")
    except OSError as err:
        raise ArenaError(f"{out}: cannot write: {err.strerror or err}") from None
    return len(rep.frames)
