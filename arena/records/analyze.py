"""``arena replay analyze``: what each decision of a recorded match cost its seat.

The record is replayed (and so checked) and, at every decision of the chosen seats that had a
choice, :func:`engine.analysis.analyze` values each legal action over worlds drawn from what
that seat knew: exactly where a solver takes the position (:func:`exact_solver`), else by
rollouts under the playout policy the caller gives (the command line passes the search bot's).
The chosen action's loss is the best mean less its own, classed by the game's thresholds
(:data:`THRESHOLDS`, in its units); each seat's summary gives its expected loss per deal (per
round in tennis whist, per game in tennis) and its costliest decisions. docs/analysis.md
documents the method, the thresholds and the JSON form.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

from arena.errors import UsageError
from arena.records.format import Record, RecordError, read_record
from arena.records.replay import replay, start_state
from arena.records.view import seat_index
from engine import MatchState
from engine.analysis import Analysis, Policy, Solve, analyze, measure_for, solver_for
from engine.seeds import derive_seed
from engine.solver import NATIVE

#: Per game: the losses, in its unit, from which a decision is an inaccuracy, a mistake and a
#: blunder (docs/analysis.md says why these).
THRESHOLDS: dict[str, tuple[float, float, float]] = {
    "whist": (0.3, 0.6, 0.9),
    "tennis_whist": (0.3, 0.6, 0.9),
    "forty_five": (1.5, 3.0, 6.0),
    "spoil_five": (0.25, 0.5, 1.0),
    "tennis": (0.05, 0.1, 0.2),
}
#: Every class, from the best to the worst: ``best`` is a best action, ``good`` one that costs
#: less than an inaccuracy.
CLASSES = ("best", "good", "inaccuracy", "mistake", "blunder")
#: A loss below this is a tie with the best (float sums of the same values).
TIE = 1e-9
#: Search nodes an exact solve of one world may take: about 0.15 s in the solver's Python search,
#: 0.07 s in its C search (whist and tennis whist, where it is built: some 40 times faster). A
#: decision with a world past it is valued by rollouts (in whist, the first tricks of a deal).
EXACT_NODES = 10_000
EXACT_NODES_NATIVE = 200_000
#: The games the solver's C search plays.
NATIVE_GAMES = frozenset({"whist", "tennis_whist"})
#: Costliest decisions listed per seat.
COSTLIEST = 5


def exact_solver(game_id: str) -> Solve | None:
    """The exact solver of ``game_id``'s worlds, or ``None`` to value them by rollouts.

    The one place a solver is plugged in: a callable that takes a world (every card known)
    and returns each legal action's value by its position in ``world.legal_actions()``, in the
    game's units (:data:`engine.analysis.MEASURES`), or ``None`` for a position it does not
    take (then that decision is valued by rollouts). Today: the engine's double-dummy solver
    (whist, tennis whist, forty-five, spoil five) within :data:`EXACT_NODES` per world
    (:data:`EXACT_NODES_NATIVE` where its C search runs).
    """
    native = NATIVE and game_id in NATIVE_GAMES
    return solver_for(game_id, EXACT_NODES_NATIVE if native else EXACT_NODES)


def classify(game_id: str, loss: float) -> str:
    """The class of a decision that cost ``loss`` (one of :data:`CLASSES`)."""
    if loss <= TIE:
        return "best"
    inaccuracy, mistake, blunder = THRESHOLDS[game_id]
    if loss >= blunder:
        return "blunder"
    if loss >= mistake:
        return "mistake"
    return "inaccuracy" if loss >= inaccuracy else "good"


@dataclass(frozen=True, slots=True)
class Settings:
    """What to analyse and how."""

    #: Worlds per decision.
    worlds: int = 32
    #: The seed every decision's worlds are derived from (with its step number).
    seed: int = 0
    #: Seats whose decisions are analysed, by number or name (``2``, ``S``); none for all.
    seats: tuple[str, ...] = ()
    #: Only this decision (step number), if given.
    at: int | None = None
    #: Only this deal (round, game), from 1, if given.
    deal: int | None = None
    #: At most this many decisions (the first ones with a choice), if given.
    limit: int | None = None
    #: Rollouts per world and action.
    rollouts_per_world: int = 1
    #: The playout policy's name, for the report.
    policy: str = "random"


@dataclass(frozen=True, slots=True)
class Decision:
    """One analysed decision."""

    #: Decision number in the record, from 0.
    step: int
    #: The deciding seat.
    seat: int
    #: The deal (round, game) it was made in, from 1.
    deal: int
    #: The recorded action's text.
    chosen: str
    #: What the analysis found.
    analysis: Analysis
    #: The best mean less the chosen action's (0 for a best action).
    loss: float
    #: The standard error of that loss, world by world.
    loss_se: float
    #: Its class (:data:`CLASSES`).
    klass: str
    #: Whether the referee played it for a faulted seat (its fallback, not the bot's choice).
    fallback: bool = False

    @property
    def best(self) -> str:
        """The best action's text."""
        return self.analysis.best().action.text


