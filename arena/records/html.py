"""``arena replay html``: one self-contained HTML page that plays back a recorded match.

The page is the replay viewer (``arena/web/static/viewer.js`` and ``viewer.css``, our own plain
JavaScript and CSS, no build step, no libraries) with its document, :func:`page_data`, inlined:
no network, nothing fetched. The competition pages mount the same viewer on the same document,
served as JSON (:func:`viewer_document`).

Everything that needs the record or the rules is computed here, in Python, from the verified
replay (:mod:`arena.records.view`): per step the observation fields every seat shares
(``public``), each seat's own fields (``private``, its hand), labelled scores, the events with
who may see them, and each decision's time and the bank left under the record's time control
(the referee's arithmetic, :func:`decision_times`). The viewer only draws: in a seat view it
draws from that seat's ``private`` entry and ``public``, nothing else. The embedded data holds
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
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.layout import write_atomically
from arena.records.view import Frame, Replayed, event_text, load_replay, result_lines

#: The document's format, for hosts that cache or check it.
DOC_FORMAT = "card-arena-viewer/1"

#: Tennis card types in canonical order (docs/rules/tennis.md): the 16 shots by origin then
#: destination, then Smash, Kill, Out. ``discards_seen`` counts are in this order. Spelled out
#: here because the arena knows games only through the engine's interface; a test compares it
#: with the engine's own table.
TENNIS_AREAS = ("RF", "LF", "RB", "LB")
TENNIS_TYPES = (*(f"{o}-{d}" for o in TENNIS_AREAS for d in TENNIS_AREAS), "SMASH", "KILL", "OUT")
#: Points in a tennis game as said on court; the rules have no deuce (at 40-40 the next wins).
TENNIS_POINTS = ("0", "15", "30", "40")
#: Private fields the viewer does not draw: tennis ``recent`` repeats the events as text lines
#: (and would double a doubles match's document).
_UNDRAWN = frozenset({"recent"})


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


# --- labels: what the numbers mean ----------------------------------------------------------------


def _side_labels(rep: Replayed, count: int) -> list[str]:
    """Names for ``count`` per-side values: partnerships joined (``N+S``), else the seats."""
    names = rep.seat_names
    sides = rep.game.sides(rep.config)
    if sides and len(sides) == count:
        return ["+".join(names[s] for s in side) for side in sides]
    if count == len(names):
        return list(names)
    return [f"side {i + 1}" for i in range(count)]


def _who(names: Sequence[str], seat: Any) -> str | None:
    if isinstance(seat, int) and not isinstance(seat, bool) and 0 <= seat < len(names):
        return names[seat]
    return None


def _row(label: str, who: Sequence[str], values: Sequence[Any]) -> dict[str, Any]:
    return {
        "label": label,
        "cells": [{"who": w, "value": str(v)} for w, v in zip(who, values, strict=False)],
    }


def _fact(label: str, value: Any) -> dict[str, str]:
    return {"label": label, "value": str(value)}


def _card_scores(rep: Replayed, pub: Mapping[str, Any]) -> dict[str, Any]:
    """Labelled scores of a trick-taking game from its public observation fields."""
    names = list(rep.seat_names)
    game = rep.game.id
    rows: list[dict[str, Any]] = []
    facts: list[dict[str, str]] = []

    def per_side(key: str, label: str) -> None:
        if isinstance(pub.get(key), list):
            rows.append(_row(label, _side_labels(rep, len(pub[key])), pub[key]))

    def per_seat(key: str, label: str) -> None:
        if isinstance(pub.get(key), list):
            rows.append(_row(label, names, pub[key]))

    if game == "whist":
        per_side("tricks_won", "Tricks this deal")
        per_side("score", "Points this game")
        per_side("games", "Games won (rubber)")
    elif game == "tennis_whist":
        per_seat("tricks_won", "Tricks this round")
        per_seat("sets_won", "Sets won")
        per_seat("rounds_survived", "Rounds survived")
        per_seat("total_tricks", "Tricks in the match")
        per_seat("standing", "Standing (1 = best)")
        if isinstance(pub.get("eliminated"), list):
            rows.append(
                _row("In this set", names, ["out" if e else "in" for e in pub["eliminated"]])
            )
        facts.append(_fact("Set", pub.get("set_number")))
        facts.append(_fact("Round", f"{pub.get('round_number')} of 8"))
        facts.append(_fact("Cards dealt", pub.get("hand_size")))
        facts.append(_fact("Sets to win", pub.get("sets_to_win")))
        for tb in pub.get("tie_breaks") or []:
            drawn = ", ".join(
                f"{_who(names, s)} {c}" for s, c in zip(tb["seats"], tb["cards"], strict=False)
            )
            facts.append(
                _fact(f"Tie-break, round {tb['round']}", f"{drawn}: {_who(names, tb['winner'])}")
            )
    elif game == "spoil_five":
        per_seat("tricks_won", "Tricks this deal")
        per_seat("balances", "Chips won/lost")
        per_seat("stakes", "Chips in this pool")
        facts.append(_fact("Pool", f"{pub.get('pool')} chips"))
        facts.append(_fact("Deal", f"{pub.get('deal_number')} of {pub.get('scheduled_deals')}"))
    elif game == "forty_five":
        per_seat("tricks_won", "Tricks this deal")
        per_side("side_tricks", "Side tricks this deal")
        per_side("score", "Points")
        facts.append(_fact("Game at", f"{pub.get('points_to_win')} points"))
    else:  # a game this viewer does not know: its fields, named as the engine names them
        for key, value in pub.items():
            if key not in ("tricks", "hand"):
                facts.append(_fact(key.replace("_", " "), json.dumps(value)))
    if "deal_number" in pub and game in ("whist", "forty_five"):
        facts.append(_fact("Deal", pub["deal_number"]))
    return {"rows": rows, "facts": facts}


def _deal_notes(names: Sequence[str], pub: Mapping[str, Any]) -> list[str]:
    """The turn-up's story in the Spoil Five family, as sentences rather than field values."""
    notes = []
    if (who := _who(names, pub.get("robbed_by"))) is not None:
        notes.append(f"{who} robbed the turn-up")
    if pub.get("dealer_declined"):
        notes.append("The dealer declined to rob the ace")
    if (who := _who(names, pub.get("announced_by"))) is not None:
        notes.append(f"{who} announced the ace of trumps")
    if pub.get("demoted_played"):
        notes.append(f"{pub['demoted_played']} was played as the lowest trump")
    if (who := _who(names, pub.get("jinxer"))) is not None:
        notes.append(f"{who} jinxed: must win the last tricks")
    if pub.get("turn_up_in_hand"):
        notes.append("The turn-up is still in the dealer's hand")
    return notes


