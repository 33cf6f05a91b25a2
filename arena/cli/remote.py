"""``arena remote``: a competition host's HTTP API from the command line (arena/host/client.py).

Every subcommand takes ``--server URL`` (else ``$ARENA_SERVER``), ``--token T`` (else
``$ARENA_API_TOKEN``; for ``admin``, the host's admin token, else ``$ARENA_ADMIN_TOKEN``),
``--cafile PEM`` and ``--timeout S``; those that print JSON answers take ``--json`` to print
the answer as is.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import arena.cli.remote_seasons as remote_seasons
from arena.cli.arguments import NON_NEGATIVE, POSITIVE, TIMEOUT, number
from arena.cli.remote_admin import add_admin_actions
from arena.cli.remote_challenge import add_challenge_commands
from arena.cli.remote_events import add_event_admin, add_event_commands
from arena.errors import ArenaError, UsageError

if TYPE_CHECKING:
    from pydantic import BaseModel

    from arena.host.apitypes import AnalysisOut, AuthorOut, BotOut, Status, VersionOut
    from arena.host.client import RemoteClient

    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]

#: The admin token, when ``--token`` is not given to ``arena remote admin``.
ADMIN_TOKEN_ENV = "ARENA_ADMIN_TOKEN"
#: ``--limit``: what the API serves at most.
LIMIT = number(int, 1, "a whole number from 1 to 1000", 1000)
#: ``--rate``: units per minute (the host refuses more than it allows).
RATE = number(float, 0.0, "a number of units per minute of at least 0 (0: no limit)")

Auth = Literal["none", "author", "admin"]
Action = Callable[["RemoteClient", argparse.Namespace], int]


def _handler(action: Action, auth: Auth) -> Callable[[argparse.Namespace], int]:
    """The argparse handler: the client from the common options, then ``action``."""

    def run(args: argparse.Namespace) -> int:
        from arena.host.client import (
            CA_ENV,
            SERVER_ENV,
            TOKEN_ENV,
            RemoteClient,
            RemoteError,
            resolve_from_env,
        )

        server = args.server or os.environ.get(SERVER_ENV, "").strip()
        if not server:
            raise UsageError(f"give the host's URL: --server https://HOST:PORT (or ${SERVER_ENV})")
        env = ADMIN_TOKEN_ENV if auth == "admin" else TOKEN_ENV
        token = args.token or os.environ.get(env, "").strip() or None
        if token is None and auth == "author":
            raise UsageError(
                f"this needs your API token: --token T (or ${TOKEN_ENV}); `arena remote "
                "register` or the host's add-author gives one"
            )
        if token is None and auth == "admin":
            raise UsageError(
                f"this needs the host's admin token: --token T (or ${ADMIN_TOKEN_ENV}), from "
                "the competition directory's private/admin.token"
            )
        cafile, cafile_from = args.cafile, "--cafile"
        if cafile is None and server.startswith("https:"):
            cafile, cafile_from = os.environ.get(CA_ENV, "").strip() or None, f"${CA_ENV}"
        client = RemoteClient(
            server,
            token,
            cafile,
            args.timeout,
            resolve=resolve_from_env(),
            cafile_from=cafile_from,
        )
        try:
            return action(client, args)
        except (KeyError, TypeError, ValueError) as err:
            # A server whose answers lack what this client reads: one line, not a traceback.
            raise RemoteError(
                f"{client.base_url} answered with something this client does not understand "
                f"({type(err).__name__}: {err}); is it a Card Arena host of this version?"
            ) from None

    return run


def _print_json(value: BaseModel | Sequence[BaseModel]) -> None:
    """An answer as the API sent it (the model's fields, in the schema's order)."""
    if isinstance(value, Sequence):
        data: object = [v.model_dump(mode="json") for v in value]
    else:
        data = value.model_dump(mode="json")
    print(json.dumps(data, indent=2))


def _table(rows: Sequence[Sequence[str]]) -> None:
    """Rows (the first is the header) in columns; the last column is not padded."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for r in rows:
        cells = [c.ljust(w) for c, w in zip(r, widths, strict=False)]
        print("  ".join([*cells, r[-1]]).rstrip())


