"""The seams issue 40 drew, kept: functions and modules of arena/ stay readable in size, and one
module (arena/boxed.py) sets up the boxed arena every runner plays in (run directory,
confinement, socket, server). The import rules live in tests/test_architecture.py."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: A function longer than this is a function to split.
MAX_FUNCTION_LINES = 120
#: A module longer than this is a package to make.
MAX_MODULE_LINES = 900

#: Names that make a run, box it or serve it: only the boxed arena calls them, besides the
#: modules that define them and `arena serve`'s lobby (a server with no bots of its own to box).
BOX_NAMES = frozenset({"bot_run", "of_run", "prepare_socket", "open_arena_server"})
BOX_OWNERS = ("arena/boxed.py", "arena/bots/", "arena/server/", "arena/cli/serve.py")


def sources(root: Path, package: str) -> Iterable[Path]:
    return sorted((root / package).rglob("*.py"))


def oversized(root: Path, package: str) -> list[str]:
    """Functions over :data:`MAX_FUNCTION_LINES` and modules over :data:`MAX_MODULE_LINES`."""
    found = []
    for path in sources(root, package):
        text = path.read_text()
        where = path.relative_to(root)
        if (lines := len(text.splitlines())) > MAX_MODULE_LINES:
            found.append(f"{where}: {lines} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    found.append(f"{where}:{node.lineno}: {node.name} is {length} lines")
    return found


def box_set_ups(root: Path, package: str) -> list[str]:
    """Uses of :data:`BOX_NAMES` outside :data:`BOX_OWNERS`."""
    found = []
    for path in sources(root, package):
        where = path.relative_to(root).as_posix()
        if where.startswith(BOX_OWNERS):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names: list[str] = []
            if isinstance(node, ast.Name):
                names = [node.id]
            elif isinstance(node, ast.Attribute):
                names = [node.attr]
            elif isinstance(node, ast.ImportFrom):
                names = [alias.name for alias in node.names]
            found += [f"{where}:{node.lineno}: {n}" for n in names if n in BOX_NAMES]
    return found


def test_no_function_or_module_of_the_arena_is_oversized() -> None:
    assert oversized(ROOT, "arena") == []


def test_only_the_boxed_arena_sets_up_a_run_and_its_server() -> None:
    assert box_set_ups(ROOT, "arena") == []


def test_the_checks_see_what_they_look_for(tmp_path: Path) -> None:
    long_body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "long.py").write_text(f"def long():\n{long_body}")
    (tmp_path / "pkg" / "many.py").write_text("X = 1\n" * (MAX_MODULE_LINES + 1))
    (tmp_path / "pkg" / "runner.py").write_text(
        "from arena.bots.reaper import bot_run\nfrom arena import launch\n"
        "def f(run):\n    return launch.Confinement.of_run(run, None)\n"
    )
    assert oversized(tmp_path, "pkg") == [
        f"pkg/long.py:1: long is {MAX_FUNCTION_LINES + 1} lines",
        f"pkg/many.py: {MAX_MODULE_LINES + 1} lines",
    ]
    assert box_set_ups(tmp_path, "pkg") == ["pkg/runner.py:1: bot_run", "pkg/runner.py:4: of_run"]
