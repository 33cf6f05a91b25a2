"""``arena tournament``, ``arena ratings`` and ``arena demo``: parsers and handlers."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.cli.arguments import DEFAULT_TIME, add_sandbox_argument, parse_options
from arena.errors import UsageError
from arena.logging import add_log_level_option

if TYPE_CHECKING:
    from arena.bots.sandbox import Limits
    from arena.cluster.task import Cluster
    from arena.par import Reference
    from arena.tournament.config import TournamentConfig
    from arena.tournament.report import Standings
    from arena.tournament.store import Store

#: The search reference's iterations per decision: a fixed count (not a time budget), so its
#: moves, and the par, are the same on every machine.
SEARCH_REFERENCE_ITERATIONS = 64


@contextlib.contextmanager
def cluster_for(address: str | None) -> Iterator[Cluster | None]:
    """The Dask cluster at ``address`` (``--dask``), connected; ``None`` without one."""
    if address is None:
        yield None
        return
    try:
        from arena.cluster.coordinator import DaskCluster
    except ImportError:
        raise UsageError(
            "--dask needs Dask distributed, which this installation lacks: "
            "pip install 'card-arena[cluster]'"
        ) from None
    with DaskCluster(address) as cluster:
        yield cluster


def sandbox_for(config: TournamentConfig, args: argparse.Namespace) -> Limits | None:
    """The sandbox the bots run in: checked here, or, with ``--dask``, asked of the workers
    (each checks its own when it starts)."""
    from arena.bots.sandbox import default_limits
    from arena.tournament.job import confine_bots

    if args.dask is not None:
        return None if args.no_sandbox else default_limits()
    return confine_bots(config, no_sandbox=args.no_sandbox)


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    """Config keys given as flags; they replace the file's values (options merge)."""
    out: dict[str, Any] = {}
    if args.game is not None:
        out["game"] = args.game
    if args.players is not None:
        out["players"] = args.players
    if args.option:
        out["options"] = parse_options(args.option)
    if args.bot:
        bots = []
        for text in args.bot:
            name, sep, command = text.partition("=")
            bots.append({"name": name.strip(), **({"command": command.strip()} if sep else {})})
        out["bots"] = bots
    simple = {
        "format": args.format,
        "matches_per_pairing": args.matches,
        "duplicate": args.duplicate,
        "seed": args.seed,
        "concurrency": args.concurrency,
        "restart": args.restart,
        "output": args.out,
    }
    out.update({k: v for k, v in simple.items() if v is not None})
    if args.strict:
        out["fault_policy"] = "strict"
    if args.move_ms is not None or args.bank_ms is not None:
        tc = {"move_ms": args.move_ms, "bank_ms": args.bank_ms}
        out["time_control"] = {k: v for k, v in tc.items() if v is not None}
    return out


def cost_lines(config: TournamentConfig) -> list[str]:
    """What the bots that can say (``arena bot llm``: tokens) will spend on the whole schedule:
    each one's estimate per seat of a match (the catalog's ``cost_estimate``) times the seats it
    holds in the schedule's matches. Empty when no bot says."""
    from arena.tournament.runner import plan_tournament
    from reference_bots.catalog import cost_estimate

    estimates = {b.name: cost_estimate(b.program.command, config.rules.config) for b in config.bots}
    if not any(estimates.values()):
        return []
    # Who sits where does not depend on the seed; the deals do, and they are not needed here.
    plans = plan_tournament(replace(config, seed=0 if config.seed is None else config.seed))
    lines = [f"cost estimate, before the first match ({len(plans)} matches; docs/llm.md):"]
    for name, estimate in estimates.items():
        if estimate is None:
            continue
        seats = sum(plan.seats.count(name) for plan in plans)
        matches = sum(name in plan.seats for plan in plans)
        per_match = estimate.times(seats / matches) if matches else "none"
        lines.append(f"  {name}: per seat and match {estimate.per_seat()}")
        lines.append(f"  {name}: per match {per_match}")
        lines.append(f"  {name}: in all ({matches} matches, {seats} seats) {estimate.times(seats)}")
        lines.append(f"    ({estimate.basis}; about 4 characters a token; retries not counted)")
    return lines


