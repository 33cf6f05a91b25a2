"""A config file's table, read and checked key by key: what every config of the arena (a
tournament's, a competition's) is read with, so their mistakes are worded alike.

Every mistake is the config's own error class (each config names its own), with a one-line
message naming the file, the key and the problem: ``whist.toml: seed: must be an integer; got
'x'``.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from arena.errors import ArenaError

#: How a config's error is made from its one-line message (its error class).
ErrorClass = Callable[[str], ArenaError]


#: The one line for a TOML text nested deeper than Python's recursion limit.
TOO_DEEP = "arrays or tables nested too deeply"


def read_toml(path: Path, error: ErrorClass) -> dict[str, Any]:
    """The TOML file's table; ``error`` in one line for a missing or malformed file."""
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise error(f"{path}: no such config file") from None
    except OSError as err:
        raise error(f"{path}: cannot read: {err.strerror or err}") from None
    except tomllib.TOMLDecodeError as err:
        raise error(f"{path}: invalid TOML: {err}") from None
    except UnicodeDecodeError as err:  # TOML is UTF-8; tomllib lets this through
        raise error(f"{path}: invalid TOML: not UTF-8 text (byte {err.start})") from None
    except RecursionError:  # tomllib parses nesting by recursion: 5,000 brackets overflow it
        raise error(f"{path}: invalid TOML: {TOO_DEEP}") from None


class Checker:
    """Reads typed values out of a raw table, naming the key in every error."""

    def __init__(self, where: str, raw: Mapping[str, Any], error: ErrorClass) -> None:
        #: What prefixes every message (the file).
        self.where = where
        self.raw = raw
        self.error = error

    def within(self, raw: Mapping[str, Any]) -> Checker:
        """A checker over another table of the same file (a section), with the same errors."""
        return Checker(self.where, raw, self.error)

    def fail(self, key: str, problem: str) -> ArenaError:
        return self.error(f"{self.where}: {key}: {problem}")

    def known_keys(self, known: tuple[str, ...]) -> None:
        """Refuse a top-level key not in ``known``."""
        for key in self.raw:
            if key not in known:
                raise self.fail(key, f"unknown key (known keys: {', '.join(known)})")

    def str_(self, key: str, default: str | None = None) -> str:
        value = self.raw.get(key, default)
        if value is None:
            raise self.fail(key, "missing (required)")
        if not isinstance(value, str) or not value.strip():
            raise self.fail(key, f"must be a non-empty string; got {value!r}")
        return value.strip()

    def int_(
        self,
        key: str,
        default: int | None,
        minimum: int,
        label: str | None = None,
        maximum: int | None = None,
    ) -> int:
        value = self.raw.get(key, default)
        name = label or key
        if value is None:
            raise self.fail(name, "missing (required)")
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(name, f"must be an integer; got {value!r}")
        if value < minimum:
            raise self.fail(name, f"must be at least {minimum}; got {value}")
        if maximum is not None and value > maximum:
            raise self.fail(name, f"must be at most {maximum}; got {value}")
        return value

    def bool_(self, key: str, default: bool) -> bool:
        value = self.raw.get(key, default)
        if not isinstance(value, bool):
            raise self.fail(key, f"must be true or false; got {value!r}")
        return value

    def choice(self, key: str, default: str, choices: tuple[str, ...]) -> str:
        value = self.raw.get(key, default)
        if value not in choices:
            raise self.fail(key, f"must be one of {', '.join(choices)}; got {value!r}")
        assert isinstance(value, str)
        return value
