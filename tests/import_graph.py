"""The project's import graph, read from the source with :mod:`ast` (nothing is imported).

Used by tests/test_architecture.py. How imports become edges:

- Every ``import`` statement counts, wherever it is: module level, class bodies, functions,
  ``try``/``except`` and ``if TYPE_CHECKING:`` blocks. Each edge remembers where it was
  (:class:`Placement`): at module level, under ``if TYPE_CHECKING:``, or inside a function.
- An edge goes to the project module the statement names. ``import a.b.c`` is an edge to
  ``a.b.c``; ``from a.b import c`` is an edge to ``a.b.c`` when that is a module, else (``c`` a
  name defined in ``a.b``) to ``a.b``. A package's ``__init__`` is the module named by the
  package. Relative imports are resolved against the importer's package first.
- Only edges written in the source are recorded. Importing ``a.b.c`` also runs the ``__init__``
  of ``a`` and ``a.b``, but those implied edges are not added: every module of a package would
  then "import" its own package, and a package ``__init__`` that re-exports its modules (as
  ``arena.server`` does) would be in a false cycle with each of them. The layering rules lose
  nothing by it: each forbids a whole package, which the written edge already names.
- Imports of anything outside the project's packages (the standard library, third-party code)
  are dropped, and so is a module importing itself. ``importlib.import_module`` calls are
  invisible, as for any static reader.
- A project module is a ``.py`` file, a stub (``.pyi``) or a built extension: ``from
  arena.protocol import _wire`` names the C extension, which has no Python source to read.
- Besides the edges, every name a statement imports from a project module is kept
  (:class:`NameImport`: ``from a.b import c`` imports ``c`` from ``a.b``, ``import a.b.c``
  imports ``c`` from ``a.b``), so a rule can judge the names themselves (:func:`private_names`).
"""

from __future__ import annotations

import ast
import importlib.machinery
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path


class Placement(Enum):
    """Where an import statement sits, which says when it runs."""

    TOP = "module level"  # runs when the module is imported
    TYPE_CHECKING = "if TYPE_CHECKING"  # never runs; for type checkers only
    LOCAL = "function-local"  # runs when the function is first called


@dataclass(frozen=True)
class Edge:
    """One import statement's edge from ``importer`` to ``imported``, both project modules."""

    importer: str
    imported: str
    path: str  # the importer's file, relative to the root
    line: int
    placement: Placement

    def __str__(self) -> str:
        return f"{self.importer} -> {self.imported} ({self.path}:{self.line})"

    def sort_key(self) -> tuple[str, int, str]:
        return (self.importer, self.line, self.imported)


@dataclass(frozen=True)
class Module:
    """A project module: its dotted name and source file (``None`` for an extension)."""

    name: str
    source: Path | None
    is_package: bool


def within(name: str, package: str) -> bool:
    """Whether module ``name`` is ``package`` itself or inside it."""
    return name == package or name.startswith(package + ".")


# --- Finding the modules ---------------------------------------------------------------------


def _module_stem(file: Path) -> str | None:
    """The module name a file provides, or ``None`` if it is not a module."""
    for suffix in (".py", ".pyi", *importlib.machinery.EXTENSION_SUFFIXES):
        if file.name.endswith(suffix):
            return file.name.removesuffix(suffix)
    return None


def package_name(package: str) -> str:
    """A top-level package's name, from its directory under the root (``sdk/python/cardarena``
    is ``cardarena``)."""
    return Path(package).name


def find_modules(root: Path, packages: Sequence[str]) -> dict[str, Module]:
    """Every module of the top-level ``packages`` (directories under ``root``), by dotted
    name."""
    modules: dict[str, Module] = {}
    for package in packages:
        base = (root / package).parent
        for file in sorted((root / package).rglob("*")):
            stem = _module_stem(file)
            if stem is None or "__pycache__" in file.parts or "." in stem:
                continue
            parts = list(file.relative_to(base).parent.parts)
            is_package = stem == "__init__"
            name = ".".join(parts if is_package else [*parts, stem])
            source = file if file.suffix == ".py" else None
            known = modules.get(name)
            if known is None or (known.source is None and source is not None):
                modules[name] = Module(name, source, is_package)
    return modules


# --- Reading one module's imports ------------------------------------------------------------


def _is_type_checking(test: ast.expr) -> bool:
    """``TYPE_CHECKING`` or ``typing.TYPE_CHECKING`` (or any ``x.TYPE_CHECKING``)."""
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _import_statements(
    tree: ast.Module,
) -> Iterator[tuple[ast.Import | ast.ImportFrom, Placement]]:
    """Every import statement in ``tree``, with where it sits."""
    # Imports are statements: only statements (and the clauses of ``try`` and ``match``) can
    # hold them, so expressions are not walked.
    holders = (ast.stmt, ast.excepthandler, ast.match_case)

    def walk(
        node: ast.AST, placement: Placement
    ) -> Iterator[tuple[ast.Import | ast.ImportFrom, Placement]]:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, placement
            return
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and placement is Placement.TOP:
            placement = Placement.LOCAL
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for statement in node.body:
                yield from walk(statement, Placement.TYPE_CHECKING)
            for statement in node.orelse:
                yield from walk(statement, placement)
            return
        for child in ast.iter_child_nodes(node):
            if isinstance(child, holders):
                yield from walk(child, placement)

    yield from walk(tree, Placement.TOP)


