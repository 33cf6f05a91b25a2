"""The layering of engine/, arena/ and reference_bots/, checked on the import graph.

arena/__init__.py and each package's ``__init__`` docstring describe the layers: the engine is
pure rules; ``arena.protocol`` is the only code that knows protobuf; bots know no server; the
SDK that bot authors import pulls in no server; nothing imports the command line. This module
reads every import statement with :mod:`ast` (tests/import_graph.py says how imports become
edges; no project code is imported) and asserts:

1. No import cycle, counting every written import: module level, ``if TYPE_CHECKING:`` and
   function-local ones alike, since a cycle hidden behind a lazy import or a type-only import is
   still two modules that each need the other. Implied edges to parent packages are not counted.
2. No forbidden edge (:data:`RULES`, each with the reason for it).
3. Function-local imports of project modules only in ``arena.cli`` (command handlers load
   lazily, so ``arena --help`` starts fast) and in :data:`LAZY_IMPORTS`, each with its reason.
   A lazy import that only dodges a cycle does not belong there: fix the layering instead.
4. No module imports through its own package's ``__init__`` (``from pkg import module`` inside
   ``pkg``): a package-module cycle the edges of 1. do not show. Generated code is exempt.
5. Output directories are named in arena/layout.py only: no other module gives a constant one of
   its ``*_DIR`` names (``"private"``, ``Path("snapshots") / ...``).
6. No module imports a ``_``-prefixed name from another package: what two packages share is
   public, in the package that owns it (or one both may import).

A failure names each offending edge as ``importer -> imported (file:line)``. The last tests run
the same checker on a small package written into ``tmp_path``, to show it can fail.
"""

from __future__ import annotations

import ast
import functools
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.import_graph import (
    Edge,
    ImportGraph,
    Placement,
    Rule,
    describe,
    find_cycles,
    private_names,
    unresolved,
    within,
)

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("engine", "arena", "reference_bots", "cardarena")
#: Where each is, under the repository's root (the SDK is a distribution of its own).
PACKAGE_DIRS = ("engine", "arena", "reference_bots", "sdk/python/cardarena")
#: The arena's plain-value modules, at the bottom of its layers.
PLAIN_VALUES = (
    "arena.errors",
    "arena.checks",
    "arena.policy",
    "arena.rules",
    "arena.seeds",
    "arena.layout",
    "arena.logging",
    "arena.version",
)