def _cmd_tournament(args: argparse.Namespace) -> int:
    from arena.logging import configure
    from arena.tournament.config import load_config
    from arena.tournament.progress import feedback_for
    from arena.tournament.runner import run_tournament

    configure(args.log_level)
    if args.config is None and args.game is None:
        raise UsageError("give a CONFIG.toml or at least --game and --bot flags")
    if args.home is not None:
        from arena.layout import use_home

        use_home(args.home)  # where NAME / NAME@VERSION bots are looked up
    overrides = _overrides(args)
    config = load_config(None if args.config is None else Path(args.config), overrides)
    sandbox = sandbox_for(config, args)
    reference = _wanted_reference(args)  # a bad name before anything is played
    for line in cost_lines(config):
        print(line, file=sys.stderr)
    with cluster_for(args.dask) as cluster:
        standings = run_tournament(config, feedback_for(quiet=args.quiet), sandbox, cluster=cluster)
    if reference is not None:
        from arena.tournament.store import open_existing

        with open_existing(config.output) as store:
            _add_par(standings, store, reference)
    if args.json:
        print(json.dumps(standings.to_dict()))
    else:
        print(standings.render(config.name))
    return 0


def par_reference(name: str) -> Reference:
    """The reference bot called ``name`` (one of :data:`arena.par.REFERENCES`), built fresh for
    every seat of every replayed match; :class:`UsageError` for another name."""
    from arena.par import REFERENCES, Reference
    from reference_bots.catalog import make_bot

    if name not in REFERENCES:
        raise UsageError(
            f"--reference: unknown reference {name!r} (known: {', '.join(REFERENCES)})"
        )

    if name == "search":
        n = SEARCH_REFERENCE_ITERATIONS
        return Reference(f"search@{n}", lambda: make_bot("search", None, iterations=n))
    return Reference(name, lambda: make_bot(name, None))


def _wanted_reference(args: argparse.Namespace) -> Reference | None:
    """The reference ``--par`` / ``--reference`` ask for (rules by default), or ``None``."""
    if not args.par and args.reference is None:
        return None
    return par_reference(args.reference or "rules")


def _add_par(standings: Standings, store: Store, reference: Reference) -> None:
    """Par against ``reference`` beside the standings; on a terminal a line on stderr counts
    the deals replayed."""
    import sys

    from arena.tournament.par import tournament_par

    def progress(done: int, total: int) -> None:
        if sys.stderr.isatty():
            end = "\n" if done == total else ""
            print(f"\rpar: replaying deals {done}/{total}", end=end, file=sys.stderr, flush=True)

    standings.par = tournament_par(store, reference, progress)


def _add_par_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--par",
        action="store_true",
        help="add each bot's par: its score per match minus a reference's in the same seat on "
        "the same deal, replayed in process (cached in par.sqlite beside the results)",
    )
    p.add_argument(
        "--reference",
        default=None,
        metavar="NAME",
        help="the reference strategy for --par: rules (the default), random or search; implies "
        "--par",
    )


