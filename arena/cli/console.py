"""Printing to a reader that may leave: ``arena ratings DIR | head -1`` must not end in a
``BrokenPipeError`` traceback."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def reader_may_leave() -> Iterator[None]:
    """Print the command's output inside this block; when the reader of stdout has gone, stop
    quietly, as ``cat`` does, with the command's own exit status.

    The output is flushed inside the block: a piped stdout is block-buffered, so the broken pipe
    usually shows only at the flush, and at the interpreter's exit it would print a warning.
    """
    try:
        yield
        sys.stdout.flush()
    except BrokenPipeError:
        # Later writes and the flush at exit go to /dev/null instead of failing again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