RULES = [
    pytest.param(
        Rule(
            "engine is pure rules: it never imports the arena or the reference bots",
            importers=("engine",),
            imported=("arena", "reference_bots"),
        ),
        id="engine-is-pure",
    ),
    pytest.param(
        Rule(
            "the engine imports the SDK only in engine.local (in-process play runs SDK bots): "
            "the rules themselves need no SDK",
            importers=("engine",),
            importer_exceptions=("engine.local",),
            imported=("cardarena",),
        ),
        id="engine-sdk-only-in-local",
    ),
    pytest.param(
        Rule(
            "engine.adapters (PettingZoo, OpenSpiel: the optional rl extra) import the engine; "
            "no other module imports them, so the engine and the arena run without those libraries",
            importers=PACKAGES,
            importer_exceptions=("engine.adapters",),
            imported=("engine.adapters",),
        ),
        id="adapters-are-optional",
    ),
    pytest.param(
        Rule(
            "nothing outside arena.cli imports the command line",
            importers=PACKAGES,
            importer_exceptions=("arena.cli",),
            imported=("arena.cli",),
        ),
        id="nothing-imports-cli",
    ),
    pytest.param(
        Rule(
            "generated protobuf code (cardarena._pb) is reached through the protocol's "
            "translators only: the SDK's codec, observations and rpc (a bot's side), the "
            "arena's codec, observations and spectator (a server's)",
            importers=PACKAGES,
            importer_exceptions=(
                "cardarena._pb",
                "cardarena.codec",
                "cardarena.observations",
                "cardarena.rpc",
                "arena.protocol.codec",
                "arena.protocol.observations",
                "arena.protocol.spectator",
            ),
            imported=("cardarena._pb",),
        ),
        id="pb-through-the-translators",
    ),
    pytest.param(
        Rule(
            "reference_bots is imported only by arena.cli (for `arena bot`)",
            importers=("arena",),
            importer_exceptions=("arena.cli",),
            imported=("reference_bots",),
        ),
        id="reference-bots-only-from-cli",
    ),
    pytest.param(
        Rule(
            "the reference bots are bots like any author's: the SDK and the engine, nothing of "
            "the arena",
            importers=("reference_bots",),
            imported=("arena",),
        ),
        id="reference-bots-use-the-sdk",
    ),
    pytest.param(
        Rule(
            "arena.bots starts processes and containers: it knows no server and no protocol",
            importers=("arena.bots",),
            imported=("arena.server", "arena.protocol"),
        ),
        id="bots-know-no-server",
    ),
    pytest.param(
        Rule(
            "arena.protocol uses nothing of the arena outside itself (of the project: the engine "
            "and the SDK's protocol modules)",
            importers=("arena.protocol",),
            imported=("arena", "reference_bots"),
            imported_exceptions=("arena.protocol",),
        ),
        id="protocol-stands-alone",
    ),
    pytest.param(
        Rule(
            "cardarena, the SDK bot authors install on its own, imports nothing of the project "
            "outside itself: no engine, no arena, no reference bot (grpcio and protobuf only)",
            importers=("cardarena",),
            imported=("engine", "arena", "reference_bots"),
        ),
        id="sdk-stands-alone",
    ),
    pytest.param(
        Rule(
            "the plain values every part shares (errors, config checks, policy, match rules, "
            "seeds, layout, logging, version) import nothing else of the arena",
            importers=PLAIN_VALUES,
            imported=("arena", "reference_bots"),
            imported_exceptions=PLAIN_VALUES,
        ),
        id="plain-values-stand-alone",
    ),
    pytest.param(
        Rule(
            "the server referees whoever connects: it starts no bots and knows no tournament, "
            "registry, ratings or the SDK's bot side (its protocol modules it shares)",
            importers=("arena.server",),
            imported=(
                "arena.bots",
                "arena.match",
                "arena.tournament",
                "arena.registry",
                "arena.ratings",
                "cardarena.bot",
                "cardarena.client",
            ),
        ),
        id="server-knows-no-runners",
    ),
    pytest.param(
        Rule(
            "tournaments are the top of the library: only the command line and the competition "
            "service (which reuses their config checks, schedule and store lock) import them",
            importers=("arena",),
            importer_exceptions=("arena.tournament", "arena.cli", "arena.host"),
            imported=("arena.tournament",),
        ),
        id="tournaments-only-from-cli",
    ),
    pytest.param(
        Rule(
            "arena.cluster moves matches between machines: it knows the server, the pool and "
            "snapshots, never a tournament, the competition service or the command line (they "
            "use it)",
            importers=("arena.cluster",),
            imported=("arena.tournament", "arena.host", "arena.cli", "arena.web"),
        ),
        id="cluster-below-runners",
    ),
    pytest.param(
        Rule(
            "Dask is optional (the cluster extra): only the coordinator's and the worker's own "
            "modules use it, and only the command line and the host's start (a function-local "
            "import, for a competition with [workers]) import them, so a tournament, the host and "
            "the server run without it",
            importers=PACKAGES,
            importer_exceptions=(
                "arena.cli",
                "arena.cluster.coordinator",
                "arena.cluster.worker",
                "arena.host.service",
            ),
            imported=("arena.cluster.coordinator", "arena.cluster.worker"),
        ),
        id="dask-is-optional",
    ),
    pytest.param(
        Rule(
            "arena.agents holds a seat over the protocol as a bot does: it knows no server, "
            "runner or competition (the referee does not know an agent from a bot)",
            importers=("arena.agents",),
            imported=("arena.server", "arena.match", "arena.tournament", "arena.host"),
        ),
        id="agents-are-bots-to-the-server",
    ),
    pytest.param(
        Rule(
            "arena.records knows no server (arena.records.ask, which plays a recorded seat through "
            "its hub, excepted)",
            importers=("arena.records",),
            importer_exceptions=("arena.records.ask",),
            imported=("arena.server",),
        ),
        id="records-know-no-server",
    ),
]

