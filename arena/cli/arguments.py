"""Argument types for the command line: a number out of range is refused in one line.

Kept apart from :mod:`arena.cli.main` so the subcommands' modules use them without importing
the dispatcher that imports them.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence
from typing import Any

from cardarena.messages import MAX_TIME_MS, TimeControl

from arena.errors import UsageError
from arena.layout import ENV_VAR, default_home
from engine import OptionValue

#: The one default time control, ``TimeControl``'s: every command's ``--move-ms``/``--bank-ms``.
DEFAULT_TIME = TimeControl()
#: The longest any command waits for something (a bot to connect, an answer, a server), in s.
MAX_WAIT_S = 86_400.0


def number(
    kind: Callable[[str], float], minimum: float, what: str, maximum: float = math.inf
) -> Callable[[str], Any]:
    """An argparse type: a finite number of ``kind`` from ``minimum`` to ``maximum``."""

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}; got {text!r}") from None
        if not math.isfinite(value) or not minimum <= value <= maximum:
            raise argparse.ArgumentTypeError(f"expected {what}; got {text!r}")
        return value

    return parse


#: ``--matches``: whole numbers from 1.
POSITIVE = number(int, 1, "a whole number of at least 1")
#: Whole numbers from 0.
NON_NEGATIVE = number(int, 0, "a whole number of at least 0")
#: ``--give-up``: seconds from 0.
SECONDS = number(float, 0.0, "a number of seconds of at least 0")
#: ``--move-ms``: what a time control can carry.
MOVE_MS = number(int, 1, f"a whole number of milliseconds from 1 to {MAX_TIME_MS}", MAX_TIME_MS)
#: ``--bank-ms``.
BANK_MS = number(int, 0, f"a whole number of milliseconds from 0 to {MAX_TIME_MS}", MAX_TIME_MS)
#: ``arena match --games``: a series that ends (each match leaves a record).
MAX_SERIES = 10_000
GAMES = number(int, 1, f"a whole number from 1 to {MAX_SERIES:,}", MAX_SERIES)
#: ``--timeout``, ``--connect-timeout``: a wait that ends.
TIMEOUT = number(float, 0.001, f"a number of seconds from 0.001 to {MAX_WAIT_S:g}", MAX_WAIT_S)


def parse_options(pairs: Sequence[str]) -> dict[str, OptionValue]:
    """``K=V`` pairs from ``--option``; values stay text for the game to validate."""
    options: dict[str, OptionValue] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--option expects KEY=VALUE; got {pair!r}")
        options[key.strip()] = value.strip()
    return options


def add_home_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--home DIR`` to a subcommand that touches the arena's state."""
    parser.add_argument(
        "--home",
        default=None,
        metavar="DIR",
        help=f"the arena's state directory (default: ${ENV_VAR}, else {default_home()})",
    )


def add_sandbox_argument(parser: argparse.ArgumentParser, what: str = "bot commands") -> None:
    """Add ``--no-sandbox``: the one escape from the bot sandbox (arena/bots/sandbox.py) of every
    command that starts bots."""
    parser.add_argument(
        "--no-sandbox",
        action="store_true",
        help=f"run {what} unsandboxed, with the arena's own rights: only for code you trust "
        "(default: boxed with bubblewrap: no network, read-only files, resource limits; "
        "docs/sandbox.md)",
    )


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """Every option's help ends with its default, unless the help already speaks of it; as
    argparse's ``ArgumentDefaultsHelpFormatter``, but silent about ``None``, ``False`` and empty
    lists (nothing to state)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if (
            "default" in text
            or default is None
            or default is False
            or default is argparse.SUPPRESS
            or default == []
            or not (action.option_strings or action.nargs in (argparse.OPTIONAL, "*"))
        ):
            return action.help
        return f"{text} (default %(default)s)".lstrip()


class ArenaParser(argparse.ArgumentParser):
    """The ``arena`` command's parsers: help with defaults (sub-parsers are made of the same
    class by ``add_subparsers``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", DefaultsHelpFormatter)
        super().__init__(*args, **kwargs)
