"""``make ladder``: the reference bots' ladder, one tournament per game, written to docs/ladder.md.

Each config in examples/ladder/ is a round robin of ``random``, ``rules`` and ``search`` on
duplicate deals. With ``--run`` the tournaments are run (or resumed: a finished one only
re-prints); then the page is written from their stored results and records: each bot's Elo and
95 % interval, the cross-table, each step's difference (search − rules, rules − random) with its
own 95 % interval, whether both are above 0 ("ordered") and whether the bots' own intervals are
apart, and the search bot's slowest answer against the deadline, its timeouts and the
decisions the referee had to play for it.

    python scripts/ladder.py --run            # run every tournament, then write the page
    python scripts/ladder.py                  # the page from what is stored
    python scripts/ladder.py --run examples/ladder/whist.toml   # one game again, the others kept

Notes written by hand below the marker line (:data:`NOTES`) are kept when the page is rewritten.
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

from arena.ratings import Z95

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "examples" / "ladder"
DOC = ROOT / "docs" / "ladder.md"
ARENA = Path(sys.executable).with_name("arena")
ORDER = ("search", "rules", "random")

INTRO = """# The ladder: random, rules and search in every game

Written by `make ladder` (scripts/ladder.py) from the tournaments in examples/ladder/: for each
game a round robin of the three reference bots on duplicate deals (every deal played in every
seat rotation), at least 216 matches per game. Elo is anchored at a mean of 1500; ± is the 95 %
interval (cluster-robust by deal, docs/ratings.md). Each step of the ladder, search − rules and
rules − random, is given with the 95 % interval of the difference itself: "ordered" says both
are above 0. "Intervals apart" is the stricter reading, that the bots' own intervals do not
overlap; it fails where one bot loses every match (random in tennis): its rating is then bounded
by the prior alone, and centring the scale on the field mean puts a third of that uncertainty
into every bot's own interval, while the differences between the others are untouched. The
search bot's slowest answer is read from the match records, against the move time of the
tournament. docs/bots.md says how the bots work.
"""

#: Everything from this line on is kept when the page is rewritten.
NOTES = "<!-- notes: kept by scripts/ladder.py -->"


def run(config: Path) -> None:
    subprocess.run([str(ARENA), "tournament", str(config), "--quiet"], cwd=ROOT, check=True)


def ratings(out: Path) -> dict[str, Any]:
    proc = subprocess.run(
        [str(ARENA), "ratings", str(out), "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


def search_times(out: Path) -> tuple[float, int, int]:
    """The search seats' slowest answer (ms), decisions and referee fallbacks, from the records."""
    slowest, decisions, fallbacks = 0.0, 0, 0
    for record in sorted((out / "records").glob("*.jsonl.gz")):
        with gzip.open(record, "rt") as lines:
            header = json.loads(next(lines))
            seats = {s["seat"] for s in header["seats"] if s["bot_name"] == "search"}
            for line in lines:
                entry = json.loads(line)
                if entry.get("type") == "decision" and entry["seat"] in seats:
                    decisions += 1
                    fallbacks += bool(entry.get("fallback"))
                    slowest = max(slowest, float(entry.get("ms", 0.0)))
    return slowest, decisions, fallbacks


def step(
    rows: dict[str, Any], sds: dict[str, dict[str, float]], a: str, b: str
) -> tuple[float, float]:
    """``a``'s Elo less ``b``'s and the half-width of its 95 % interval.

    Unlike a bot's own ±, the difference's error holds nothing of where the scale is anchored:
    a bot that loses every match (random in tennis) has a rating only the prior bounds, and
    centring the scale on the field mean spreads that to every bot's own interval.
    """
    return rows[a]["elo"] - rows[b]["elo"], Z95 * sds[a][b]