#: Packages whose modules may import project modules inside functions: the command handlers.
LAZY_PACKAGES = ("arena.cli",)

#: (importer, imported) -> why the import waits for a function call.
LAZY_IMPORTS: dict[tuple[str, str], str] = {
    ("arena.host.service", "arena.cluster.coordinator"): (
        "Dask (the optional cluster extra) loads only for a competition with [workers] dask"
    ),
    ("arena.tournament.report", "arena.ratings"): (
        "scipy and numpy load only when standings are drawn, not when the runner is imported"
    ),
}


@functools.cache
def project() -> ImportGraph:
    return ImportGraph.read(ROOT, PACKAGE_DIRS)


def lazy_imports_outside_cli(edges: list[Edge]) -> list[Edge]:
    """Function-local imports outside :data:`LAZY_PACKAGES`."""
    return [
        edge
        for edge in edges
        if edge.placement is Placement.LOCAL
        and not any(within(edge.importer, package) for package in LAZY_PACKAGES)
    ]


# --- The project -----------------------------------------------------------------------------


def test_the_graph_sees_the_project() -> None:
    graph = project()
    importers = {edge.importer.split(".")[0] for edge in graph.edges}
    assert importers == set(PACKAGES)
    assert len(graph.modules) > 50
    # The generated gRPC module's relative import, and wireformat's import of the C extension.
    pb = "cardarena._pb"
    assert (f"{pb}.arena_pb2_grpc", f"{pb}.arena_pb2") in {
        (e.importer, e.imported) for e in graph.edges
    }
    assert "arena.protocol._wire" in graph.modules


def test_every_project_import_names_a_module() -> None:
    stale = unresolved(project().edges, project().modules)
    assert not stale, "imports of project modules that do not exist:\n" + describe(stale)


def test_no_import_cycles() -> None:
    cycles = find_cycles(project().edges)
    report = "\n\n".join(f"cycle of {len(c)} modules:\n{describe(c)}" for c in cycles)
    assert not cycles, report


@pytest.mark.parametrize("rule", RULES)
def test_forbidden_edges(rule: Rule) -> None:
    found = rule.violations(project().edges)
    assert not found, f"{rule.description}; found:\n{describe(found)}"


def test_function_local_imports_only_where_allowed() -> None:
    lazy = lazy_imports_outside_cli(list(project().edges))
    unexplained = [e for e in lazy if (e.importer, e.imported) not in LAZY_IMPORTS]
    assert not unexplained, (
        "function-local imports outside arena.cli (move them to the top, or add them to "
        "LAZY_IMPORTS with the reason, if it is not only to dodge a cycle):\n"
        + describe(unexplained)
    )


def test_no_module_imports_another_packages_private_names() -> None:
    graph = project()
    found = private_names(graph.names, graph.modules)
    assert not found, (
        "private names imported from another package (make them public where both may import "
        "them):\n" + "\n".join(f"  {n}" for n in found)
    )


#: Generated by protoc, which writes ``from cardarena._pb import arena_pb2`` (make proto).
GENERATED = ("cardarena._pb",)


def test_no_module_imports_its_own_package() -> None:
    found = [
        edge
        for edge in project().through_own_packages()
        if not any(within(edge.importer, package) for package in GENERATED)
    ]
    assert not found, (
        "imports through the importer's own package __init__ (name the module instead: "
        "`import pkg.module as module` or `from pkg.module import name`):\n" + describe(found)
    )


