"""The code of a learner, as a cell's identity holds it: a stored cell is reused only for
the code that computed it.

A learner's *source* is the module of its class, of each class it inherits from or
holds (the learner an OMS learner selects over), and every module these import inside
the same package (a plugin's top-level package; for dolb's own, ``dolb.learners`` and
``dolb.selection`` but :data:`NOT_SOURCE`). Its digest hashes each module's syntax tree
without its docstrings: comments, docstrings and layout never change it; code does.
A **plugin** learner is identified by its distribution, its version and the digest of
its source (:func:`learner_code`). A **built-in** learner declares a ``revision``, and
:data:`~dolb.learners.revisions.SOURCES` records the digest each revision was released
with: while they agree the identity holds the revision alone (nothing for revision 1);
a source that differs adds its digest, until ``python3 -m dolb.learners.code --write``
records it (with the revision raised if results change). A learner that wraps another
library (``wraps``) adds that library's version. Why: docs/design/cell-identity.md.

Examples
--------
>>> from dolb.learners import learner_class
>>> learner_code(learner_class("perceptron")) is None  # revision 1, as recorded
True
>>> sorted(source_modules(learner_class("perceptron")))[:3]
['dolb.learners.base', 'dolb.learners.linear', 'dolb.learners.linear.driver']
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import importlib.util
import sys
from importlib.metadata import PackageNotFoundError, entry_points, version
from pathlib import Path
from typing import Any

from dolb.errors import ConfigError

BUILT_IN_PACKAGES = ("dolb.learners", "dolb.selection")
"""The packages whose modules make up dolb's own learners."""
NOT_SOURCE = ("dolb.learners", "dolb.learners.code", "dolb.learners.revisions")
"""Never part of a learner's source: the package that imports every learner, and this
module and its record."""


@functools.cache
def learner_code(cls: type) -> dict[str, Any] | None:
    """What a cell's identity holds of the code of learner class ``cls`` (None: nothing,
    a built-in learner at revision 1 as recorded); read once per class and process."""
    code: dict[str, Any]
    if _top(cls.__module__) == "dolb":
        code = _built_in_code(cls)
    else:
        code = plugin_code(cls)
    wrapped = getattr(cls, "wraps", None)
    if wrapped:
        code["wraps"] = {wrapped: distribution_version(wrapped)}
    return code or None


def _built_in_code(cls: type) -> dict[str, Any]:
    from dolb.learners.revisions import SOURCES

    revision = int(cls.revision)
    source = source_digest(cls)
    if SOURCES.get(cls.name) == {"revision": revision, "source": source}:
        return {} if revision == 1 else {"revision": revision}
    return {"revision": revision, "source": source}


_AT_IMPORT: dict[type, str] = {}
"""The source digest of each plugin learner class, taken when it was registered."""


def remember_source(cls: type) -> None:
    """Take the source digest of plugin learner ``cls`` now, as its module is imported:
    a process that goes on running the code it imported (a long-lived worker) reports
    that code's digest, not that of a file edited since (one that cannot be read is
    refused when a pipeline names the learner)."""
    with contextlib.suppress(ConfigError, OSError, SyntaxError):
        _AT_IMPORT[cls] = source_digest(cls)


def plugin_code(cls: type) -> dict[str, Any]:
    """The distribution, its version and the source digest of a learner from another
    package (a module on the path that no distribution installed: its name instead)."""
    where: dict[str, Any] = {"module": cls.__module__}
    found = plugin_distributions().get(_top(cls.__module__))
    if found:
        where = {"distribution": found[0], "version": found[1]}
    return where | {"source": _AT_IMPORT.get(cls) or source_digest(cls)}


@functools.cache
def plugin_distributions() -> dict[str, tuple[str, str]]:
    """{top-level package: (distribution, version)} of the packages whose ``dolb.learners``
    entry points add learners (read once a process)."""
    found = {}
    for point in entry_points(group="dolb.learners"):
        if point.dist is not None:
            found.setdefault(_top(point.value.partition(":")[0]), (point.dist.name, point.dist.version))
    return found


