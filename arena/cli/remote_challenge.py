"""``arena remote challenge BOT`` and ``arena remote challenges``: an author plays the ladder's
versions in the browser (``[challenges]``, arena/host/api/challenges.py), and the human matches
played so far.

Registered from arena/cli/remote.py, which hands in its ``_add`` (this module imports nothing of
it: no cycle)."""

from __future__ import annotations

import argparse
import json
import webbrowser
from collections.abc import Callable
from typing import TYPE_CHECKING

from arena.cli.arguments import NON_NEGATIVE, number

if TYPE_CHECKING:
    from arena.host.apitypes import ChallengeOut
    from arena.host.client import RemoteClient

    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]
    Add = Callable[..., argparse.ArgumentParser]


#: The API's largest page.
LIMIT = number(int, 1, "a whole number from 1 to 1000", 1000)


def _line(c: ChallengeOut) -> str:
    result = c.summary or c.reason or ""
    rated = "rated" if c.rated else "unrated"
    return f"{c.match_id}  human  {c.state:<7} {rated:<7} {' · '.join(c.seats)}  {result}".rstrip()


def _challenge(client: RemoteClient, args: argparse.Namespace) -> int:
    c = client.challenge(args.opponents, args.seat)
    if args.json:
        print(json.dumps(c.model_dump(mode="json"), indent=2))
        return 0
    print(f"{c.match_id}: you play seat {c.person_seat} against {', '.join(args.opponents)}")
    print(f"play at {c.play_url}")
    print("(the page is your seat: keep its address to yourself)")
    if args.open and c.play_url:
        webbrowser.open(c.play_url)
    return 0


def _challenges(client: RemoteClient, args: argparse.Namespace) -> int:
    found = client.challenges(args.limit, args.offset)
    if args.json:
        print(json.dumps([c.model_dump(mode="json") for c in found], indent=2))
        return 0
    if not found:
        print("no challenges yet")
    for c in found:
        print(_line(c))
    return 0


def add_challenge_commands(rsub: Subparsers, add: Add) -> None:
    """``challenge`` and ``challenges``, with ``add`` (remote.py's ``_add``)."""
    cp = add(
        rsub,
        "challenge",
        _challenge,
        "author",
        "play the ladder's bot BOT yourself in the browser (where the host takes challenges): "
        "prints your page's URL; a human match, unrated unless the host says otherwise",
    )
    cp.add_argument(
        "opponents",
        nargs="+",
        metavar="BOT",
        help="BOT (its newest version on the ladder) or BOT@N: one for every other seat, or "
        "one a seat in seat order",
    )
    cp.add_argument("--seat", type=NON_NEGATIVE, default=0, metavar="S", help="your seat (0)")
    cp.add_argument("--open", action="store_true", help="open the page in your browser")
    lp = add(
        rsub, "challenges", _challenges, "none", "the challenges (human matches), newest first"
    )
    lp.add_argument("--limit", type=LIMIT, default=20, metavar="N", help="at most N (20)")
    lp.add_argument(
        "--offset", type=NON_NEGATIVE, default=0, metavar="N", help="after the N newest"
    )
