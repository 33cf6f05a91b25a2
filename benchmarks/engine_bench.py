"""Section 1: engine speed — random-playout decisions per second, ours beside OpenSpiel's.

Both sides run the same kind of loop in this one process: at a decision pick a uniformly random
legal action with ``random.Random.choice``; at an OpenSpiel chance node sample an outcome from
its probabilities (our engines deal inside ``apply``, from the referee's generator). Only
decisions are counted; dealing is part of the measured cost on both sides.

Subjects run in short slices, round-robin, for several rounds, so that a change in the machine's
load hits every subject alike; rates are decisions per CPU second of this process (the honest
measure for single-threaded CPU-bound code on a shared machine), with wall-clock rates beside
them. A ratio is taken per round (ours ÷ theirs in the same round), and the median is reported.
"""

from __future__ import annotations

import importlib
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from arena.selfplay import selfplay
from engine import OptionValue, get_game

#: Our games: (label, game id, players, options).
OUR_GAMES: tuple[tuple[str, str, int | None, dict[str, OptionValue]], ...] = (
    ("whist", "whist", 4, {}),
    ("tennis_whist", "tennis_whist", 4, {}),
    ("spoil_five", "spoil_five", 5, {}),
    ("forty_five", "forty_five", 4, {}),
    ("tennis singles", "tennis", 2, {}),
    ("tennis doubles", "tennis", 4, {}),
)
#: OpenSpiel references: (label, game name, parameters). Oh Hell for four with 12 tricks is the
#: closest relative of whist (52 cards, 4 seats, tricks; plus one bid each). Bridge is played
#: out card by card (``use_double_dummy_result=False``), else its playout stops after bidding.
OPENSPIEL_GAMES: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("openspiel oh_hell", "oh_hell", {"players": 4, "num_tricks_fixed": 12}),
    ("openspiel hearts", "hearts", {}),
    ("openspiel bridge", "bridge", {"use_double_dummy_result": False}),
)


@dataclass(slots=True)
class Tally:
    """What one subject did over every slice."""

    label: str
    decisions: int = 0
    games: int = 0
    cpu: float = 0.0
    wall: float = 0.0
    #: Decisions per CPU second, per round.
    rounds: list[float] = field(default_factory=list)

    def add(self, decisions: int, games: int, cpu: float, wall: float) -> None:
        self.decisions += decisions
        self.games += games
        self.cpu += cpu
        self.wall += wall
        self.rounds.append(decisions / cpu if cpu > 0 else 0.0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "decisions": self.decisions,
            "games": self.games,
            "decisions_per_game": round(self.decisions / self.games, 1) if self.games else 0,
            "cpu_s": round(self.cpu, 3),
            "wall_s": round(self.wall, 3),
            "decisions_per_cpu_s": round(self.decisions / self.cpu) if self.cpu else 0,
            "decisions_per_wall_s": round(self.decisions / self.wall) if self.wall else 0,
            "per_round_per_cpu_s": [round(r) for r in self.rounds],
        }


#: A slice runner: plays until about ``budget`` CPU seconds are spent; (decisions, games).
Slice = Callable[[float], tuple[int, int]]


def our_slice(game_id: str, players: int | None, options: dict[str, OptionValue]) -> Slice:
    """Slices of ``arena.selfplay.selfplay`` (the CLI's own loop), a few matches at a time."""
    game = get_game(game_id)
    state = {"seed": 0, "per_game": 0.0}

    def run(budget: float) -> tuple[int, int]:
        decisions = games = 0
        start = time.process_time()
        while True:
            spent = time.process_time() - start
            if spent >= budget:
                return decisions, games
            # Batches of matches sized from the rate so far keep clock reads out of the loop.
            per_game = state["per_game"]
            left = budget - spent
            n = 1 if per_game <= 0 else max(1, min(50, int(left / per_game / 2)))
            t0 = time.process_time()
            report = selfplay(game, players, options, n, int(state["seed"]))
            state["per_game"] = (time.process_time() - t0) / n
            state["seed"] += n
            decisions += report.decisions
            games += report.games

    return run


