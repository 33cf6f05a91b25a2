"""What a competition's pages hand an author besides its data: its game's rules (the law, as
``make rules`` copies it into docs/rules/law/, and the referee's decisions, docs/rules/), the
protocol's ``.proto`` and a starter bot for its game.

The texts are read from the checkout the host runs from, else from where a wheel installs them
(``setup.py``'s ``data_files``: ``PREFIX/share/card-arena/``); a host without them says so.
"""

from __future__ import annotations

import io
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

#: The repository's root, when the arena runs from a checkout (an editable install).
CHECKOUT = Path(__file__).resolve().parents[2]
#: Where a wheel's ``data_files`` put the texts.
SHARE = Path(sys.prefix) / "share" / "card-arena"
#: The law page of each game id: several games share one (forty-five is a form of spoil five).
LAW_PAGES = {
    "whist": "whist.md",
    "tennis_whist": "tennis-whist.md",
    "spoil_five": "spoil-five.md",
    "forty_five": "spoil-five.md",
    "tennis": "tennis.md",
}
PROTO_NAME = "arena.proto"


@dataclass(frozen=True, slots=True)
class Text:
    """A text to show: its name (a file name) and its contents."""

    name: str
    text: str


def _first(*candidates: Path) -> Path | None:
    return next((p for p in candidates if p.is_file()), None)


def _read(path: Path | None) -> Text | None:
    if path is None:
        return None
    text = path.read_text(encoding="utf-8")
    # The copy's banner (scripts/sync_rules.py) is for the repository, not for a reader.
    if text.startswith("<!-- COPIED"):
        text = text.partition("\n")[2]
    return Text(path.name, text)


def rules_texts(game_id: str) -> list[Text]:
    """The game's law and its referee's decisions, those found (none on a bare install)."""
    law = LAW_PAGES.get(game_id, f"{game_id}.md")
    decisions = f"{game_id}.md"
    found = [
        _read(_first(CHECKOUT / "docs" / "rules" / "law" / law, SHARE / "rules" / "law" / law)),
        _read(_first(CHECKOUT / "docs" / "rules" / decisions, SHARE / "rules" / decisions)),
    ]
    return [t for t in found if t is not None]


def proto_text() -> Text | None:
    """The protocol's ``.proto``, if this installation has it."""
    return _read(
        _first(CHECKOUT / "proto" / "cardarena" / "v1" / PROTO_NAME, SHARE / "proto" / PROTO_NAME)
    )


STARTER_BOT = '''"""A starter bot for {competition} ({game}): it plays the first legal action.

Make it better in choose(); run it against others with `arena match {game} --bot "python3 bot.py"
...`, and submit it with `arena remote submit BOT .` (ARENA_SERVER={origin}).
"""

from cardarena import Bot, run_bot


class Starter(Bot):
    name = "starter"

    def choose(self, game, observation, legal):
        # observation: what this seat sees (a dict, the game's rules say what is in it);
        # legal: the actions allowed now (cardarena.Action: kind, arg, text). Answer the index
        # of one of them.
        return 0


run_bot(Starter())  # the arena starts it with ARENA_ADDRESS and ARENA_TOKEN set
'''
STARTER_MANIFEST = """# What the arena runs (the archive's root is the working directory).
command = "python3 bot.py"
runtime = "python3"
"""
STARTER_README = """# A starter bot for {competition}

The game is {game}; its rules are at {origin}/rules and the protocol at {origin}/protocol.
The bot needs the Python SDK (cardarena, in the arena's sdk/python) and nothing else.

    export ARENA_SERVER={origin} ARENA_API_TOKEN=...   # your token, from the host
    arena remote submit my-bot .
"""


def starter_archive(competition: str, game_id: str, origin: str) -> bytes:
    """A ``.tar.gz`` of a minimal Python bot for ``game_id`` with its ``cardarena.toml``: it
    validates as it is (it always answers a legal action)."""
    values = {"competition": competition, "game": game_id, "origin": origin}
    files = {
        "cardarena.toml": STARTER_MANIFEST,
        "bot.py": STARTER_BOT.format(**values),
        "README.md": STARTER_README.format(**values),
    }
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()
