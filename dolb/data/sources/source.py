"""What generators and importers share: the shape of a registered data source.

A source is an entry of a :class:`~dolb.registry.Registry` (``GENERATORS`` or
``IMPORTERS``). It declares its parameters (each with a default and a one-line doc),
the parts it can make (``"train"``, and ``"test"`` when it has one) and the reference
it comes from. It checks parameters against the declarations and labels what it makes
with a provenance; :mod:`dolb.data.sources.cache` stores the parts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from dolb.data.params import Param, check_params

Parts = dict[str, tuple[Any, Any]]
"""``{part: (X, y)}`` with X a dense array or a CSR matrix."""


def _settled(owner: str, params: dict[str, Any]) -> dict[str, Any]:
    """No checks between parameters: ``params`` as they are."""
    return params


@dataclass(kw_only=True)
class Source:
    """A registered data source.

    Parameters
    ----------
    name : str
        Registry key, also the start of the cache folder names of its runs.
    params : dict of str to Param
        Declared parameters (see :mod:`dolb.data.params`).
    parts : tuple of str
        The parts it can make, ``"train"`` first (a part may depend on parameters).
    reference : str
        Where the source comes from (recorded in the provenance).
    settle : callable
        ``settle(owner, params) -> params``: checks between parameters and derived
        defaults, given the owner label for messages (default: none).
    """

    kind: ClassVar[str] = "source"

    name: str
    params: dict[str, Param] = field(default_factory=dict)
    parts: tuple[str, ...] = ("train",)
    reference: str = ""
    settle: Callable[[str, dict[str, Any]], dict[str, Any]] = _settled

    @property
    def owner(self) -> str:
        """How messages name this source: ``generator 'irma'``."""
        return f"{self.kind} {self.name!r}"

    def check_params(self, params: dict[str, Any]) -> dict[str, Any]:
        """The full parameter set (defaults filled in, cross-checked), or ConfigError."""
        return self.settle(self.owner, check_params(self.owner, self.params, params))

    def described(self, made: Parts, about: dict[str, Any]) -> dict[str, tuple]:
        """``{part: (X, y, provenance)}``: each part of ``made`` with ``about`` and its name
        as provenance; TypeError if the source made a part it does not declare."""
        undeclared = sorted(set(made) - set(self.parts))
        if undeclared:
            raise TypeError(f"{self.owner} made part {undeclared[0]!r}, not among {list(self.parts)}")
        return {part: (X, y, {**about, "part": part}) for part, (X, y) in made.items()}