def openspiel_slice(name: str, params: dict[str, Any], seed: int = 1) -> Slice:
    """Slices of OpenSpiel random playouts driven from Python (pyspiel, C++ engines)."""
    pyspiel = importlib.import_module("pyspiel")  # installed for the benchmark only
    game = pyspiel.load_game(name, params)
    rng = random.Random(seed)
    choice, uniform = rng.choice, rng.random

    def run(budget: float) -> tuple[int, int]:
        decisions = games = 0
        start = time.process_time()
        while time.process_time() - start < budget:
            for _ in range(8):
                state = game.new_initial_state()
                while not state.is_terminal():
                    if state.is_chance_node():
                        r = uniform()
                        acc = 0.0
                        outcomes = state.chance_outcomes()
                        action = outcomes[-1][0]
                        for a, p in outcomes:
                            acc += p
                            if r < acc:
                                action = a
                                break
                        state.apply_action(action)
                    else:
                        state.apply_action(choice(state.legal_actions()))
                        decisions += 1
                games += 1
        return decisions, games

    return run


#: Decisions played into a match before its state is cloned (mid-deal in every game).
CLONE_AFTER = 30


def _mid_match(
    make: Callable[[], Any],
    step: Callable[[Any], None],
    done: Callable[[Any], bool],
    decisions: int,
) -> Any:
    state = make()
    for _ in range(decisions):
        if done(state):
            break
        step(state)
    return state


def clone_costs(clones: int = 300, rounds: int = 5) -> dict[str, Any]:
    """Microseconds per ``clone()`` of a state :data:`CLONE_AFTER` decisions into a match (what a
    search bot pays per simulation), ours beside OpenSpiel's C++ ``State.clone()``; medians of
    ``rounds`` rounds of ``clones`` clones each, subjects interleaved per round. Ours also with a
    given generator (``clone(rng)``, ``us_per_clone_given_rng``), which copies none."""
    rng = random.Random(7)
    states: dict[str, Any] = {}
    for label, gid, players, opts in OUR_GAMES:
        game = get_game(gid)
        config = game.configure(players, opts)
        states[label] = _mid_match(
            lambda game=game, config=config: game.new_match(config, 1),
            lambda st: st.apply(rng.choice(st.legal_actions())),
            lambda st: st.to_move is None,
            CLONE_AFTER,
        )
    if openspiel_available() is None:
        pyspiel = importlib.import_module("pyspiel")
        for label, name, params in OPENSPIEL_GAMES:
            game = pyspiel.load_game(name, params)

            def step(st: Any) -> None:
                while st.is_chance_node():
                    st.apply_action(st.chance_outcomes()[0][0])
                st.apply_action(rng.choice(st.legal_actions()))

            states[label] = _mid_match(
                game.new_initial_state, step, lambda st: st.is_terminal(), CLONE_AFTER
            )
    per_round: dict[str, list[float]] = {label: [] for label in states}
    # clone(rng): the copy draws its chance from a generator the search gives, copying none.
    given = random.Random(11)
    ours = [label for label, *_ in OUR_GAMES]
    per_round_given: dict[str, list[float]] = {label: [] for label in ours}
    for _ in range(rounds):
        for label, state in states.items():
            t0 = time.process_time()
            for _ in range(clones):
                state.clone()
            per_round[label].append((time.process_time() - t0) / clones * 1e6)
            if label in per_round_given:
                t0 = time.process_time()
                for _ in range(clones):
                    state.clone(given)
                per_round_given[label].append((time.process_time() - t0) / clones * 1e6)
    return {
        "after_decisions": CLONE_AFTER,
        "us_per_clone": {k: round(statistics.median(v), 2) for k, v in per_round.items()},
        "us_per_clone_given_rng": {
            k: round(statistics.median(v), 2) for k, v in per_round_given.items()
        },
    }


def openspiel_available() -> str | None:
    """``None`` when pyspiel imports, else why not."""
    try:
        importlib.import_module("pyspiel")
    except ImportError as err:
        return f"pyspiel not importable ({err}); `make bench` installs open-spiel"
    return None


