"""``arena watch ADDRESS [MATCH_ID]``: the matches an arena server shows, or one followed live
(public events only, then the result; docs/play.md, "Watching")."""

from __future__ import annotations

import argparse

from arena.cli.arguments import parse_options


def watch_command(args: argparse.Namespace) -> int:
    """The ``arena watch`` command."""
    from arena.people.watch import follow, list_matches, summary_line, watch_page

    if args.match_id is None:
        matches = list_matches(args.address)
        for m in matches:
            print(summary_line(m))
        if not matches:
            print(f"{args.address}: no match to show")
        return 0
    if args.text:
        for line in follow(args.address, args.match_id):
            print(line, flush=True)
        return 0
    options = parse_options(args.option)
    watch_page(
        args.address,
        args.match_id,
        lambda url: print(f"watch at {url}", flush=True),
        options=options,
        players=args.players,
    )
    return 0


def add_watch_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``arena watch``."""
    wp = sub.add_parser(
        "watch",
        help="list an arena server's matches, or follow one live (public information only)",
        description="Without MATCH_ID: the matches the server shows. With it: a page on "
        "127.0.0.1 (a secret in its URL) showing the match's public events as it is played, "
        "then its result (--text: as lines). Servers that play duplicate deals "
        "(tournaments, competition hosts) show none.",
    )
    wp.add_argument("address", metavar="ADDRESS", help="the arena server: host:port or unix:PATH")
    wp.add_argument("match_id", metavar="MATCH_ID", nargs="?", help="the match to follow")
    wp.add_argument(
        "--text",
        action="store_true",
        help="print the match's public events as lines instead of serving a live page",
    )
    wp.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="the match's game option, as the server was given it (repeatable): the page "
        "draws the table by the game's rules, and a server does not say its options",
    )
    wp.add_argument(
        "--players",
        type=int,
        metavar="N",
        help="players at the table, when the game's seats do not say it (tennis doubles "
        "played by two seats)",
    )
    wp.set_defaults(handler=watch_command)