def _day(timestamp: str | None) -> str:
    """An ISO 8601 time to the minute: ``2025-01-31 14:02``."""
    return "" if not timestamp else timestamp[:16].replace("T", " ")


def _pace(units_per_minute: float) -> str:
    return "no limit" if units_per_minute == 0 else f"{units_per_minute:g} units per minute"


def _print_status(s: Status) -> None:
    counts = ", ".join(f"{n} {status}" for status, n in sorted(s.versions.items()))
    print(f"{s.name}: {s.game}, {s.players} players (host {s.server_version})")
    print(f"ladder: {s.state}, pace: {_pace(s.units_per_minute)}")
    print(f"versions: {counts or 'none yet'}")
    print(f"matches played: {s.matches_played}")
    if s.provisional_rule:
        print(f"leaderboard: {s.provisional_rule}")
    if s.final != "not started":
        won = f", won by {' and '.join(s.final_winners)}" if s.final_winners else ""
        print(f"final: {s.final}{won}")
    remote_seasons.print_season_status(s)
    for e in s.events:
        print(
            f"event {e['name']}: {e['state']}" + (f", won by {e['winner']}" if e["winner"] else "")
        )


def _print_versions(bots: Sequence[BotOut], *, author: bool, reasons: bool) -> None:
    header = ["id", "version", *(["author"] if author else []), "kind", "runtime", "status"]
    rows = [[*header, "submitted"]]
    notes: dict[int, str] = {}
    for bot in bots:
        for v in bot.versions:
            rows.append(
                [
                    str(v.id),
                    v.ref,
                    *([bot.author] if author else []),
                    v.kind,
                    v.runtime or "-",
                    v.status,
                    _day(v.created),
                ]
            )
            if reasons and v.reason:
                notes[len(rows) - 1] = v.reason
    if len(rows) == 1:
        print("no versions yet (arena remote submit NAME DIR)")
        return
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for i, r in enumerate(rows):
        print("  ".join([*(c.ljust(w) for c, w in zip(r, widths, strict=False)), r[-1]]))
        if i in notes:
            print(f"    {notes[i]}")


def _print_version(v: VersionOut) -> None:
    print(f"{v.ref} (version {v.id}): {v.status}")
    if v.reason:
        print(f"reason: {v.reason}")
    print(f"kind: {v.kind}" + (f", runtime {v.runtime}" if v.runtime else ""))
    if v.sha256:
        print(f"sha256: {v.sha256}")
    print(f"submitted: {_day(v.created)}, updated: {_day(v.updated)}")


def _print_new_token(author: AuthorOut, token: str) -> None:
    print(f"author {author.name} (id {author.id})")
    print(f"token: {token}")
    print("(shown once: keep it; arena remote takes it as --token or ARENA_API_TOKEN)")


def _write(path: Path, data: bytes) -> None:
    """``data`` into ``path``, whole or not at all (a temporary file renamed into place)."""
    part = path.with_name(path.name + ".part")
    try:
        part.write_bytes(data)
        os.replace(part, path)
    except OSError as err:
        part.unlink(missing_ok=True)
        raise ArenaError(f"cannot write {str(path)!r}: {err.strerror}") from None


def _output(given: str | None, default: str) -> Path:
    """Where a download goes: ``-o FILE``, into ``-o DIR``, or ``default`` here."""
    if given is None:
        if Path(default).name != default or default.startswith("."):
            raise UsageError(f"{default!r} is no file name here: give -o FILE")
        return Path(default)
    path = Path(given)
    return path / default if path.is_dir() else path


# --- the subcommands ------------------------------------------------------------------------------


def _status(client: RemoteClient, args: argparse.Namespace) -> int:
    s = client.status()
    if args.json:
        _print_json(s)
    else:
        _print_status(s)
    return 0


