"""Importers: data sets in other formats, converted once into dolb dataset stores.

An importer checks its parameters, identifies its source (size and sha256 of each
source file), and reads the source into parts ``{"train": (X, y)}`` plus ``"test"``
when the source has one. :func:`import_dataset` stores the parts under
``directory/<importer>-<hash>/<part>`` (see :mod:`dolb.data.sources.cache`) and reuses
them on later calls. The hash covers the importer name, its parameters with defaults
filled in and the sources' identity; parameters that only say *where* a file lies
(``path``, ``test_path``, ``data_home``) are left out, since the files' content stands
for them, so a data directory stays valid when the source files move or are shared
between machines. Each store's provenance records the importer, its parameters and the
source files (name, size, sha256).

The importers live in their own modules (:mod:`dolb.data.sources.rcv1`,
:mod:`dolb.data.sources.svmlight`, :mod:`dolb.data.sources.mnist`,
:mod:`dolb.data.sources.faces`, and for one's own files :mod:`dolb.data.sources.tables`
and :mod:`dolb.data.sources.arrays`), each adding itself to :data:`IMPORTERS`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from dolb.data.params import FilePath
from dolb.data.sources.cache import stored_parts
from dolb.data.sources.source import Parts, Source
from dolb.data.store.dataset import Dataset
from dolb.errors import ConfigError
from dolb.registry import Registry


@dataclass(kw_only=True)
class Importer(Source):
    """A registered importer.

    Parameters
    ----------
    read : callable
        ``read(params) -> {part: (X, y)}`` given checked parameters.
    sources : callable
        ``sources(params) -> [dict]``: JSON descriptions of what is read, such as
        :func:`file_identity` of each file.
    suffixes : tuple of str
        How the names of its files end (``".csv"``): a store named by such a file in a
        pipeline is refused with a hint to import it with this importer.

    The other parameters are those of :class:`~dolb.data.sources.source.Source`.
    """

    kind: ClassVar[str] = "importer"

    read: Callable[[dict[str, Any]], Parts]
    sources: Callable[[dict[str, Any]], list[dict]]
    suffixes: tuple[str, ...] = ()

    def __call__(
        self, params: dict[str, Any], directory: str | os.PathLike, build: bool = True,
        check: Callable[[str, Any], None] | None = None,
    ) -> dict[str, Dataset] | None:
        """The stored parts of this importer's run on ``params``, imported if need be
        (with ``build=False``: None when they are absent); ``check(part, y)`` is called
        on each part read before anything is written."""
        params = self.check_params(params)

        def read() -> dict[str, tuple]:
            made = self.read(params)
            for part, (_, y) in made.items():
                if check is not None:
                    check(part, y)
            return made

        try:
            identity = {
                "importer": self.name,
                "params": {k: v for k, v in params.items() if not isinstance(self.params[k], FilePath)},
                "sources": self.sources(params),
            }
            about = {"source": "importer", **identity, "reference": self.reference}
            make = lambda: self.described(read(), about)  # noqa: E731
            return stored_parts(directory, self.name, identity, make if build else None)
        except ImportError as exc:
            raise ConfigError(f"{self.owner} needs the package {exc.name!r} ({exc})") from exc


IMPORTERS: Registry[Importer] = Registry("importer")
"""Importer name to :class:`Importer` (a callable ``(params, directory)``)."""


def import_dataset(
    name: str, params: dict[str, Any], directory: str | os.PathLike, build: bool = True,
    check: Callable[[str, Any], None] | None = None,
) -> dict[str, Dataset] | None:
    """Import the source described by ``params`` with importer ``name``, or reuse the
    stores made by an earlier call with the same parameters and source content (with
    ``build=False``, only reuse: None when they are absent).

    Parameters
    ----------
    name : str
        A name in :data:`IMPORTERS`.
    params : dict
        Importer parameters (missing ones take their defaults).
    directory : str or os.PathLike
        Where imported runs are stored.
    build : bool
        Import when absent (else return None).
    check : callable, optional
        ``check(part, y)``, called on the targets of each part read, before anything is
        written (such as :func:`dolb.data.labels.check_binary` for a binary task).

    Returns
    -------
    dict of str to Dataset
        ``{"train": Dataset}``, plus ``"test"`` when the source has a test part.

    Examples
    --------
    >>> sets = import_dataset("svmlight", {"path": str(shared / "libsvm" / "a9a")}, tmp)
    >>> sets["train"].n_rows, sets["train"].n_features
    (32561, 123)
    """
    return IMPORTERS[name](params, directory, build, check)
