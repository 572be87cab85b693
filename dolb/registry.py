"""Registries: one shape for every kind of pluggable part.

Learners, conversions, generators, importers, metrics and report kinds each live in a
:class:`Registry`, a name → entry mapping that the rest of dolb reads instead of keeping
lists of its own, filled by the modules that define the entries (``registry.add(name,
entry)`` or ``@registry.register``) and, for the kinds open to other packages, by entry
points, loaded when the registry is first read. A package adds a learner so::

    [project.entry-points."dolb.learners"]    # in its pyproject.toml
    my_learner = "my_package.my_module"

One that fails to load is kept aside (:meth:`Registry.unloadable`): asking for its name
is a ConfigError naming it and its error. Why: docs/design/extending.md.

Examples
--------
>>> colours = Registry("colour")
>>> colours.add("red", "#f00")
>>> colours["red"], "blue" in colours, colours.names()
('#f00', False, ['red'])
>>> colours["rde"]
Traceback (most recent call last):
...
dolb.errors.ConfigError: unknown colour 'rde' (did you mean 'red'?; known: red)
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator
from importlib import import_module
from importlib.metadata import entry_points
from typing import Generic, TypeVar

from dolb.errors import ConfigError

T = TypeVar("T")


def did_you_mean(word: str, known) -> str:
    """``" (did you mean 'x'?)"`` for the closest of ``known``, or ``""``.

    Examples
    --------
    >>> did_you_mean("lerner", ["learner", "task"])
    " (did you mean 'learner'?)"
    >>> did_you_mean("zzz", ["learner"])
    ''
    """
    close = difflib.get_close_matches(str(word), [str(k) for k in known], n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


class Registry(Generic[T]):
    """Entries of one kind, by name.

    Parameters
    ----------
    kind : str
        What the entries are, for messages ("learner", "conversion", ...).
    entry_point_group : str, optional
        The group of Python entry points that add entries from other packages
        (``"dolb.learners"``); loaded once, when the registry is first read.
    modules : tuple of str, optional
        Modules whose import adds dolb's own entries, imported when the registry is
        first read (so that importing the registry's package stays light).
    """

    def __init__(self, kind: str, entry_point_group: str | None = None, modules: tuple[str, ...] = ()) -> None:
        self.kind = kind
        self.entry_point_group = entry_point_group
        self.modules = modules
        self._entries: dict[str, T] = {}
        self._unloadable: dict[str, str] = {}
        self._plugins_loaded = entry_point_group is None and not modules

    def add(self, name: str, entry: T) -> None:
        """Add ``entry`` under ``name``; TypeError if another entry has the name."""
        if not name or not isinstance(name, str):
            raise TypeError(f"a {self.kind} needs a name, got {name!r}")
        if name in self._entries and self._entries[name] is not entry:
            raise TypeError(f"{self.kind} name {name!r} is registered twice")
        self._entries[name] = entry

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator form of :meth:`add`."""

        def decorate(entry: T) -> T:
            self.add(name, entry)
            return entry

        return decorate

    def _load_plugins(self) -> None:
        if self._plugins_loaded:
            return
        self._plugins_loaded = True
        for module in self.modules:
            import_module(module)
        for point in entry_points(group=self.entry_point_group) if self.entry_point_group else ():
            try:
                point.load()
            except Exception as error:  # a broken plugin must not break the others
                lines = str(error).strip().splitlines()
                said = f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__
                self._unloadable[point.name] = f"could not load entry point {point.value}: {said}"

    def unloadable(self) -> dict[str, str]:
        """The entry points that failed to load, by name: what went wrong, one line each
        (``"could not load entry point my_package.my_module: ModuleNotFoundError: ..."``).

        Examples
        --------
        >>> Registry("colour").unloadable()
        {}
        """
        self._load_plugins()
        return dict(sorted(self._unloadable.items()))

    def __getitem__(self, name: str) -> T:
        self._load_plugins()
        try:
            return self._entries[name]
        except (KeyError, TypeError):
            if isinstance(name, str) and name in self._unloadable:
                raise ConfigError(f"{self.kind} {name!r}: {self._unloadable[name]}") from None
            raise ConfigError(self.unknown(name)) from None

    def unknown(self, name: object) -> str:
        """The message for a name that is not registered (naming the entry points that
        could not load, if any)."""
        hint = did_you_mean(name, self._entries)
        known = ", ".join(self.names()) or "none"
        if self._unloadable:
            known += f"; entry points that could not load: {', '.join(sorted(self._unloadable))}"
        if hint:
            return f"unknown {self.kind} {name!r}{hint[:-1]}; known: {known})"
        return f"unknown {self.kind} {name!r} (known: {known})"

    def __contains__(self, name: object) -> bool:
        self._load_plugins()
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        self._load_plugins()
        return len(self._entries)

    def names(self) -> list[str]:
        """Every name, sorted."""
        self._load_plugins()
        return sorted(self._entries)

    def items(self) -> list[tuple[str, T]]:
        """(name, entry) pairs, sorted by name."""
        return [(name, self._entries[name]) for name in self.names()]

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {len(self._entries)} entries)"
