"""The "sparse_text" generator: a text-like sparse binary problem.

Rows are Zipf-distributed words weighted by log-tf-idf and normalised (as RCV1's
LYRL2004 features are); labels come from a sparse linear ground truth. Registered as
``"sparse_text"`` in :data:`~dolb.data.sources.generators.GENERATORS`.

Examples
--------
>>> X, y, about = SPARSE_TEXT({"n_rows": 50, "n_features": 100}, seed=0)["train"]
>>> X.shape, sorted(set(y.tolist())), about["part"]
((50, 100), [-1.0, 1.0], 'train')
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from dolb.data.params import GenParam
from dolb.data.sources import libm
from dolb.data.sources.generators import GENERATORS, Generator
from dolb.data.sources.source import Parts

TRUTH_DENSITY = 0.1
"""Share of the features on which the ground truth w* of "sparse_text" is non-zero."""
_MAX_DRAW_FACTOR = 64  # no row draws more than this times the most distinct words a row wants


def _sparse_text(params: dict[str, Any], rng: np.random.Generator) -> Parts:
    """A text-like binary problem: Zipf-distributed words, log-tf-idf rows, labels from
    a sparse linear ground truth with a median threshold, then flipped at random.

    Feature ``j`` is the ``(j+1)``-th most frequent word (a frequency-ranked vocabulary).
    A row wants ``max(1, Poisson(nnz_per_row))`` distinct features and draws as many
    i.i.d. words from the Zipf law as give that many distinct ones on average (capped,
    so that with a very steep law, zipf >~ 2, long rows come out shorter than asked);
    a word drawn ``tf`` times weighs ``(1 + log tf) * idf``, where
    ``idf = 1 - log P(word in a row)`` under the model, and each row has unit L2 norm.
    The label is ``+1`` when ``<w*, x>`` exceeds the median training score, ``-1``
    otherwise, then flipped with probability ``label_noise``. Draws happen in a fixed
    order (w*, train rows, train flips, test rows, test flips), so the training part
    does not depend on ``n_test`` and the flips not on ``label_noise``.
    """
    n_features = params["n_features"]
    words = _zipf_law(n_features, params["zipf"])
    mean_draws = _draws_for_distinct(words, np.array([params["nnz_per_row"]]))[0]
    idf = 1.0 - libm.log(-libm.expm1(mean_draws * libm.log1p(-words)))
    truth = np.where(rng.random(n_features) < TRUTH_DENSITY, rng.standard_normal(n_features), 0.0)
    X = _text_rows(words, idf, params["nnz_per_row"], params["n_rows"], rng)
    scores = X @ truth
    threshold = np.median(scores)
    parts = {"train": (X, _noisy_labels(scores, threshold, params["label_noise"], rng))}
    if params["n_test"]:
        X_test = _text_rows(words, idf, params["nnz_per_row"], params["n_test"], rng)
        y_test = _noisy_labels(X_test @ truth, threshold, params["label_noise"], rng)
        parts["test"] = (X_test, y_test)
    return parts


def _noisy_labels(scores: np.ndarray, threshold: float, noise: float, rng) -> np.ndarray:
    """+1.0 where ``scores > threshold``, else -1.0, each flipped with probability ``noise``.

    Examples
    --------
    >>> _noisy_labels(np.array([0.2, -1.0, 3.0]), 0.0, 0.0, np.random.default_rng(0))
    array([ 1., -1.,  1.])
    """
    clean = np.where(scores > threshold, 1.0, -1.0)
    return np.where(rng.random(len(scores)) < noise, -clean, clean)


def _zipf_law(n_features: int, exponent: float) -> np.ndarray:
    """Word probabilities proportional to ``rank ** -exponent``, rank 1 first.

    Examples
    --------
    >>> _zipf_law(3, 1.0).round(3)
    array([0.545, 0.273, 0.182])
    """
    weights = libm.power(np.arange(1, n_features + 1, dtype=np.float64), -exponent)
    return weights / weights.sum()


def _draws_for_distinct(words: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """How many i.i.d. draws from ``words`` give ``wanted`` distinct words on average
    (at least 1, at most ``_MAX_DRAW_FACTOR * wanted``): the inverse of
    ``D(m) = sum_j 1 - (1 - p_j) ** m``, interpolated on a geometric grid of ``m``.

    Examples
    --------
    >>> _draws_for_distinct(np.full(1000, 0.001), np.array([1, 100])).round(1)
    array([  1. , 105.3])
    """
    grid = libm.geomspace(1.0, float(_MAX_DRAW_FACTOR * max(1, wanted.max())), 256)
    stay = libm.log1p(-words)
    distinct = np.array([-libm.expm1(m * stay).sum() for m in grid])
    return np.maximum(1.0, np.interp(wanted, distinct, grid))


def _text_rows(words: np.ndarray, idf: np.ndarray, mean_nnz: float, n: int, rng) -> sp.csr_matrix:
    """``n`` unit-norm log-tf-idf rows over ``len(words)`` features (see :func:`_sparse_text`)."""
    n_features = len(words)
    wanted = np.clip(rng.poisson(mean_nnz, n), 1, n_features)
    draws = np.floor(_draws_for_distinct(words, wanted) + rng.random(n)).astype(np.int64)  # unbiased
    cdf = np.cumsum(words)
    cdf[-1] = 1.0
    ranks = np.minimum(np.searchsorted(cdf, _sorted_uniforms(draws, rng), side="right"), n_features - 1)
    row_starts = np.concatenate(([0], np.cumsum(draws[:-1])))
    first = np.ones(len(ranks), dtype=bool)
    first[1:] = ranks[1:] != ranks[:-1]
    first[row_starts] = True  # a row's first word is new even if the last row ended on it
    starts = np.flatnonzero(first)
    tf = np.diff(np.append(starts, len(ranks)))
    columns = ranks[starts]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.add.reduceat(first, row_starts, dtype=np.int64), out=indptr[1:])
    values = (1.0 + libm.log(tf)) * idf[columns]
    norms = np.sqrt(np.add.reduceat(values * values, indptr[:-1]))
    values /= np.repeat(norms, np.diff(indptr))
    return sp.csr_matrix((values, columns.astype(np.int32), indptr), shape=(n, n_features))


def _sorted_uniforms(counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``counts[i]`` uniforms on [0, 1) in increasing order for each row ``i``, rows one
    after another, without sorting: cumulated exponential gaps, one spare gap per row,
    divided by the row's total.

    Examples
    --------
    >>> u = _sorted_uniforms(np.array([3, 2]), np.random.default_rng(0))
    >>> bool(np.all(np.diff(u[:3]) > 0) and np.all(np.diff(u[3:]) > 0) and u.max() < 1)
    True
    """
    ends = np.cumsum(counts + 1)
    totals = np.cumsum(rng.standard_exponential(ends[-1]))
    before = np.concatenate(([0.0], totals[ends[:-1] - 1]))
    spans = totals[ends - 1] - before
    words = np.ones(ends[-1], dtype=bool)
    words[ends - 1] = False
    return (totals[words] - np.repeat(before, counts)) / np.repeat(spans, counts)


SPARSE_TEXT = Generator(
    name="sparse_text",
    make=_sparse_text,
    # values, column indices and their temporaries per non-zero; the truth and word weights
    size=lambda p: 32.0 * (p["n_rows"] + p["n_test"]) * p["nnz_per_row"] + 24.0 * p["n_features"],
    params={
        "n_rows": GenParam(100_000, int, 1, "training rows"),
        "n_features": GenParam(50_000, int, 2, "vocabulary size"),
        "nnz_per_row": GenParam(80, float, 1.0, "mean number of non-zeros per row"),
        "zipf": GenParam(1.1, float, 0.0, "exponent of the Zipf law of word frequencies"),
        "label_noise": GenParam(0.05, float, 0.0, "probability of flipping a label", high=1.0),
        "n_test": GenParam(0, int, 0, "rows of a test part from the same distribution"),
    },
    revision=1,  # 1: exp, log, ... from the C library (libm), not NumPy's AVX-512 loops
    parts=("train", "test"),
    reference="synthetic: Zipf words, log-tf-idf rows (as in RCV1 LYRL2004), sparse linear truth",
)
GENERATORS.add(SPARSE_TEXT.name, SPARSE_TEXT)
