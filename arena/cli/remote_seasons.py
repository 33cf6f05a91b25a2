"""``arena remote seasons``, ``season N``, ``export`` and ``admin season end``: the seasons, their
archived standings, and the exports (arena/host/api/seasons.py, arena/host/api/exports.py).

Registered from arena/cli/remote.py, which hands in its ``_add`` (this module imports nothing of
it: no cycle)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from arena.cli.arguments import POSITIVE
from arena.errors import UsageError

if TYPE_CHECKING:
    from arena.host.apitypes import SeasonOut, Status
    from arena.host.client import RemoteClient

    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]
    Action = Callable[[RemoteClient, argparse.Namespace], int]
    Add = Callable[..., argparse.ArgumentParser]


def _when(timestamp: str | None) -> str:
    return "" if not timestamp else timestamp[:16].replace("T", " ") + " UTC"


def _line(s: SeasonOut) -> str:
    won = f"; won by {' and '.join(s.winners)}" if s.winners else ""
    until = f" to {_when(s.ends)}" if s.ends else ""
    played = f", {s.matches} matches" if s.matches is not None else ""
    return f"{s.number:>3}  {s.state:<8}  {s.title}: {_when(s.starts)}{until}{played}{won}"


def print_season_status(s: Status) -> None:
    """``arena remote status``'s lines on the current season and the latest results."""
    if s.season is not None:
        until = f", until {_when(s.season.ends)}" if s.season.ends else ""
        print(f"season: {s.season.title}{until}")
    for r in s.results[:3]:
        won = " and ".join(r.winners) or "nobody"
        print(f"result: {r.subject} ended {_when(r.at)}, won by {won}")


def _dump(data: object) -> int:
    """An answer as the API sent it (``--json``)."""
    print(json.dumps(data, indent=2))
    return 0


def _seasons(client: RemoteClient, args: argparse.Namespace) -> int:
    seasons = client.seasons()
    if args.json:
        return _dump([s.model_dump(mode="json") for s in seasons])
    for s in seasons:
        print(_line(s))
    return 0


def _season(client: RemoteClient, args: argparse.Namespace) -> int:
    detail = client.season(args.number)
    if args.json:
        return _dump(detail.model_dump(mode="json"))
    print(_line(detail.season))
    frozen = "frozen at its end" if detail.season.state == "archived" else "as they stand now"
    print(f"standings ({frozen}):")
    if not detail.standings:
        print("  no rated versions")
    for r in detail.standings:
        mark = "  provisional" if r.provisional else ""
        print(
            f"  {r.rank:>3}  {r.ref:<24} {r.author:<16} {r.elo:.0f} ± {r.plus_minus:.0f}  "
            f"{r.matches} matches{mark}"
        )
    return 0


def _end(client: RemoteClient, args: argparse.Namespace) -> int:
    done = client.admin_end_season(args.name)
    if args.json:
        return _dump(done.model_dump(mode="json"))
    won = " and ".join(done.ended.winners) or "nobody (no established version)"
    print(f"{done.ended.title} ended, won by {won}; {done.current.title} started")
    return 0


def _export(client: RemoteClient, args: argparse.Namespace) -> int:
    query: dict[str, str | int] = {}
    for key in ("phase", "season", "version"):
        value = getattr(args, key, None)
        if value is not None:
            query[key] = value
    if args.what == "standings" and args.version is not None:
        raise UsageError("--version filters matches only")
    data = client.export(args.what, args.format, query)
    if args.output is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return 0
    try:
        Path(args.output).write_bytes(data)
    except OSError as err:
        raise UsageError(f"-o {args.output}: cannot write ({err.strerror})") from None
    return 0


def add_season_commands(rsub: Subparsers, add: Add) -> None:
    """``seasons``, ``season N`` and ``export``, with ``add`` (remote.py's ``_add``)."""
    add(rsub, "seasons", _seasons, "none", "the ladder's seasons, each with its winners")
    sp = add(rsub, "season", _season, "none", "season N: its standings (frozen once it ended)")
    sp.add_argument("number", type=POSITIVE, metavar="N", help="season number")
    ex = add(
        rsub,
        "export",
        _export,
        "none",
        "standings or finished matches as CSV or JSON (public information only)",
        json_output=False,
    )
    ex.add_argument("what", choices=("standings", "matches"))
    ex.add_argument("--format", choices=("csv", "json"), default="csv", help="(csv)")
    ex.add_argument("-o", "--output", default=None, metavar="FILE", help="(standard output)")
    ex.add_argument("--phase", choices=("ladder", "final"), default=None, help="(ladder)")
    ex.add_argument("--season", type=POSITIVE, default=None, metavar="N", help="(current)")
    ex.add_argument("--version", type=POSITIVE, default=None, metavar="ID", help="matches of")


def add_admin_season_commands(asub: Subparsers, add: Add) -> None:
    """``admin season end [--name NEXT]``."""
    sp = asub.add_parser("season", help="the ladder's seasons", description="Seasons.")
    ssub = sp.add_subparsers(dest="season_command", required=True, metavar="SUBCOMMAND")
    end = add(ssub, "end", _end, "admin", "end the current season now and start the next")
    end.add_argument("--name", default=None, metavar="NEXT", help="the next season's name")
