"""Hostile bot: write files outside its box: argv[1] (a path the test chose), its own directory,
and the arena's package directory. Each write must fail."""

from __future__ import annotations

import sys
from pathlib import Path

from _hostile import main

import arena

NAME = "escaped-by-hostile-bot.txt"


def targets() -> list[Path]:
    return [
        Path(sys.argv[1]),
        Path(__file__).resolve().parent / NAME,
        Path(arena.__file__).resolve().parent / NAME,
    ]


def attack() -> str:
    refused: list[str] = []
    for target in targets():
        try:
            target.write_text("escaped\n")
        except OSError as err:
            refused.append(f"{target}: {err.strerror}")
            continue
        return f"wrote {target}"
    raise PermissionError("; ".join(refused))


if __name__ == "__main__":
    main(attack)
