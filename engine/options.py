"""Game options: declared by each game, validated once per match configuration."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from engine.errors import ConfigError

#: The value types an option may take.
OptionValue = int | bool | str
OptionKind = Literal["int", "bool", "choice"]


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """One option a game accepts, with its default and the values allowed."""

    #: The option's key, as written in configs and on the command line (``points_to_win``).
    name: str
    #: ``int`` (bounded by ``minimum``/``maximum``), ``bool``, or ``choice`` (one of ``choices``).
    kind: OptionKind
    #: The value used when the option is not given.
    default: OptionValue
    #: One line for ``--help`` and the docs.
    doc: str
    #: Smallest allowed value of an ``int`` option.
    minimum: int | None = None
    #: Largest allowed value of an ``int`` option.
    maximum: int | None = None
    #: The allowed values of a ``choice`` option.
    choices: tuple[str, ...] = field(default=())

    def parse(self, raw: OptionValue) -> OptionValue:
        """Convert ``raw`` (a config value or command-line text) and check it is allowed."""
        if self.kind == "bool":
            return self._parse_bool(raw)
        if self.kind == "int":
            return self._parse_int(raw)
        text = str(raw)
        if text not in self.choices:
            allowed = ", ".join(self.choices)
            raise ConfigError(f"option {self.name!r} must be one of {allowed}; got {raw!r}")
        return text

    def _parse_bool(self, raw: OptionValue) -> bool:
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in ("1", "true", "yes", "on"):
            return True
        if text in ("0", "false", "no", "off"):
            return False
        raise ConfigError(f"option {self.name!r} must be true or false; got {raw!r}")

    def _parse_int(self, raw: OptionValue) -> int:
        if isinstance(raw, bool):
            raise ConfigError(f"option {self.name!r} must be an integer; got {raw!r}")
        try:
            value = int(raw)
        except (TypeError, ValueError):
            raise ConfigError(f"option {self.name!r} must be an integer; got {raw!r}") from None
        lo, hi = self.minimum, self.maximum
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise ConfigError(f"option {self.name!r} must be between {lo} and {hi}; got {value}")
        return value


def resolve_options(
    game_id: str, specs: tuple[OptionSpec, ...], given: Mapping[str, OptionValue]
) -> dict[str, OptionValue]:
    """All options of a game, defaults filled in; unknown keys and bad values are errors."""
    by_name = {s.name: s for s in specs}
    for key in given:
        if key not in by_name:
            known = ", ".join(sorted(by_name)) or "none"
            raise ConfigError(f"game {game_id!r} has no option {key!r} (options: {known})")
    return {s.name: s.parse(given[s.name]) if s.name in given else s.default for s in specs}


def option_to_text(value: OptionValue) -> str:
    """An option value as protocol text (MatchStart.options, a bot's ``start_match``):
    ``true``/``false`` for booleans."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
