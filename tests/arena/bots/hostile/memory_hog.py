"""Hostile bot: allocate 2 GiB and touch every page."""

from __future__ import annotations

from _hostile import main

SIZE = 2 * 1024**3


def attack() -> str:
    block = bytearray(SIZE)
    for i in range(0, SIZE, 4096):
        block[i] = 1
    return f"allocated {len(block)} bytes"


if __name__ == "__main__":
    main(attack)
