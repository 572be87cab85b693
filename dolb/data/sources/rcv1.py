"""Reading RCV1 (the ``.npz`` sample or sklearn's full corpus) as a binary problem
between two top-level categories.

The four top-level RCV1-v2 topics are CCAT (corporate), ECAT (economics), GCAT
(government) and MCAT (markets). A document belongs to class ``C`` when ``C`` is the
only one of the four it carries, and to class "OTHER" when it carries none of them;
documents with several are left out. :func:`pair_view` keeps the documents of two
classes, in stored order, labelled +1 for the first class and -1 for the second.
Registered as the importer ``"rcv1"`` in :data:`~dolb.data.sources.importers.IMPORTERS`.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from dolb.data.params import Choice, FilePath, Members
from dolb.data.sources.cache import file_identity
from dolb.data.sources.importers import IMPORTERS, Importer
from dolb.data.sources.source import Parts
from dolb.errors import ConfigError, DataError

TOP_LEVEL = ("CCAT", "ECAT", "GCAT", "MCAT")
"""The four top-level topic codes."""
OTHER = "OTHER"
"""Name of the class of documents carrying none of the four."""
CLASSES = TOP_LEVEL + (OTHER,)
_NPZ_ARRAYS = ("data", "indices", "indptr", "shape", "topics", "topic_names")


@dataclass(frozen=True)
class Corpus:
    """Documents as rows: features ``X`` (CSR), topic flags ``topics`` (n x k, dense
    or sparse, non-zero = carried), topic codes ``names`` (k), and ``origin``, the
    file or call named in errors."""

    X: sp.csr_matrix
    topics: np.ndarray | sp.spmatrix
    names: list[str]
    origin: str


def load_npz(path: Path) -> Corpus:
    """The corpus in an ``.npz`` file holding a CSR matrix and its topics (see DATA.md).

    Examples
    --------
    >>> corpus = load_npz(shared / "rcv1" / "rcv1v2_mulan_dedup.npz")
    >>> corpus.X.shape, corpus.topics.shape
    ((27613, 47236), (27613, 103))
    """
    origin = f"RCV1 file {path}"
    try:
        loaded = np.load(path, allow_pickle=False)
        if not isinstance(loaded, np.lib.npyio.NpzFile):  # an .npy holds one array
            raise DataError(f"{origin}: an .npy array, not an .npz archive of arrays")
        with loaded as npz:
            missing = [name for name in _NPZ_ARRAYS if name not in npz.files]
            if missing:
                raise DataError(f"{origin}: array {missing[0]!r} is missing")
            arrays = {name: npz[name] for name in _NPZ_ARRAYS}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise DataError(f"{origin}: cannot read it as an .npz archive ({exc})") from exc
    try:
        X = sp.csr_matrix((arrays["data"], arrays["indices"], arrays["indptr"]), shape=tuple(arrays["shape"]))
        X.check_format(full_check=True)
    except (ValueError, TypeError) as exc:
        raise DataError(f"{origin}: data/indices/indptr/shape are not a valid CSR matrix ({exc})") from exc
    return _corpus(origin, X, arrays["topics"], arrays["topic_names"])


def fetch_sklearn(data_home: str | None) -> Corpus:
    """The full corpus as :func:`sklearn.datasets.fetch_rcv1` gives it (downloaded into
    ``data_home`` on first use, where a network is available)."""
    import sklearn.datasets

    origin = f"sklearn.datasets.fetch_rcv1(data_home={data_home!r})"
    try:
        bunch = sklearn.datasets.fetch_rcv1(data_home=data_home)
    except OSError as exc:
        raise DataError(f"{origin}: cannot fetch RCV1 ({exc})") from exc
    return _corpus(origin, sp.csr_matrix(bunch.data), bunch.target, bunch.target_names)


def _corpus(origin: str, X: sp.csr_matrix, topics, names) -> Corpus:
    """A Corpus once the shapes agree and the four top-level codes are among ``names``."""
    names = [str(name) for name in np.asarray(names).ravel()]
    if topics.ndim != 2 or topics.shape != (X.shape[0], len(names)):
        raise DataError(
            f"{origin}: topics have shape {topics.shape}, expected ({X.shape[0]}, {len(names)}) "
            "(one row per document, one column per topic name)"
        )
    absent = [code for code in TOP_LEVEL if code not in names]
    if absent:
        raise DataError(f"{origin}: topic names lack the top-level code {absent[0]!r}")
    return Corpus(X, topics, names, origin)


def top_level_class(corpus: Corpus) -> np.ndarray:
    """Per document, its index in CLASSES (``4`` = OTHER), or -1 if it carries several
    of the four top-level topics.

    Examples
    --------
    >>> names = ["CCAT", "C11", "ECAT", "GCAT", "MCAT"]
    >>> topics = np.array([[1, 1, 0, 0, 0], [1, 0, 1, 0, 0], [0, 0, 0, 0, 0]])
    >>> top_level_class(Corpus(sp.csr_matrix((3, 2)), topics, names, "toy")).tolist()
    [0, -1, 4]
    """
    flags = corpus.topics[:, [corpus.names.index(code) for code in TOP_LEVEL]]
    flags = (flags.toarray() if sp.issparse(flags) else np.asarray(flags)) != 0
    carried = flags.sum(axis=1)
    return np.where(carried == 1, flags.argmax(axis=1), np.where(carried == 0, len(TOP_LEVEL), -1))


def pair_view(corpus: Corpus, pair: list[str]) -> tuple[sp.csr_matrix, np.ndarray]:
    """Rows of the documents of class ``pair[0]`` (label +1.0) or ``pair[1]`` (-1.0),
    in stored order; DataError if either class has no document.

    Examples
    --------
    >>> X, y = pair_view(load_npz(shared / "rcv1" / "rcv1v2_mulan_dedup.npz"), ["CCAT", "ECAT"])
    >>> X.shape[0], int((y > 0).sum())
    (11531, 9616)
    """
    classes = top_level_class(corpus)
    first, second = (CLASSES.index(code) for code in pair)
    rows = np.flatnonzero((classes == first) | (classes == second))
    for code, index in zip(pair, (first, second)):
        if not np.any(classes[rows] == index):
            carrying = "none" if code == OTHER else f"only {code!r} out"
            raise DataError(
                f"{corpus.origin}: no document of class {code!r} (carrying {carrying} "
                f"of {', '.join(TOP_LEVEL)})"
            )
    return corpus.X[rows], np.where(classes[rows] == first, 1.0, -1.0)


# --------------------------------------------------------------------------- the importer


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
        corpus = load_npz(Path(params["path"]))
    else:
        corpus = fetch_sklearn(params["data_home"])
    return {"train": pair_view(corpus, params["pair"])}


RCV1 = Importer(
    name="rcv1",
    read=_read_rcv1,
    sources=_rcv1_sources,
    params={
        "source": Choice("npz", ("npz", "sklearn"), "the .npz sample, or sklearn's full corpus"),
        "path": FilePath(None, "the .npz file (source = 'npz')"),
        "data_home": FilePath(None, "sklearn's data folder (source = 'sklearn'; default: sklearn's)"),
        "pair": Members(
            ["CCAT", "ECAT"], CLASSES, 2, 2, "the class labelled +1, then the one labelled -1"
        ),
    },
    parts=("train",),
    settle=_settle_rcv1,
    reference="Lewis et al., RCV1, JMLR 2004: RCV1-v2 with LYRL2004 log-tf-idf features",
)
IMPORTERS.add(RCV1.name, RCV1)
