"""Hostile program (not a bot): hold as many descriptors at once as the box allows.

It forks until refused; every process, itself included, duplicates a descriptor until refused
and holds what it got. Each child reports its count through a pipe; the first process prints
``held TOTAL in PROCESSES processes`` and exits, which ends the box and its children.
"""

from __future__ import annotations

import os
import signal

#: Far more processes than any bot may have.
WANTED = 10_000


def fill() -> int:
    held = 0
    while True:
        try:
            os.dup(0)
        except OSError:
            return held
        held += 1


def main() -> None:
    read_end, write_end = os.pipe()
    children = 0
    for _ in range(WANTED):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            os.close(read_end)
            count = fill()
            os.write(write_end, f"{count}\n".encode())
            while True:  # hold them until the box ends
                signal.pause()
        children += 1
    os.close(write_end)
    total = fill()
    reports = b""
    with os.fdopen(read_end, "rb") as pipe:
        while reports.count(b"\n") < children:
            chunk = pipe.read1(4096)
            if not chunk:
                break
            reports += chunk
    total += sum(int(n) for n in reports.split())
    print(f"held {total} in {children + 1} processes", flush=True)


if __name__ == "__main__":
    main()
