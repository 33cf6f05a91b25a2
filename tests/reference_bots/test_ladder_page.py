"""scripts/ladder.py (``make ladder``) runs a real tournament of the three reference bots and
writes the page: the summary row per game, its section, an "ordered" verdict that agrees with
the arena's own ratings, and the hand-written notes of the page it replaces."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CONFIG = """
name = "tiny-ladder"
game = "whist"
format = "round_robin"
matches_per_pairing = 2
duplicate = true
seed = 7
concurrency = 2
output = "{out}"

[options]
points_to_win = 1
games_per_rubber = 1

[time_control]
move_ms = 1000
bank_ms = 10000

[[bots]]
name = "random"

[[bots]]
name = "rules"

[[bots]]
name = "search"
command = "arena bot search --iterations 16"
"""


def test_the_page_comes_from_a_real_tournament(tmp_path: Path) -> None:
    config = tmp_path / "tiny.toml"
    config.write_text(CONFIG.format(out=tmp_path / "out"))
    page = tmp_path / "ladder.md"
    # A page from an earlier run: its tables are replaced, the notes below the marker kept.
    marker = "<!-- notes: kept by scripts/ladder.py -->"
    # Another game's section and row, from a run of its own, are kept: only the configs given
    # are run and rewritten.
    other = (
        "## forty_five, 4 players: points_to_win = 5\n\n"
        "`arena tournament examples/ladder/forty_five.toml` — 8 of 8 matches played.\n\nkept.\n"
    )
    other_row = "| forty_five | 8 | 1 ± 1 | 2 ± 2 | 3 ± 3 | +1 ± 1 | +2 ± 2 | no | no |"
    page.write_text(
        f"stale tables\n{other_row}\n\n{other}\n{marker}\n## Where this stands\nA note by hand.\n"
    )
    proc = subprocess.run(
        [sys.executable, "scripts/ladder.py", "--run", str(config), "--doc", str(page)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    text = page.read_text()
    assert "## whist: points_to_win = 1, games_per_rubber = 1" in text
    assert "6 of 6 matches played" in text
    assert "stale tables" not in text
    assert other in text and f"\n{other_row}\n" in text
    assert text.index(other) < text.index("## whist")
    assert text.endswith(f"{marker}\n## Where this stands\nA note by hand.\n")
    assert re.search(r"slowest answer: \d+ ms of 1000 ms, over [\d,]+ decisions; faults 0", text)

    row = re.search(r"^\| tiny \| 6 \| (.+) \|$", text, re.MULTILINE)
    assert row, text
    cells = [c.strip() for c in row.group(1).split("|")]
    assert len(cells) == 7, row[0]
    assert all(re.fullmatch(r"\d+ ± \d+", c) for c in cells[:3]), row[0]
    assert all(re.fullmatch(r"[+-]\d+ ± \d+", c) for c in cells[3:5]), row[0]
    # The verdicts agree with the ratings the arena itself reports for that tournament.
    ratings = subprocess.run(
        [str(Path(sys.executable).with_name("arena")), "ratings", str(tmp_path / "out"), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    table = json.loads(ratings.stdout)["ratings"]
    rows = {r["bot"]: r for r in table["ratings"]}
    elo = {b: r["elo"] for b, r in rows.items()}
    lo = {b: r["elo"] - r["plus_minus"] for b, r in rows.items()}
    hi = {b: r["elo"] + r["plus_minus"] for b, r in rows.items()}
    steps = [("search", "rules"), ("rules", "random")]
    ordered = all(elo[a] - elo[b] > 1.96 * table["difference_sd"][a][b] for a, b in steps)
    apart = all(lo[a] > hi[b] for a, b in steps)
    assert cells[5:] == ["yes" if ordered else "no", "yes" if apart else "no"]
    assert f"tiny: {'ordered' if ordered else 'NOT ordered'}" in proc.stdout
