"""``arena replay …``: verify, show, ask, html and analyze on match records (and ``play``,
arena/cli/takeover.py)."""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path
from typing import Any

from arena.cli.arguments import NON_NEGATIVE, POSITIVE, TIMEOUT, add_sandbox_argument, number
from arena.cli.takeover import add_replay_play_parser
from arena.errors import ArenaError, UsageError


def _cmd_verify(args: argparse.Namespace) -> int:
    from arena.records.replay import verify

    failed = 0
    for name in args.files:
        try:
            decisions = verify(Path(name))
        except ArenaError as err:
            print(f"FAIL {err}")
            failed += 1
        else:
            print(f"ok   {name}: {decisions} decisions replayed, events, result and hashes match")
    return 1 if failed else 0


def _cmd_show(args: argparse.Namespace) -> int:
    from arena.records.view import branch_line, frames_text, load_replay, step_through

    rep = load_replay(Path(args.file))
    seat = None if args.seat is None else rep.seat_index(args.seat)
    if args.at is not None:
        rep.frame(args.at)  # range check before any output
    # `arena replay show FILE | head`: cli.main lets the reader leave early.
    if (branch := branch_line(rep)) is not None:
        print(branch)
        print()
    if args.step:
        step_through(rep, seat, args.at or 0, sys.stdin, sys.stdout)
        return 0
    for text in frames_text(rep, seat, args.at):
        print(text)
        print()
    return 0


def _cmd_html(args: argparse.Namespace) -> int:
    from arena.records.html import AnalysisOf, write_html

    analysed = args.analysis or args.analysis_file is not None
    if not analysed and (args.seat or args.limit is not None or args.deal is not None):
        raise UsageError("--seat, --deal and --limit go with --analysis")
    analysis: AnalysisOf | None = None
    if args.analysis_file is not None:
        from arena.records.analysis_doc import read_analysis

        if args.analysis:
            raise UsageError("--analysis computes it, --analysis-file reads it: give one")
        path = Path(args.analysis_file)
        analysis = functools.partial(read_analysis, path)
    elif args.analysis:
        from arena.records.analysis_doc import compute
        from reference_bots.search.playout import search_policy

        analysis = functools.partial(
            compute, settings=_settings(args), rollout=search_policy, where=args.file
        )
    out = Path(args.output)
    steps = write_html(Path(args.file), out, analysis)
    print(f"wrote {out}: {steps} steps" + (" with the analysis" if analysed else ""))
    return 0


def _settings(args: argparse.Namespace) -> Any:
    """``replay analyze``'s settings from its options (shared by ``replay html --analysis``)."""
    from arena.records.analyze import Settings

    return Settings(
        worlds=args.worlds,
        seed=args.seed,
        seats=tuple(args.seat or ()),
        at=getattr(args, "at", None),
        deal=args.deal,
        limit=args.limit,
        policy="search",
    )


def _cmd_ask(args: argparse.Namespace) -> int:
    from arena.bots.command import BotProgram
    from arena.bots.launch import confine
    from arena.records.ask import ask_all_command, ask_command

    if not args.replay_all and (args.at is None or args.seat is not None):
        raise UsageError(
            "replay ask needs --at K (one decision asked cold) or --replay-all [--seat N]"
            if args.at is None
            else "--seat goes with --replay-all (--at K alone asks the seat of decision K)"
        )
    if args.replay_all and args.at is not None and args.seat is not None:
        raise UsageError("--replay-all --at K replays the seat of decision K: leave out --seat")
    # Boxed as `arena match` boxes a seat's bot, and refused in one line where it cannot be.
    sandbox = confine([BotProgram(args.bot)], args.no_sandbox)
    path = Path(args.file)
    if args.replay_all:
        return ask_all_command(
            path, args.bot, args.timeout, sys.stdout, sandbox, args.seat, args.at
        )
    return ask_command(path, args.at, args.bot, args.timeout, sys.stdout, sandbox)


#: ``replay analyze --worlds``: a count that ends.
WORLDS = number(int, 1, "a whole number from 1 to 10000", 10_000)


def _cmd_analyze(args: argparse.Namespace) -> int:
    import json

    from arena.records.analyze import analyze_path, progress_bar, report_json, report_text
    from reference_bots.search.playout import search_policy

    settings = _settings(args)
    with progress_bar(sys.stderr) as tell:
        result = analyze_path(Path(args.file), settings, search_policy, tell)
    if args.json:
        print(json.dumps(report_json(result)))
    else:
        print(report_text(result))
    return 0