def section(config: Path) -> tuple[str, bool, str]:
    """The game's section of the page, whether it is ordered, and its row of the summary."""
    raw = tomllib.loads(config.read_text())
    out = ROOT / raw["output"]
    data = ratings(out)
    rows = {r["bot"]: r for r in data["ratings"]["ratings"]}
    lo = {b: r["elo"] - r["plus_minus"] for b, r in rows.items()}
    hi = {b: r["elo"] + r["plus_minus"] for b, r in rows.items()}
    complete = all(b in rows for b in ORDER)
    apart = complete and all(lo[a] > hi[b] for a, b in itertools.pairwise(ORDER))
    sds = data["ratings"]["difference_sd"]
    steps = [step(rows, sds, a, b) for a, b in itertools.pairwise(ORDER)] if complete else []
    ordered = complete and all(diff - half > 0 for diff, half in steps)
    slowest, decisions, fallbacks = search_times(out)
    move_ms = raw.get("time_control", {}).get("move_ms", 0)
    timeouts = data["faults"].get("search", {})
    opts = ", ".join(f"{k} = {v}" for k, v in raw.get("options", {}).items())
    players = f", {raw['players']} players" if "players" in raw else ""
    shown = config.relative_to(ROOT) if config.is_relative_to(ROOT) else config
    lines = [
        f"## {raw['game']}{players}: {opts}",
        "",
        f"`arena tournament {shown}` — {data['matches_done']} of "
        f"{data['matches_total']} matches played.",
        "",
        "| rank | bot | Elo | 95 % interval | matches | score |",
        "|---|---|---|---|---|---|",
    ]
    for r in data["ratings"]["ratings"]:
        bot = r["bot"]
        lines.append(
            f"| {r['rank']} | {bot} | {r['elo']:.0f} | {lo[bot]:.0f} – {hi[bot]:.0f} "
            f"| {r['matches']} | {r['score']:.3f} |"
        )
    names = [r["bot"] for r in data["ratings"]["ratings"]]
    lines += [
        "",
        "| score / meetings | " + " | ".join(names) + " |",
        "|---" * (len(names) + 1) + "|",
    ]
    for a in names:
        cells = []
        for b in names:
            cell = data["crosstable"].get(a, {}).get(b)
            cells.append("–" if cell is None else f"{cell['score']:g} / {cell['meetings']}")
        lines.append(f"| {a} | " + " | ".join(cells) + " |")
    lines.append("")
    for (a, b), (diff, half) in zip(itertools.pairwise(ORDER), steps, strict=True):
        lines.append(
            f"- {a} − {b}: {diff:+.0f} Elo, 95 % interval {diff - half:+.0f} – {diff + half:+.0f}"
        )
    lines += [
        "",
        f"Ordered search > rules > random (each step's interval above 0): "
        f"**{'yes' if ordered else 'no'}**; the bots' own intervals apart: "
        f"{'yes' if apart else 'no'}. The search bot's slowest answer: {slowest:.0f} ms of "
        f"{move_ms} ms, over {decisions:,} "
        f"decisions; faults {sum(timeouts.values()) if isinstance(timeouts, dict) else timeouts}, "
        f"decisions played for it by the referee {fallbacks}.",
        "",
    ]
    elo = " | ".join(
        f"{rows[b]['elo']:.0f} ± {rows[b]['plus_minus']:.0f}" if b in rows else "–" for b in ORDER
    )
    gaps = " | ".join(f"{d:+.0f} ± {h:.0f}" for d, h in steps) if steps else "– | –"
    summary = (
        f"| {config.stem} | {data['matches_done']} | {elo} | {gaps} | "
        f"{'yes' if ordered else 'no'} | {'yes' if apart else 'no'} |"
    )
    return "\n".join(lines), ordered, summary


def kept(old: str) -> dict[str, tuple[str, str]]:
    """Each game's section and summary row on the page as it is, by config stem: what a run of
    only some configs keeps of the others."""
    body = old.split(NOTES)[0]
    chunks = body.split("\n## ")
    out: dict[str, tuple[str, str]] = {}
    for chunk in chunks[1:]:
        start = chunk.find("`arena tournament ")
        if start < 0:
            continue
        stem = Path(chunk[start:].split("`")[1].split()[-1]).stem
        row = next((ln for ln in body.splitlines() if ln.startswith(f"| {stem} |")), "")
        out[stem] = ("## " + chunk.rstrip("\n") + "\n", row)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--run", action="store_true", help="run (or resume) the tournaments first")
    parser.add_argument("--doc", type=Path, default=DOC, help="the page to write")
    parser.add_argument(
        "configs",
        nargs="*",
        type=Path,
        help="configs (default: examples/ladder/); given some, the page keeps the others' sections",
    )
    args = parser.parse_args(argv)
    configs = [c.resolve() for c in args.configs] or sorted(CONFIGS.glob("*.toml"))
    old = args.doc.read_text() if args.doc.exists() else ""
    given = {c.stem for c in configs}
    earlier = kept(old) if args.configs else {}
    parts, rows, summary = [], [], []
    for config in sorted(
        {*configs, *(CONFIGS / f"{s}.toml" for s in earlier)}, key=lambda c: c.stem
    ):
        if config.stem not in given:
            text, row = earlier[config.stem]
            parts.append(text)
            rows.append(row)
            continue
        if args.run:
            run(config)
        text, ordered, row = section(config)
        parts.append(text)
        rows.append(row)
        summary.append(f"{config.stem}: {'ordered' if ordered else 'NOT ordered'}")
    table = [
        "| game | matches | search | rules | random | search − rules | rules − random "
        "| ordered | intervals apart |",
        "|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
    ]
    # Notes written by hand below the marker survive a rewrite of the tables above it.
    notes = old[old.index(NOTES) :] if NOTES in old else ""
    args.doc.write_text("\n".join([INTRO, *table, *parts, notes]))
    print(f"{args.doc}: " + "; ".join(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
