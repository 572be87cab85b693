"""The "rcv1_resample" generator: an RCV1-scale stream resampled from the real sample.

The 27.6k-document RCV1 sample (DATA.md) is 30 times smaller than the corpus of Dekel's
cutoff-averaging experiments. This generator makes a stream of any length from it: the
documents of two top-level classes (:func:`~dolb.data.sources.rcv1.pair_view`) are cut,
once per seed, into a held-out test part (``test_fraction`` of them, real documents
unchanged but for their norm) and a training pool; every training row is a document
drawn uniformly with replacement from the pool, each of its tokens dropped with
probability ``dropout`` (at least one kept), then rescaled. The test documents are never
drawn for training: no leakage. With ~78 tokens per document a row almost never repeats
a previous one exactly (a few very short documents aside).

Feature scale: the sample's rows are log-tf-idf, cosine-normalised (norm 1). The paper
used un-normalised log(1 + count) features, whose norm grows with the length of the
document, and a radius R = max ‖x‖ well above 1. With ``norms = "fixed"`` every row
(train and test) is rescaled to norm ``radius``; with ``norms = "uniform"`` to a norm
drawn uniformly in [1, ``radius``] (documents of varying "length", as log-tf rows have).
``radius = 1`` keeps the sample's unit norm.

Registered as ``"rcv1_resample"`` in :data:`~dolb.data.sources.generators.GENERATORS`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from dolb.data.params import Choice, FilePath, GenParam, Members
from dolb.data.sources.generators import GENERATORS, Generator
from dolb.data.sources.rcv1 import CLASSES, load_npz, pair_view
from dolb.data.sources.source import Parts
from dolb.errors import ConfigError

MEAN_TOKENS = 80
"""About the mean number of tokens per RCV1 document (77.7 in the sample): sizes memory."""


def _resample(params: dict[str, Any], rng: np.random.Generator) -> Parts:
    """Held-out real documents as the test part, resampled documents with token dropout
    as the training part (see the module docstring). Draws happen in a fixed order: the
    split, the training documents, the dropout, the forced tokens, the training norms,
    the test norms."""
    X, y = pair_view(load_npz(Path(params["path"])), params["pair"])
    test, pool = _hold_out(X.shape[0], params["test_fraction"], rng)
    documents = pool[rng.integers(pool.shape[0], size=params["n_rows"])]
    X_train = dropped_tokens(X, documents, params["dropout"], rng)
    train_norms, test_norms = (_norms(n, params["radius"], params["norms"], rng) for n in (len(documents), len(test)))
    return {
        "train": (rescaled(X_train, train_norms), y[documents]),
        "test": (rescaled(sp.csr_matrix(X[test], dtype=np.float64), test_norms), y[test]),
    }


def _hold_out(n_documents: int, fraction: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(test documents, training pool), both sorted, a seeded ``fraction`` of the
    documents held out; ConfigError if either would be empty.

    >>> test, pool = _hold_out(10, 0.3, np.random.default_rng(0))
    >>> len(test), len(pool), sorted(set(test) | set(pool)) == list(range(10))
    (3, 7, True)
    """
    n_test = int(round(fraction * n_documents))
    if not 1 <= n_test < n_documents:
        raise ConfigError(
            f"generator 'rcv1_resample', parameter 'test_fraction': {fraction} of {n_documents} documents "
            "leaves no test or no training document"
        )
    order = rng.permutation(n_documents)
    return np.sort(order[:n_test]), np.sort(order[n_test:])


def dropped_tokens(X: sp.csr_matrix, documents: np.ndarray, dropout: float, rng: np.random.Generator) -> sp.csr_matrix:
    """Rows ``X[documents]`` (float64), each token dropped with probability ``dropout``;
    a row that would lose all its tokens keeps one drawn uniformly among them.

    Examples
    --------
    >>> X = sp.csr_matrix(np.array([[1.0, 2.0, 0.0], [0.0, 0.0, 3.0]]))
    >>> dropped_tokens(X, np.array([1, 0, 1]), 0.0, np.random.default_rng(0)).toarray()
    array([[0., 0., 3.],
           [1., 2., 0.],
           [0., 0., 3.]])
    """
    lengths = np.diff(X.indptr)[documents].astype(np.int64)
    if np.any(lengths == 0):
        raise ConfigError("generator 'rcv1_resample': a document to resample has no token")
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    positions = np.repeat(X.indptr[documents].astype(np.int64) - offsets[:-1], lengths) + np.arange(offsets[-1])
    keep = rng.random(offsets[-1]) >= dropout
    forced = offsets[:-1] + (rng.random(len(documents)) * lengths).astype(np.int64)
    kept = np.add.reduceat(keep, offsets[:-1], dtype=np.int64)
    keep[forced[kept == 0]] = True
    indptr = np.concatenate(([0], np.cumsum(np.add.reduceat(keep, offsets[:-1], dtype=np.int64))))
    chosen = positions[keep]
    return sp.csr_matrix(
        (X.data[chosen].astype(np.float64), X.indices[chosen], indptr), shape=(len(documents), X.shape[1])
    )


def _norms(n: int, radius: float, kind: str, rng: np.random.Generator) -> np.ndarray:
    """The norms of ``n`` rows: all ``radius`` ("fixed"), or uniform in [1, radius]."""
    if kind == "fixed":
        return np.full(n, radius)
    return rng.uniform(1.0, radius, n)


def rescaled(X: sp.csr_matrix, norms: np.ndarray) -> sp.csr_matrix:
    """``X`` with row i scaled to Euclidean norm ``norms[i]`` (rows must be non-empty).

    >>> rescaled(sp.csr_matrix(np.array([[3.0, 4.0]])), np.array([10.0])).toarray()
    array([[6., 8.]])
    """
    lengths = np.diff(X.indptr)
    current = np.sqrt(np.add.reduceat(X.data * X.data, X.indptr[:-1]))
    out = X.copy()
    out.data = X.data * np.repeat(norms / current, lengths)
    return out


def _settle(owner: str, params: dict[str, Any]) -> dict[str, Any]:
    """Uniform norms need a range: radius > 1."""
    if params["norms"] == "uniform" and params["radius"] == 1.0:
        raise ConfigError(f"{owner}, parameter 'radius': norms = 'uniform' needs a radius above 1")
    return params


RCV1_RESAMPLE = Generator(
    name="rcv1_resample",
    make=_resample,
    # per training token: position, flag, uniform, value, index (and their copies)
    size=lambda p: 48.0 * p["n_rows"] * MEAN_TOKENS + 3e8,  # + the sample and its pair view
    params={
        "path": FilePath(doc="the RCV1 .npz sample (DATA.md)"),
        "pair": Members(["CCAT", "MCAT"], CLASSES, 2, 2, "the class labelled +1, then the one labelled -1"),
        "n_rows": GenParam(640_000, int, 1, "training rows (resampled documents)"),
        "test_fraction": GenParam(0.2, float, 0.0, "share of the documents held out as the test part", high=1.0),
        "dropout": GenParam(0.1, float, 0.0, "probability of dropping each token of a drawn document", high=0.99),
        "radius": GenParam(1.0, float, 1.0, "R: the largest row norm"),
        "norms": Choice("fixed", ("fixed", "uniform"), "every row of norm R, or of a norm uniform in [1, R]"),
    },
    parts=("train", "test"),
    settle=_settle,
    reference="Lewis et al., RCV1, JMLR 2004 (LYRL2004 features), resampled with token dropout",
)
GENERATORS.add(RCV1_RESAMPLE.name, RCV1_RESAMPLE)