def run_engine(rounds: int = 5, slice_s: float = 0.4) -> dict[str, Any]:
    """Every subject, ``rounds`` rounds of ``slice_s`` CPU seconds each; rates and ratios."""
    subjects: list[tuple[Tally, Slice]] = [
        (Tally(label), our_slice(gid, players, opts)) for label, gid, players, opts in OUR_GAMES
    ]
    missing = openspiel_available()
    if missing is None:
        subjects += [
            (Tally(label), openspiel_slice(name, params)) for label, name, params in OPENSPIEL_GAMES
        ]
    for _tally, run in subjects:  # warm-up: imports, first-call costs, table building
        run(0.02)
    for _ in range(rounds):
        for tally, run in subjects:
            c0, w0 = time.process_time(), time.perf_counter()
            decisions, games = run(slice_s)
            tally.add(decisions, games, time.process_time() - c0, time.perf_counter() - w0)
    by_label = {t.label: t for t, _ in subjects}
    ratios: dict[str, Any] = {}
    whist = by_label["whist"]
    for label, _name, _params in OPENSPIEL_GAMES if missing is None else ():
        ref = by_label[label]
        per_round = [a / b for a, b in zip(whist.rounds, ref.rounds, strict=True) if b > 0]
        ratios[f"whist / {label.removeprefix('openspiel ')}"] = {
            "cpu_median": round(statistics.median(per_round), 3),
            "cpu_min": round(min(per_round), 3),
            "cpu_max": round(max(per_round), 3),
            "wall": round((whist.decisions / whist.wall) / (ref.decisions / ref.wall), 3),
        }
    return {
        "method": {
            "rounds": rounds,
            "slice_cpu_s": slice_s,
            "loop": "arena.selfplay.selfplay (random.Random.choice of legal_actions())",
            "openspiel_loop": "chance: sample chance_outcomes(); decision: choice(legal_actions())",
            "openspiel_params": {label: params for label, _n, params in OPENSPIEL_GAMES},
        },
        "openspiel_missing": missing,
        "subjects": {t.label: t.to_dict() for t, _ in subjects},
        "ratios": ratios,
    }


def profile_whist(seconds: float = 3.0, top: int = 12) -> dict[str, Any]:
    """Profile whist self-play with pyinstrument: where the time goes, by self time."""
    return profile_game("whist", 4, seconds, top)


def profile_game(game_id: str, players: int | None, seconds: float, top: int) -> dict[str, Any]:
    """Profile one game's self-play with pyinstrument: where the time goes, by self time."""
    try:
        from pyinstrument import Profiler
    except ImportError:
        return {"missing": "pyinstrument not installed; `make bench` installs it"}
    run = our_slice(game_id, players, {})
    run(0.05)
    profiler = Profiler(interval=0.0005)
    profiler.start()
    run(seconds)
    session = profiler.stop()
    return {
        "seconds": seconds,
        "top_self_time": self_time_table(session, top),
        "text": profiler.output_text(unicode=True, color=False),
    }


def self_time_table(session: Any, top: int) -> list[dict[str, Any]]:
    """Functions by self time (share of all samples) from a pyinstrument session."""
    totals: dict[str, float] = {}
    root = session.root_frame()
    if root is None:
        return []
    stack = [root]
    while stack:
        frame = stack.pop()
        stack.extend(frame.children)
        if frame.function in ("[self]", "[await]", "[out-of-context]"):
            continue
        own = frame.total_self_time
        owner = getattr(frame, "class_name", None)
        name = f"{owner}.{frame.function}" if owner else frame.function
        key = f"{name} ({frame.file_path_short}:{frame.line_no})"
        totals[key] = totals.get(key, 0.0) + own
    whole = sum(totals.values()) or 1.0
    ranked = sorted(totals.items(), key=lambda kv: -kv[1])[:top]
    return [{"function": k, "share": round(v / whole, 3)} for k, v in ranked]
