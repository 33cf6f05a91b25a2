"""The ``arena`` command line: argparse and the command handlers. Nothing else imports it.

Modules: ``main`` (the parser and dispatch), ``arguments`` (argument types and shared options),
``match``, ``serve``, ``tournament``, ``replay``, ``health`` (each a command's handler and the
printing of its results), ``console`` (a reader that leaves, ``| head``). May use anything.
"""

from arena.cli.main import main

__all__ = ["main"]