@dataclass(frozen=True, slots=True)
class SeatSummary:
    """One seat's decisions in sum."""

    seat: int
    #: The seat's name (``N``) and its bot (``name version``).
    name: str
    bot: str
    #: Decisions analysed, and those with a single legal action (not analysed).
    decisions: int
    forced: int
    #: Deals (rounds, games) the seat's decisions were made in.
    deals: int
    #: The sum of the losses, and that sum per deal.
    total_loss: float
    loss_per_deal: float
    #: Decisions per class.
    classes: Mapping[str, int]
    #: The costliest decisions, costliest first (those that lost something).
    costliest: tuple[Decision, ...]


@dataclass(frozen=True, slots=True)
class RecordAnalysis:
    """A record's analysis: every analysed decision, and each seat's summary."""

    where: str
    match_id: str
    game: str
    unit: str
    #: What a horizon is called: ``deal``, ``round`` or ``game``.
    span: str
    settings: Settings
    #: Recorded decisions in all.
    steps: int
    decisions: tuple[Decision, ...]
    seats: tuple[SeatSummary, ...]


#: Told (analysed so far, to analyse in all) after each decision.
Tell = Callable[[int, int], None]


@dataclass(slots=True)
class _Pending:
    step: int
    seat: int
    deal: int
    chosen: str
    state: MatchState
    fallback: bool


def analyze_path(
    path: Path,
    settings: Settings,
    rollout: Policy | None = None,
    progress: Tell | None = None,
) -> RecordAnalysis:
    """Read ``path`` and analyse it (:func:`analyze_record`); ``RecordError`` for a bad file."""
    return analyze_record(read_record(path), str(path), settings, rollout, progress)


def analyze_record(
    record: Record,
    where: str,
    settings: Settings,
    rollout: Policy | None = None,
    progress: Tell | None = None,
) -> RecordAnalysis:
    """Replay ``record`` and analyse the decisions ``settings`` selects; raises
    ``RecordError`` for a record that does not replay, :class:`UsageError` for a seat, step or
    deal it does not have."""
    pending, forced, steps, names, seats = _select(record, where, settings)
    game = str(record.header["game"])
    measure = measure_for(game)
    solve = exact_solver(game)
    done: list[Decision] = []
    for item in pending:
        analysis = analyze(
            item.state,
            item.seat,
            worlds=settings.worlds,
            seed=derive_seed(settings.seed, "analyze", item.step),
            solve=solve,
            rollout=rollout,
            rollouts_per_world=settings.rollouts_per_world,
        )
        loss, se = analysis.loss(item.chosen)
        klass = classify(game, loss)
        done.append(
            Decision(
                item.step, item.seat, item.deal, item.chosen, analysis, loss, se, klass,
                item.fallback,
            )
        )  # fmt: skip
        if progress is not None:
            progress(len(done), len(pending))
    bots = [f"{s['bot_name']} {s['bot_version']}".strip() for s in record.header["seats"]]
    summaries = tuple(
        _summary(seat, names[seat], bots[seat], done, forced.get(seat, []))
        for seat in sorted(seats)
    )
    return RecordAnalysis(
        where=where,
        match_id=str(record.header.get("match_id", "")),
        game=game,
        unit=measure.unit,
        span=measure.span,
        settings=settings,
        steps=steps,
        decisions=tuple(done),
        seats=summaries,
    )


