"""``arena host``: run a competition (arena/host/service.py), and the host's own chores.

    arena host COMPETITION.toml [--dir DIR] [--http ADDR] [--grpc ADDR] [--tls-cert PEM …]
    arena host add-author COMPETITION.toml NAME [--dir DIR]
    arena host backup COMPETITION.toml DEST [--dir DIR]
    arena host restore BACKUP DIR
    arena host prune COMPETITION.toml [--dir DIR] [--dry-run]

``add-author`` works whether the host runs or not: with the host running it asks the host's API
(with the admin token the host keeps in ``DIR/private``), else it writes the database itself.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from cardarena.resolve import split_address

from arena.cli.arguments import add_sandbox_argument
from arena.errors import UsageError
from arena.logging import add_log_level_option, configure, log_file_handler

#: The host's log file in its directory's private files (``--log-file``'s default).
LOG_FILE = "host.log"

USAGE = """\
arena host COMPETITION.toml [--dir DIR] [--http ADDR] [--grpc ADDR] [--public-grpc HOST:PORT]
                            [--tls-cert PEM --tls-key PEM] [--insecure] [--no-sandbox]
                            [--log-file PATH]
arena host add-author COMPETITION.toml NAME [--dir DIR] [--json]
arena host backup COMPETITION.toml DEST [--dir DIR] [--json]
arena host restore BACKUP DIR [--json]
arena host prune COMPETITION.toml [--dir DIR] [--dry-run] [--json]"""


def host_port(text: str) -> str:
    """``--public-grpc``: a ``host:port`` a bot can connect to (no wildcard address)."""
    parts = split_address(text)
    if parts is None or not 0 < parts[1] < 65536 or parts[0] in ("0.0.0.0", "::"):
        raise argparse.ArgumentTypeError(
            f"{text!r}: give HOST:PORT, the name or address live bots reach the gRPC arena at"
        )
    return text.strip()


def add_host_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``arena host``: its two forms share one entry, told apart by the first word."""
    hp = sub.add_parser(
        "host",
        help="run a competition: the HTTP API, the arena for bots, validation and the ladder",
        usage=USAGE,
        description="Run the competition of COMPETITION.toml, keeping everything in DIR "
        "(default: the config's path without .toml), or add an author to it "
        "(add-author: prints their API token once). docs/hosting.md walks through it.",
        add_help=False,
    )
    hp.add_argument("rest", nargs=argparse.REMAINDER)
    hp.set_defaults(handler=host_command)


def _run_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="arena host", usage=USAGE)
    p.add_argument("config", type=Path, help="the competition's TOML file")
    p.add_argument("--dir", type=Path, default=None, help="the competition directory")
    p.add_argument(
        "--http",
        default="127.0.0.1:8080",
        metavar="ADDR",
        help="HTTP API host:port (default %(default)s)",
    )
    p.add_argument(
        "--grpc",
        default="127.0.0.1:50051",
        metavar="ADDR",
        help="gRPC address for live bots, host:port (default %(default)s)",
    )
    p.add_argument(
        "--public-grpc",
        type=host_port,
        default=None,
        metavar="HOST:PORT",
        help="the gRPC address live bots are told (a host behind a proxy or NAT; default: "
        "--grpc's, or the name authors reach the API by when --grpc is 0.0.0.0)",
    )
    p.add_argument("--tls-cert", type=Path, default=None, metavar="PEM", help="TLS certificate")
    p.add_argument("--tls-key", type=Path, default=None, metavar="PEM", help="TLS private key")
    p.add_argument(
        "--insecure",
        action="store_true",
        help="listen beyond loopback without TLS (default: loopback only without TLS)",
    )
    add_sandbox_argument(p)
    add_log_level_option(p, "info")
    p.add_argument(
        "--log-file",
        default=None,
        metavar="PATH",
        help="the log as JSON lines to PATH too, rotated at 10 MiB keeping 5 (default "
        "DIR/private/host.log; '' for none)",
    )
    return p


