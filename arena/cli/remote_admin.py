"""``arena remote admin authors|suspend|reinstate|retire|rerun|queue|reopen|audit``: the host's
admin over its API, with the admin token (``add-author`` and ``ladder`` are in remote.py)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from arena.cli.arguments import POSITIVE, number
from arena.errors import ArenaError, UsageError

if TYPE_CHECKING:
    from pydantic import BaseModel

    from arena.host.apitypes import AdminAuthor, Status, UnitOut
    from arena.host.client import RemoteClient

    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]

#: ``arena.cli.remote._add``: a subcommand with the common options, its action and its auth.
Adder = Callable[..., argparse.ArgumentParser]
#: ``--limit`` of ``audit``: what the API serves at most.
LIMIT = number(int, 1, "a whole number from 1 to 1000", 1000)
MIB = 1024 * 1024


def _print_json(value: BaseModel | Sequence[BaseModel]) -> None:
    if isinstance(value, Sequence):
        data: object = [v.model_dump(mode="json") for v in value]
    else:
        data = value.model_dump(mode="json")
    print(json.dumps(data, indent=2))


def _say(args: argparse.Namespace, answer: BaseModel | Sequence[BaseModel], *lines: str) -> int:
    """The answer as JSON with ``--json``, else ``lines``."""
    if args.json:
        _print_json(answer)
    else:
        print("\n".join(lines))
    return 0


def _when(stamp: str | None) -> str:
    return "" if not stamp else stamp[:16].replace("T", " ") + " UTC"


def _of(used: float, limit: float, unit: str = "") -> str:
    return f"{used:g}{unit} (no limit)" if not limit else f"{used:g}/{limit:g}{unit}"


def _print_author(a: AdminAuthor) -> None:
    q = a.quota
    standing = "active"
    if a.suspended:
        why = f" ({a.suspended_reason})" if a.suspended_reason else ""
        standing = f"SUSPENDED since {_when(a.suspended)}{why}"
    print(f"{a.name} (author {a.id}, since {_when(a.created)}): {standing}")
    stored = round(q.stored_bytes / MIB, 1)
    print(
        f"  quota: versions today {_of(q.versions_today, q.versions_per_day)}, live bots "
        f"{_of(q.live_bots, q.live_bots_per_author)}, stored "
        f"{_of(stored, round(q.stored_bytes_limit / MIB, 1), ' MiB')}"
    )
    for v in a.versions:
        why = f"  {v.reason}" if v.reason else ""
        print(f"  {v.id:>5}  {v.ref}  {v.kind}  {v.status}{why}")


def _authors(client: RemoteClient, args: argparse.Namespace) -> int:
    found = client.admin_authors()
    if args.json:
        _print_json(found)
    elif not found:
        print("no authors yet")
    for a in [] if args.json else found:
        _print_author(a)
    return 0


def _suspend(client: RemoteClient, args: argparse.Namespace) -> int:
    done = client.admin_suspend(args.name, args.reason or "")
    return _say(
        args,
        done,
        f"suspended {done.author.name}: their API token and live bots' tokens no longer work",
        f"retired: {', '.join(done.retired) or 'none'}; live bots disconnected: "
        f"{done.disconnected}",
    )


def _reinstate(client: RemoteClient, args: argparse.Namespace) -> int:
    new = client.admin_reinstate(args.name)
    return _say(
        args,
        new,
        f"reinstated {new.author.name}: new API token {new.token}",
        "(shown this once; the old token stays dead, and their retired versions stay retired:",
        " a version never comes back, they submit again)",
    )


def _retire(client: RemoteClient, args: argparse.Namespace) -> int:
    v = client.admin_retire(args.id, args.reason or "")
    return _say(args, v, f"retired {v.ref} (version {v.id}): {v.reason}")


def _unit_line(u: UnitOut) -> str:
    return f"unit {u.id} ({u.phase}: {', '.join(u.table)})"


def _rerun(client: RemoteClient, args: argparse.Namespace) -> int:
    if (args.unit is None) == (not args.all_failed):
        raise UsageError("give one UNIT_ID or --all-failed")
    if args.unit is not None:
        made = [client.admin_rerun(args.unit)]
        of = [args.unit]
    else:
        todo = [u.id for u in client.admin_failed_units() if u.rerun_as is None][::-1]
        made, of = [], []
        for unit_id in todo:
            try:
                made.append(client.admin_rerun(unit_id))
                of.append(unit_id)
            except ArenaError as err:  # the host's refusal, one line
                if not args.json:
                    print(f"unit {unit_id} not played again: {err}")
    lines = [f"unit {old} played again as {_unit_line(u)}" for old, u in zip(of, made, strict=True)]
    return _say(args, made, *(lines or ["no failed unit played again"]))


def _queue(client: RemoteClient, args: argparse.Namespace) -> int:
    q = client.admin_queue()
    lines = [f"validation queue: {len(q.validation) or 'empty'}"]
    for item in q.validation:
        v = item.version
        lines.append(f"  {v.id:>5}  {v.ref}  {v.kind}  {v.status}  waiting {item.age_s:.0f} s")
    lines.append(f"failed units: {len(q.failed_units) or 'none'}")
    for u in q.failed_units:
        again = f"  (played again as unit {u.rerun_as})" if u.rerun_as is not None else ""
        lines.append(f"  {_unit_line(u)} {_when(u.finished)}: {u.reason}{again}")
    return _say(args, q, *lines)


def _reopen(client: RemoteClient, args: argparse.Namespace) -> int:
    s: Status = client.admin_reopen()
    return _say(
        args,
        s,
        f"ladder: {s.state} (reopened: submissions are open; the final's pending units",
        " failed as 'reopened by the host', its finished results stay)",
    )


def _detail(detail: dict[str, Any]) -> str:
    return json.dumps(detail, sort_keys=True, separators=(", ", ": ")) if detail else ""


def _audit(client: RemoteClient, args: argparse.Namespace) -> int:
    rows = client.admin_audit(args.limit)
    lines = [
        f"{e.id:>5}  {_when(e.at)}  {e.action}  {e.target}  {_detail(e.detail)}".rstrip()
        for e in rows
    ]
    return _say(args, rows, *(lines or ["no admin action yet"]))


def add_admin_actions(asub: Subparsers, add: Adder) -> None:
    """Register the admin's subcommands under ``arena remote admin`` (``add``: remote.py's)."""
    add(asub, "authors", _authors, "admin", "every author: bots, versions, quota use, standing")
    sp = add(
        asub,
        "suspend",
        _suspend,
        "admin",
        "suspend author NAME: their tokens stop working, their versions are retired, their "
        "live bots disconnected",
    )
    sp.add_argument("name", metavar="NAME", help="author name")
    sp.add_argument("--reason", default=None, metavar="TEXT", help="why (kept in the audit)")
    rp = add(
        asub,
        "reinstate",
        _reinstate,
        "admin",
        "lift NAME's suspension: prints a new API token (retired versions stay retired)",
    )
    rp.add_argument("name", metavar="NAME", help="author name")
    tp = add(asub, "retire", _retire, "admin", "retire anyone's version VERSION_ID for good")
    tp.add_argument("id", type=POSITIVE, metavar="VERSION_ID", help="version id")
    tp.add_argument("--reason", default=None, metavar="TEXT", help="why (the author sees it)")
    un = add(
        asub,
        "rerun",
        _rerun,
        "admin",
        "play a failed unit again: a new unit, same table and deal (queue lists them)",
    )
    un.add_argument("unit", nargs="?", type=POSITIVE, metavar="UNIT_ID", help="unit id")
    un.add_argument(
        "--all-failed", action="store_true", help="every failed unit not played again yet"
    )
    add(asub, "queue", _queue, "admin", "the validation queue and the failed units, with why")
    add(
        asub,
        "reopen",
        _reopen,
        "admin",
        "a closed ladder running again (the final's pending units fail)",
    )
    au = add(asub, "audit", _audit, "admin", "the admin actions, newest first")
    au.add_argument("--limit", type=LIMIT, default=50, metavar="N", help="at most N (50)")
