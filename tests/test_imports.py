"""The package's imports go only down its layers, and no module imports itself through
a loop of other modules.

Every ``import`` and ``from ... import`` of every module of ``dolb`` counts, wherever it
is written: at the top, inside a function, under ``if TYPE_CHECKING:``. Relative imports
are resolved; ``from dolb.x import y`` where ``y`` is a module is an import of
``dolb.x.y``; an import of a package is an import of its ``__init__``. Importing
``dolb.x.y`` also runs the ``__init__`` of the package ``dolb.x`` first, so it counts as
an import of ``dolb.x`` too, unless ``dolb.x`` contains the importing module (its own
packages are already running).
"""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

import pytest

import dolb

LAYERS = (
    ("core", ("dolb.errors", "dolb.extras", "dolb.identity", "dolb.registry", "dolb.params", "dolb.seeding",
              "dolb.validation", "dolb.losses", "dolb.options")),
    ("data", ("dolb.data", "dolb.location")),
    ("conversions", ("dolb.conversions",)),
    ("learners", ("dolb.learners",)),
    ("selection", ("dolb.selection",)),
    ("evaluation", ("dolb.evaluation",)),
    ("results", ("dolb.results",)),
    ("experiment", ("dolb.experiment",)),
    ("execution", ("dolb.execution",)),
)
"""Layers from the bottom up, each a list of module prefixes; every other module of the
package (``dolb``, ``dolb.cli``, ``dolb.bench``, ``dolb.sklearn``, ...) is in the top
layer. A module may import from its own layer and the layers below it."""



# --------------------------------------------------------------------------- the walker


def package_modules(root: Path, package: str) -> dict[str, Path]:
    """Every module of the package in folder ``root``, by dotted name (a package's
    ``__init__.py`` under the package's own name)."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join([package, *parts])] = path
    return modules


def _resolve(module: str, is_package: bool, level: int, target: str | None) -> str:
    """The absolute name of a relative import of ``level`` dots written in ``module``."""
    base = module.split(".") if is_package else module.split(".")[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def _known(name: str, modules: dict[str, Path]) -> str | None:
    """``name`` if it is a module of the package, else its longest prefix that is one
    (``pkg.mod.function`` -> ``pkg.mod``), else None (not the package's)."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def imports_of(module: str, modules: dict[str, Path]) -> list[tuple[str, int]]:
    """``(imported module, line)`` for every module of the package that an import in
    ``module`` runs."""
    path = modules[module]
    is_package = path.name == "__init__.py"
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                source = _resolve(module, is_package, node.level, node.module)
            names = [
                f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source
                for alias in node.names
            ]
        else:
            continue
        for name in names:
            target = _known(name, modules)
            if target is not None:
                found.extend((imported, node.lineno) for imported in _run_by_import(module, target))
    return found


def _run_by_import(module: str, target: str) -> list[str]:
    """The modules an import of ``target`` in ``module`` runs: ``target`` and the
    packages above it, except ``module`` and the packages holding it."""
    pieces = target.split(".")
    run = [".".join(pieces[:n]) for n in range(1, len(pieces) + 1)]
    return [name for name in run if not (module == name or module.startswith(name + "."))]


def import_graph(modules: dict[str, Path]) -> dict[str, dict[str, int]]:
    """``{module: {imported module: first line importing it}}``."""
    graph = {}
    for module in modules:
        edges: dict[str, int] = {}
        for target, line in imports_of(module, modules):
            edges[target] = min(edges.get(target, line), line)
        graph[module] = edges
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One loop ``[a, b, ..., a]`` per group of modules that import each other (the
    strongly connected components of the graph with more than one module)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []

    def visit(start: str) -> None:  # Tarjan's algorithm, iterative
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(component)

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return [_loop_through(graph, component) for component in components]


def _loop_through(graph: dict[str, dict[str, int]], component: set[str]) -> list[str]:
    """A shortest loop from the first module of ``component`` back to itself."""
    start = min(component)
    previous = {start: None}
    queue = [start]
    for node in queue:
        for target in sorted(graph[node]):
            if target == start:
                loop = [node]
                while previous[loop[-1]] is not None:
                    loop.append(previous[loop[-1]])
                return [start, *reversed(loop[:-1]), start]
            if target in component and target not in previous:
                previous[target] = node
                queue.append(target)
    raise AssertionError(f"no loop through {start}")  # cannot happen in a component


def layer_of(module: str, layers=LAYERS) -> tuple[int, str]:
    """``(rank, layer name)`` of ``module``; the top layer ranks above every listed one."""
    for rank, (name, prefixes) in enumerate(layers):
        if any(module == prefix or module.startswith(prefix + ".") for prefix in prefixes):
            return rank, name
    return len(layers), "top"


def upward_imports(graph: dict[str, dict[str, int]], layers=LAYERS) -> list[tuple[str, str, int, str]]:
    """``(module, imported module, line, message)`` for each import of a higher layer."""
    found = []
    for module, edges in sorted(graph.items()):
        low_rank, low_name = layer_of(module, layers)
        for target, line in sorted(edges.items()):
            high_rank, high_name = layer_of(target, layers)
            if high_rank > low_rank:
                message = f"{module} (layer {low_name}) imports {target} (layer {high_name}), line {line}"
                found.append((module, target, line, message))
    return found


# --------------------------------------------------------------------------- dolb


@pytest.fixture(scope="module")
def dolb_graph():
    root = Path(dolb.__file__).parent
    return import_graph(package_modules(root, "dolb"))


def test_no_import_cycle(dolb_graph):
    loops = cycles(dolb_graph)
    assert not loops, "import cycles:\n" + "\n".join(" -> ".join(loop) for loop in loops)


def test_imports_only_go_down_the_layers(dolb_graph):
    upward = [message for *_, message in upward_imports(dolb_graph)]
    assert not upward, "imports from a lower layer to a higher one:\n" + "\n".join(upward)


def test_the_walker_sees_the_whole_package(dolb_graph):
    assert {"dolb", "dolb.cli", "dolb.data", "dolb.data.store.dataset"} <= set(dolb_graph)
    assert "dolb.data.store.dataset" in dolb_graph["dolb.data.store.writing"]


def outside_imports(modules: dict[str, Path], names: tuple[str, ...]) -> list[str]:
    """``module imports name, line N`` for every import, anywhere in a module of
    ``modules``, of a top-level package of ``names`` or of a module under one."""
    found = []
    for module, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                targets = [node.module or ""]
            else:
                continue
            found += [f"{module} imports {t}, line {node.lineno}" for t in targets if t.split(".")[0] in names]
    return found


def test_dolb_imports_neither_the_benchmarks_nor_the_tests():
    """``benchmarks`` (the project measuring itself) and ``tests`` import dolb, never the
    reverse: an installed dolb has neither."""
    found = outside_imports(package_modules(Path(dolb.__file__).parent, "dolb"), ("benchmarks", "tests"))
    assert not found, "dolb imports code outside its package:\n" + "\n".join(found)


ROOT_FINDING = re.compile(r"parents\[[2-9]\]|[\"']\.git[\"'/]")
"""A repository's root found from a module's path: ``Path(__file__).parents[2]``, a
``.git`` folder looked for."""


def test_no_module_of_dolb_finds_a_repository_root():
    """An installed dolb lives in site-packages: nothing in it may look for the checkout
    around it (the benchmarks, which run from one, may)."""
    found = [f"{path.relative_to(Path(dolb.__file__).parent)}:{n}: {line.strip()}"
             for path in sorted(Path(dolb.__file__).parent.rglob("*.py"))
             for n, line in enumerate(path.read_text().splitlines(), 1) if ROOT_FINDING.search(line)]
    assert not found, "modules finding the repository around them:\n" + "\n".join(found)


def test_the_outside_import_walker_sees_every_form(tmp_path):
    modules = make_package(tmp_path, {"__init__.py": "", "a.py": "import tests.s3_server\n",
                                      "b.py": "def f():\n    from benchmarks.engine import scale\n",
                                      "c.py": "from . import a\nimport testsuite\n"})
    assert outside_imports(modules, ("benchmarks", "tests")) == [
        "toy.a imports tests.s3_server, line 1", "toy.b imports benchmarks.engine, line 2"]
    assert ROOT_FINDING.search("Path(__file__).resolve().parents[2]") and ROOT_FINDING.search('(ROOT / ".git")')
    assert not ROOT_FINDING.search("Path(__file__).resolve().parents[1]")


# --------------------------------------------------------------------------- the walker itself


def make_package(tmp_path: Path, files: dict[str, str]) -> dict[str, Path]:
    """A package ``toy`` made of ``files`` (path relative to the package -> source)."""
    root = tmp_path / "toy"
    for name, source in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source))
    return package_modules(root, "toy")


