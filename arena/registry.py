"""The bot registry: submitted bots, by name and version, in ``bots.sqlite`` in the arena's home.

``arena submit NAME --version V (--command CMD | --image IMAGE)`` adds a row and prints the bot's
token once; only its SHA-256 is stored, so a copied database does not let anyone act as the bot.
Tournaments name registered bots ``NAME`` (the most recently submitted version) or
``NAME@VERSION``; ``arena bots`` lists them. A version, once submitted, is never replaced: results
stored under ``NAME@VERSION`` always mean the same code. A command is checked as a tournament
config's is (:mod:`arena.bots.command`): one whose program is not found is refused at once.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from arena.bots.command import BotKind, BotProgram, check_command
from arena.errors import ArenaError
from arena.layout import arena_home, ensure_home, registry_path
from arena.sqlite import (
    Row,
    SQLiteStore,
    lock_wait_seconds,
    locked_line,
    now,
    patiently,
    serialized,
)

#: Bot names: as tournament bot names.
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}")
#: Versions: letters, digits and ``_ . + -``.
VERSION_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,31}")
#: Names the reference bots use in tournaments; a submission may not shadow them.
RESERVED = ("random", "rules", "node")

# Schema 1. Released migrations are never edited: a change is a new entry in MIGRATIONS.
_V1 = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS bots (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,  -- submission order: NAME means the latest
    name       TEXT NOT NULL,
    version    TEXT NOT NULL,
    kind       TEXT NOT NULL CHECK (kind IN ('command', 'image')),
    command    TEXT,              -- shell command (kind command)
    image      TEXT,              -- Docker image (kind image)
    workdir    TEXT,              -- directory the command runs in (kind command)
    token_hash TEXT NOT NULL UNIQUE,  -- SHA-256 of the token, hex
    created    TEXT NOT NULL,     -- UTC, ISO 8601
    UNIQUE (name, version)
);
"""

#: The schema, as the migrations that build it (:class:`arena.sqlite.SQLiteStore`).
MIGRATIONS: tuple[str, ...] = (_V1,)
#: Layout version of the database: how many migrations this code knows.
SCHEMA_VERSION = len(MIGRATIONS)


class RegistryError(ArenaError):
    """A bot cannot be registered or found; the message says why."""


class RegistryLocked(RegistryError):
    """Another process held the registry's write lock past the busy timeout."""


def hash_token(token: str) -> str:
    """The stored form of a token."""
    return hashlib.sha256(token.encode()).hexdigest()


def new_bot_token() -> str:
    """A fresh bot token (192 bits, URL-safe)."""
    return "cab_" + secrets.token_urlsafe(24)


@dataclass(frozen=True, slots=True)
class RegisteredBot:
    """One submitted version of a bot."""

    #: Bot name.
    name: str
    #: Version label.
    version: str
    #: How it starts: a command and the directory it runs in, or an image.
    program: BotProgram
    #: When it was submitted (UTC, ISO 8601).
    created: str

    @property
    def ref(self) -> str:
        """``NAME@VERSION``."""
        return f"{self.name}@{self.version}"

    @property
    def kind(self) -> BotKind:
        """``command`` or ``image``."""
        return self.program.kind

    def to_dict(self) -> dict[str, str]:
        """JSON form (``arena bots --json``); the token is never part of it."""
        return {
            "name": self.name,
            "version": self.version,
            "ref": self.ref,
            "kind": self.kind,
            "command": self.program.command,
            "image": self.program.image,
            "workdir": self.program.workdir,
            "created": self.created,
        }


def split_ref(ref: str) -> tuple[str, str | None]:
    """``NAME`` or ``NAME@VERSION`` → ``(name, version or None)``; raises for a malformed one."""
    name, sep, version = ref.partition("@")
    if not NAME_RE.fullmatch(name) or (sep and not VERSION_RE.fullmatch(version)):
        raise RegistryError(
            f"{ref!r} is not a bot reference (NAME or NAME@VERSION; names are 1-32 letters, "
            "digits, '_', '.' or '-')"
        )
    return name, (version if sep else None)


def _row(row: Row) -> RegisteredBot:
    return RegisteredBot(
        name=row["name"],
        version=row["version"],
        program=BotProgram(
            command=row["command"] or "", image=row["image"] or "", workdir=row["workdir"] or ""
        ),
        created=row["created"],
    )


def check_submission(
    name: str,
    version: str,
    *,
    command: str | None = None,
    image: str | None = None,
    workdir: Path | None = None,
) -> None:
    """Raise :class:`RegistryError` when :meth:`Registry.submit` would refuse these (short of a
    version already registered): the CLI checks before it creates the home or the registry."""
    if not NAME_RE.fullmatch(name):
        raise RegistryError(
            f"bot name {name!r}: use 1-32 letters, digits, '_', '.' or '-', starting with a "
            "letter or digit"
        )
    if name in RESERVED:
        raise RegistryError(f"bot name {name!r} is a reference bot's; choose another")
    if not VERSION_RE.fullmatch(version):
        raise RegistryError(f"version {version!r}: use 1-32 letters, digits, '_', '.', '+' or '-'")
    if (command is None) == (image is None):
        raise RegistryError("give exactly one of --command and --image")
    if command is not None and not command.strip():
        raise RegistryError("--command is empty")
    if image is not None and (not image.strip() or any(c.isspace() for c in image)):
        raise RegistryError(f"--image {image!r} is not an image name")
    if command is not None:
        # A command that cannot start would forfeit every match of every tournament naming it.
        try:
            check_command(command, workdir or Path.cwd())
        except ArenaError as err:
            raise RegistryError(f"--command {command.strip()!r}: {err}") from None


