"""Write the golden text views: seeded positions of every game rendered by ``engine.text``
(to move with the legal actions listed and not, and a seat not to move), into
``tests/engine/text/``, each file headed by the ``TEXT_VERSION`` it was written with.

``tests/engine/test_text.py`` renders each position again and compares. A changed rendering
must change ``TEXT_VERSION``: this script refuses to rewrite a file whose text changed while
its recorded version is still the current one; bump ``REVISION`` in engine/text/words.py (or
change a wording table, which the hash covers), then ``make text-views``.

Usage: ``python scripts/text_views.py [--out DIR]``.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

from engine.core import MatchState
from engine.options import OptionValue
from engine.registry import make
from engine.text import TEXT_VERSION, render

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "engine" / "text"
VERSION_LINE = "# TEXT_VERSION "

#: (file stem, game id, players, options, seed, decisions at least, an action kind to reach):
#: every game and table size, and the decisions that are not plays (trumps, robbing, the
#: tennis exchange, a doubles shot), late enough in a match for earlier deals to show.
CASES: tuple[tuple[str, str, int, dict[str, OptionValue], int, int, str], ...] = (
    ("whist-early", "whist", 4, {}, 1, 6, "play"),
    ("whist-late", "whist", 4, {}, 2, 140, "play"),
    ("tennis_whist-trump", "tennis_whist", 4, {}, 1, 10, "trump"),
    ("tennis_whist-2p", "tennis_whist", 2, {}, 2, 30, "play"),
    ("spoil_five-rob", "spoil_five", 4, {}, 2, 0, "rob"),
    ("spoil_five-claim", "spoil_five", 4, {}, 5, 0, "claim"),
    ("spoil_five-5p", "spoil_five", 5, {}, 3, 60, "play"),
    ("forty_five-4p", "forty_five", 4, {}, 1, 45, "play"),
    ("forty_five-2p-rob", "forty_five", 2, {}, 1, 20, "rob"),
    ("tennis-singles", "tennis", 2, {}, 1, 12, "shot"),
    ("tennis-doubles", "tennis", 4, {}, 1, 10, "give"),
    ("tennis-doubles-players", "tennis", 4, {"control": "players"}, 1, 40, "shot"),
)


def position(
    game: str, players: int, options: dict[str, OptionValue], seed: int, after: int, kind: str
) -> MatchState:
    """The first decision, ``after`` random decisions or more into the match of ``seed``, where
    the seat to move may take an action of ``kind``."""
    state = make(game, players=players, seed=seed, **options)
    rng = random.Random(seed)
    decisions = 0
    while not state.is_over():
        legal = state.legal_actions()
        if decisions >= after and any(a.kind == kind for a in legal):
            return state
        state.apply(rng.choice(legal))
        decisions += 1
    raise ValueError(f"{game} seed {seed}: no {kind} decision after {after}")


def golden_body(case: tuple[str, str, int, dict[str, OptionValue], int, int, str]) -> str:
    """The rendered views of one case, as the file holds them below its version line."""
    _stem, game, players, options, seed, after, kind = case
    state = position(game, players, options, seed, after, kind)
    seat = state.to_move
    assert seat is not None
    other = (seat + 1) % state.num_seats
    legal = state.legal_actions()
    parts = []
    for label, who, actions, listed in (
        (f"seat {seat}, to move, legal actions listed", seat, legal, True),
        (f"seat {seat}, to move, legal actions not listed", seat, legal, False),
        (f"seat {other}, not to move", other, (), True),
    ):
        obs = state.observation(who).to_dict()
        events = state.visible_events(who)
        view = render(game, state.config, obs, actions, list_legal=listed, events=events)
        parts.append(f"== {label}\n{view.text}\n")
    head = (
        f"# {game}, {players} players, options {options}, seed {seed}, first {kind} after {after}"
    )
    return head + "\n" + "\n".join(parts)


def recorded(path: Path) -> tuple[str, str] | None:
    """A golden file's (version, body), or ``None`` when it does not exist."""
    if not path.exists():
        return None
    first, _, body = path.read_text(encoding="utf-8").partition("\n")
    return first.removeprefix(VERSION_LINE), body


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help="directory of the text files")
    out: Path = parser.parse_args(argv).out
    out.mkdir(parents=True, exist_ok=True)
    refused = []
    for case in CASES:
        path = out / f"{case[0]}.txt"
        body = golden_body(case)
        old = recorded(path)
        if old is not None and old[1] != body and old[0] == TEXT_VERSION:
            refused.append(path.name)
            continue
        path.write_text(f"{VERSION_LINE}{TEXT_VERSION}\n{body}", encoding="utf-8")
    if refused:
        print(
            f"not rewritten, the rendering changed but TEXT_VERSION did not: {refused}; "
            "bump REVISION in engine/text/words.py",
            file=sys.stderr,
        )
        return 1
    print(f"wrote {len(CASES)} text views to {out} (TEXT_VERSION {TEXT_VERSION})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