def _author_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="arena host add-author", usage=USAGE)
    p.add_argument("config", type=Path, help="the competition's TOML file")
    p.add_argument("name", help="the author's name (letters, digits, '_', '.', '-')")
    p.add_argument("--dir", type=Path, default=None, help="the competition directory")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def _copy_parser(
    command: str, description: str, arguments: tuple[tuple[str, str], ...], competition: bool
) -> argparse.ArgumentParser:
    """``backup`` and ``restore``: their positional ``arguments`` (name, help), ``--dir`` for
    the one reading a competition's ``config``, and ``--json`` for the manifest."""
    p = argparse.ArgumentParser(prog=f"arena host {command}", usage=USAGE, description=description)
    for name, text in arguments:
        p.add_argument(name, type=Path, help=text)
    if competition:
        p.add_argument("--dir", type=Path, default=None, help="the competition directory")
    p.add_argument("--json", action="store_true", help="print the backup's manifest as JSON")
    return p


def _backup_parser() -> argparse.ArgumentParser:
    return _copy_parser(
        "backup",
        "Copy the competition directory, consistently, while its host runs.",
        (("config", "the competition's TOML file"), ("dest", "the backup (new, or empty)")),
        competition=True,
    )


def _restore_parser() -> argparse.ArgumentParser:
    return _copy_parser(
        "restore",
        "Make a competition directory from a backup, once it checks.",
        (
            ("backup", "a directory made by `arena host backup`"),
            ("dir", "the competition directory to make (new, or empty)"),
        ),
        competition=False,
    )


def _prune_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="arena host prune",
        usage=USAGE,
        description="Remove old match records and seat logs by the config's [retention] "
        "(a running host does it by itself every retention.interval_s).",
    )
    p.add_argument("config", type=Path, help="the competition's TOML file")
    p.add_argument("--dir", type=Path, default=None, help="the competition directory")
    p.add_argument("--dry-run", action="store_true", help="list what would go; remove nothing")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def _directory(config: Path, given: Path | None) -> Path:
    return given if given is not None else config.with_suffix("")


def host_command(args: argparse.Namespace) -> int:
    """``arena host …``."""
    rest: list[str] = list(args.rest)
    if not rest or rest[0] in ("-h", "--help"):
        _run_parser().print_help()
        for parser in (_author_parser, _backup_parser, _restore_parser, _prune_parser):
            print()
            parser().print_help()
        return 0 if rest else 2
    if rest[0] == "add-author":
        return _add_author(_author_parser().parse_args(rest[1:]))
    if rest[0] in ("backup", "restore"):
        return _backup_or_restore(rest[0], rest[1:])
    if rest[0] == "prune":
        return _prune(_prune_parser().parse_args(rest[1:]))
    return _run(_run_parser().parse_args(rest))


def _run(args: argparse.Namespace) -> int:
    import trio

    from arena.cli.signals import run_until_stopped
    from arena.cli.tournament import par_reference
    from arena.host.config import load_competition
    from arena.host.service import ADMIN_TOKEN_FILE, HostOptions, Listening, run_host
    from arena.layout import PRIVATE_DIR
    from arena.server.api import run_trio

    config = load_competition(args.config)
    directory = _directory(args.config, args.dir)
    configure(args.log_level, log_file=_log_file(args.log_file, directory))
    options = HostOptions(
        http=args.http,
        grpc=args.grpc,
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        insecure=args.insecure,
        no_sandbox=args.no_sandbox,
        public_grpc=args.public_grpc,
        par_reference=par_reference,
    )

    async def main() -> None:
        # Matches cut off by Ctrl-C or SIGTERM stay pending; bots and their containers stop.
        async with trio.open_nursery() as nursery:
            where: Listening = await nursery.start(run_host, config, directory, options)
            print(
                f"arena: hosting {config.name} ({config.rules.game_id}) in {directory}: API "
                f"{where.http_url}, bots {where.grpc_address}; the admin token is in "
                f"{directory / PRIVATE_DIR / ADMIN_TOKEN_FILE}; Ctrl-C stops",
                flush=True,
            )

    stopped = run_trio(lambda: run_until_stopped(main))
    if stopped:
        print(f"arena: host stopped ({stopped})", file=sys.stderr)
    return 130 if stopped == "SIGINT" else 0  # 130: the CLI's status for an interrupt