def test_lazy_import_allow_list_is_current() -> None:
    lazy = {(e.importer, e.imported) for e in lazy_imports_outside_cli(list(project().edges))}
    stale = sorted(set(LAZY_IMPORTS) - lazy)
    assert not stale, f"LAZY_IMPORTS entries with no function-local import left: {stale}"


# --- Output directory names: arena/layout.py's alone ------------------------------------------

LAYOUT = "arena.layout"


def directory_names(source: Path) -> dict[str, str]:
    """A module's directory names: its module-level ``*_DIR`` string constants, by value."""
    names: dict[str, str] = {}
    for node in ast.parse(source.read_bytes()).body:
        target, value = _assignment(node)
        literal = value.value if isinstance(value, ast.Constant) else None
        if target and target.endswith("_DIR") and isinstance(literal, str):
            names[literal] = target
    return names


def _assignment(node: ast.stmt) -> tuple[str | None, ast.expr | None]:
    """``NAME = value`` or ``NAME: T = value`` at module level, else ``(None, None)``."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        return (target.id, node.value) if isinstance(target, ast.Name) else (None, None)
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
        return node.target.id, node.value
    return None, None


def _path_parts(value: ast.expr) -> Iterator[str]:
    """The string literals a path constant is built of: ``"x"``, ``Path("x")``, ``a / "y"``."""
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        yield value.value
    elif isinstance(value, ast.Call) and getattr(value.func, "id", None) in ("Path", "PurePath"):
        for arg in value.args:
            yield from _path_parts(arg)
    elif isinstance(value, ast.BinOp) and isinstance(value.op, ast.Div):
        yield from _path_parts(value.left)
        yield from _path_parts(value.right)


def directory_names_redefined(graph: ImportGraph, owner: str) -> list[str]:
    """Module-level constants outside ``owner`` spelling one of ``owner``'s directory names."""
    owner_source = graph.modules[owner].source
    assert owner_source is not None
    names = directory_names(owner_source)
    found = []
    for module in graph.modules.values():
        if module.name == owner or module.source is None:
            continue
        for node in ast.parse(module.source.read_bytes()).body:
            target, value = _assignment(node)
            for part in _path_parts(value) if target and value else ():
                if part in names:
                    where = module.source.relative_to(graph.root).as_posix()
                    found.append(f"{where}:{node.lineno}: {target} spells {names[part]}")
    return found


def test_only_layout_names_output_directories() -> None:
    found = directory_names_redefined(project(), LAYOUT)
    assert not found, (
        "output directory names belong to arena/layout.py (import them from there):\n"
        + "\n".join(found)
    )


#: The only modules that may import ``sqlite3``: the stores' base (the tournament store, the
#: competition store and the registry are built on it, and keep only their tables and queries).
SQLITE_MODULES = ("arena.sqlite",)


