"""Declared parameters of generators and importers: kinds, defaults and checks.

Each declaration has a ``default`` and a ``check(owner, name, value)`` returning the
value in canonical form (JSON-ready) or raising :class:`~dolb.errors.ConfigError` whose
message starts with ``owner`` (such as ``"generator 'irma'"``) and names the parameter.
:func:`check_params` checks a whole mapping against its declarations.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dolb.errors import ConfigError
from dolb.params import check_number

REQUIRED = "<required>"
"""Default of a parameter that must be given."""


@dataclass(frozen=True)
class GenParam:
    """A number with a default and bounds (a default of None: unset unless given).

    Examples
    --------
    >>> GenParam(0.05, float, 0.0).check("generator 'irma'", "noise", 0.1)
    0.1
    """

    default: int | float | None
    kind: type = float
    low: float = 0.0
    doc: str = ""
    high: float = math.inf

    def check(self, owner: str, name: str, value: Any) -> int | float:
        """Return ``value`` converted to ``kind``, or raise :class:`ConfigError`."""
        return check_number(f"{owner}, parameter {name!r}", value, self.kind, self.low, self.high)


@dataclass(frozen=True)
class Choice:
    """One value out of ``choices`` (compared with its type: ``true`` is not ``1``).

    Examples
    --------
    >>> Choice("auto", ("auto", True, False)).check("importer 'svmlight'", "zero_based", False)
    False
    """

    default: Any
    choices: tuple
    doc: str = ""

    def check(self, owner: str, name: str, value: Any) -> Any:
        """Return ``value`` if it is one of the choices, or raise :class:`ConfigError`."""
        value = _plain(value)
        if not _among(value, self.choices):
            raise ConfigError(
                f"{owner}, parameter {name!r}: expected one of {_listing(self.choices)}, got {value!r}"
            )
        return value


@dataclass(frozen=True)
class Members:
    """A list (or 1-D array) of ``low`` to ``high`` distinct values out of ``choices``,
    order kept.

    Examples
    --------
    >>> pair = Members(("CCAT", "ECAT"), ("CCAT", "ECAT", "GCAT"), low=2, high=2)
    >>> pair.check("importer 'rcv1'", "pair", ("GCAT", "CCAT"))
    ['GCAT', 'CCAT']
    """

    default: Any
    choices: tuple
    low: int = 1
    high: int = math.inf
    doc: str = ""

    def check(self, owner: str, name: str, value: Any) -> list:
        """Return ``value`` as a list, or raise :class:`ConfigError`."""
        where = f"{owner}, parameter {name!r}"
        if isinstance(value, np.ndarray) and value.ndim == 1:
            value = value.tolist()
        if not isinstance(value, (list, tuple)) or not self.low <= len(value) <= self.high:
            raise ConfigError(f"{where}: expected a list of {self._size()} values, got {value!r}")
        value = [_plain(item) for item in value]
        for item in value:
            if not _among(item, self.choices):
                raise ConfigError(f"{where}: {item!r} is not one of {_listing(self.choices)}")
        if len({repr(item) for item in value}) != len(value):
            raise ConfigError(f"{where}: {value!r} lists a value twice")
        return value

    def _size(self) -> str:
        """How many values the list holds, in words: ``2``, ``1 to 10``, ``at least 1``."""
        if self.low == self.high:
            return f"{self.low}"
        return f"{self.low} to {self.high}" if math.isfinite(self.high) else f"at least {self.low}"


@dataclass(frozen=True)
class FilePath:
    """A file or folder name. Where a file lies is not part of what it holds, so
    importers leave these out of a run's identity and hash the files instead.

    Examples
    --------
    >>> FilePath().check("importer 'mnist'", "path", "data/mnist")
    'data/mnist'
    """

    default: Any = REQUIRED
    doc: str = ""

    def check(self, owner: str, name: str, value: Any) -> str:
        """Return ``value`` if it is a non-empty string, or raise :class:`ConfigError`."""
        if not isinstance(value, str) or not value:
            raise ConfigError(f"{owner}, parameter {name!r}: expected a file name, got {value!r}")
        return value


@dataclass(frozen=True)
class Text:
    """A non-empty string, such as the name of a file's label column.

    Examples
    --------
    >>> Text().check("importer 'csv'", "label", "y")
    'y'
    """

    default: Any = REQUIRED
    doc: str = ""

    def check(self, owner: str, name: str, value: Any) -> str:
        """Return ``value`` if it is a non-empty string, or raise :class:`ConfigError`."""
        if not isinstance(value, str) or not value:
            raise ConfigError(f"{owner}, parameter {name!r}: expected a name, got {value!r}")
        return value


@dataclass(frozen=True)
class Names:
    """A list of at least one distinct non-empty string, order kept (column names).

    Examples
    --------
    >>> Names(None).check("importer 'csv'", "features", ["x1", "x2"])
    ['x1', 'x2']
    """

    default: Any = REQUIRED
    doc: str = ""

    def check(self, owner: str, name: str, value: Any) -> list[str]:
        """Return ``value`` as a list, or raise :class:`ConfigError`."""
        where = f"{owner}, parameter {name!r}"
        if not isinstance(value, (list, tuple)) or not value:
            raise ConfigError(f"{where}: expected a list of names, got {value!r}")
        for item in value:
            if not isinstance(item, str) or not item:
                raise ConfigError(f"{where}: {item!r} is not a name")
        if len(set(value)) != len(value):
            raise ConfigError(f"{where}: {list(value)!r} lists a name twice")
        return list(value)


@dataclass(frozen=True)
class Value:
    """A label as a file holds it: a string, a whole number or a finite number.

    Examples
    --------
    >>> Value(None).check("importer 'csv'", "positive", "spam"), Value(None).check("importer 'csv'", "positive", 1)
    ('spam', 1)
    """

    default: Any = None
    doc: str = ""

    def check(self, owner: str, name: str, value: Any) -> str | int | float:
        """Return ``value`` (a NumPy scalar as a Python one), or raise :class:`ConfigError`."""
        value = _plain(value)
        if isinstance(value, str) and value:
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ConfigError(f"{owner}, parameter {name!r}: expected a label (text or a finite number), got {value!r}")
        return value


Param = GenParam | Choice | Members | FilePath | Text | Names | Value


def check_params(owner: str, declared: dict[str, Param], params: Any) -> dict[str, Any]:
    """The full parameter set of ``owner``: given values checked, defaults filled in
    (a value or default of None means unset), or ConfigError naming the parameter at fault.

    Examples
    --------
    >>> check_params("generator 'toy'", {"n": GenParam(10, int, 1)}, {})
    {'n': 10}
    """
    if not isinstance(params, dict):
        raise ConfigError(f"{owner}: parameters must be a mapping, got {params!r}")
    unknown = sorted(set(params) - set(declared))
    if unknown:
        known = ", ".join(sorted(declared)) or "none"
        raise ConfigError(f"{owner}: unknown parameter {unknown[0]!r} (known: {known})")
    checked = {}
    for key, spec in declared.items():
        value = spec.default if params.get(key) is None else params[key]
        if value is REQUIRED:
            raise ConfigError(f"{owner}: parameter {key!r} is required")
        checked[key] = None if value is None else spec.check(owner, key, value)
    return checked


def _plain(value: Any) -> Any:
    """A NumPy scalar as the Python scalar it holds; anything else as it is."""
    return value.item() if isinstance(value, np.generic) else value


def _among(value: Any, choices: tuple) -> bool:
    """Whether ``value`` equals one of ``choices`` of exactly the same type."""
    return any(type(value) is type(choice) and value == choice for choice in choices)


def _listing(choices: tuple) -> str:
    """``choices`` as the user writes them: ``'auto', true, false``."""
    return ", ".join(str(c).lower() if isinstance(c, bool) else repr(c) for c in choices)