def test_walker_finds_a_cycle_hidden_in_a_function_and_under_type_checking(tmp_path):
    modules = make_package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "from toy import b\n",
            "b.py": "def later():\n    from .sub import c\n",
            "sub/__init__.py": "",
            "sub/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import toy.a\n",
            "d.py": "import toy.a\n",
        },
    )
    graph = import_graph(modules)
    assert graph["toy.b"] == {"toy.sub": 2, "toy.sub.c": 2}  # toy.sub's __init__ runs first
    assert graph["toy.d"] == {"toy.a": 1}  # toy's __init__ is already running
    assert cycles(graph) == [["toy.a", "toy.b", "toy.sub.c", "toy.a"]]
    with pytest.raises(AssertionError, match="toy.a -> toy.b -> toy.sub.c -> toy.a"):
        assert not cycles(graph), "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles(graph))


def test_walker_resolves_names_packages_and_relative_imports(tmp_path):
    modules = make_package(
        tmp_path,
        {
            "__init__.py": "from .low import helper\n",
            "low/__init__.py": "from ..high import run\n",  # up one package, then down
            "low/helper.py": "import os\nfrom . import missing_name\n",
            "high.py": "from toy.low import helper, value\n",
        },
    )
    graph = import_graph(modules)
    assert graph["toy"] == {"toy.low": 1, "toy.low.helper": 1}
    assert graph["toy.low"] == {"toy.high": 1}
    assert graph["toy.low.helper"] == {}  # its own package is already running
    assert graph["toy.high"] == {"toy.low": 1, "toy.low.helper": 1}
    assert cycles(graph) == [["toy.high", "toy.low", "toy.high"]]
    layers = (("low", ("toy.low",)), ("high", ("toy.high",)))
    assert [m for *_, m in upward_imports(graph, layers)] == [
        "toy.low (layer low) imports toy.high (layer high), line 1",
    ]