def sqlite3_importers(root: Path, package_dirs: tuple[str, ...]) -> list[str]:
    """``module (file:line)`` of every ``import sqlite3`` / ``from sqlite3 import …``."""
    found = []
    for package_dir in package_dirs:
        base = root / package_dir
        for path in sorted(base.rglob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            for node in ast.walk(tree):
                names = (
                    [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                    if isinstance(node, ast.ImportFrom) and not node.level
                    else []
                )
                if any(n == "sqlite3" or n.startswith("sqlite3.") for n in names):
                    relative = path.relative_to(base.parent).with_suffix("")
                    module = ".".join(relative.parts).removesuffix(".__init__")
                    found.append(f"{module} ({path.relative_to(root)}:{node.lineno})")
    return found


def test_only_the_store_base_speaks_to_sqlite() -> None:
    found = [
        f for f in sqlite3_importers(ROOT, PACKAGE_DIRS) if f.split(" ")[0] not in SQLITE_MODULES
    ]
    assert not found, (
        "sqlite3 is for the stores' base (arena/sqlite.py: connection, checks, migrations, "
        "transactions, the locked-database policy); build on it instead:\n" + "\n".join(found)
    )


def test_the_sqlite_rule_sees_an_import(tmp_path: Path) -> None:
    write_package(
        tmp_path,
        {"pkg/__init__.py": "", "pkg/a.py": "import os\nimport sqlite3\n", "pkg/b.py": ""},
    )
    assert sqlite3_importers(tmp_path, ("pkg",)) == ["pkg.a (pkg/a.py:2)"]


# --- The checker, on a package written for it ------------------------------------------------


def write_package(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


SYNTHETIC = {
    # The package re-exports a: written edge pkg -> pkg.a, and no implied edge back.
    "pkg/__init__.py": "from pkg.a import A\n",
    "pkg/a.py": "from pkg import b\nA = 1\n",
    "pkg/b.py": "from . import a\n",
    "pkg/proto/__init__.py": "",
    "pkg/proto/_pb/__init__.py": "",
    "pkg/proto/_pb/gen.py": "",
    "pkg/proto/codec.py": "from ._pb import gen\n",
    "pkg/user.py": "import os\nimport pkg.proto._pb.gen\n",
    "pkg/sub/__init__.py": "",
    "pkg/sub/deep.py": """\
        from .. import A
        from ..proto import codec
        from . import sibling
        from .sibling import name
        """,
    "pkg/sub/sibling.py": """\
        from typing import TYPE_CHECKING
        import typing

        if TYPE_CHECKING:
            from pkg import a
        else:
            from pkg import b
        if typing.TYPE_CHECKING:
            import pkg.user

        def later():
            import pkg.proto.codec

        class Holder:
            from pkg.sub import deep

            def method(self):
                from pkg.proto import _pb
        """,
}


@pytest.fixture
def synthetic(tmp_path: Path) -> ImportGraph:
    write_package(tmp_path, SYNTHETIC)
    return ImportGraph.read(tmp_path, ["pkg"])


def edges_of(graph: ImportGraph, importer: str) -> list[tuple[str, int, Placement]]:
    return [(e.imported, e.line, e.placement) for e in graph.edges if e.importer == importer]


def test_checker_reports_the_cycle(synthetic: ImportGraph) -> None:
    cycles = find_cycles(synthetic.edges)
    assert [[str(edge) for edge in cycle] for cycle in cycles] == [
        ["pkg.a -> pkg.b (pkg/a.py:1)", "pkg.b -> pkg.a (pkg/b.py:1)"],
        [
            "pkg.sub.deep -> pkg.sub.sibling (pkg/sub/deep.py:3)",
            "pkg.sub.sibling -> pkg.sub.deep (pkg/sub/sibling.py:15)",
        ],
    ]


def test_checker_reports_private_names_from_another_package(tmp_path: Path) -> None:
    user = "from pkg.a.util import _HIDDEN\nimport pkg.a._inner\nfrom ..a import _inner\n"
    write_package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/_own.py": "",
            "pkg/a/__init__.py": "",
            "pkg/a/_inner.py": "",
            "pkg/a/util.py": "_HIDDEN = 1\n",
            # Its own package's private names, a dunder, and its parent package's: all fine.
            "pkg/a/mine.py": "from pkg.a.util import _HIDDEN, __all__\nfrom . import _inner\n",
            "pkg/b/__init__.py": "",
            "pkg/b/user.py": user + "from pkg import _own\n",
        },
    )
    graph = ImportGraph.read(tmp_path, ["pkg"])
    assert [str(n) for n in private_names(graph.names, graph.modules)] == [
        "pkg.b.user -> pkg.a.util._HIDDEN (pkg/b/user.py:1)",
        "pkg.b.user -> pkg.a._inner (pkg/b/user.py:2)",
        "pkg.b.user -> pkg.a._inner (pkg/b/user.py:3)",
    ]


def test_checker_reports_the_forbidden_edge(synthetic: ImportGraph) -> None:
    rule = Rule(
        "pb through codec only",
        importers=("pkg",),
        importer_exceptions=("pkg.proto._pb", "pkg.proto.codec"),
        imported=("pkg.proto._pb",),
    )
    assert [str(edge) for edge in rule.violations(synthetic.edges)] == [
        "pkg.sub.sibling -> pkg.proto._pb (pkg/sub/sibling.py:18)",
        "pkg.user -> pkg.proto._pb.gen (pkg/user.py:2)",
    ]


def test_checker_reports_imports_through_the_own_package(synthetic: ImportGraph) -> None:
    assert [str(edge) for edge in synthetic.through_own_packages()] == [
        "pkg.a -> pkg (pkg/a.py:1)",
        "pkg.b -> pkg (pkg/b.py:1)",
        "pkg.sub.deep -> pkg (pkg/sub/deep.py:1)",
        "pkg.sub.deep -> pkg.sub (pkg/sub/deep.py:3)",
        "pkg.sub.sibling -> pkg (pkg/sub/sibling.py:5)",
        "pkg.sub.sibling -> pkg (pkg/sub/sibling.py:7)",
        "pkg.sub.sibling -> pkg.sub (pkg/sub/sibling.py:15)",
    ]


def test_relative_imports_resolve(synthetic: ImportGraph) -> None:
    top = Placement.TOP
    assert edges_of(synthetic, "pkg.b") == [("pkg.a", 1, top)]
    assert edges_of(synthetic, "pkg.proto.codec") == [("pkg.proto._pb.gen", 1, top)]
    assert edges_of(synthetic, "pkg.sub.deep") == [
        ("pkg", 1, top),  # A is a name in pkg/__init__.py, not a module
        ("pkg.proto.codec", 2, top),
        ("pkg.sub.sibling", 3, top),
        ("pkg.sub.sibling", 4, top),
    ]


def test_relative_import_beyond_the_top_package_is_an_error(tmp_path: Path) -> None:
    write_package(tmp_path, {"pkg/__init__.py": "", "pkg/bad.py": "from .. import x\n"})
    with pytest.raises(ValueError, match=r"pkg\.bad: relative import beyond"):
        ImportGraph.read(tmp_path, ["pkg"])


def test_placements(synthetic: ImportGraph) -> None:
    top, typing_only, local = Placement.TOP, Placement.TYPE_CHECKING, Placement.LOCAL
    assert edges_of(synthetic, "pkg.sub.sibling") == [
        ("pkg.a", 5, typing_only),
        ("pkg.b", 7, top),  # the ``else`` of ``if TYPE_CHECKING`` runs
        ("pkg.user", 9, typing_only),
        ("pkg.proto.codec", 12, local),
        ("pkg.sub.deep", 15, top),  # a class body runs at import
        ("pkg.proto._pb", 18, local),
    ]
    assert [str(e) for e in lazy_imports_outside_cli(list(synthetic.edges))] == [
        "pkg.sub.sibling -> pkg.proto.codec (pkg/sub/sibling.py:12)",
        "pkg.sub.sibling -> pkg.proto._pb (pkg/sub/sibling.py:18)",
    ]


def test_checker_reports_a_directory_name_defined_twice(tmp_path: Path) -> None:
    write_package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/layout.py": 'CACHE_DIR = "cache"\nSUFFIX = ".gz"\n',
            "pkg/a.py": 'from pathlib import Path\nWHERE = Path("cache") / "x"\nEND = ".gz"\n',
            "pkg/b.py": 'OTHER: str = "cache"\n\ndef f():\n    local = "cache"\n',
        },
    )
    graph = ImportGraph.read(tmp_path, ["pkg"])
    assert directory_names_redefined(graph, "pkg.layout") == [
        "pkg/a.py:2: WHERE spells CACHE_DIR",
        "pkg/b.py:1: OTHER spells CACHE_DIR",
    ]
