"""Hostile bot: start processes without limit (each child just sleeps, so the machine stays calm).

The bot itself forks once, into a shell that forks in a loop: forking the bot's own process in a
loop would be stopped by grpc's fork handlers deadlocking long before any limit, proving nothing.
"""

from __future__ import annotations

import subprocess

from _hostile import main

#: Far more processes than any bot may have.
WANTED = 10_000
#: Each child sleeps; the shell prints how many it has started so far.
BOMB = (
    f'i=0; while [ "$i" -lt {WANTED} ]; do '
    'sleep 120 >/dev/null 2>&1 & i=$((i + 1)); echo "$i"; done'
)


def attack() -> str:
    done = subprocess.run(["/bin/sh", "-c", BOMB], capture_output=True, text=True, check=False)
    counts = [int(n) for n in done.stdout.split()]
    started = counts[-1] if counts else 0
    if started >= WANTED:
        return f"started {started} children"
    why = (done.stderr.strip().splitlines() or ["?"])[-1]
    raise OSError(f"fork refused after {started} children: {why}")


if __name__ == "__main__":
    main(attack)