def _leaderboard(client: RemoteClient, args: argparse.Namespace) -> int:
    rows = client.leaderboard(args.phase, latest=args.latest, retired=args.all)
    if args.json:
        _print_json(rows)
        return 0
    if not rows:
        print(f"no rated versions in the {args.phase} yet")
        return 0
    table = [["rank", "bot", "author", "Elo", "matches", "score"]]
    for r in rows:
        elo = f"{r.elo:.0f} ± {r.plus_minus:.0f}"
        marks = [m for m, on in (("provisional", r.provisional), ("retired", r.retired)) if on]
        score = "  ".join([f"{r.score:.3f}", *marks])
        table.append([str(r.rank), r.ref, r.author, elo, str(r.matches), score])
    _table(table)
    return 0


def _par(client: RemoteClient, args: argparse.Namespace) -> int:
    board = client.par()
    if args.json:
        _print_json(board)
        return 0
    if not board.reference:
        print("this competition measures no par ([ladder] par)")
        return 0
    if not board.rows:
        print(f"no par against {board.reference} yet: it is computed as units finish")
        return 0
    table = [["version", "par", "±", "matches", "deals"]]
    for r in board.rows:
        pm = "-" if r.plus_minus is None else f"{r.plus_minus:.3f}"
        table.append([r.ref, f"{r.par:+.3f}", pm, str(r.matches), str(r.deals)])
    _table(table)
    print(f"par: score per match minus {board.reference}'s in the same seat on the same deal")
    return 0


def _bots(client: RemoteClient, args: argparse.Namespace) -> int:
    bots = client.bots()
    if args.json:
        _print_json(bots)
    else:
        _print_versions(bots, author=True, reasons=False)
    return 0


def _me(client: RemoteClient, args: argparse.Namespace) -> int:
    me = client.me()
    if args.json:
        _print_json(me)
        return 0
    a = me.author
    print(f"author {a.name} (id {a.id}, since {_day(a.created)})")
    _print_versions(me.bots, author=False, reasons=True)
    return 0


def _rotate(client: RemoteClient, args: argparse.Namespace) -> int:
    rotated = client.rotate_token()
    if args.json:
        _print_json(rotated)
        return 0
    print(f"token: {rotated.token}")
    print("(shown once; the old token no longer works)")
    return 0


def _submit(client: RemoteClient, args: argparse.Namespace) -> int:
    from arena.host.client import MAX_ARCHIVE_BYTES, pack_directory

    source = Path(args.source)
    if source.is_dir():
        archive = pack_directory(source)
    elif source.is_file():
        if source.stat().st_size > MAX_ARCHIVE_BYTES:
            raise UsageError(f"{args.source!r} is larger than {MAX_ARCHIVE_BYTES >> 20} MiB")
        try:
            archive = source.read_bytes()
        except OSError as err:
            raise UsageError(f"cannot read {args.source!r}: {err.strerror}") from None
    else:
        raise UsageError(f"{args.source!r}: no such directory or archive")
    v = client.submit(args.name, archive)
    if args.json:
        _print_json(v)
        return 0
    print(f"submitted {v.ref} (version {v.id}): {v.status}")
    print(f"sha256: {v.sha256}")
    print(f"(it is validated next: arena remote version {v.id} shows how that went)")
    return 0


def _live(client: RemoteClient, args: argparse.Namespace) -> int:
    import shlex
    import urllib.parse

    live = client.live(args.name)
    if args.json:
        _print_json(live)
        return 0
    v = live.version
    status = client.status()
    address = status.grpc_address  # as the host advertises it (None: an older host)
    if address is None:
        address = f"{urllib.parse.urlsplit(client.base_url).hostname}:{status.grpc_port or 'PORT'}"
    env = [f"ARENA_ADDRESS={shlex.quote(address)}", f"ARENA_TOKEN={live.token}"]
    if status.tls and client.cafile is not None:
        # The certificate this client trusts the host by: the bot's stream needs it too.
        env.append(f"ARENA_CA_CERT={shlex.quote(str(client.cafile.resolve()))}")
    print(f"live version {v.ref} (version {v.id}): {v.status}")
    print(f"token: {live.token}")
    print("(shown once) Run your bot with it, connected to the host's gRPC address:")
    print(f"  {' '.join(env)} YOUR-BOT-COMMAND")
    return 0