def _select(
    record: Record, where: str, settings: Settings
) -> tuple[list[_Pending], dict[int, list[int]], int, tuple[str, ...], frozenset[int]]:
    """One replay: the decisions to analyse (each state cloned), the deals of the forced ones
    per seat, the number of decisions, the seat names and the seats analysed."""
    pending: list[_Pending] = []
    forced: dict[int, list[int]] = {}
    start = start_state(record, where)  # the header checked before anything is read from it
    horizon = measure_for(start.game.id).horizon
    seen = ended = steps = deals = 0
    names = tuple(start.game.seat_names(start.config))
    seats = _seats(settings, names)
    for step in replay(record, where):
        state = step.state
        steps += 1
        for event in state.events[seen:]:
            ended += event.kind in horizon
        seen = len(state.events)
        deals = ended + 1
        seat = state.to_move
        if step.number == settings.at and seat not in seats:
            who = "nobody" if seat is None else f"{names[seat]}'s (seat {seat})"
            raise UsageError(f"decision {settings.at} is {who}, not one of --seat's")
        if seat not in seats or not _wanted(settings, step.number, ended + 1, len(pending)):
            continue
        assert seat is not None
        if len(state.legal_actions()) < 2:
            forced.setdefault(seat, []).append(ended + 1)
            continue
        chosen, fallback = str(step.entry.get("action")), step.entry.get("fallback") is True
        pending.append(_Pending(step.number, seat, ended + 1, chosen, state.clone(), fallback))
    if settings.at is not None and not 0 <= settings.at < steps:
        raise UsageError(
            f"--at {settings.at} is out of range: the record has {steps} decisions "
            f"(0 to {steps - 1})"
        )
    if settings.deal is not None and settings.deal > deals:
        raise UsageError(
            f"--deal {settings.deal} is out of range: the record's decisions are in {deals} "
            f"deal{'s' * (deals != 1)} (rounds, games)"
        )
    return pending, forced, steps, names, seats


def _seats(settings: Settings, names: tuple[str, ...]) -> frozenset[int]:
    if not settings.seats:
        return frozenset(range(len(names)))
    return frozenset(seat_index(names, text) for text in settings.seats)


def _wanted(settings: Settings, step: int, deal: int, taken: int) -> bool:
    if settings.at is not None and step != settings.at:
        return False
    if settings.deal is not None and deal != settings.deal:
        return False
    return settings.limit is None or taken < settings.limit


def _summary(
    seat: int, name: str, bot: str, done: list[Decision], forced_deals: list[int]
) -> SeatSummary:
    mine = [d for d in done if d.seat == seat]
    deals = len({d.deal for d in mine} | set(forced_deals))
    total = sum(d.loss for d in mine)
    costly = sorted((d for d in mine if d.loss > TIE), key=lambda d: (-d.loss, d.step))
    return SeatSummary(
        seat=seat,
        name=name,
        bot=bot,
        decisions=len(mine),
        forced=len(forced_deals),
        deals=deals,
        total_loss=total,
        loss_per_deal=total / deals if deals else 0.0,
        classes={k: sum(1 for d in mine if d.klass == k) for k in CLASSES},
        costliest=tuple(costly[:COSTLIEST]),
    )


# --- output ---------------------------------------------------------------------------------


def _r(x: float) -> float:
    return round(x, 4)


def report_json(result: RecordAnalysis) -> dict[str, Any]:
    """The analysis as one JSON object (docs/analysis.md, *JSON*)."""
    s = result.settings
    low, mid, high = THRESHOLDS[result.game]
    return {
        "record": result.where,
        "match_id": result.match_id,
        "game": result.game,
        "unit": result.unit,
        "span": result.span,
        "worlds": s.worlds,
        "seed": s.seed,
        "rollouts_per_world": s.rollouts_per_world,
        "policy": s.policy,
        "thresholds": {"inaccuracy": low, "mistake": mid, "blunder": high},
        "steps": result.steps,
        "decisions": [_decision_json(d) for d in result.decisions],
        "seats": [_seat_json(summary) for summary in result.seats],
    }


def _decision_json(d: Decision) -> dict[str, Any]:
    return {
        "step": d.step,
        "seat": d.seat,
        "deal": d.deal,
        "method": d.analysis.method,
        "chosen": d.chosen,
        "best": d.best,
        "loss": _r(d.loss),
        "loss_se": _r(d.loss_se),
        "class": d.klass,
        "fallback": d.fallback,
        "actions": [
            {"action": v.action.text, "mean": _r(v.mean), "se": _r(v.se), "n": v.n}
            for v in d.analysis.values
        ],
    }


