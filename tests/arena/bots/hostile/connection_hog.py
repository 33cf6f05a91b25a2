"""Hostile bot: hold as many connections to the arena as it can, to lock other bots out.

At its first decision (its own match is under way) it starts a holder (``--hold``) that forks
:data:`HOLDERS` times; each process connects to ``$ARENA_ADDRESS`` until refused (its descriptors
run out), sends each connection the HTTP/2 preface and settings (so gRPC's handshake timeout does
not close them), holds them, and opens a new one for every one the server closes. Each prints
``holding N`` after its first fill and ``reopened N`` as it reconnects. The bot plays random legal
moves, slowly on purpose (argv[1] seconds a decision), so that its match, and the attack, last.

The holders leave the box room for the bot's own threads (a pids cgroup counts threads): an
attacker that crashed itself would end its match, and its attack with it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

#: Processes holding connections (the box allows 64 processes and threads in all).
HOLDERS = 40
#: What a gRPC client sends first: the HTTP/2 preface and an empty SETTINGS frame.
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"


def _connect(path: str) -> socket.socket | None:
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except OSError:  # out of descriptors
        return None
    try:
        sock.settimeout(1.0)
        sock.connect(path)
        sock.sendall(PREFACE)
        sock.setblocking(False)
    except OSError:
        sock.close()
        return None
    return sock


def _closed(sock: socket.socket) -> bool:
    try:
        while True:
            if sock.recv(65536) == b"":
                return True
    except BlockingIOError:
        return False
    except OSError:
        return True


def _say(line: str) -> None:
    os.write(1, f"{line}\n".encode())  # one write: the holders share the pipe


def _hold(path: str) -> None:
    held: list[socket.socket] = []
    while (sock := _connect(path)) is not None:
        held.append(sock)
    _say(f"holding {len(held)}")
    while True:
        time.sleep(0.2)
        for sock in [s for s in held if _closed(s)]:
            held.remove(sock)
            sock.close()
        reopened = 0
        while (sock := _connect(path)) is not None:
            held.append(sock)
            reopened += 1
        if reopened:
            _say(f"reopened {reopened}")


def hold(path: str) -> None:
    """Fork :data:`HOLDERS` processes (fewer if refused), each holding what it can."""
    for _ in range(HOLDERS - 1):
        try:
            if os.fork() == 0:
                break
        except OSError:
            break
    _hold(path)


def main() -> None:
    from cardarena import RandomBot, run_bot

    address = os.environ["ARENA_ADDRESS"]
    assert address.startswith("unix:"), address
    slow = float(sys.argv[1]) if len(sys.argv) > 1 else 0.0

    class Hog(RandomBot):
        name = "hog"
        holders: subprocess.Popen[bytes] | None = None

        def choose(self, game: str, observation: Mapping[str, Any], legal: Sequence[Any]) -> int:
            if self.holders is None:
                # A process of its own that never loads gRPC: forking this one would not do.
                self.holders = subprocess.Popen(
                    [sys.executable, __file__, "--hold", address.removeprefix("unix:")]
                )
            time.sleep(slow)  # slow on purpose
            return super().choose(game, observation, legal)

    print(f"hostile bot up: uid {os.getuid()}", flush=True)
    run_bot(Hog(0), matches=1, give_up_s=60.0)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--hold"]:
        hold(sys.argv[2])
    else:
        main()
