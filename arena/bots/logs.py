"""A bot's output on its way to the seat's log file: capped, so a chatty bot cannot fill the
disk, and read back for the line that says why a bot died.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from pathlib import Path

import trio

#: Most bytes of a bot's output its log keeps, per seat per match: the first ``LOG_CAP -
#: LOG_TAIL`` (how it started) and the last ``LOG_TAIL`` (how it ended). A bot printing a line per
#: decision writes well under 1 MiB a match, so 4 MiB leaves room for verbose debugging, while a
#: tournament's thousands of seat logs stay within a few GiB even if every bot floods.
LOG_CAP = 4 * 1024 * 1024
#: Bytes of the end of a bot's output kept when it writes more than :data:`LOG_CAP`.
LOG_TAIL = 64 * 1024
#: Past the cap the arena reads a bot's output at most this fast (bytes a second): a bot that
#: writes faster waits on its writes instead of costing the arena a core to throw them away.
LOG_DRAIN_RATE = 256 * 1024
#: Seconds to let a bot's last output reach its log after the bot exits (children it left may
#: hold the pipe open for longer).
DRAIN_S = 0.5
_CHUNK = 64 * 1024
_NOTE_ROOM = 512


class CappedLog:
    """A log file that keeps at most ``cap`` bytes of what is written to it: the head, then a
    note of how much was dropped, then the last ``tail`` bytes (written at :meth:`close`; memory
    holds no more than ``tail``). Write errors (a full disk) lose the output, never raise.
    """

    def __init__(self, path: Path, cap: int = LOG_CAP, tail: int = LOG_TAIL) -> None:
        self._file = path.open("wb")
        self._cap = cap
        self._tail_max = min(tail, cap // 2)
        # Room kept for the note, so that the file never exceeds the cap.
        self._head_left = max(0, cap - self._tail_max - _NOTE_ROOM)
        self._tail = bytearray()
        #: Bytes written to it.
        self.total = 0
        #: Bytes of them not in the file.
        self.dropped = 0
        self._failed = False

    @property
    def past_head(self) -> bool:
        """Whether the head is full (what comes now only reaches the kept tail)."""
        return self._head_left == 0

    def write(self, data: bytes) -> None:
        """Add ``data``."""
        self.total += len(data)
        if self._head_left:
            head = data[: self._head_left]
            self._head_left -= len(head)
            data = data[len(head) :]
            self._write(head)
        if data:
            self._tail += data
            excess = len(self._tail) - self._tail_max
            if excess > 0:
                del self._tail[:excess]
                self.dropped += excess

    def close(self, why: str = "") -> None:
        """Write the note (if anything was dropped; ``why`` is added to it) and the tail."""
        tail = bytes(self._tail)
        if self.dropped:
            # Let the kept tail start at a line: a fragment would be mistaken for a whole line.
            cut = tail.find(b"\n") + 1
            if 0 < cut < len(tail):
                self.dropped += cut
                tail = tail[cut:]
            head = self.total - self.dropped - len(tail)
            note = (
                f"\n[arena: {self.dropped} bytes of output dropped here: the bot wrote "
                f"{self.total} bytes, over the log cap of {self._cap}; the log keeps the first "
                f"{head} and the last {len(tail)}{why}]\n"
            )
            self._write(note.encode()[:_NOTE_ROOM])
        self._write(tail)
        with contextlib.suppress(OSError):
            self._file.close()

    def _write(self, data: bytes) -> None:
        if self._failed:
            return
        try:
            self._file.write(data)
            self._file.flush()  # readable at once: last_line(), a user's `tail -f`
        except OSError:
            self._failed = True


class BotOutput:
    """A bot's stdout and stderr: a pipe (give the child :attr:`child_fd`) that a thread copies
    into a :class:`CappedLog` at ``path``. Past the log's head the pipe is read at ``rate`` bytes
    a second at most. The thread ends at end of file (every writer gone) and closes the log.
    """

    def __init__(
        self,
        path: Path,
        cap: int = LOG_CAP,
        tail: int = LOG_TAIL,
        rate: int = LOG_DRAIN_RATE,
    ) -> None:
        self.log = CappedLog(path, cap, tail)
        try:
            # Non-inheritable: a bot inheriting another's write end would hold that pipe open.
            self._read_fd, self.child_fd = os.pipe()
        except BaseException:
            self.log.close()
            raise
        self._rate = rate
        self._hurry = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"output {path.name}", daemon=True)
        self._thread.start()

    def close_child_fd(self) -> None:
        """Drop the arena's copy of the pipe's write end (once the child has its own, or did not
        start): end of file then comes when the bot and its children are gone."""
        if self.child_fd >= 0:
            os.close(self.child_fd)
            self.child_fd = -1

    def finish(self, timeout: float, hurry: bool = False) -> bool:
        """Wait up to ``timeout`` seconds for the log to be complete; whether it is. ``hurry``
        (the bot's processes are gone) reads what is left at full speed meanwhile."""
        if hurry:
            self._hurry.set()
        self._thread.join(timeout)
        done = not self._thread.is_alive()
        if hurry and not done:
            # Still open after the bot was stopped: a process that escaped its group holds the
            # pipe. Back to the paced rate, so its chatter costs no more than a live bot's.
            self._hurry.clear()
        return done

    async def finish_async(self, timeout: float, hurry: bool = False) -> bool:
        """:meth:`finish` for trio code."""
        return await trio.to_thread.run_sync(self.finish, timeout, hurry, abandon_on_cancel=True)

    def _run(self) -> None:
        try:
            while True:
                try:
                    chunk = os.read(self._read_fd, _CHUNK)
                except OSError:
                    break
                if not chunk:
                    break
                self.log.write(chunk)
                if self.log.past_head and not self._hurry.is_set():
                    self._hurry.wait(len(chunk) / self._rate)
        finally:
            os.close(self._read_fd)
            self.log.close(
                f". Past the cap the arena reads at most {self._rate} bytes/s of output, "
                "so a bot writing faster waits on its writes"
            )


#: What a seat's log says where its output was cut (:class:`CappedLog`).
LOG_CUT = b"bytes of output dropped here"


def last_line(path: Path, limit: int = 300) -> str:
    """The last non-empty line of a log file, shortened to ``limit`` characters."""
    try:
        with path.open("rb") as f:
            f.seek(max(0, path.stat().st_size - 4096))
            lines = [ln.strip() for ln in f.read().decode(errors="replace").splitlines()]
    except OSError:
        return ""
    # Node (and the JVM) print an uncaught error's stack frames after it, and Node its version
    # last: the error itself is the telling line.
    said = [ln for ln in lines if ln and not _NOT_TELLING.match(ln)]
    return (said[-1] if said else "")[:limit]


#: Lines that follow an uncaught error: stack frames (``at f (bot.js:3:9)``) and Node's
#: ``Node.js v20.20.2``.
_NOT_TELLING = re.compile(r"at \S|Node\.js v\d+(\.\d+)*$")
