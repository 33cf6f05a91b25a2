"""Copy the referee's law, the shared rules pages (``../shared/rules/`` beside the repository),
into ``docs/rules/law/``, so that a clone holds the rules its referees implement.

Each copy starts with a banner naming its source and the SHA-256 of the text below it;
``tests/engine/test_rules_law.py`` fails when a copy was edited by hand, and when the shared
pages are at hand and a copy is stale. ``make rules`` runs this script.

Usage: ``python scripts/sync_rules.py [--source DIR] [--out DIR]``.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT.parent / "shared" / "rules"
OUT = ROOT / "docs" / "rules" / "law"
#: The pages copied: the index, the games' laws and the situations every referee is tested on.
PAGES = ("README.md", "whist.md", "tennis-whist.md", "spoil-five.md", "tennis.md", "scenarios.md")
BANNER = (
    "<!-- COPIED by scripts/sync_rules.py from ../shared/rules/{name}; do not edit: change the "
    "shared page and run the script. sha256 of the text below: {digest} -->\n"
)


def banner(name: str, text: str) -> str:
    """The first line of the copy of ``name`` whose text is ``text``."""
    return BANNER.format(name=name, digest=hashlib.sha256(text.encode()).hexdigest())


def copy_text(name: str, source: str) -> str:
    """The whole copy of page ``name`` with the shared text ``source``."""
    return banner(name, source) + source


def split(copy: str) -> tuple[str, str]:
    """A copy's banner line and the text below it."""
    first, _, rest = copy.partition("\n")
    return first + "\n", rest


def sync(source: Path, out: Path) -> list[Path]:
    """Write the copy of every page of ``source`` into ``out``; the files written."""
    missing = [name for name in PAGES if not (source / name).is_file()]
    if missing:
        raise SystemExit(f"sync_rules: {source}: missing {', '.join(missing)}")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in PAGES:
        path = out / name
        path.write_text(copy_text(name, (source / name).read_text(encoding="utf-8")))
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="sync_rules", description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, default=SOURCE, help=f"default {SOURCE}")
    parser.add_argument("--out", type=Path, default=OUT, help=f"default {OUT}")
    args = parser.parse_args(argv)
    for path in sync(args.source, args.out):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
