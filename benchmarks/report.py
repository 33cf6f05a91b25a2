"""The printed table: every figure beside its same-run reference and the ratio."""

from __future__ import annotations

from typing import Any

from benchmarks.native import cpu

Row = tuple[str, str, str, str]


def _n(x: float | None, digits: int = 0) -> str:
    if x is None:
        return "–"
    if digits == 0:
        return f"{x:,.0f}"
    return f"{x:,.{digits}f}"


def _ratio(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}×"


def engine_rows(s: dict[str, Any]) -> list[Row]:
    subjects = s["subjects"]
    rows: list[Row] = []
    ref_label = "openspiel oh_hell"
    ref = subjects.get(ref_label, {}).get("decisions_per_cpu_s")
    for label, t in subjects.items():
        if label.startswith("openspiel"):
            continue
        rate = t["decisions_per_cpu_s"]
        rows.append(
            (
                f"engine {label}: decisions/s",
                _n(rate),
                f"oh_hell {_n(ref)}" if ref else "–",
                _ratio(rate / ref) if ref else "–",
            )
        )
    for label, t in subjects.items():
        if label.startswith("openspiel"):
            rows.append(
                (f"{label} (C++ via pyspiel): decisions/s", _n(t["decisions_per_cpu_s"]), "", "")
            )
    for name, r in s.get("ratios", {}).items():
        rows.append(
            (
                f"engine {name} per decision",
                f"{r['cpu_median']:.2f} (range {r['cpu_min']:.2f}–{r['cpu_max']:.2f})",
                f"wall-clock {r['wall']:.2f}",
                _ratio(r["cpu_median"]),
            )
        )
    clone = s.get("clone", {}).get("us_per_clone", {})
    given = s.get("clone", {}).get("us_per_clone_given_rng", {})
    ref_clone = clone.get("openspiel oh_hell")
    for label, us in clone.items():
        if not label.startswith("openspiel"):
            timed = [("clone()", us)]
            if label in given:  # clone(rng): the search's own generator, none copied
                timed.append(("clone(rng)", given[label]))
            for call, t in timed:
                rows.append(
                    (
                        f"engine {label}: µs per {call}",
                        f"{t:,.1f}",
                        f"oh_hell {ref_clone:,.1f}" if ref_clone else "–",
                        _ratio(ref_clone / t) if ref_clone else "–",
                    )
                )
    if s.get("openspiel_missing"):
        rows.append(("openspiel", "missing", s["openspiel_missing"], "–"))
    return rows


def search_rows(s: dict[str, Any]) -> list[Row]:
    """The search bot: playouts per CPU second, its decisions beside random self-play's."""
    rows: list[Row] = []
    for label, g in s["games"].items():
        rows.append(
            (
                f"search {label}: playouts/s per core",
                f"{_n(g['playouts_per_cpu_s'])} ({g['decisions_per_playout']:.1f} decisions each)",
                "",
                "",
            )
        )
        ref = g["random_decisions_per_cpu_s"]
        rows.append(
            (
                f"search {label}: playout decisions/s",
                _n(g["decisions_per_cpu_s"]),
                f"random self-play {_n(ref)}",
                _ratio(g["decisions_per_cpu_s"] / ref) if ref else "–",
            )
        )
        rows.append((f"search {label}: µs to rebuild the state", _n(g["restore_us"]), "", ""))
    return rows


def solver_rows(s: dict[str, Any]) -> list[Row]:
    """The exact solver: solves per CPU second per game, whist's beside endplay (DDS)."""
    rows: list[Row] = []
    for label, g in s["subjects"].items():
        if "missing" in g:
            rows.append((f"solver {label}: solves/s", g["missing"], "", ""))
            continue
        value = f"{_n(g['solves_per_s'], 2)} ({_n(g['nodes_per_solve'])} nodes each)"
        if g["over_budget"]:
            value += f"; {g['over_budget']}/{g['positions']} over {g['max_nodes']:,} nodes"
        ref = g.get("endplay_solves_per_s")
        ours = g["solves_per_s"]
        rows.append(
            (
                f"solver {label}: solves/s",
                value,
                f"endplay {_n(ref, 1)}, agrees {g['endplay_agrees']}" if ref else "",
                _ratio(ours / ref) if ref and ours else "",
            )
        )
    return rows


