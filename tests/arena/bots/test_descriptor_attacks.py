"""A sandboxed bot cannot exhaust the server's descriptors (docs/sandbox.md, "Descriptors";
docs/protocol.md, "Limits"): the box bounds what all its processes together may hold, and the
server cuts back a bot that holds more connections than its cap while the other bots play on.

In a tournament a boxed bot once held every descriptor a server under the usual soft limit of
1024 had (its box then allowed 256 per process, 64 processes): the bots starting next could not
connect and forfeited their matches. Here the attack runs against a server started under that
same soft limit.
"""

from __future__ import annotations

import re
import secrets
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import pytest
import structlog
import trio
from cardarena.messages import TimeControl

from arena.bots.command import BotProgram
from arena.bots.launch import Confinement
from arena.bots.sandbox import SOCKET_NAME, default_limits, prepare_socket, socket_directory, wrap
from arena.match import BotLaunch, run_with_bots
from arena.server import MatchOutcome, MatchSpec, SeatSpec, new_token, open_arena_server
from arena.server.limits import MAX_CONNECTIONS_PER_BOT
from tests.arena.descriptors import USUAL_SOFT, hard_open_files, soft_open_files
from tests.waiting import async_wait_until

HOSTILE = Path(__file__).resolve().parent / "hostile"
ARENA = str(Path(sys.executable).parent / "arena")
#: The most descriptors a boxed bot may hold at once, all its processes together.
BUDGET = 4096


@pytest.mark.slow
def test_a_boxed_program_holds_at_most_the_descriptor_budget(tmp_path: Path) -> None:
    limits = default_limits()
    assert limits.processes * limits.open_files <= BUDGET
    wrapped = wrap(f"{sys.executable} descriptor_hog.py", HOSTILE, tmp_path, limits)
    # stdin is the guard's pipe: the box lives while it is open (arena/bots/sandbox.py).
    proc = subprocess.Popen(
        wrapped.argv, env=wrapped.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        out = proc.stdout.read()
        assert proc.wait(timeout=60) == 0, out
    finally:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.close()
        proc.stdout.close()
        wrapped.cleanup()
    # held 3480 in 58 processes
    words = out.split()
    held, processes = int(words[1]), int(words[3])
    assert processes < limits.processes, out
    assert limits.open_files < held <= BUDGET, out  # every process filled a table of its own


def _spec(name: str, bots: tuple[str, str], options: dict[str, Any]) -> MatchSpec:
    return MatchSpec(
        match_id=f"{name}-{secrets.token_hex(4)}",
        game="tennis",
        seats=tuple(SeatSpec(new_token(), bot) for bot in bots),
        seed=7,
        options=options,
        time_control=TimeControl(2000, 10000),
        connect_timeout_s=20.0,
    )


def _held(log: BinaryIO) -> int:
    """Connections the hog's processes reported holding after their first fill."""
    log.seek(0)
    text = log.read().decode(errors="replace")
    return sum(int(n) for n in re.findall(r"^holding (\d+)$", text, re.MULTILINE))


@dataclass
class Attack:
    """What :func:`_attack` saw."""

    #: The honest bots' match.
    outcome: MatchOutcome
    #: Whether the hog's match was still on once the honest one had ended and the server had
    #: warned about the hog.
    still_hogging: bool
    #: Connections the hog's processes held after their first fill.
    held: int
    #: The server's warnings about caps.
    warnings: list[dict[str, Any]]


def _cap_warnings(logs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in logs if e["event"] == "connections over the cap closed"]


async def _attack(tmp: Path, logs: list[dict[str, Any]]) -> Attack:
    """A slow match with the connection hog in it; once the hog holds more connections than a
    soft limit of 1024 allows, a second match between honest boxed bots; then the server's
    warning about the hog (``logs``: what the server logs)."""
    hog = _spec("hog", ("hog", "random"), {})
    honest = _spec("honest", ("random", "rules"), {"sets_to_win": 1})
    with socket_directory() as sockets:
        async with open_arena_server("127.0.0.1:0", unix=sockets / SOCKET_NAME) as server:
            prepare_socket(sockets / SOCKET_NAME)
            confinement = Confinement(sockets, default_limits(), hide=(tmp,))

            def launches(prefix: str, commands: tuple[str, str]) -> list[BotLaunch]:
                return [
                    BotLaunch(BotProgram(c, workdir=str(HOSTILE)), tmp / f"{prefix}{seat}.log")
                    for seat, c in enumerate(commands)
                ]

            hogging: list[MatchOutcome] = []

            async def hog_match() -> None:
                bots = launches("hog", ("python connection_hog.py 0.1", f"{ARENA} bot random"))
                hogging.append(await run_with_bots(server, hog, bots, server.address, confinement))

            async with trio.open_nursery() as nursery:
                server.register(hog)
                nursery.start_soon(hog_match)
                hog_log = tmp / "hog0.log"
                await async_wait_until(hog_log.exists, 30, what="the hog's log")
                # Opened before the attack: a server out of descriptors could not open it.
                with hog_log.open("rb") as log:
                    held = await async_wait_until(
                        lambda: (n := _held(log)) > USUAL_SOFT and n,
                        30,
                        what="the hog to hold more connections than a soft limit of 1024 allows",
                    )
                server.register(honest)
                bots = launches("honest", (f"{ARENA} bot random", f"{ARENA} bot rules"))
                outcome = await run_with_bots(server, honest, bots, server.address, confinement)
                assert (outcome.result.reason, outcome.faults) == ("normal", ()), outcome.faults
                warnings = await async_wait_until(
                    lambda: _cap_warnings(logs), 10, what="the server's warning about the hog"
                )
                still_hogging = not hogging
                nursery.cancel_scope.cancel()
    return Attack(outcome, still_hogging, held, warnings)


@pytest.mark.slow
def test_a_bot_holding_every_connection_it_can_locks_no_other_bot_out(tmp_path: Path) -> None:
    hard_open_files()
    with soft_open_files(USUAL_SOFT), structlog.testing.capture_logs() as logs:
        attack = trio.run(_attack, tmp_path, logs)
    assert attack.still_hogging, "the hog's match ended first: there was no attack to survive"
    assert not [t for t in attack.outcome.timings if t.fallback]
    assert all(w["peer"].startswith("bot pid:[") for w in attack.warnings), attack.warnings
    assert attack.warnings[0]["cap"] == MAX_CONNECTIONS_PER_BOT
    assert attack.warnings[0]["held"] > MAX_CONNECTIONS_PER_BOT
    # The box bounds the burst; the server, what the hog keeps.
    assert attack.held <= BUDGET