def add_replay_parser(sub: Any) -> None:
    """Register ``arena replay`` and its subcommands on the top-level subparsers."""
    rp = sub.add_parser("replay", help="verify, show and debug recorded matches")
    rsub = rp.add_subparsers(dest="replay_command", required=True, metavar="ACTION")
    vp = rsub.add_parser("verify", help="replay records and check every event, result and hash")
    vp.add_argument("files", nargs="+", metavar="FILE", help="match record (.jsonl.gz)")
    vp.set_defaults(handler=_cmd_verify)

    sp = rsub.add_parser(
        "show",
        help="print a match as text: the whole table or one seat's view",
        description="Print a recorded match as text. Steps are decision numbers from 0; the "
        "step after the last decision shows the end. With --step, Enter shows the next step "
        "(b = back, a number = jump, q or end of input = quit).",
    )
    sp.add_argument("file", metavar="FILE", help="match record (.jsonl.gz)")
    who = sp.add_mutually_exclusive_group()
    who.add_argument(
        "--seat", metavar="N", help="only what seat N (number or name, e.g. 2 or S) was sent"
    )
    who.add_argument(
        "--all", dest="seat", action="store_const", const=None, help="the whole table (default)"
    )
    sp.add_argument("--at", type=int, metavar="K", help="only step K (decision number)")
    sp.add_argument("--step", action="store_true", help="step through on Enter (reads stdin)")
    sp.set_defaults(handler=_cmd_show)

    hp = rsub.add_parser(
        "html", help="write a self-contained HTML page that steps through the match"
    )
    hp.add_argument("file", metavar="FILE", help="match record (.jsonl.gz)")
    hp.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUT.html",
        help="page to write: a new or empty file, or a page this command wrote (nothing else is "
        "overwritten)",
    )
    hp.add_argument(
        "--analysis",
        action="store_true",
        help="analyse the match (as `replay analyze` does) and draw each analysed decision's "
        "values as bars, the costly decisions on the timeline",
    )
    hp.add_argument(
        "--analysis-file",
        metavar="A.json",
        help="embed this analysis (the output of `replay analyze --json` on this record) "
        "instead of computing it",
    )
    _add_analysis_options(hp)
    hp.set_defaults(handler=_cmd_html)

    ap = rsub.add_parser(
        "ask",
        help="ask a bot for its choice at a recorded decision, over the real protocol",
        description="Replay the record to decision K, start a server, launch the bot command "
        "(with ARENA_ADDRESS, ARENA_TOKEN, ARENA_SEED set), send it that decision and print its "
        "answer next to the recorded one. The bot runs sandboxed, as `arena match` runs a seat's "
        "bot: boxed with bubblewrap (no network, read-only files, resource limits), its "
        "directory the current one, reaching the server by a Unix socket; --no-sandbox runs it "
        "as a plain process instead, for code you trust. With --replay-all a fresh bot per seat "
        "is taken through the whole match instead (every decision asked, the recorded action "
        "played), for bots that keep state, and each decision where it differs is printed. "
        "Exit status: 0 the bot agrees with the record, 1 it differs at some decision, "
        "2 an error (the bot crashed, hung or sent garbage; a bad record).",
    )
    ap.add_argument("file", metavar="FILE", help="match record (.jsonl.gz)")
    ap.add_argument(
        "--at",
        type=int,
        metavar="K",
        help="decision number: asked of a fresh bot; with --replay-all, the last one replayed",
    )
    ap.add_argument(
        "--replay-all",
        action="store_true",
        help="take a fresh bot per seat through the match from the start, ask it every "
        "decision and report those where its answer differs from the record",
    )
    ap.add_argument(
        "--seat",
        metavar="N",
        help="with --replay-all: only seat N (number or name); default every seat that decided",
    )
    ap.add_argument(
        "--bot",
        required=True,
        metavar="CMD",
        help="shell command that runs the bot (stdio:CMD: a bot that speaks over stdin/stdout)",
    )
    ap.add_argument(
        "--timeout", type=TIMEOUT, default=10.0, metavar="S", help="seconds to wait (default 10)"
    )
    add_sandbox_argument(ap, "the bot")
    ap.set_defaults(handler=_cmd_ask)
    _add_analyze_parser(rsub)
    add_replay_play_parser(rsub)


def _add_analyze_parser(rsub: Any) -> None:
    np = rsub.add_parser(
        "analyze",
        help="what each decision cost: every legal action valued, losses classed, per seat",
        description="Replay the record and, at every decision of the chosen seats that had a "
        "choice, value each legal action over worlds drawn from what that seat knew (exactly "
        "where a solver takes the position, else by rollouts of the search bot's policy to the "
        "end of the deal: tricks in whist and tennis whist, points in forty-five, chips in "
        "spoil five, games in tennis). Prints each decision's values, the played action's loss "
        "against the best and its class (inaccuracy, mistake, blunder: thresholds per game in "
        "docs/analysis.md), and per seat the expected loss per deal and the costliest "
        "decisions. The same seed gives the same output.",
    )
    np.add_argument("file", metavar="FILE", help="match record (.jsonl.gz)")
    _add_analysis_options(np)
    np.add_argument("--at", type=NON_NEGATIVE, metavar="K", help="only decision K")
    np.add_argument("--json", action="store_true", help="print one JSON object (docs/analysis.md)")
    np.set_defaults(handler=_cmd_analyze)


def _add_analysis_options(parser: Any) -> None:
    """The options ``replay analyze`` and ``replay html --analysis`` share."""
    parser.add_argument(
        "--seat",
        action="append",
        metavar="S",
        help="only seat S's decisions (number or name; repeat for several); default every seat",
    )
    parser.add_argument(
        "--worlds", type=WORLDS, default=32, metavar="N", help="worlds drawn per decision"
    )
    parser.add_argument("--seed", type=int, default=0, metavar="K", help="seed of the worlds")
    parser.add_argument(
        "--deal",
        type=POSITIVE,
        metavar="N",
        help="only deal N (round in tennis whist, game in tennis), from 1",
    )
    parser.add_argument(
        "--limit", type=POSITIVE, metavar="N", help="at most the first N decisions with a choice"
    )