def _cmd_sprt(args: argparse.Namespace) -> int:
    from arena.logging import configure
    from arena.tournament.config import load_config, read_toml
    from arena.tournament.progress import feedback_for
    from arena.tournament.sprt_runner import DEFAULT_MAX_UNITS, run_sprt, sprt_dict, sprt_lines
    from engine.sprt import SprtParams

    configure(args.log_level)
    raw: dict[str, Any] = read_toml(Path(args.config)) if args.config else {}
    table = raw.pop("sprt", {})
    if not isinstance(table, dict):
        raise UsageError(f"{args.config}: sprt: must be a table")
    unknown = sorted(set(table) - set(SPRT_KEYS))
    if unknown:
        raise UsageError(
            f"{args.config}: sprt.{unknown[0]}: unknown key (known: {', '.join(SPRT_KEYS)})"
        )
    given = {k: getattr(args, k) for k in SPRT_KEYS if getattr(args, k) is not None}
    settings = {**table, **given}
    if args.candidate is not None or args.baseline is not None:
        if args.candidate is None or args.baseline is None:
            raise UsageError("give both --candidate and --baseline (or neither: the config's bots)")
        args.bot = [args.candidate, args.baseline]
    raw.update(_overrides(args))
    if "game" not in raw:
        raise UsageError("give a CONFIG.toml or at least --game, --candidate and --baseline")
    bots = raw.get("bots") or []
    names = [str(b.get("name", "")) for b in bots if isinstance(b, dict)]
    raw.setdefault("name", "sprt-" + "-".join(names) if names else "sprt")
    try:
        params = SprtParams(
            elo0=float(settings.get("elo0", 0.0)),
            elo1=float(settings.get("elo1", 10.0)),
            alpha=float(settings.get("alpha", 0.05)),
            beta=float(settings.get("beta", 0.05)),
            model=settings.get("model", "logistic"),
        )
        max_units = int(settings.get("max_units", DEFAULT_MAX_UNITS))
    except (TypeError, ValueError) as err:
        raise UsageError(f"sprt: {err}") from None
    config = load_config(None, raw)
    sandbox = sandbox_for(config, args)
    with cluster_for(args.dask) as cluster:
        result = run_sprt(
            config, params, feedback_for(quiet=args.quiet), sandbox, max_units, cluster=cluster
        )
    pair = [b.name for b in config.bots]
    if args.json:
        print(json.dumps(sprt_dict(result, params, pair)))
    else:
        print("\n".join(sprt_lines(result, params, pair)))
    return 0


#: The ``[sprt]`` table's keys, also flags (``--elo0`` …).
SPRT_KEYS = ("elo0", "elo1", "alpha", "beta", "model", "max_units")


def _cmd_ratings(args: argparse.Namespace) -> int:
    from arena.tournament.report import standings
    from arena.tournament.store import open_existing

    with open_existing(Path(args.directory)) as store:
        result = standings(store)
        title = store.meta("name") or result.game
        reference = _wanted_reference(args)
        if reference is not None:
            _add_par(result, store, reference)
    if args.json:
        print(json.dumps(result.to_dict()))
    else:
        print(result.render(title))
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from arena.logging import configure
    from arena.tournament.demo import run_demo

    configure(args.log_level)
    return run_demo(Path(args.out), quiet=args.quiet)


def _add_game_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--game", default=None, help="game id")
    p.add_argument("--players", type=int, default=None, help="players at a table")
    p.add_argument("--option", action="append", default=[], metavar="K=V", help="game option")


def _add_run_arguments(p: argparse.ArgumentParser, json_help: str) -> None:
    """What a tournament and an SPRT both take: seed, concurrency, processes, time, output."""
    p.add_argument("--seed", type=int, default=None, help="seed (default: a secret one)")
    p.add_argument("-j", "--concurrency", type=int, default=None, help="matches at once")
    p.add_argument(
        "--restart",
        choices=("on_failure", "per_match"),
        default=None,
        help="on_failure (default): each bot process plays match after match, replaced after a "
        "crash or forfeit; per_match: a fresh process for every match",
    )
    p.add_argument(
        "--move-ms",
        type=int,
        default=None,
        help=f"milliseconds per decision (default: the config's, else {DEFAULT_TIME.move_ms})",
    )
    p.add_argument(
        "--bank-ms",
        type=int,
        default=None,
        help="milliseconds of bank per seat and match (default: the config's, else "
        f"{DEFAULT_TIME.bank_ms})",
    )
    p.add_argument("--strict", action="store_true", help="strict fault policy")
    p.add_argument("--out", default=None, help="output directory")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.add_argument("--json", action="store_true", help=json_help)
    p.add_argument(
        "--dask",
        default=None,
        metavar="ADDR",
        help="play the matches on the Dask cluster whose scheduler is at ADDR (tcp://HOST:PORT "
        "or tls://…), on its `arena worker`s (default: here)",
    )
    add_log_level_option(p, "warning", "server")
    add_sandbox_argument(p)


