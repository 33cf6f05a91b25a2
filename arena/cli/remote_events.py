"""``arena remote events``, ``arena remote event NAME`` and ``arena remote admin event start
NAME``: a competition's events (arena/host/events) from the command line, as a bracket or
standings table in the terminal (``--json``: the API's answer as is)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from arena.host.apitypes import EventDetail, EventTie
    from arena.host.client import RemoteClient

    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]

#: ``arena.cli.remote._add``: a subcommand with the common options (passed in: remote.py
#: registers this module, so it cannot be imported from here).
Add = Callable[..., argparse.ArgumentParser]


def add_event_commands(rsub: Subparsers, add: Add) -> None:
    """``events`` and ``event NAME``."""
    add(rsub, "events", _events, "none", "the competition's events: format, state, winner")
    ev = add(rsub, "event", _event, "none", "one event: its bracket or standings, each match")
    ev.add_argument("name", metavar="NAME", help="the event's name (arena remote events)")


def add_event_admin(asub: Subparsers, add: Add) -> None:
    """``admin event start NAME``."""
    ev = asub.add_parser("event", help="the competition's events", description="Events.")
    esub = ev.add_subparsers(dest="event_command", required=True, metavar="SUBCOMMAND")
    st = add(esub, "start", _start, "admin", "start a configured event now (the ladder's best)")
    st.add_argument("name", metavar="NAME", help="the event's name in the config")


def _dump(value: Any) -> None:
    if isinstance(value, list):
        print(json.dumps([v.model_dump(mode="json") for v in value], indent=2))
    else:
        print(json.dumps(value.model_dump(mode="json"), indent=2))


def _columns(rows: Sequence[Sequence[str]]) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())


def _events(client: RemoteClient, args: argparse.Namespace) -> int:
    events = client.events()
    if args.json:
        _dump(events)
        return 0
    if not events:
        print("no events (a competition's [[events]] in its config: docs/hosting.md)")
        return 0
    rows = [["EVENT", "FORMAT", "STATE", "START", "ENTRANTS", "WINNER"]]
    for e in events:
        start = (e.start or "when the host starts it")[:16].replace("T", " ")
        rows.append([e.name, e.format, e.state, start, str(len(e.entrants) or "-"), e.winner or ""])
    _columns(rows)
    return 0


def _event(client: RemoteClient, args: argparse.Namespace) -> int:
    return _show(client.event(args.name), args.json)


def _start(client: RemoteClient, args: argparse.Namespace) -> int:
    event = client.admin_event_start(args.name)
    if not args.json:
        print(f"event {event.name} started: {len(event.entrants)} entrants")
    return _show(event, args.json)


def _show(event: EventDetail, as_json: bool) -> int:
    if as_json:
        _dump(event)
    else:
        print_event(event)
    return 0


def print_event(e: EventDetail) -> None:
    """The event as text: its state and winner, each round's ties (knockout: who went
    through; heats: each heat's order), a Swiss event's standings."""
    rules = ", ".join(f"{k} {v}" for k, v in e.config.items() if k not in ("format", "start"))
    print(f"{e.name}: {e.format} ({rules}), {e.state}")
    if e.winner:
        print(f"winner: {e.winner} ({e.reason})")
    elif e.reason:
        print(e.reason)
    if e.entrants:
        print("entrants: " + ", ".join(f"{i}. {ref}" for i, ref in enumerate(e.entrants, 1)))
    for r in e.rounds:
        print(f"\n{r.name}")
        for tie in r.ties:
            _print_tie(tie)
    if e.standings:
        print("\nstandings")
        rows = [["#", "ENTRANT", "SEED", "POINTS", "MATCH POINTS", "BUCHHOLZ"]]
        for s in e.standings:
            rows.append(
                [str(s.rank), s.ref, str(s.seed), f"{s.points:g}", f"{s.match_points:g}",
                 f"{s.tiebreak:g}"]
            )  # fmt: skip
        _columns(rows)


def _print_tie(tie: EventTie) -> None:
    sides = [f"{ref} ({seed})" for ref, seed in zip(tie.sides, tie.seeds, strict=True) if ref]
    if len(sides) == 1:
        print(f"  {sides[0]}: bye")
        return
    points = " - ".join(f"{p:g}" for p in tie.points)
    result = f"  -> {' > '.join(tie.result)}" if tie.result else ""
    print(f"  {' v '.join(sides)}: {points}{result}")
    for d in tie.deals:
        score = " - ".join(f"{p:g}" for p in d.points)
        print(f"    deal {d.deal + 1}: {d.state}, {score}  {' '.join(d.match_ids)}")
