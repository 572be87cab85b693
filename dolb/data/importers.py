"""Importers: data sets in other formats, converted once into dolb dataset stores.

An importer checks its parameters, identifies its source (size and sha256 of each
source file), and reads the source into parts ``{"train": (X, y)}`` plus ``"test"``
when the source has one. :func:`import_dataset` stores the parts under
``directory/<importer>-<hash>/<part>`` (see :mod:`dolb.data.cached`) and reuses them on
later calls. The hash covers the importer name, its parameters with defaults filled in
and the sources' identity; parameters that only say *where* a file lies (``path``,
``test_path``, ``data_home``) are left out, since the files' content stands for them,
so a data directory stays valid when the source files move or are shared between
machines. Each store's provenance records the importer, its parameters and the
source files (name, size, sha256).

Registered importers: ``"rcv1"`` (:mod:`dolb.data.rcv1`), ``"svmlight"``
(:mod:`dolb.data.svmlight`) and ``"mnist"`` (:mod:`dolb.data.mnist`).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from dolb.data import mnist, rcv1, svmlight
from dolb.data.cached import stored_parts
from dolb.data.params import Choice, FilePath, GenParam, Members, Param, check_params
from dolb.data.store import Dataset
from dolb.errors import ConfigError, DataError

Parts = dict[str, tuple[Any, Any]]
"""``{part: (X, y)}``."""


@dataclass(frozen=True)
class Importer:
    """A registered importer.

    Parameters
    ----------
    name : str
        Registry key.
    read : callable
        ``read(params) -> {part: (X, y)}`` given checked parameters.
    sources : callable
        ``sources(params) -> [dict]``: JSON descriptions of what is read, such as
        :func:`file_identity` of each file.
    params : dict of str to Param
        Declared parameters.
    settle : callable
        ``settle(owner, params) -> params``: checks between parameters and derived
        defaults, given the owner label for messages (default: none).
    reference : str
        Where the data come from (recorded in the provenance).
    """

    name: str
    read: Callable[[dict[str, Any]], Parts]
    sources: Callable[[dict[str, Any]], list[dict]]
    params: dict[str, Param]
    settle: Callable[[str, dict[str, Any]], dict[str, Any]] = lambda owner, params: params
    reference: str = ""

    def check_params(self, params: dict[str, Any]) -> dict[str, Any]:
        """The full parameter set (defaults filled in, cross-checked), or ConfigError."""
        owner = f"importer {self.name!r}"
        return self.settle(owner, check_params(owner, self.params, params))

    def __call__(
        self, params: dict[str, Any], directory: str | os.PathLike, build: bool = True
    ) -> dict[str, Dataset] | None:
        """The stored parts of this importer's run on ``params``, imported if need be
        (with ``build=False``: None when they are absent)."""
        params = self.check_params(params)
        try:
            identity = {
                "importer": self.name,
                "params": {k: v for k, v in params.items() if not isinstance(self.params[k], FilePath)},
                "sources": self.sources(params),
            }
            about = {"source": "importer", **identity, "reference": self.reference}
            make = lambda: {part: (X, y, {**about, "part": part}) for part, (X, y) in self.read(params).items()}  # noqa: E731
            return stored_parts(directory, self.name, identity, make if build else None)
        except ImportError as exc:
            raise ConfigError(f"importer {self.name!r} needs the package {exc.name!r} ({exc})") from exc


def file_identity(path: str | os.PathLike) -> dict[str, Any]:
    """Name, size and sha256 of a file; DataError if it cannot be read.

    Examples
    --------
    >>> _ = (tmp / "hello").write_text("hello")
    >>> file_identity(tmp / "hello")["sha256"][:12]
    '2cf24dba5fb0'
    """
    path = Path(path)
    try:
        with open(path, "rb") as stream:
            digest = hashlib.file_digest(stream, "sha256").hexdigest()
        size = path.stat().st_size
    except OSError as exc:
        raise DataError(f"source file {path}: cannot read it ({exc.strerror or exc})") from exc
    return {"file": path.name, "size": size, "sha256": digest}


def import_dataset(
    name: str, params: dict[str, Any], directory: str | os.PathLike, build: bool = True
) -> dict[str, Dataset] | None:
    """Import the source described by ``params`` with importer ``name``, or reuse the
    stores made by an earlier call with the same parameters and source content (with
    ``build=False``, only reuse: None when they are absent).

    Parameters
    ----------
    name : str
        A key of :data:`IMPORTERS`.
    params : dict
        Importer parameters (missing ones take their defaults).
    directory : str or os.PathLike
        Where imported runs are stored.
    build : bool
        Import when absent (else return None).

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
    if name not in IMPORTERS:
        raise ConfigError(f"unknown importer {name!r} (known: {', '.join(sorted(IMPORTERS))})")
    return IMPORTERS[name](params, directory, build)


# --------------------------------------------------------------------------- RCV1


