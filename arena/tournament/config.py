"""The tournament config: a TOML file (plus command-line overrides), checked key by key.

Every mistake is a :class:`TournamentConfigError` whose one-line message names the file, the key
and the problem: ``whist.toml: bots[2].command: program 'nosuch' not found``.
"""

from __future__ import annotations

import re
import shlex
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from arena.bots.command import PROTOCOLS, BotProgram, BotProtocol, bot_path, check_command
from arena.checks import Checker
from arena.checks import read_toml as read_table
from arena.errors import ArenaError
from arena.registry import RegistryError, resolve_bot
from arena.rules import TIME_KEYS, MatchRules, check_rules
from arena.tournament.schedule import (
    FORMATS,
    MAX_MATCHES,
    Format,
    places,
    rotations_per_table,
    table_count,
)

#: When a tournament starts bot processes (``restart``; docs/tournaments.md).
Restart = Literal["on_failure", "per_match"]
RESTARTS: tuple[Restart, ...] = ("on_failure", "per_match")

#: Every top-level key a config may have.
KNOWN_KEYS = (
    "name",
    "game",
    "players",
    "options",
    "bots",
    "format",
    "matches_per_pairing",
    "duplicate",
    "seed",
    "concurrency",
    "restart",
    "time_control",
    "fault_policy",
    "output",
)
_BOT_KEYS = ("name", "command", "files", "protocol")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}")
#: The tournament's name: like a bot's, up to 64 characters. The default output directory is
#: ``out/tournaments/<name>``, so no separator, and never ``.`` or ``..`` (it starts with a
#: letter or digit).
_TITLE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
#: The most matches played at once. Each match runs one bot process per seat (up to ten in
#: spoil five) plus the referee's work, so 64 matches is already hundreds of processes: far past
#: what a small machine runs well (the default is 2, for the 2-core development machine), yet
#: room for a big one. A fixed cap, not one relative to the CPU count, so a config means the same
#: on every machine (docs/tournaments.md, "Limits").
MAX_CONCURRENCY = 64
#: The repository root (where reference_bots/js lives in a source checkout).
_ROOT = Path(__file__).resolve().parents[2]
NODE_BOT = _ROOT / "reference_bots" / "js" / "bot.js"


class TournamentConfigError(ArenaError):
    """The tournament config is wrong; the message names the key."""


def node_bot_status() -> tuple[str | None, str]:
    """The Node reference bot's command, or ``None`` and why it cannot run here."""
    js = NODE_BOT.parent
    if not NODE_BOT.exists():
        return None, f"{NODE_BOT} not found"
    if not (js / "node_modules").is_dir():
        return None, f"its packages are not installed (run `npm ci` in {js})"
    if shutil.which("node", path=bot_path()) is None:
        return None, "`node` is not on PATH"
    return f"node {shlex.quote(str(NODE_BOT))}", ""


def builtin_bots() -> dict[str, str | None]:
    """Bots a config may name without a command: the reference bots (``None``: not available
    on this machine)."""
    return {
        "random": "arena bot random",
        "rules": "arena bot rules",
        "search": "arena bot search",
        "node": node_bot_status()[0],
    }


@dataclass(frozen=True, slots=True)
class BotSpec:
    """A participant: its name in results and how to start one of its processes."""

    #: Unique name, shown in tables and stored with every match.
    name: str
    #: A shell command, or a registered image bot's image.
    program: BotProgram
    #: The files its command needs, relative to the current directory (taken to the workers of
    #: a cluster); ``None``: the paths the command names.
    files: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class TournamentConfig:
    """A checked tournament config."""

    #: A title for reports (defaults to the config file's stem or the game id).
    name: str
    #: The game, its players and options, the time control and the fault policy.
    rules: MatchRules
    #: The participants, in config order.
    bots: tuple[BotSpec, ...]
    #: ``round_robin`` or ``gauntlet`` (the first bot against the others).
    format: Format
    #: Matches every table plays: deals × rotations.
    matches_per_pairing: int
    #: Replay every deal in every seat rotation, so card luck cancels.
    duplicate: bool
    #: Tournament seed: every match and bot seed derives from it. ``None`` until the store
    #: settles it: the stored tournament's, or a fresh secret one (bots must not know it).
    seed: int | None
    #: Matches played at once.
    concurrency: int
    #: Directory for ``results.sqlite`` and the match records.
    output: Path
    #: When bot processes start: ``on_failure`` (one process plays match after match, and is
    #: replaced after a crash or forfeit) or ``per_match`` (a fresh process every match).
    restart: Restart = "on_failure"

    def identity(self) -> dict[str, Any]:
        """Everything that fixes the schedule and the results; a resume must match it exactly.

        Concurrency, the output directory and the title are left out: they change neither.
        """
        return {
            **self.rules.identity(),
            "bots": [
                {
                    "name": b.name,
                    "command": b.program.command,
                    **({"image": b.program.image} if b.program.image else {}),
                    # Only when not the default, so runs made before it existed resume.
                    **({"protocol": b.program.protocol} if b.program.protocol != "grpc" else {}),
                }
                for b in self.bots
            ],
            "format": self.format,
            "matches_per_pairing": self.matches_per_pairing,
            "duplicate": self.duplicate,
            "seed": self.seed,
        }