def protocol_rows(s: dict[str, Any]) -> list[Row]:
    rows: list[Row] = []
    for n in ("1", "8"):
        m = s["summary"][n]
        what = f"{n} connection{'s' if n != '1' else ''}"
        rows.append(
            (
                f"arena {what}: decisions/s",
                _n(m["arena_decisions_per_s"]),
                f"raw grpc.aio {_n(m['raw_decisions_per_s'])}",
                f"{_ratio(m['ratio_median'])} "
                f"({m['ratio_range'][0]:.2f}–{m['ratio_range'][1]:.2f})",
            )
        )
        rows.append(
            (
                f"arena {what}: latency median / p99 ms",
                f"{m['arena_latency_median_ms']:.2f} / {m['arena_latency_p99_ms']:.2f}",
                f"raw {m['raw_latency_median_ms']:.2f} / {m['raw_latency_p99_ms']:.2f}",
                _ratio(m["arena_latency_median_ms"] / m["raw_latency_median_ms"])
                if m["raw_latency_median_ms"]
                else "–",
            )
        )
        rows.append(
            (
                f"arena {what}: ms per decision per connection",
                f"{m['arena_cycle_ms']:.2f}",
                f"raw {m['raw_cycle_ms']:.2f}",
                _ratio(m["arena_cycle_ms"] / m["raw_cycle_ms"]) if m["raw_cycle_ms"] else "–",
            )
        )
    think = s["summary"].get("think")
    if think:
        rows.append(
            (
                f"arena 1 connection, bot busy {think['think_ms']:g} ms: decisions/s",
                _n(think["arena_decisions_per_s"]),
                f"raw grpc.aio {_n(think['raw_decisions_per_s'])}",
                f"{_ratio(think['ratio_median'])} "
                f"({think['ratio_range'][0]:.2f}–{think['ratio_range'][1]:.2f})",
            )
        )
    wake = s["summary"].get("wakeup")
    if wake:
        # Not a target: why a decision costs the live referee more than a loop would.
        rows.append(
            (
                "referee work per decision: us asleep / busy",
                f"{wake['asleep']:.1f} / {wake['busy_wait']:.1f}",
                f"back to back {wake['back_to_back']:.1f}",
                _ratio(wake["asleep"] / wake["back_to_back"]) if wake["back_to_back"] else "–",
            )
        )
    sdk = s["summary"].get("sdk_1")
    if sdk:
        # Both sides drive the SDK's random bot, so the ratio is the server's overhead as a
        # Python bot sees it; the bench client's raw run shows what the SDK itself costs.
        rows.append(
            (
                "arena 1 connection, SDK bot: decisions/s",
                _n(sdk["arena_decisions_per_s"]),
                f"raw, same SDK bot {_n(sdk['raw_decisions_per_s'])}",
                f"{_ratio(sdk['ratio_median'])} "
                f"({sdk['ratio_range'][0]:.2f}–{sdk['ratio_range'][1]:.2f})",
            )
        )
        if sdk.get("ratio_to_bench_client_raw") is not None:
            rows.append(
                (
                    "arena 1 connection, SDK bot vs the bench client's raw",
                    _n(sdk["arena_decisions_per_s"]),
                    f"raw grpc.aio {_n(s['summary']['1']['raw_decisions_per_s'])}",
                    _ratio(sdk["ratio_to_bench_client_raw"]),
                )
            )
    return rows + ceiling_rows(s.get("ceiling", {}))


#: benchmarks.ceiling's variants as the table names them: the raw server doing, between an
#: answer and the next request, a share of what the referee does.
CEILING_ROWS = {
    "structured": "raw in the arena's stream structure",
    "engine": "+ the engine's part of a decision",
    "engine+encode": "+ the request's encoding",
}


def ceiling_rows(ceiling: dict[str, Any]) -> list[Row]:
    """The design's ceiling: how fast the raw server runs once it does the referee's work that
    no bookkeeping can remove (not a target; the bound the protocol target is judged against)."""
    rows: list[Row] = []
    for n, r in ceiling.items():
        variants = r["variants"]
        raw = variants["raw"]["decisions_per_s"]
        what = f"{n} connection{'s' if n != '1' else ''}"
        for key, label in CEILING_ROWS.items():
            v = variants[key]
            rows.append(
                (
                    f"ceiling {what}: {label}",
                    _n(v["decisions_per_s"]),
                    f"raw grpc.aio {_n(raw)}",
                    _ratio(v["ratio_to_raw"]),
                )
            )
    return rows