def _log_file(given: str | None, directory: Path) -> logging.Handler | None:
    """``--log-file``'s handler: ``DIR/private/host.log`` by default (beside the host's other
    private files, hidden from bots); none for ``''``."""
    from arena.layout import PRIVATE_DIR

    if given is not None and not given.strip():
        return None
    path = Path(given) if given is not None else directory / PRIVATE_DIR / LOG_FILE
    try:
        return log_file_handler(path)
    except OSError as err:
        raise UsageError(f"--log-file {path}: cannot be written ({err.strerror or err})") from None


def _add_author(args: argparse.Namespace) -> int:
    from arena.host.config import load_competition
    from arena.host.service import HOST_FILE, admin_token
    from arena.host.store import CompetitionStore, CompetitionStoreError
    from arena.layout import PRIVATE_DIR

    config = load_competition(args.config)
    directory = _directory(args.config, args.dir)
    try:
        store = CompetitionStore(directory, config)
    except CompetitionStoreError as err:
        running = directory / PRIVATE_DIR / HOST_FILE
        if "running" not in str(err) or not running.is_file():
            raise
        # The host holds the database: ask it.
        from arena.host.client import RemoteClient

        where = json.loads(running.read_text())
        # The host's own certificate, whatever name it carries: reached at the host's own
        # listening address, which the certificate need not name.
        client = RemoteClient(
            where["http"], token=admin_token(directory), cafile=where.get("cafile"), pinned=True
        )
        made = client.admin_add_author(args.name)
        name, token = made.author.name, made.token
    else:
        with store:
            author, token = store.add_author(args.name)
            store.record_audit("add-author", author.name, {"id": author.id})
            name = author.name
    if args.json:
        print(json.dumps({"author": name, "token": token}))
    else:
        print(f"author {name}: API token {token}")
        print("(shown this once: the competition keeps only its hash)", file=sys.stderr)
    return 0


def _backup_or_restore(command: str, argv: list[str]) -> int:
    from arena.host import backup

    if command == "backup":
        args = _backup_parser().parse_args(argv)
        manifest = backup.backup(_directory(args.config, args.dir), args.dest)
        done = f"backup of {_directory(args.config, args.dir)} in {args.dest}"
    else:
        args = _restore_parser().parse_args(argv)
        manifest = backup.restore(args.backup, args.dir)
        done = f"restored {args.backup} into {args.dir}; start the host on it with --dir"
    if args.json:
        print(json.dumps(manifest))
    else:
        counts = manifest.get("counts", {})
        print(
            f"arena: {done} (taken {manifest.get('time')}: {counts.get('matches_done')} "
            f"matches done, {counts.get('versions')} versions)"
        )
    return 0


def _prune(args: argparse.Namespace) -> int:
    from arena.host.config import load_competition
    from arena.host.retention import prune
    from arena.host.store import DB_NAME, CompetitionStore, CompetitionStoreError

    config = load_competition(args.config)
    directory = _directory(args.config, args.dir)
    if not (directory / DB_NAME).is_file():
        raise UsageError(f"{directory}: no {DB_NAME} here; is it a competition directory?")
    configure("warning")
    try:
        store = CompetitionStore(directory, config)
    except CompetitionStoreError as err:
        if "running" not in str(err):
            raise
        # One writer of the pruned table and the files: the host, which prunes by itself.
        raise UsageError(
            f"{directory}: its host is running and prunes by itself every "
            "retention.interval_s; stop it to prune by hand"
        ) from None
    with store:
        report = prune(store, config.retention, dry_run=args.dry_run)
    if args.json:
        removed = [{"path": r.path, "bytes": r.bytes, "why": r.why} for r in report.removed]
        print(json.dumps({"dry_run": report.dry_run, "removed": removed, "bytes": report.bytes}))
        return 0
    for r in report.removed:
        print(f"{r.path}\t{r.bytes} bytes\t({r.why})")
    verb = "would remove" if args.dry_run else "removed"
    print(f"arena: {verb} {len(report.removed)} files, {report.bytes} bytes on disk")
    if not config.retention.enabled:
        print(f"({args.config} sets no [retention] limit: everything is kept)", file=sys.stderr)
    return 0