def _costly_json(d: Decision) -> dict[str, Any]:
    return {
        "step": d.step,
        "chosen": d.chosen,
        "best": d.best,
        "loss": _r(d.loss),
        "class": d.klass,
    }


def _seat_json(summary: SeatSummary) -> dict[str, Any]:
    return {
        "seat": summary.seat,
        "seat_name": summary.name,
        "bot": summary.bot,
        "decisions": summary.decisions,
        "forced": summary.forced,
        "deals": summary.deals,
        "total_loss": _r(summary.total_loss),
        "loss_per_deal": _r(summary.loss_per_deal),
        "classes": dict(summary.classes),
        "costliest": [_costly_json(d) for d in summary.costliest],
    }


def report_text(result: RecordAnalysis) -> str:
    """The analysis for a terminal: a header, a table of the decisions (each legal action's
    value, best first), and each seat's summary."""
    s = result.settings
    low, mid, high = THRESHOLDS[result.game]
    seat_names = {x.seat: x.name for x in result.seats}
    methods = sorted({d.analysis.method for d in result.decisions}) or ["none"]
    lines = [
        f"{result.game} {result.match_id}: {result.steps} decisions, {len(result.decisions)} "
        f"analysed; {s.worlds} worlds each, seed {s.seed}, {'/'.join(methods)} "
        f"(playouts: {s.policy}); values in {result.unit} to the end of the {result.span}",
        f"classes by loss in {result.unit}: inaccuracy >= {low:g}, mistake >= {mid:g}, "
        f"blunder >= {high:g}",
        "",
    ]
    if result.decisions:
        lines.append(
            f"{'step':>5} {'seat':<4} {result.span:>5}  {'played':<12} {'best':<12} "
            f"{'loss':>6} {'±':>5}  {'class':<10} {'method':<7} values (best first)"
        )
    for d in result.decisions:
        note = "  (played by the referee: a fallback)" if d.fallback else ""
        ranked = sorted(d.analysis.values, key=lambda v: -v.mean)
        values = "  ".join(f"{v.action.text} {v.mean:.2f}" for v in ranked)
        lines.append(
            f"{d.step:>5} {seat_names.get(d.seat, str(d.seat)):<4} {d.deal:>5}  "
            f"{d.chosen:<12} {d.best:<12} {d.loss:>6.2f} {d.loss_se:>5.2f}  {d.klass:<10} "
            f"{d.analysis.method:<7} {values}{note}"
        )
    for summary in result.seats:
        lines.extend(["", *_seat_lines(summary, result)])
    return "\n".join(lines)


def _seat_lines(x: SeatSummary, result: RecordAnalysis) -> list[str]:
    counts = ", ".join(_count(x.classes[k], k) for k in CLASSES[2:][::-1])
    lines = [
        f"{x.name} ({x.bot}): {x.decisions} decisions analysed, {x.forced} forced, in "
        f"{x.deals} {result.span}{'s' * (x.deals != 1)}; expected loss {x.loss_per_deal:.2f} "
        f"{result.unit} per {result.span} ({x.total_loss:.2f} in all); {counts}"
    ]
    for d in x.costliest:
        lines.append(
            f"    step {d.step}: played {d.chosen}, best {d.best}: -{d.loss:.2f} "
            f"{result.unit} ({d.klass})"
        )
    return lines


def _count(n: int, word: str) -> str:
    if n == 1:
        return f"1 {word}"
    return f"{n} {word[:-1]}ies" if word.endswith("y") else f"{n} {word}s"


@contextmanager
def progress_bar(stream: TextIO) -> Iterator[Tell | None]:
    """A progress bar on ``stream`` when it is a terminal (else nothing is drawn)."""
    if not stream.isatty():
        yield None
        return
    bar = Progress(
        "analysing",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(file=stream),
        transient=True,
    )
    task = bar.add_task("decisions", total=None)
    with bar:

        def tell(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield tell


__all__ = [
    "CLASSES",
    "THRESHOLDS",
    "Decision",
    "RecordAnalysis",
    "RecordError",
    "SeatSummary",
    "Settings",
    "analyze_path",
    "analyze_record",
    "classify",
    "exact_solver",
    "progress_bar",
    "report_json",
    "report_text",
]