def tournament_rows(s: dict[str, Any]) -> list[Row]:
    rows: list[Row] = []
    base = s["runs"][0]["matches_per_min"] if s["runs"] else None
    for r in s["runs"]:
        rows.append(
            (
                f"tournament concurrency {r['concurrency']}: matches/min",
                _n(r["matches_per_min"], 1),
                f"concurrency 1: {_n(base, 1)}",
                _ratio(r["ratio_to_concurrency_1"]),
            )
        )
    kept = s.get("persistent")
    if kept:
        rows.append(
            (
                f"tournament, long-lived processes (-j {kept['persistent']['concurrency']}, "
                f"{kept['matches_per_pairing']} matches a pairing): matches/min",
                _n(kept["persistent"]["matches_per_min"], 1),
                f"a process per seat: {_n(kept['per_match']['matches_per_min'], 1)}",
                _ratio(kept["ratio"]),
            )
        )
    ceiling = s.get("server_ceiling")
    if ceiling:
        rows.append(
            (
                "tournament on long-lived processes: share of the server's decision rate",
                _n(kept["persistent"]["matches_per_min"], 1) if kept else "–",
                f"{_n(ceiling['decisions_per_s'], 0)} decisions/s ÷ "
                f"{ceiling['decisions_per_match']} a match = "
                f"{_n(ceiling['ceiling_matches_per_min'], 1)}/min",
                f"{ceiling['share']:.0%}",
            )
        )
    start = s.get("bot_start", {})
    if start:
        rows.append(
            (
                "tournament: one bot process start (CPU s)",
                f"{start['cpu_s_median']:.3f}",
                "",
                "",
            )
        )
    return rows


def transport_rows(s: dict[str, Any]) -> list[Row]:
    """The same round robin over stdio, gRPC and in process; in-process decisions against the
    engine's random playouts. The targets (issue 43) beside each ratio."""
    per_min = s["matches_per_min"]
    c = s["config"]
    what = f"{c['matches']} whist matches, 4 random bots"
    grpc = f"gRPC {_n(per_min['grpc'], 1)}"
    ratio = s["stdio_over_grpc"]
    rows: list[Row] = [
        (
            f"transport gRPC, long-lived (-j {c['concurrency']}, {what}): matches/min",
            _n(per_min["grpc"], 1),
            "",
            "",
        ),
        (
            "transport stdio, long-lived, same matches: matches/min",
            _n(per_min["stdio"], 1),
            grpc,
            f"{_ratio(ratio['median'])} (target {ratio['target']:g}×: "
            f"{'met' if ratio['met'] else 'missed'})",
        ),
        (
            "transport in process (engine.local.play), same matches: matches/min",
            _n(per_min["in_process"], 1),
            grpc,
            _ratio(s.get("in_process_over_grpc")),
        ),
    ]
    cpu = s.get("cpu_ms_per_match")
    if cpu:
        rows.append(
            (
                "transport CPU ms per match, arena + bots: stdio",
                f"{cpu['stdio']['arena']:.1f} + {cpu['stdio']['bots']:.1f}",
                f"gRPC {cpu['grpc']['arena']:.1f} + {cpu['grpc']['bots']:.1f}",
                _ratio(s.get("grpc_cpu_over_stdio_cpu")),
            )
        )
    rates = s["decision_rate"]
    engine = f"engine random playouts {_n(rates['engine']['decisions_per_cpu_s'])}"
    for key, label in (
        ("in_process", "in process, RandomBot: decisions/s"),
        ("in_process_reading", "in process, a bot given its observations: decisions/s"),
    ):
        share = rates[f"{key}_share"]
        rows.append(
            (
                f"transport {label}",
                _n(rates[key]["decisions_per_cpu_s"]),
                engine,
                f"{share['median']:.0%} (target {share['target']:.0%}: "
                f"{'met' if share['met'] else 'missed'})",
            )
        )
    return rows


def cluster_rows(s: dict[str, Any]) -> list[Row]:
    """The tournament here and on a Dask cluster; the coordinator's and scheduler's CPU."""
    rows: list[Row] = []
    config = s["config"]
    local = s["runs"][0]["matches_per_min"] if s["runs"] else None
    for r in s["runs"]:
        where = "here, -j 2" if not r["workers"] else ", ".join(r["workers"])
        shared = " (sharing the cores)" if len(r["workers"]) > 1 and config.get("note") else ""
        rows.append(
            (
                f"cluster {r['label']} ({where}){shared}: matches/min",
                _n(r["matches_per_min"], 1),
                f"local: {_n(local, 1)}",
                _ratio(r.get("ratio_to_local")),
            )
        )
    for r in s["runs"][1:]:
        per = r.get("steady", {}).get("cpu_ms_per_match", {})
        if per:
            rows.append(
                (
                    f"cluster {r['label']}: CPU ms per match, coordinator (user+kernel) / "
                    "scheduler",
                    f"{per.get('coordinator', 0):.1f} ({per.get('coordinator user', 0):.0f}+"
                    f"{per.get('coordinator kernel', 0):.0f}) / {per.get('scheduler', 0):.1f}",
                    f"match wall {_n(r['match_wall_s_median'] * 1000, 0)} ms",
                    "",
                )
            )
    w = s.get("writes", {})
    if w:
        rows.append(
            (
                "cluster coordinator: store + files ms per match (wall)",
                f"{w['store_ms_per_match']['wall']:.2f} + {w['files_ms_per_match']['wall']:.2f}",
                f"CPU {w['store_ms_per_match']['cpu']:.2f} + {w['files_ms_per_match']['cpu']:.2f}",
                "",
            )
        )
    m = s.get("model", {})
    if m.get("slots_per_coordinator"):
        rows.append(
            (
                "cluster: slots one coordinator / scheduler can feed",
                f"{_n(m['slots_per_coordinator'], 1)} / {_n(m.get('slots_per_scheduler'), 1)}",
                f"at {_n(m['match_wall_ms'], 0)} ms a match",
                "",
            )
        )
    return rows