def _settle_rcv1(owner: str, params: dict[str, Any]) -> dict[str, Any]:
    """``path`` is required with source "npz"; ``data_home`` only goes with "sklearn"."""
    if params["source"] == "npz" and params["path"] is None:
        raise ConfigError(f"{owner}, parameter 'path': required when source = 'npz'")
    misplaced = "path" if params["source"] == "sklearn" else "data_home"
    if params[misplaced] is not None:
        raise ConfigError(f"{owner}, parameter {misplaced!r}: not used when source = {params['source']!r}")
    return params


def _rcv1_sources(params: dict[str, Any]) -> list[dict]:
    """The npz file, or sklearn's fetcher (a fixed public corpus) and its version."""
    if params["source"] == "npz":
        return [file_identity(params["path"])]
    import sklearn

    return [{"fetcher": "sklearn.datasets.fetch_rcv1", "sklearn": sklearn.__version__}]


def _read_rcv1(params: dict[str, Any]) -> Parts:
    """The pair view of the corpus, as the training part."""
    if params["source"] == "npz":
        corpus = rcv1.load_npz(Path(params["path"]))
    else:
        corpus = rcv1.fetch_sklearn(params["data_home"])
    return {"train": rcv1.pair_view(corpus, params["pair"])}


# --------------------------------------------------------------------------- svmlight


def _svmlight_files(params: dict[str, Any]) -> dict[str, Path]:
    """The file of each part, training first."""
    files = {"train": Path(params["path"])}
    if params["test_path"] is not None:
        files["test"] = Path(params["test_path"])
    return files


def _read_svmlight(params: dict[str, Any]) -> Parts:
    """Both parts of an svmlight data set."""
    return svmlight.read_svmlight(
        _svmlight_files(params), params["n_features"], params["zero_based"], params["positive"]
    )


# --------------------------------------------------------------------------- MNIST


def _settle_mnist(owner: str, params: dict[str, Any]) -> dict[str, Any]:
    """``negative`` defaults to every digit not in ``positive``; the two are disjoint."""
    positive = sorted(params["positive"])
    negative = params["negative"]
    if negative is None:
        negative = [digit for digit in mnist.DIGITS if digit not in positive]
    both = sorted(set(positive) & set(negative))
    if both:
        raise ConfigError(f"{owner}, parameter 'negative': digit {both[0]} is also in 'positive'")
    if not negative:
        raise ConfigError(f"{owner}, parameter 'positive': leaves no digit for the negative class")
    return {**params, "positive": positive, "negative": sorted(negative)}


def _read_mnist(params: dict[str, Any]) -> Parts:
    """Train and test parts restricted to the chosen digits."""
    return mnist.read_mnist(Path(params["path"]), params["positive"], params["negative"], params["scale"])


IMPORTERS: dict[str, Importer] = {
    "rcv1": Importer(
        name="rcv1",
        read=_read_rcv1,
        sources=_rcv1_sources,
        params={
            "source": Choice("npz", ("npz", "sklearn"), "the .npz sample, or sklearn's full corpus"),
            "path": FilePath(None, "the .npz file (source = 'npz')"),
            "data_home": FilePath(None, "sklearn's data folder (source = 'sklearn'; default: sklearn's)"),
            "pair": Members(
                ["CCAT", "ECAT"], rcv1.CLASSES, 2, 2, "the class labelled +1, then the one labelled -1"
            ),
        },
        settle=_settle_rcv1,
        reference="Lewis et al., RCV1, JMLR 2004: RCV1-v2 with LYRL2004 log-tf-idf features",
    ),
    "svmlight": Importer(
        name="svmlight",
        read=_read_svmlight,
        sources=lambda params: [file_identity(path) for path in _svmlight_files(params).values()],
        params={
            "path": FilePath(doc="the training file (plain, .gz or .bz2)"),
            "test_path": FilePath(None, "the test file (optional)"),
            "n_features": GenParam(None, int, 1, "width of X (default: the largest index over both files)"),
            "zero_based": Choice("auto", ("auto", True, False), "whether feature indices start at 0"),
            "positive": GenParam(None, float, -float("inf"), "the label mapped to +1 (default: the larger)"),
        },
        reference="LIBSVM/svmlight text format, read by sklearn.datasets.load_svmlight_file",
    ),
    "mnist": Importer(
        name="mnist",
        read=_read_mnist,
        sources=lambda params: [file_identity(path) for path in mnist.mnist_files(Path(params["path"]))],
        params={
            "path": FilePath(doc="the folder of the four IDX files"),
            "positive": Members([3], mnist.DIGITS, 1, 10, "digits labelled +1"),
            "negative": Members(None, mnist.DIGITS, 1, 10, "digits labelled -1 (default: all the others)"),
            "scale": Choice(True, (True, False), "store x / 255 as float32 (else uint8 0..255)"),
        },
        settle=_settle_mnist,
        reference="LeCun et al., MNIST handwritten digits, http://yann.lecun.com/exdb/mnist/",
    ),
}
"""The registry: importer name to :class:`Importer` (a callable ``(params, directory)``)."""