def distribution_version(name: str) -> str | None:
    """The installed version of distribution ``name``; None if absent."""
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def source_digest(cls: type) -> str:
    """SHA-256 (16 hex digits) of the docstring-free syntax trees of the modules that
    define ``cls``; ConfigError if one cannot be read."""
    text = "\n".join(f"{name}\n{_tree(path)}" for name, path in sorted(source_modules(cls).items()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def source_modules(cls: type) -> dict[str, Path]:
    """{module name: file} of the modules that define ``cls`` (see the module's docstring)."""
    scope = BUILT_IN_PACKAGES if _top(cls.__module__) == "dolb" else (_top(cls.__module__),)
    composed = [value for value in vars(cls).values() if isinstance(value, type)]  # e.g. OMS's base learner
    start = [base.__module__ for part in (cls, *composed) for base in part.__mro__]
    found: dict[str, Path] = {}
    for name in start:
        _collect(name, scope, found, cls)
    return found


def _collect(name: str, scope: tuple[str, ...], found: dict[str, Path], cls: type) -> None:
    if name in found or name in NOT_SOURCE or not _inside(name, scope) or not _is_module(name):
        return
    path = _module_file(name, cls)
    found[name] = path
    for imported in _imports(name, path):
        _collect(imported, scope, found, cls)


def _module_file(name: str, cls: type) -> Path:
    module = sys.modules.get(name)
    path = getattr(module, "__file__", None)
    if path is None:
        spec = importlib.util.find_spec(name)
        path = None if spec is None else spec.origin
    if path is None or not str(path).endswith(".py") or not Path(path).is_file():
        raise ConfigError(
            f"learner {getattr(cls, 'name', cls.__name__)!r}: the source of module {name!r} cannot be read, "
            "so its cells cannot be told apart from another code's: define the learner in a module of a package"
        )
    return Path(path)


def _imports(name: str, path: Path) -> list[str]:
    """The modules that module ``name`` (file ``path``) imports, as absolute names (a
    ``from a import b`` names ``a`` and ``a.b``: ``b`` may be a module)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    names = []
    for node in ast.walk(_parsed(path)):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            names += [base, *(f"{base}.{alias.name}" for alias in node.names)]
    return names


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a parent that is a module, not a package
        return False


def _parsed(path: Path) -> ast.Module:
    return _read(path, *_stamp(path))[0]


def _tree(path: Path) -> str:
    """The module's syntax tree without docstrings, as text (no line numbers)."""
    return _read(path, *_stamp(path))[1]


def _stamp(path: Path) -> tuple[int, int]:
    found = path.stat()
    return found.st_mtime_ns, found.st_size


@functools.lru_cache(maxsize=512)
def _read(path: Path, mtime_ns: int, size: int) -> tuple[ast.Module, str]:
    """(syntax tree, docstring-free tree as text) of the file as it is at ``mtime_ns``:
    every statement that is a string alone is left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    parsed = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            statements = getattr(node, field, None)
            if isinstance(statements, list) and any(map(_is_text, statements)):
                setattr(node, field, [s for s in statements if not _is_text(s)] or [ast.Pass()])
    return parsed, ast.dump(tree)


def _is_text(statement: ast.AST) -> bool:
    """Whether a statement is a string and nothing else: a docstring, of a module, class
    or function, or of an attribute (it does nothing when run)."""
    return (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, str))


def _top(module: str) -> str:
    return module.partition(".")[0]


def _inside(module: str, scope: tuple[str, ...]) -> bool:
    return any(module == package or module.startswith(package + ".") for package in scope)


def plugin_packages() -> dict[str, str]:
    """{distribution: "version (learner source digest, ...)"} of every package that adds
    learners (a module no distribution installed: its name), as a run records them.

    Examples
    --------
    >>> plugin_packages()["mylearner"]  # doctest: +SKIP
    '0.1.0 (arow 6e78df07e15d1ad8)'
    """
    from dolb.learners import registered_learners

    versions: dict[str, str | None] = {}
    sources: dict[str, list[str]] = {}
    for name, cls in registered_learners().items():  # sorted by name
        if _top(cls.__module__) != "dolb":
            code = plugin_code(cls)
            package = code.get("distribution") or code["module"]
            versions[package] = code.get("version")
            sources.setdefault(package, []).append(f"{name} {code['source']}")
    return {package: f"{versions[package]} ({', '.join(sources[package])})" for package in sorted(sources)}


def built_in_sources() -> dict[str, dict[str, Any]]:
    """{learner: {"revision", "source"}} for every learner of dolb's own, as now."""
    from dolb.learners import registered_learners

    return {name: {"revision": int(cls.revision), "source": source_digest(cls)}
            for name, cls in registered_learners().items() if _top(cls.__module__) == "dolb"}


def write_sources(path: Path | None = None) -> None:
    """Write :data:`~dolb.learners.revisions.SOURCES` (``path``: default its module's
    file) anew from the source as it is."""
    path = path or Path(__file__).with_name("revisions.py")
    lines = [f"    {name!r}: {entry!r}," for name, entry in sorted(built_in_sources().items())]
    path.write_text(
        '"""The source digest each built-in learner\'s revision was recorded with (see\n'
        ':mod:`dolb.learners.code`). Written by ``python3 -m dolb.learners.code --write``;\n'
        'raise a learner\'s ``revision`` first when its results change."""\n\n'
        "SOURCES = {\n" + "\n".join(lines) + "\n}\n", encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python3 -m dolb.learners.code --write")
    write_sources()