def scale_rows(s: dict[str, Any]) -> list[Row]:
    rows: list[Row] = []
    for lv in s["levels"]:
        n = lv["connections"]
        # The reference takes turns at tables of four, as the seats of a match do; the raw
        # run with every stream asking at once has four times the requests in flight.
        tables = lv["raw_tables"]
        spread = lv.get("ratio_range")
        rows.append(
            (
                f"scale {n} connections: decisions/s",
                _n(lv["decisions_per_s"]),
                f"raw, tables of 4 {_n(tables['decisions_per_s'])}",
                _ratio(lv["ratio_to_raw_tables"])
                + (f" ({spread[0]:.2f}–{spread[1]:.2f})" if spread else ""),
            )
        )
        rows.append(
            (
                f"scale {n} connections vs raw with all {n} asking at once",
                _n(lv["decisions_per_s"]),
                f"raw grpc.aio {_n(lv['raw']['decisions_per_s'])}",
                _ratio(lv["ratio_to_raw"]),
            )
        )
        rows.append(
            (
                f"scale {n}: timeouts; latency median / p99 ms",
                f"{lv['timeouts']}; {lv['latency_median_ms']:.0f} / {lv['latency_p99_ms']:.0f}",
                f"raw, tables of 4 {tables['latency_median_ms']:.0f} / "
                f"{tables['latency_p99_ms']:.0f}",
                "",
            )
        )
        rows.append(
            (
                f"scale {n}: server RSS per connected bot",
                f"{lv['server_rss_per_connection_kb']} KiB",
                f"{lv['server_threads_connected']} threads",
                "",
            )
        )
    return rows


def ratings_rows(s: dict[str, Any]) -> list[Row]:
    rows: list[Row] = [
        (
            f"ratings fit {s['bots']:,} bots / {s['results']:,} results: s",
            f"{s['fit_s_median']:.3f}",
            f"Bradley–Terry L-BFGS {s['baseline_s_median']:.3f}",
            _ratio(s["ratio_to_baseline"]),
        ),
        (
            "ratings fit vs baseline with intervals",
            f"{s['fit_s_median']:.3f}",
            f"baseline + Hessian inverse {s['baseline_with_intervals_s_median']:.3f}",
            _ratio(s["ratio_to_baseline_with_intervals"]),
        ),
    ]
    many = s.get("blas_thread_per_core")
    if many:
        # What the fit's one-thread default buys: the same fit with a BLAS thread per core.
        rows.append(
            (
                f"ratings fit with {many['threads']} BLAS threads: s",
                f"{many['fit_s_median']:.3f}",
                f"as shipped (one thread) {s['fit_s_median']:.3f}",
                _ratio(many["fit_s_median"] / s["fit_s_median"]) if s["fit_s_median"] else "–",
            )
        )
    return rows


ROWS = {
    "engine": engine_rows,
    "search": search_rows,
    "solver": solver_rows,
    "protocol": protocol_rows,
    "tournament": tournament_rows,
    "transport": transport_rows,
    "cluster": cluster_rows,
    "scale": scale_rows,
    "ratings": ratings_rows,
}


def native_line(n: str, r: dict[str, Any]) -> str:
    """benchmarks.native's medians for ``n`` connections in one line: arena against raw."""

    def pair(role: str, lib: str | None = None) -> str:
        return f"{cpu(r['arena'], role, lib):.0f} vs {cpu(r['raw'], role, lib):.0f}"

    return (
        f"arena {n} connection{'' if n == '1' else 's'} against raw (perf, µs of CPU per "
        f"decision): loop thread interpreter {pair('loop thread', 'interpreter')}, grpc native "
        f"{pair('loop thread', 'grpc native')}, kernel {pair('loop thread', 'kernel')}; other "
        f"server threads {pair('other server threads')}; client {pair('client')}"
    )


