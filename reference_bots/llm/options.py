"""``arena bot llm``'s flags, and the settings they make. Imports nothing heavy: ``arena``'s
argument parser adds these flags, and a tournament reads them back from a bot's command."""

from __future__ import annotations

import argparse
import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Settings:
    """How the harness asks (``arena bot llm``'s flags)."""

    endpoint: str
    model: str
    #: The environment variable holding the key; unset or empty: no ``Authorization`` header.
    key_env: str = "OPENAI_API_KEY"
    #: List the legal actions in the view (else only say how to name one).
    list_legal: bool = False
    #: Attempts after the first, for a refused answer or a failed request.
    retries: int = 2
    temperature: float | None = None
    max_tokens: int | None = None
    #: The longest one request may take, s (less when the decision's time is shorter).
    timeout_s: float = 60.0

    def key(self) -> str | None:
        """The key, from the environment only (``None`` when unset or empty)."""
        return os.environ.get(self.key_env) or None


def _number(kind: type[int] | type[float], least: float, what: str) -> Callable[[str], Any]:
    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}; got {text!r}") from None
        if not value >= least or value == float("inf"):
            raise argparse.ArgumentTypeError(f"expected {what}; got {text!r}")
        return value

    return parse


def add_llm_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``llm`` bot's flags on ``arena bot``'s parser."""
    group = parser.add_argument_group("llm (a language model through a chat-completions API)")
    group.add_argument("--endpoint", metavar="URL", help="llm: the API's base URL (…/v1)")
    group.add_argument("--model", metavar="NAME", help="llm: the model's name")
    group.add_argument(
        "--key-env",
        default="OPENAI_API_KEY",
        metavar="VAR",
        help="llm: the environment variable holding the API key (default OPENAI_API_KEY; "
        "unset: no key is sent)",
    )
    group.add_argument(
        "--list-legal", action="store_true", help="llm: list the legal actions in each view"
    )
    group.add_argument(
        "--retries",
        type=_number(int, 0, "a whole number of at least 0"),
        default=2,
        metavar="N",
        help="llm: ask again up to N times after a refused answer or a failed request (default 2)",
    )
    group.add_argument(
        "--temperature", type=_number(float, 0.0, "a number of at least 0"), metavar="T"
    )
    group.add_argument(
        "--max-tokens", type=_number(int, 1, "a whole number of at least 1"), metavar="M"
    )
    group.add_argument(
        "--timeout-s",
        type=_number(float, 0.001, "a number of seconds above 0"),
        default=60.0,
        metavar="S",
        help="llm: the longest one request may take (default 60; less when the move's time "
        "is shorter)",
    )
    group.add_argument(
        "--estimate",
        action="store_true",
        help="llm: print the tokens a match of --game costs and exit",
    )
    group.add_argument(
        "--show-prompt",
        action="store_true",
        help="llm: print the system prompt and the first view of a match of --game and exit",
    )
    group.add_argument("--game", metavar="G", help="llm: the game of --estimate/--show-prompt")
    group.add_argument(
        "--players", type=_number(int, 1, "a whole number of at least 1"), metavar="N"
    )
    group.add_argument(
        "--option", action="append", default=[], metavar="K=V", help="a game option (repeat)"
    )


def settings_from(args: argparse.Namespace, need_endpoint: bool = True) -> Settings:
    """The settings of parsed flags; ``ValueError`` in one line when one is missing."""
    if need_endpoint and not (args.endpoint and args.model):
        raise ValueError("arena bot llm needs --endpoint URL and --model NAME")
    return Settings(
        endpoint=args.endpoint or "",
        model=args.model or "",
        key_env=args.key_env,
        list_legal=args.list_legal,
        retries=args.retries,
        temperature=args.temperature,
        max_tokens=args.max_tokens,
        timeout_s=args.timeout_s,
    )


def command_settings(command: str) -> Settings | None:
    """The settings of a bot command that runs ``arena bot llm`` (after any ``VAR=value``
    words); ``None`` for any other command, or one whose flags do not parse."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    while words and "=" in words[0] and not words[0].startswith("-"):
        words = words[1:]
    if len(words) < 3 or os.path.basename(words[0]) != "arena" or words[1:3] != ["bot", "llm"]:
        return None
    parser = argparse.ArgumentParser(add_help=False, exit_on_error=False)
    add_llm_arguments(parser)
    try:
        args, _ = parser.parse_known_args(words[3:])
    except (argparse.ArgumentError, SystemExit):
        return None
    return settings_from(args, need_endpoint=False)