class Registry(SQLiteStore):
    """The registry database of one arena home."""

    ERROR = RegistryError
    LOCKED = RegistryLocked
    FILE = "bot registry"
    SCHEMA = "registry"

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        ensure_home(path.parent)
        if not path.exists():
            # Owner only from its first byte: it holds the tokens' hashes.
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            except FileExistsError:
                pass
            except OSError as err:
                raise RegistryError(
                    f"{path}: cannot create the registry ({err.strerror})"
                ) from None
        # Not tied to a thread: ``arena serve --registered-only`` checks tokens from the server's
        # loop thread. A registry from before the schema's version was always stored is at 1.
        self._open(MIGRATIONS, unversioned=1)

    def submit(
        self,
        name: str,
        version: str,
        *,
        command: str | None = None,
        image: str | None = None,
        workdir: Path | None = None,
    ) -> tuple[RegisteredBot, str]:
        """Register a version of a bot (exactly one of ``command`` and ``image``); the new entry
        and its token, which is shown only now."""
        check_submission(name, version, command=command, image=image, workdir=workdir)
        kind: BotKind = "command" if command is not None else "image"
        token = new_bot_token()
        where = str((workdir or Path.cwd()).resolve()) if kind == "command" else None
        row = (
            name,
            version,
            kind,
            command.strip() if command else None,
            image.strip() if image else None,
            where,
            hash_token(token),
            now(),
        )
        wait_s = lock_wait_seconds(RegistryError)
        patiently(
            lambda: self._insert(row),
            wait_s,
            RegistryLocked,
            lambda: RegistryError(locked_line(self.path, wait_s)),
        )
        return self.resolve(f"{name}@{version}"), token

    @serialized
    def _insert(self, row: tuple[str | None, ...]) -> None:
        with self._transaction() as db:
            if db.execute(
                "SELECT 1 FROM bots WHERE name=? AND version=?", (row[0], row[1])
            ).fetchone():
                raise RegistryError(
                    f"{row[0]}@{row[1]} is already registered; submit a new version"
                )
            db.execute(
                "INSERT INTO bots (name, version, kind, command, image, workdir, token_hash, "
                "created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                row,
            )

    @serialized
    def bots(self) -> list[RegisteredBot]:
        """Every registered version, by name then submission order."""
        with self._reading("the bots table"):
            rows = self._db.execute("SELECT * FROM bots ORDER BY name, seq").fetchall()
            return [_row(r) for r in rows]

    @serialized
    def resolve(self, ref: str) -> RegisteredBot:
        """The bot ``NAME@VERSION``, or the latest version of ``NAME``."""
        name, version = split_ref(ref)
        with self._reading("the bots table"):
            return self._resolve(name, version)

    def _resolve(self, name: str, version: str | None) -> RegisteredBot:
        if version is None:
            row = self._db.execute(
                "SELECT * FROM bots WHERE name = ? ORDER BY seq DESC LIMIT 1", (name,)
            ).fetchone()
        else:
            row = self._db.execute(
                "SELECT * FROM bots WHERE name = ? AND version = ?", (name, version)
            ).fetchone()
        if row is not None:
            return _row(row)
        versions = [
            r[0]
            for r in self._db.execute(
                "SELECT version FROM bots WHERE name = ? ORDER BY seq", (name,)
            ).fetchall()
        ]
        if versions:
            raise RegistryError(
                f"{name} has no version {version!r} (registered: {', '.join(versions)})"
            )
        raise RegistryError(f"no bot named {name!r} is registered in {self.path.parent}")

    @serialized
    def by_token(self, token: str) -> RegisteredBot | None:
        """The bot whose token this is, if any."""
        with self._reading("the bots table"):
            row = self._db.execute(
                "SELECT * FROM bots WHERE token_hash = ?", (hash_token(token),)
            ).fetchone()
            return _row(row) if row is not None else None

    def owner(self, token: str) -> tuple[str, str] | None:
        """``(name, version)`` of the bot whose token this is, if any."""
        bot = self.by_token(token)
        return None if bot is None else (bot.name, bot.version)


def open_registry(home: str | Path | None = None) -> Registry:
    """The registry of ``home`` (``--home``), else of ``$ARENA_HOME`` or the default home."""
    return Registry(registry_path(arena_home(home)))


@contextmanager
def registry(home: str | Path | None = None) -> Iterator[Registry]:
    """:func:`open_registry` as a context manager."""
    reg = open_registry(home)
    try:
        yield reg
    finally:
        reg.close()


def resolve_bot(ref: str, home: str | Path | None = None) -> RegisteredBot:
    """Look up ``NAME`` or ``NAME@VERSION`` without keeping the registry open.

    A home with no registry yet is an error naming the home, not a new empty file.
    """
    path = registry_path(arena_home(home))
    if not path.exists():
        split_ref(ref)
        raise RegistryError(f"no bot named {ref!r}: no bots are registered in {path.parent}")
    with registry(home) as reg:
        return reg.resolve(ref)
