"""Hostile bot: open a TCP connection to 127.0.0.1:PORT (argv[1]), where the test listens."""

from __future__ import annotations

import socket
import sys

from _hostile import main


def attack() -> str:
    port = int(sys.argv[1])
    with socket.create_connection(("127.0.0.1", port), timeout=2.0) as conn:
        conn.sendall(b"escaped\n")
    return f"connected to 127.0.0.1:{port}"


if __name__ == "__main__":
    main(attack)