def read_toml(path: Path) -> dict[str, Any]:
    """The TOML file's table; one-line errors for a missing or malformed file."""
    return read_table(path, TournamentConfigError)


def load_config(path: Path | None, overrides: Mapping[str, Any] | None = None) -> TournamentConfig:
    """Read ``path`` (or nothing, for a config made of flags only), apply ``overrides`` (top-level
    keys; ``options`` and ``time_control`` merge into the file's tables) and check everything."""
    raw: dict[str, Any] = read_toml(path) if path is not None else {}
    for key, value in (overrides or {}).items():
        if key in ("options", "time_control"):
            raw[key] = {**_table(raw.get(key), path, key), **value}
        else:
            raw[key] = value
    where = str(path) if path is not None else "tournament"
    default_name = path.stem if path is not None else str(raw.get("game", "tournament"))
    return check_config(raw, where, default_name)


def _table(value: Any, path: Path | None, key: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise TournamentConfigError(f"{path or 'tournament'}: {key}: must be a table")
    return value


def check_config(raw: Mapping[str, Any], where: str, default_name: str) -> TournamentConfig:
    """Check a raw config table; ``where`` prefixes every error message."""
    c = Checker(where, raw, TournamentConfigError)
    c.known_keys(KNOWN_KEYS)
    rules = check_rules(c, _time_table(c))
    game = rules.game
    name = check_name(c, default_name)
    bots = _check_bots(c)
    fmt = Format(c.choice("format", Format.ROUND_ROBIN, FORMATS))
    n_places = len(places(game, rules.config))
    period = rotations_per_table(len(bots), n_places)
    matches = c.int_("matches_per_pairing", period, 1)
    _check_size(c, len(bots), n_places, fmt, period, matches)
    if matches % period:
        raise c.fail(
            "matches_per_pairing",
            f"must be a multiple of {period} (the seat rotations of a {game.id} table with "
            f"these bots, so every bot sits in every position equally often); got {matches}",
        )
    output = Path(c.str_("output", str(Path("out") / "tournaments" / name)))
    config = TournamentConfig(
        name=name,
        rules=rules,
        bots=bots,
        format=fmt,
        matches_per_pairing=matches,
        duplicate=c.bool_("duplicate", True),
        seed=c.int_("seed", None, 0) if "seed" in c.raw else None,
        concurrency=check_concurrency(c, "concurrency"),
        output=output,
        restart=cast(Restart, c.choice("restart", "on_failure", RESTARTS)),
    )
    return config


def _time_table(c: Checker) -> Checker:
    """A checker over ``[time_control]`` whose keys read ``time_control.KEY``."""
    table = c.raw.get("time_control", {})
    if not isinstance(table, dict):
        raise c.fail("time_control", "must be a table with move_ms and bank_ms")
    for key in table:
        if key not in TIME_KEYS:
            raise c.fail(f"time_control.{key}", f"unknown key (known: {', '.join(TIME_KEYS)})")
    return c.within({f"time_control.{k}": v for k, v in table.items()})


def check_name(c: Checker, default_name: str) -> str:
    """The name: checked like a bot's, since the default output directory is made of it."""
    name = c.str_("name", default_name)
    if not _TITLE.fullmatch(name):
        given = "name" in c.raw
        raise c.fail(
            "name",
            "must be 1-64 letters, digits, '_', '.' or '-' starting with a letter or digit; "
            f"got {name!r}" + ("" if given else " (the file's stem, the default: set a name)"),
        )
    return name


def _check_size(
    c: Checker, n_bots: int, n_places: int, fmt: Format, period: int, matches: int
) -> None:
    """Refuse a schedule of more than :data:`MAX_MATCHES` matches, counted, not built: the bots
    when even one rotation cycle per table is too much, else ``matches_per_pairing``."""
    n_tables = table_count(n_bots, n_places, fmt)
    size = n_tables * matches
    if size <= MAX_MATCHES:
        return
    total = f"the schedule would have {size:,} matches"
    if n_tables * period > MAX_MATCHES:
        raise c.fail(
            "bots",
            f"{n_bots} bots make {n_tables:,} tables of {n_places} places ({fmt}); {total} "
            f"(at most {MAX_MATCHES:,})",
        )
    tables = "" if n_tables == 1 else f": {n_tables:,} tables × {matches:,} each"
    raise c.fail("matches_per_pairing", f"{total} (at most {MAX_MATCHES:,}){tables}")


def check_concurrency(c: Checker, key: str) -> int:
    """Matches at once (``key``): from 1 to :data:`MAX_CONCURRENCY`."""
    concurrency = c.int_(key, 2, 1)
    if concurrency > MAX_CONCURRENCY:
        raise c.fail(
            key,
            f"must be at most {MAX_CONCURRENCY} (every match at once runs a bot process per "
            f"seat); got {concurrency}",
        )
    return concurrency


def _check_bots(c: Checker) -> tuple[BotSpec, ...]:
    raw = c.raw.get("bots")
    if raw is None:
        raise c.fail("bots", "missing (required): a list of [[bots]] with name and command")
    if not isinstance(raw, list) or not all(isinstance(b, dict) for b in raw):
        raise c.fail("bots", "must be a list of tables ([[bots]] with name and command)")
    builtin = builtin_bots()
    bots: list[BotSpec] = []
    seen: set[str] = set()
    for i, entry in enumerate(raw):
        key = f"bots[{i}]"
        for k in entry:
            if k not in _BOT_KEYS:
                raise c.fail(f"{key}.{k}", f"unknown key (known: {', '.join(_BOT_KEYS)})")
        name = entry.get("name")
        command = entry.get("command")
        if isinstance(name, str) and command is None and (name not in builtin or "@" in name):
            # NAME or NAME@VERSION of a bot submitted with `arena submit` (the arena's home).
            bot = _registered(c, key, name, builtin)
            if bot.name in seen:
                raise c.fail(f"{key}.name", f"duplicate bot {bot.name!r}")
            seen.add(bot.name)
            bots.append(bot)
            continue
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise c.fail(
                f"{key}.name",
                "must be 1-32 letters, digits, '_', '.' or '-' starting with a letter or "
                f"digit; got {name!r}",
            )
        if name in seen:
            raise c.fail(f"{key}.name", f"duplicate bot name {name!r}")
        seen.add(name)
        if command is None:
            command = builtin[name]
            if command is None:
                raise c.fail(key, f"the built-in {name} bot cannot run: {node_bot_status()[1]}")
        if not isinstance(command, str) or not command.strip():
            raise c.fail(f"{key}.command", f"must be a non-empty string; got {command!r}")
        _check_program(c, f"{key}.command", command)
        program = BotProgram(command.strip(), protocol=_protocol(c, key, entry))
        bots.append(BotSpec(name, program, _files(c, f"{key}.files", entry)))
    if len(bots) < 2:
        raise c.fail("bots", f"a tournament needs at least 2 bots; got {len(bots)}")
    return tuple(bots)


def _protocol(c: Checker, key: str, entry: Mapping[str, Any]) -> BotProtocol:
    """A bot's ``protocol``: ``grpc`` (the default) or ``stdio`` (JSON lines on its stdin and
    stdout: docs/protocol.md)."""
    protocol = entry.get("protocol", "grpc")
    for known in PROTOCOLS:
        if protocol == known:
            return known
    raise c.fail(f"{key}.protocol", f"must be one of {', '.join(PROTOCOLS)}; got {protocol!r}")


def _files(c: Checker, key: str, entry: Mapping[str, Any]) -> tuple[str, ...] | None:
    """A bot's ``files``: paths inside the current directory that exist."""
    files = entry.get("files")
    if files is None:
        return None
    if not isinstance(files, list) or not all(isinstance(f, str) and f for f in files):
        raise c.fail(key, f"must be a list of paths; got {files!r}")
    for f in files:
        parts = Path(f).parts
        if Path(f).is_absolute() or ".." in parts:
            raise c.fail(key, f"{f!r} must be a path inside the current directory")
        if not Path(f).exists():
            raise c.fail(key, f"{f!r} not found")
    return tuple(files)


def _registered(c: Checker, key: str, ref: str, builtin: Mapping[str, str | None]) -> BotSpec:
    """The registered bot ``NAME`` (its latest version) or ``NAME@VERSION``, named
    ``NAME@VERSION`` in results."""
    try:
        bot = resolve_bot(ref)
    except RegistryError as err:
        raise c.fail(
            key,
            f"unknown bot {ref!r}: give a command (built-in bots: {', '.join(builtin)}) or "
            f"submit it with `arena submit` ({err})",
        ) from None
    if bot.kind == "command":
        # Checked when submitted, but its program (or directory) may have gone since.
        try:
            check_command(bot.program.command, bot.program.directory)
        except ArenaError as err:
            raise c.fail(key, f"registered bot {bot.ref} cannot run: {err}") from None
    return BotSpec(bot.ref, bot.program)


def _check_program(c: Checker, key: str, command: str) -> None:
    try:
        check_command(command)
    except ArenaError as err:
        raise c.fail(key, str(err)) from None
