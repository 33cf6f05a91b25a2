"""``make ladder``: the reference bots' ladder, one tournament per game, written to docs/ladder.md.

Each config in examples/ladder/ is a round robin of ``random``, ``rules`` and ``search`` on
duplicate deals. With ``--run`` the tournaments are run (or resumed: a finished one only
re-prints); then the page is written from their stored results and records: each bot's Elo and
95 % interval, the cross-table, whether the intervals are ordered search > rules > random without
overlapping, and the search bot's slowest answer against the deadline, its timeouts and the
decisions the referee had to play for it.

    python scripts/ladder.py --run            # run every tournament, then write the page
    python scripts/ladder.py                  # the page from what is stored
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "examples" / "ladder"
DOC = ROOT / "docs" / "ladder.md"
ARENA = Path(sys.executable).with_name("arena")
ORDER = ("search", "rules", "random")

INTRO = """# The ladder: random, rules and search in every game

Written by `make ladder` (scripts/ladder.py) from the tournaments in examples/ladder/: for each
game a round robin of the three reference bots, every deal played in every seat rotation
(duplicate), at least 216 matches per game. Elo is anchored at a mean of 1500; ± is the 95 %
interval (cluster-robust by deal, docs/ratings.md). "Ordered" says whether the intervals place
search above rules above random without overlapping. The search bot's slowest answer is read
from the match records, against the move time of the tournament. docs/bots.md says how the bots
work.
"""


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


def section(config: Path) -> tuple[str, bool]:
    raw = tomllib.loads(config.read_text())
    out = ROOT / raw["output"]
    data = ratings(out)
    rows = {r["bot"]: r for r in data["ratings"]["ratings"]}
    lo = {b: r["elo"] - r["plus_minus"] for b, r in rows.items()}
    hi = {b: r["elo"] + r["plus_minus"] for b, r in rows.items()}
    ordered = all(b in rows for b in ORDER) and all(
        lo[ORDER[i]] > hi[ORDER[i + 1]] for i in range(len(ORDER) - 1)
    )
    slowest, decisions, fallbacks = search_times(out)
    move_ms = raw.get("time_control", {}).get("move_ms", 0)
    timeouts = data["faults"].get("search", {})
    opts = ", ".join(f"{k} = {v}" for k, v in raw.get("options", {}).items())
    players = f", {raw['players']} players" if "players" in raw else ""
    lines = [
        f"## {raw['game']}{players}: {opts}",
        "",
        f"`arena tournament {config.relative_to(ROOT)}` — {data['matches_done']} of "
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
    lines += [
        "",
        f"Ordered search > rules > random without overlap: **{'yes' if ordered else 'no'}**. "
        f"The search bot's slowest answer: {slowest:.0f} ms of {move_ms} ms, over {decisions:,} "
        f"decisions; faults {sum(timeouts.values()) if isinstance(timeouts, dict) else timeouts}, "
        f"decisions played for it by the referee {fallbacks}.",
        "",
    ]
    return "\n".join(lines), ordered


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--run", action="store_true", help="run (or resume) the tournaments first")
    parser.add_argument("--doc", type=Path, default=DOC, help="the page to write")
    parser.add_argument("configs", nargs="*", type=Path, help="configs (default: examples/ladder/)")
    args = parser.parse_args(argv)
    configs = [c.resolve() for c in args.configs] or sorted(CONFIGS.glob("*.toml"))
    parts = [INTRO]
    summary = []
    for config in configs:
        if args.run:
            run(config)
        text, ordered = section(config)
        parts.append(text)
        summary.append(f"{config.stem}: {'ordered' if ordered else 'NOT ordered'}")
    args.doc.write_text("\n".join(parts))
    print(f"{args.doc}: " + "; ".join(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