def resolve_relative(importer: Module, level: int, target: str | None) -> str:
    """The absolute name of ``from <level dots><target> import ...`` inside ``importer``."""
    parts = importer.name.split(".")
    package = parts if importer.is_package else parts[:-1]
    if level - 1 > len(package) - 1:
        raise ValueError(f"{importer.name}: relative import beyond the top-level package")
    base = package[: len(package) - (level - 1)]
    return ".".join([*base, target] if target else base)


def _named_modules(
    node: ast.Import | ast.ImportFrom, importer: Module, modules: Mapping[str, Module]
) -> Iterator[str]:
    """The dotted names a statement imports (project or not), resolved as described above."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name
        return
    base = node.module or ""
    if node.level:
        base = resolve_relative(importer, node.level, node.module)
    for alias in node.names:
        submodule = f"{base}.{alias.name}"
        yield submodule if alias.name != "*" and submodule in modules else base


def _read(
    module: Module, root: Path
) -> tuple[str, list[tuple[ast.Import | ast.ImportFrom, Placement]]]:
    """A module's file, relative to ``root``, and its import statements (none for an
    extension)."""
    if module.source is None:
        return "", []
    tree = ast.parse(module.source.read_bytes(), filename=str(module.source))
    return module.source.relative_to(root).as_posix(), list(_import_statements(tree))


def module_imports(
    module: Module, root: Path, modules: Mapping[str, Module], packages: Sequence[str]
) -> list[Edge]:
    """The edges from one module to the project's modules, one per name imported."""
    path, statements = _read(module, root)
    edges: set[Edge] = set()
    for node, placement in statements:
        for name in _named_modules(node, module, modules):
            in_project = any(within(name, package_name(p)) for p in packages)
            if in_project and name != module.name:
                edges.add(Edge(module.name, name, path, node.lineno, placement))
    return sorted(edges, key=Edge.sort_key)


@dataclass(frozen=True)
class NameImport:
    """One name an import statement takes from a project module (or package)."""

    importer: str
    #: The module or package the name is taken from.
    source: str
    name: str
    path: str
    line: int

    def __str__(self) -> str:
        return f"{self.importer} -> {self.source}.{self.name} ({self.path}:{self.line})"


def module_names(
    module: Module, root: Path, modules: Mapping[str, Module], packages: Sequence[str]
) -> list[NameImport]:
    """The names one module imports from the project's modules."""
    path, statements = _read(module, root)
    found: list[NameImport] = []
    for node, _ in statements:
        pairs: list[tuple[str, str]] = []
        if isinstance(node, ast.Import):
            for alias in node.names:
                source, _, name = alias.name.rpartition(".")
                if source:
                    pairs.append((source, name))
        else:
            base = node.module or ""
            if node.level:
                base = resolve_relative(module, node.level, node.module)
            pairs.extend((base, alias.name) for alias in node.names)
        for source, name in pairs:
            if any(within(source, package_name(p)) for p in packages):
                found.append(NameImport(module.name, source, name, path, node.lineno))
    return found


def owner(source: str, modules: Mapping[str, Module]) -> str:
    """The package a name of ``source`` belongs to: ``source`` itself when it is a package,
    else the package it is in."""
    known = modules.get(source)
    if (known is not None and known.is_package) or "." not in source:
        return source
    return source.rsplit(".", 1)[0]


def private_names(names: Iterable[NameImport], modules: Mapping[str, Module]) -> list[NameImport]:
    """Imports of a ``_``-prefixed name (not a dunder) from outside the importer's package: a
    private name is its package's own, and what another package needs of it is made public."""
    return [
        n
        for n in names
        if n.name.startswith("_")
        and not n.name.startswith("__")
        and not within(n.importer, owner(n.source, modules))
    ]


def _own_packages(module: Module) -> set[str]:
    """The packages whose ``__init__`` runs before ``module``: its package and their parents."""
    parts = module.name.split(".")
    package = parts if module.is_package else parts[:-1]
    return {".".join(package[:i]) for i in range(1, len(package) + 1)}