def add_tournament_parsers(sub: Any) -> None:
    """Register ``tournament``, ``ratings`` and ``demo`` on the top-level subparsers."""
    tp = sub.add_parser(
        "tournament",
        help="run (or resume) a tournament from a TOML config",
        description="Run a tournament; running the same command again resumes it, and on a "
        "finished tournament prints the final table. Flags override the config's keys. While "
        "another process holds the write lock of results.sqlite, results wait for it up to "
        "ARENA_DB_LOCK_TIMEOUT seconds (default 60), then the run stops and a rerun resumes.",
    )
    tp.add_argument("config", nargs="?", default=None, help="tournament config (TOML)")
    _add_game_arguments(tp)
    tp.add_argument(
        "--bot",
        action="append",
        default=[],
        metavar="NAME[=CMD]",
        help="a participant (repeat; replaces the config's bots); NAME alone for a built-in bot "
        "or a registered one (NAME or NAME@VERSION, see `arena submit`)",
    )
    tp.add_argument("--format", default=None, help="round_robin (default) or gauntlet")
    tp.add_argument("--matches", type=int, default=None, help="matches per pairing")
    dup = tp.add_mutually_exclusive_group()
    dup.add_argument("--duplicate", dest="duplicate", action="store_true", default=None)
    dup.add_argument("--no-duplicate", dest="duplicate", action="store_false", default=None)
    _add_run_arguments(tp, "print the final standings as JSON")
    tp.add_argument(
        "--home", default=None, metavar="DIR", help="the arena's state directory (bot registry)"
    )
    _add_par_arguments(tp)
    tp.set_defaults(handler=_cmd_tournament)

    sp = sub.add_parser(
        "sprt",
        help="is a candidate better than a baseline? play until the SPRT decides",
        description="A candidate against a baseline at one table, duplicate deals in every "
        "rotation, until the sequential probability ratio test accepts H0 (Elo <= elo0) or H1 "
        "(Elo >= elo1) at error rates alpha and beta (docs/sprt.md). A CONFIG.toml is a "
        "tournament config with two bots (the candidate first) and an optional [sprt] table of "
        "the keys below; flags override it. Resumable: run the same command again.",
    )
    sp.add_argument("config", nargs="?", default=None, help="config (TOML)")
    _add_game_arguments(sp)
    sp.add_argument("--candidate", default=None, metavar="NAME[=CMD]", help="the new version")
    sp.add_argument("--baseline", default=None, metavar="NAME[=CMD]", help="what it must beat")
    sp.add_argument("--elo0", type=float, default=None, help="H0: Elo <= elo0 (default 0)")
    sp.add_argument("--elo1", type=float, default=None, help="H1: Elo >= elo1 (default 10)")
    sp.add_argument("--alpha", type=float, default=None, help="false-pass rate (default 0.05)")
    sp.add_argument("--beta", type=float, default=None, help="false-fail rate (default 0.05)")
    sp.add_argument(
        "--model", choices=("logistic", "normalized"), default=None, help="Elo model (logistic)"
    )
    sp.add_argument(
        "--max-units",
        dest="max_units",
        type=int,
        default=None,
        help="most deals to play before giving up without a verdict (default 20000)",
    )
    _add_run_arguments(sp, "print the verdict as JSON")
    sp.set_defaults(handler=_cmd_sprt, bot=[], format=None, matches=None, duplicate=None)

    rp = sub.add_parser("ratings", help="print the leaderboard of a tournament directory")
    rp.add_argument("directory", help="a tournament's output directory (or its results.sqlite)")
    rp.add_argument("--json", action="store_true", help="print one JSON object")
    _add_par_arguments(rp)
    rp.set_defaults(handler=_cmd_ratings)

    dp = sub.add_parser("demo", help="a short tournament of the reference bots for every game")
    dp.add_argument(
        "--out",
        default="out/demo",
        help="output directory, emptied first: refused unless empty or an earlier demo's output",
    )
    dp.add_argument("--quiet", action="store_true", help="no progress output")
    add_log_level_option(dp, "warning", "server")
    dp.set_defaults(handler=_cmd_demo)