def limits(results: dict[str, Any]) -> list[str]:
    """One line per profile: where the time went."""
    out: list[str] = []
    sections = results["sections"]
    eng = sections.get("engine", {}).get("profile", {})
    if eng.get("top_self_time"):
        top = ", ".join(
            f"{x['function'].split(' (')[0]} {x['share']:.0%}" for x in eng["top_self_time"][:5]
        )
        out.append(f"engine (whist, pyinstrument self time): {top}")
    for n, prof in sections.get("protocol", {}).get("profile", {}).items():
        if prof.get("by_part"):
            parts = ", ".join(f"{k} {v:.0%}" for k, v in list(prof["by_part"].items())[:5])
            out.append(
                f"arena {n} connection{'' if n == '1' else 's'} (py-spy, GIL holder; "
                f"interpreter busy {prof['interpreter_busy']:.0%}): {parts}"
            )
    native = sections.get("protocol", {}).get("native", {})
    if native.get("missing"):
        out.append(f"arena against raw by thread and library (perf): missing: {native['missing']}")
    for n, r in native.items():
        if n != "missing":
            out.append(native_line(n, r))
    prof = sections.get("scale", {}).get("profile", {})
    if prof.get("by_part"):
        parts = ", ".join(f"{k} {v:.0%}" for k, v in list(prof["by_part"].items())[:5])
        out.append(
            f"arena {prof['connections']} connections (py-spy, GIL holder; interpreter busy "
            f"{prof['interpreter_busy']:.0%}): {parts}"
        )
    tour = sections.get("tournament", {}).get("runs", [])
    if tour:
        r = tour[-1]
        out.append(
            f"tournament concurrency {r['concurrency']}: bot processes {r['bot_share_of_cpu']:.0%} "
            f"of the CPU used; their start-ups alone take {r['startup_share_of_machine']:.0%} of "
            "the machine's capacity"
        )
    stdio = sections.get("transport", {}).get("profile", {})
    if stdio.get("arena", {}).get("by_part"):
        prof = stdio["arena"]
        parts = ", ".join(f"{k} {v:.0%}" for k, v in list(prof["by_part"].items())[:5])
        out.append(
            f"stdio round robin, arena process (py-spy, GIL holder; interpreter busy "
            f"{prof['interpreter_busy']:.0%}): {parts}"
        )
    if stdio.get("bots", {}).get("top_self"):
        top = ", ".join(
            f"{x['function'].split(' (')[0]} {x['share']:.0%}"
            for x in stdio["bots"]["top_self"][:5]
        )
        out.append(f"stdio round robin, bot processes (py-spy, self time): {top}")
    cprof = sections.get("cluster", {}).get("profile", {})
    if cprof.get("by_part_after_start_up"):
        parts = ", ".join(
            f"{k} {v:.0%}" for k, v in list(cprof["by_part_after_start_up"].items())[:5]
        )
        out.append(f"cluster coordinator (py-spy, GIL holder, after start-up): {parts}")
    rat = sections.get("ratings", {}).get("profile", {})
    if rat.get("in _fit"):
        steps = ", ".join(
            f"{x['step'].split(' (')[0]} {x['share']:.0%}" for x in rat["in _fit"][:3]
        )
        out.append(f"ratings fit (pyinstrument, share of the fit): {steps}")
    return out


def render(results: dict[str, Any]) -> str:
    """The table, the machine, and the limits."""
    m = results["machine"]
    lines = [
        f"Card Arena benchmarks — {m['date']}",
        f"machine: {m['nproc']} CPUs, {m['cpu']}, Python {m['python']}, "
        f"load {m['load_avg_1m_at_start']} at start; wire encoder {m.get('encoder', '?')}; "
        f"{results['seconds']} s in all" + (" (quick run)" if results.get("quick") else ""),
        "",
    ]
    rows: list[Row] = [("figure", "value", "reference (same run)", "ratio")]
    for name, fn in ROWS.items():
        section = results["sections"].get(name)
        if section is not None and "error" in section:
            rows.append((f"{name}: failed", section["error"], "", ""))
        elif section is not None:
            rows.extend(fn(section))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for i, r in enumerate(rows):
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    notes = limits(results)
    if notes:
        lines += ["", "What limits them (profiles):"] + [f"- {n}" for n in notes]
    lines += [
        "",
        "Engine rates are per CPU second of the benchmark process (see docs/performance.md).",
    ]
    return "\n".join(lines)