def _version(client: RemoteClient, args: argparse.Namespace) -> int:
    v = client.version(args.id)
    if args.json:
        _print_json(v)
    else:
        _print_version(v)
    return 0


def _head_to_head(client: RemoteClient, args: argparse.Namespace) -> int:
    rows = client.head_to_head(args.id)
    if args.json:
        _print_json(rows)
        return 0
    if not rows:
        print("no finished matches yet")
    for r in rows:
        print(
            f"{r.opponent:<24} {r.matches:>5} matches: "
            f"{r.wins} won, {r.losses} lost, {r.draws} level"
        )
    return 0


def _retire(client: RemoteClient, args: argparse.Namespace) -> int:
    v = client.retire(args.id)
    if args.json:
        _print_json(v)
    else:
        print(f"retired {v.ref} (version {v.id})")
    return 0


def _log(client: RemoteClient, args: argparse.Namespace) -> int:
    sys.stdout.write(client.version_log(args.id))
    return 0


def _validation(client: RemoteClient, args: argparse.Namespace) -> int:
    ids = client.validation_matches(args.id)
    if not ids:
        print(f"version {args.id} has no validation records (arena remote log {args.id} says why)")
        return 0
    if args.output is not None and not Path(args.output).is_dir():
        raise UsageError(f"-o {args.output!r}: not a directory")
    for match_id in ids:
        data = client.validation_record(args.id, match_id)
        path = _output(args.output, f"{match_id}.jsonl.gz")
        _write(path, data)
        print(f"wrote {path} ({len(data):,} bytes)")
    return 0


def _archive(client: RemoteClient, args: argparse.Namespace) -> int:
    data = client.archive(args.id)
    # A version's source comes as .tar.gz, an image version's tarball as a plain .tar.
    suffix = ".tar.gz" if data.startswith(b"\x1f\x8b") else ".tar"
    path = _output(args.output, f"version-{args.id}{suffix}")
    _write(path, data)
    print(f"wrote {path} ({len(data):,} bytes)")
    return 0


def _matches(client: RemoteClient, args: argparse.Namespace) -> int:
    found = client.matches(
        args.version, args.phase, args.limit, args.offset, bot=args.bot, faults=args.faults
    )
    if args.json:
        _print_json(found)
        return 0
    if not found:
        print("no finished matches yet")
        return 0
    table = [["match", "phase", "seats", "result", "record", "finished"]]
    for m in found:
        result = m.summary or m.reason or m.state
        record = "yes" if m.record_available else "later"
        phase = f"{m.phase} (human)" if m.human else m.phase
        table.append([m.match_id, phase, " ".join(m.seats), result, record, _day(m.finished)])
    _table(table)
    if client.last_total is not None:
        first = args.offset + 1
        more = args.offset + len(found) < client.last_total
        hint = f" (--offset {args.offset + len(found)} for more)" if more else ""
        print(f"matches {first}-{args.offset + len(found)} of {client.last_total}{hint}")
    return 0


def _match(client: RemoteClient, args: argparse.Namespace) -> int:
    m = client.match(args.match_id)
    if args.json:
        _print_json(m)
        return 0
    if m.human:
        print(f"{m.match_id}: a human match ({m.phase}), {m.state}")
    else:
        print(f"{m.match_id}: {m.phase} unit {m.unit}, rotation {m.rotation}, {m.state}")
    print(f"seats: {', '.join(m.seats)}")
    if m.summary or m.reason:
        print(f"result: {m.summary or ''} ({m.reason or ''})")
    if m.ranks:
        print(f"ranks: {' '.join(str(r) for r in m.ranks)}")
    for fault in m.faults:
        print(f"fault: seat {fault.get('seat')} {fault.get('kind')}: {fault.get('detail', '')}")
    print(f"record: {'available' if m.record_available else 'once its deal is played out'}")
    return 0


