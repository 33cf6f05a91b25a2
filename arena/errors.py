"""Errors the arena raises for a user's mistake; the CLI prints them as one line."""

from __future__ import annotations

import errno

from engine import EngineError


class ArenaError(Exception):
    """Base of the arena's own errors: a bad config, a missing file, an unreachable server."""


class UsageError(ArenaError):
    """A command-line value is malformed."""


class HostTrouble(ArenaError):
    """The arena's own resources failed (descriptors, disk, memory) while setting a match up:
    the match is not played and nobody is charged; it is played again later."""


#: What a system call says when the arena, not a bot, has run out of something.
HOST_ERRNOS = frozenset(
    {errno.EMFILE, errno.ENFILE, errno.ENOSPC, errno.ENOMEM, errno.EDQUOT, errno.EAGAIN}
)


def is_host_trouble(err: BaseException) -> bool:
    """Whether ``err`` (or what caused it) is the arena running out of a resource
    (:data:`HOST_ERRNOS`), never a bot's doing."""
    seen: set[int] = set()
    at: BaseException | None = err
    while at is not None and id(at) not in seen:
        seen.add(id(at))
        if isinstance(at, HostTrouble):
            return True
        if isinstance(at, OSError) and at.errno in HOST_ERRNOS:
            return True
        at = at.__cause__ or at.__context__
    return False


def one_error(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """What a user should see of an exception group escaping trio: Ctrl-C as KeyboardInterrupt,
    a single error of the arena or the engine as itself (the CLI prints it as one line; the same
    one raised by several tasks counts once), else the group (a bug: its traceback)."""
    if group.subgroup(KeyboardInterrupt) is not None:
        return KeyboardInterrupt()
    leaves: list[BaseException] = []
    pending: list[BaseException] = [group]
    while pending:
        exc = pending.pop()
        if isinstance(exc, BaseExceptionGroup):
            pending.extend(exc.exceptions)
        else:
            leaves.append(exc)
    # Several tasks may stop for one cause (each of a unit's matches finding the database
    # locked, say): the same line once.
    if all(isinstance(e, ArenaError | EngineError) for e in leaves) and (
        len({(type(e), str(e)) for e in leaves}) == 1
    ):
        return leaves[0]
    return group
