"""What every hostile test bot shares: play legally, but at the first decision try to escape.

An attack that is stopped raises; the bot then prints ``blocked: <why>`` and exits with status 3
(as a real bot dies of an unhandled error), so the arena records a crash fault for its seat. An
attack that succeeds prints ``ESCAPED: <what>`` and the bot plays on: the test then fails on the
missing fault as well as on the escape's trace.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cardarena.bot import Bot
from cardarena.client import run_bot

from engine import Action


class HostileBot(Bot):
    """Random legal play after one attack at the first decision."""

    name = "hostile"

    def __init__(self, attack: Callable[[], str]) -> None:
        super().__init__(0)
        self.attack = attack
        self.attacked = False

    def choose(self, game: str, observation: Mapping[str, Any], legal: Sequence[Action]) -> int:
        if not self.attacked:
            self.attacked = True
            try:
                what = self.attack()
            except BaseException as err:
                print(f"blocked: {type(err).__name__}: {err}", flush=True)
                os._exit(3)
            print(f"ESCAPED: {what}", flush=True)
        return self.rng.randrange(len(legal))


def main(attack: Callable[[], str]) -> None:
    """Run the hostile bot against ``$ARENA_ADDRESS`` until its match ends."""
    print(f"hostile bot up: uid {os.getuid()}, argv {sys.argv[1:]}", flush=True)
    run_bot(HostileBot(attack), matches=1, give_up_s=5.0)