def _record(client: RemoteClient, args: argparse.Namespace) -> int:
    path = _output(args.output, f"{args.match_id}.jsonl.gz")
    data = client.record(args.match_id)
    _write(path, data)
    print(f"wrote {path} ({len(data):,} bytes; arena replay verify {path} checks it)")
    return 0


def _logs(client: RemoteClient, args: argparse.Namespace) -> int:
    sys.stdout.write(client.seat_log(args.match_id, args.seat))
    return 0


def _register(client: RemoteClient, args: argparse.Namespace) -> int:
    new = client.register(args.name, args.invite)
    if args.json:
        _print_json(new)
    else:
        _print_new_token(new.author, new.token)
    return 0


def _add_author(client: RemoteClient, args: argparse.Namespace) -> int:
    new = client.admin_add_author(args.name)
    if args.json:
        _print_json(new)
    else:
        _print_new_token(new.author, new.token)
    return 0


def _ladder(client: RemoteClient, args: argparse.Namespace) -> int:
    s = client.admin_ladder(args.state, args.rate)
    if args.json:
        _print_json(s)
    else:
        _print_status(s)
    return 0


# --- the parser ---------------------------------------------------------------------------------


def _common(json_output: bool) -> argparse.ArgumentParser:
    """The options every ``arena remote`` subcommand takes (``--json`` where it answers JSON)."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument(
        "--server",
        default=None,
        metavar="URL",
        help="the host, https://HOST:PORT (or $ARENA_SERVER)",
    )
    p.add_argument(
        "--token",
        default=None,
        metavar="T",
        help="your API token (or $ARENA_API_TOKEN; the environment keeps it out of `ps`)",
    )
    p.add_argument(
        "--cafile",
        default=None,
        metavar="PEM",
        help="trust this certificate (a self-signed host; or $ARENA_CA_CERT)",
    )
    p.add_argument(
        "--timeout", type=TIMEOUT, default=30.0, metavar="S", help="seconds per request (30)"
    )
    if json_output:
        p.add_argument("--json", action="store_true", help="print the API's JSON answer")
    return p


def _add(
    parent: Subparsers,
    name: str,
    action: Action,
    auth: Auth,
    help_: str,
    *,
    json_output: bool = True,
) -> argparse.ArgumentParser:
    """Subcommand ``name``: the common options (and ``--json``), then ``action``."""
    p = parent.add_parser(name, help=help_, description=help_, parents=[_common(json_output)])
    p.set_defaults(handler=_handler(action, auth))
    return p


def add_remote_parser(sub: Subparsers) -> None:
    """Register ``arena remote`` and its subcommands."""
    rp = sub.add_parser(
        "remote",
        help="use a competition host's HTTP API: submit bots, read leaderboards and matches",
        description="Talk to a competition host (arena host) over its HTTP API. Every "
        "subcommand takes --server URL (or $ARENA_SERVER) and --token T (or $ARENA_API_TOKEN).",
    )
    rsub = rp.add_subparsers(dest="remote_command", required=True, metavar="SUBCOMMAND")
    _add(rsub, "status", _status, "none", "the competition: game, ladder state, counts")
    lb = _add(
        rsub,
        "leaderboard",
        _leaderboard,
        "none",
        "the ratings: Elo, with intervals (provisional versions last, marked; the rule: status)",
    )
    lb.add_argument("--phase", choices=("ladder", "final"), default="ladder", help="(ladder)")
    lb.add_argument(
        "--latest", action="store_true", help="each bot's latest validated version only"
    )
    lb.add_argument(
        "--all", action="store_true", help="retired versions too (marked; left out by default)"
    )
    _add(
        rsub,
        "par",
        _par,
        "none",
        "each version's par in the ladder: its score per match minus a reference's on the same "
        "deal (when the competition measures it)",
    )
    _add(rsub, "bots", _bots, "none", "every bot and version")
    _add(rsub, "me", _me, "author", "you, your bots and versions (with why one failed)")
    tp = rsub.add_parser("token", help="your API token", description="Your API token.")
    tsub = tp.add_subparsers(dest="token_command", required=True, metavar="SUBCOMMAND")
    _add(tsub, "rotate", _rotate, "author", "a new API token; the old one stops working")
    _add_version_commands(rsub)
    _add_match_commands(rsub)
    rg = _add(
        rsub,
        "register",
        _register,
        "none",
        "become an author with the competition's invite code: prints your API token",
    )
    rg.add_argument("name", metavar="NAME", help="your author name")
    rg.add_argument("--invite", required=True, metavar="CODE", help="the invite code")
    _add_admin_commands(rsub)
    remote_seasons.add_season_commands(rsub, _add)
    add_event_commands(rsub, _add)
    add_challenge_commands(rsub, _add)


def _add_version_commands(rsub: Subparsers) -> None:
    """``submit``, ``live`` and what reads or changes one version."""
    sp = _add(
        rsub,
        "submit",
        _submit,
        "author",
        "upload a new version of bot NAME: a directory with its cardarena.toml (packed without "
        ".git and __pycache__), a .tar, .tar.gz or .zip as it is, or a Docker image tarball "
        "(docker save) where the host takes images",
    )
    sp.add_argument("name", metavar="NAME", help="bot name (yours once you submit it)")
    sp.add_argument(
        "source", metavar="DIR_OR_ARCHIVE", help="the bot's directory, archive or image tarball"
    )
    lp = _add(
        rsub,
        "live",
        _live,
        "author",
        "a new version of bot NAME played by a bot you run yourself: prints its token",
    )
    lp.add_argument("name", metavar="NAME", help="bot name")
    vp = _add(rsub, "version", _version, "none", "one version (with your token: why it failed)")
    vp.add_argument("id", type=POSITIVE, metavar="ID", help="version id")
    hh = _add(rsub, "head-to-head", _head_to_head, "none", "version ID against each opponent")
    hh.add_argument("id", type=POSITIVE, metavar="ID", help="version id")
    rt = _add(rsub, "retire", _retire, "author", "retire your version ID: it plays no more")
    rt.add_argument("id", type=POSITIVE, metavar="ID", help="version id")
    lg = _add(rsub, "log", _log, "author", "your version ID's validation log", json_output=False)
    lg.add_argument("id", type=POSITIVE, metavar="ID", help="version id")
    vr = _add(
        rsub,
        "validation",
        _validation,
        "author",
        "download the records of your version ID's validation matches (arena replay reads them)",
        json_output=False,
    )
    vr.add_argument("id", type=POSITIVE, metavar="ID", help="version id")
    vr.add_argument("-o", "--output", default=None, metavar="DIR", help="into DIR (here)")
    ap = _add(
        rsub, "archive", _archive, "author", "download your version ID's files", json_output=False
    )
    ap.add_argument("id", type=POSITIVE, metavar="ID", help="version id")
    ap.add_argument("-o", "--output", default=None, metavar="FILE", help="(version-ID.tar.gz)")


#: Seconds between looks while ``remote analysis --wait`` waits.
ANALYSIS_POLL_S = 2.0


def _analysis(client: RemoteClient, args: argparse.Namespace) -> int:
    """Ask for the analysis of one's seats in a match unless asked already; with ``--wait``,
    wait until it ends. Exit status 1 when it failed."""
    found = client.analysis(args.match_id)
    if found.state == "none":
        found = client.request_analysis(args.match_id)
    while args.wait and found.state in ("queued", "running"):
        time.sleep(ANALYSIS_POLL_S)
        found = client.analysis(args.match_id)
    if args.json:
        _print_json(found)
    else:
        _print_analysis(found)
    return 1 if found.state == "failed" else 0


def _print_analysis(found: AnalysisOut) -> None:
    from arena.records.analysis_doc import summary_lines

    seats = ", ".join(str(s) for s in found.seats)
    print(f"analysis of {found.match_id} (seats {seats}): {found.state}")
    if found.reason:
        print(f"reason: {found.reason}")
    if found.analysis is not None:
        for line in summary_lines(found.analysis):
            print(line)


def _add_match_commands(rsub: Subparsers) -> None:
    """``matches``, ``match``, ``record``, ``logs`` and ``analysis``."""
    mp = _add(rsub, "matches", _matches, "none", "the latest finished matches, newest first")
    mp.add_argument("--version", type=POSITIVE, default=None, metavar="ID", help="of version ID")
    mp.add_argument("--phase", choices=("ladder", "final"), default=None, help="of one phase")
    mp.add_argument("--limit", type=LIMIT, default=20, metavar="N", help="at most N (20)")
    mp.add_argument(
        "--offset", type=NON_NEGATIVE, default=0, metavar="N", help="after the N newest"
    )
    mp.add_argument("--bot", default=None, metavar="NAME", help="of bot NAME (any version)")
    mp.add_argument(
        "--faults", action=argparse.BooleanOptionalAction, default=None, help="with faults or not"
    )
    mt = _add(rsub, "match", _match, "none", "one finished match")
    mt.add_argument("match_id", metavar="MATCH_ID")
    rc = _add(
        rsub,
        "record",
        _record,
        "none",
        "download a match's record, once every rotation of its deal is played",
        json_output=False,
    )
    rc.add_argument("match_id", metavar="MATCH_ID")
    rc.add_argument("-o", "--output", default=None, metavar="FILE", help="(MATCH_ID.jsonl.gz)")
    sl = _add(
        rsub,
        "logs",
        _logs,
        "author",
        "what your bot wrote to stderr in seat SEAT of a match",
        json_output=False,
    )
    sl.add_argument("match_id", metavar="MATCH_ID")
    sl.add_argument("seat", type=NON_NEGATIVE, metavar="SEAT", help="seat number, from 0")
    an = _add(
        rsub,
        "analysis",
        _analysis,
        "author",
        "what each decision of your seats in a finished match cost: asks the host to analyse "
        "it (once; queued), or shows how far it is and, done, the summary",
    )
    an.add_argument("match_id", metavar="MATCH_ID")
    an.add_argument("--wait", action="store_true", help="wait until the analysis is done")


def _add_admin_commands(rsub: Subparsers) -> None:
    """``admin add-author`` and ``admin ladder``, and the rest of the admin's (remote_admin.py):
    the host's, with its admin token."""
    adm = rsub.add_parser(
        "admin",
        help="the host's own commands (--token: the admin token, or $ARENA_ADMIN_TOKEN)",
        description="The host's commands; --token is the admin token (or $ARENA_ADMIN_TOKEN).",
    )
    asub = adm.add_subparsers(dest="admin_command", required=True, metavar="SUBCOMMAND")
    add_event_admin(asub, _add)
    aa = _add(asub, "add-author", _add_author, "admin", "add an author: prints their API token")
    aa.add_argument("name", metavar="NAME", help="author name")
    remote_seasons.add_admin_season_commands(asub, _add)
    al = _add(asub, "ladder", _ladder, "admin", "pause, resume or close the ladder, set its pace")
    state = al.add_mutually_exclusive_group()
    state.add_argument("--pause", dest="state", action="store_const", const="paused")
    state.add_argument("--resume", dest="state", action="store_const", const="running")
    state.add_argument(
        "--close",
        dest="state",
        action="store_const",
        const="closed",
        help="for good: the final follows",
    )
    al.add_argument("--rate", type=RATE, default=None, metavar="N", help="units per minute")
    add_admin_actions(asub, _add)