def tennis_score(pub: Mapping[str, Any]) -> dict[str, Any]:
    """The tennis score as said on court: points 0/15/30/40, games, sets, finished sets."""
    points = list(pub.get("points") or [0, 0])
    over = pub.get("phase") == "over"
    said = ["–" if over else TENNIS_POINTS[min(int(p), 3)] for p in points]
    return {
        "points": said,
        "games": list(pub.get("games") or [0, 0]),
        "sets": list(pub.get("sets") or [0, 0]),
        "set_scores": list(pub.get("set_scores") or []),
    }


def _tennis_sides(pub: Mapping[str, Any], players: Sequence[Mapping[str, Any]]) -> list[str]:
    if pub.get("mode") == "singles":
        return [next((str(p["name"]) for p in players if p.get("side") == s), "?") for s in (0, 1)]
    return ["A", "B"]


def _tennis_public(pub: Mapping[str, Any], players: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    sides = _tennis_sides(pub, players)
    score = tennis_score(pub)
    rows = [
        _row("Points", sides, score["points"]),
        _row("Games (this set)", sides, score["games"]),
        _row("Sets", sides, score["sets"]),
    ]
    facts = [
        _fact("Finished sets", " ".join(score["set_scores"]) or "none yet"),
        _fact("Sets to win", pub.get("sets_to_win")),
        _fact("Game", f"{pub.get('game_number')}, point {pub.get('point_number')}"),
    ]
    seen = pub.get("discards_seen") or []
    return {
        "sides": sides,
        "score": score,
        # Hand sizes and roles are public; the cards themselves are in each seat's ``private``.
        "players": [
            {
                "name": p.get("name"),
                "side": p.get("side"),
                "role": p.get("role"),
                "hand_size": p.get("hand_size"),
            }
            for p in players
        ],
        "discards_seen": [
            {"card": t, "count": n} for t, n in zip(TENNIS_TYPES, seen, strict=False) if n
        ],
        "scores": {"rows": rows, "facts": facts},
    }


# --- the document ---------------------------------------------------------------------------------


def _step_data(
    rep: Replayed, frame: Frame, decision: dict[str, Any] | None, hand_sizes: list[int] | None
) -> dict[str, Any]:
    names = rep.seat_names
    private = set(rep.private_fields)
    first = frame.data[0]
    public = {k: v for k, v in first.items() if k != "seat" and k not in private}
    step: dict[str, Any] = {
        "n": frame.number,
        "end": frame.is_end,
        "seat": frame.seat,
        "action": frame.action,
        "fallback": frame.fallback,
        "legal": list(frame.legal),
        "decision": decision,
        "public": public,
        # What only that seat knows: the one source a seat view draws hands from.
        "private": [
            {k: d[k] for k in rep.private_fields if k in d and k not in _UNDRAWN}
            for d in frame.data
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
    if rep.game.id == "tennis":
        # Every seat's view of a player agrees on everything but the hand: take the public
        # part from seat 0's observation.
        step["tennis"] = _tennis_public(public, first.get("players") or [])
        step["scores"] = step["tennis"].pop("scores")
    else:
        step["scores"] = _card_scores(rep, public)
        step["notes"] = _deal_notes(names, public)
        # How many cards each seat holds is plain to see at a table, so it is public here.
        step["hand_sizes"] = hand_sizes
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


def page_data(rep: Replayed) -> dict[str, Any]:
    """The viewer's document, JSON-ready: ``meta`` and one entry per step (each decision, then
    the end). Big integers are still Python ints; :func:`viewer_document` makes them exact."""
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
    marks = [
        {"step": st["n"], "seat": f["seat"], "kind": f["kind"], "fallback": False}
        for st in steps
        for f in st["faults"]
    ] + [
        {"step": st["n"], "seat": st["seat"], "kind": "fallback", "fallback": True}
        for st in steps
        if st["fallback"]
    ]
    return {
        "format": DOC_FORMAT,
        "meta": {
            "game": rep.game.id,
            "title": rep.game.title,
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


def viewer_document(record_path: Path) -> dict[str, Any]:
    """Read, verify and replay ``record_path`` (``RecordError`` if it does not verify) and
    return the viewer's document, every number exact in JavaScript: what the host serves as
    ``/api/v1/matches/{id}/viewer`` and what :func:`render_page` inlines."""
    data: dict[str, Any] = _js_exact(page_data(load_replay(record_path)))
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


def render_page(rep: Replayed) -> str:
    """The complete HTML page for a replayed record: template, styles, script and document."""
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
    return head + script + before + _embed(page_data(rep)) + after


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