def through_own_package(module: Module, root: Path) -> list[Edge]:
    """``module``'s imports that read one of its own packages' namespace (``from pkg import x``,
    ``from . import x``, ``import pkg`` inside ``pkg``), as edges to that package.

    The import graph records ``from pkg import module`` as an edge to ``pkg.module``, but the
    name is looked up in ``pkg``'s ``__init__``, which may be still half run (it imports this
    module): a package-module cycle the edges do not show. Naming the module
    (``import pkg.module as module``, ``from pkg.module import name``) needs only that module.
    """
    path, statements = _read(module, root)
    own = _own_packages(module)
    found: list[Edge] = []
    for node, placement in statements:
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = resolve_relative(module, node.level, node.module)
            names = [base]
        else:
            names = [alias.name for alias in node.names]
        found += [Edge(module.name, n, path, node.lineno, placement) for n in names if n in own]
    return found


def unresolved(edges: Iterable[Edge], modules: Mapping[str, Module]) -> list[Edge]:
    """Edges naming a project module that does not exist (a stale or misspelt import)."""
    return [edge for edge in edges if edge.imported not in modules]


@dataclass(frozen=True)
class ImportGraph:
    """The modules of some top-level packages and every import edge among them."""

    root: Path
    modules: Mapping[str, Module]
    edges: Sequence[Edge]
    #: Every name imported from a project module, in module order.
    names: Sequence[NameImport] = ()

    @classmethod
    def read(cls, root: Path, packages: Sequence[str]) -> ImportGraph:
        modules = find_modules(root, packages)
        edges = [
            edge
            for module in modules.values()
            for edge in module_imports(module, root, modules, packages)
        ]
        names = [
            name
            for module in sorted(modules.values(), key=lambda m: m.name)
            for name in module_names(module, root, modules, packages)
        ]
        return cls(root, modules, sorted(edges, key=Edge.sort_key), names)

    def through_own_packages(self) -> list[Edge]:
        """Every import that reads its importer's own package (:func:`through_own_package`)."""
        found = [e for m in self.modules.values() for e in through_own_package(m, self.root)]
        return sorted(found, key=Edge.sort_key)


# --- Cycles ----------------------------------------------------------------------------------


def adjacency(edges: Iterable[Edge]) -> dict[str, dict[str, Edge]]:
    """importer -> imported -> the first edge (by line) between them."""
    graph: dict[str, dict[str, Edge]] = {}
    for edge in sorted(edges, key=Edge.sort_key):
        graph.setdefault(edge.importer, {}).setdefault(edge.imported, edge)
        graph.setdefault(edge.imported, {})
    return graph


def strongly_connected_components(graph: Mapping[str, Mapping[str, object]]) -> list[list[str]]:
    """Tarjan's algorithm: the graph's strongly connected components, each sorted."""
    index: dict[str, int] = {}
    lowlink: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = lowlink[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(graph.get(node, {})):
            if successor not in index:
                visit(successor)
                lowlink[node] = min(lowlink[node], lowlink[successor])
            elif successor in on_stack:
                lowlink[node] = min(lowlink[node], index[successor])
        if lowlink[node] == index[node]:
            component: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def cycle_through(
    start: str, members: set[str], graph: Mapping[str, Mapping[str, Edge]]
) -> list[Edge]:
    """A shortest cycle from ``start`` back to itself within one component."""
    came_by: dict[str, Edge] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for successor, edge in sorted(graph[node].items()):
            if successor not in members or successor in came_by:
                continue
            came_by[successor] = edge
            if successor == start:
                path = [edge]
                while path[0].importer != start:
                    path.insert(0, came_by[path[0].importer])
                return path
            queue.append(successor)
    raise ValueError(f"{start} is in no cycle")


def find_cycles(edges: Iterable[Edge]) -> list[list[Edge]]:
    """One cycle (as its edges) for each strongly connected component with a cycle."""
    graph = adjacency(edges)
    components = strongly_connected_components(graph)
    return [cycle_through(c[0], set(c), graph) for c in components if len(c) > 1]


def describe(edges: Iterable[Edge]) -> str:
    """The edges one a line, as ``importer -> imported (file:line)``."""
    return "\n".join(f"  {edge}" for edge in edges)


# --- Rules -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """Modules in ``importers`` (except ``importer_exceptions``) must not import modules in
    ``imported`` (except ``imported_exceptions``); each entry is a package or a module."""

    description: str
    importers: tuple[str, ...]
    imported: tuple[str, ...]
    importer_exceptions: tuple[str, ...] = ()
    imported_exceptions: tuple[str, ...] = ()

    def forbids(self, edge: Edge) -> bool:
        def among(name: str, packages: tuple[str, ...]) -> bool:
            return any(within(name, package) for package in packages)

        return (
            among(edge.importer, self.importers)
            and not among(edge.importer, self.importer_exceptions)
            and among(edge.imported, self.imported)
            and not among(edge.imported, self.imported_exceptions)
        )

    def violations(self, edges: Iterable[Edge]) -> list[Edge]:
        return [edge for edge in edges if self.forbids(edge)]
