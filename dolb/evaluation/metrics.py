"""The one implementation of every loss and metric dolb reports.

Three kinds of metric exist. A *test* metric scores the current hypothesis on the
held-out test set at a checkpoint. An *online* metric summarises the prequential
(test-then-train) losses of the examples seen so far: squared error for regression,
the 0-1 mistake (``y * prediction <= 0``) for binary classification. A *timing* metric
measures the run itself (seconds spent learning so far, for runtime studies): it is
neither judged by ``dolb compare`` nor compared by ``dolb reproduce``, whose values
are deterministic.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numba
import numpy as np

from dolb.conversions.cutoff import REPORTED as CUTOFF_REPORTED
from dolb.registry import Registry


def squared_loss(predictions: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Per-example squared error."""
    return (predictions - targets) ** 2


@numba.njit(cache=True)
def _mistakes(scores, targets):
    """:func:`zero_one_loss` of float64 arrays of one length."""
    out = np.empty(scores.shape[0])
    for i in range(scores.shape[0]):
        out[i] = 0.0 if targets[i] * scores[i] > 0.0 else 1.0
    return out


@numba.njit(cache=True)
def _running_mistakes(scores, targets, total):
    """:func:`running_zero_one_loss` of float64 arrays of one length."""
    out = np.empty(scores.shape[0])
    for i in range(scores.shape[0]):
        total += 0.0 if targets[i] * scores[i] > 0.0 else 1.0
        out[i] = total
    return out


def _checked(name: str, scores, targets) -> tuple[np.ndarray, np.ndarray]:
    """``scores`` and ``targets`` as float64 arrays of one dimension and one length, or
    a one-line ValueError naming ``name``."""
    scores = np.asarray(scores, dtype=np.float64)
    targets = np.asarray(targets, dtype=np.float64)
    if scores.ndim != 1 or scores.shape != targets.shape:
        raise ValueError(f"{name}: {scores.shape} scores for {targets.shape} targets")
    return scores, targets


def zero_one_loss(scores, targets) -> np.ndarray:
    """Per-example mistake: 1 unless ``targets * scores > 0`` (a zero score is a
    mistake, as in the Perceptron, and so is a NaN score: a learner that diverged is
    not right). One compiled pass: 2.0 µs for 8,192 examples, where NumPy's four
    (product, comparison, negation, cast) take 6.6 µs.

    >>> zero_one_loss(np.array([0.5, 0.0, np.nan, -2.0]), np.array([1.0, 1.0, 1.0, 1.0])).tolist()
    [0.0, 1.0, 1.0, 1.0]
    """
    return _mistakes(*_checked("zero_one_loss", scores, targets))


def running_zero_one_loss(scores, targets, total: float = 0.0) -> np.ndarray:
    """``total`` plus the running sum of :func:`zero_one_loss`: entry i is ``total`` +
    the mistakes on examples 0..i. Bit for bit ``total + np.cumsum(zero_one_loss(scores,
    targets))`` (``total`` a count: whole numbers below 2**53 add exactly in any order),
    in one compiled pass where that takes three: a cell pays it for every block it
    learns (a9a's four blocks of 8,192: 131-149 µs → 34-36 µs inside a pass).

    >>> running_zero_one_loss(np.array([0.5, 0.0, np.nan, -2.0]), np.ones(4), 10.0).tolist()
    [10.0, 11.0, 12.0, 13.0]
    """
    scores, targets = _checked("running_zero_one_loss", scores, targets)
    return _running_mistakes(scores, targets, float(total))


def running_squared_loss(predictions, targets, total: float = 0.0) -> np.ndarray:
    """``total`` plus the running sum of :func:`squared_loss` (``total + np.cumsum``:
    sums of reals depend on their order, and a cell's have always been added so)."""
    return total + np.cumsum(squared_loss(predictions, targets))


def hinge_loss(scores: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Per-example hinge loss ``max(0, 1 - y f(x))``."""
    return np.maximum(0.0, 1.0 - targets * scores)


RUNNING_LOSS = {"regression": running_squared_loss, "binary": running_zero_one_loss}
"""The prequential loss each task records, as ``running(predictions, targets, total)``:
the loss summed over the examples so far, after each example of a block."""


@dataclass(frozen=True)
class Metric:
    """A named metric.

    ``source`` is ``"test"`` (``compute(predictions, targets)`` on the test set),
    ``"online"`` (``compute(cumulative_loss, n_seen)`` from the prequential losses) or
    ``"timing"`` (``compute(learn_seconds, n_seen)``, not deterministic).
    """

    name: str
    tasks: tuple[str, ...]
    source: str
    compute: Callable[..., float]
    doc: str


def _mean_of(loss):
    return lambda predictions, targets: float(np.mean(loss(predictions, targets)))


METRICS: Registry[Metric] = Registry("metric")
"""Every metric a pipeline may ask for, by name."""

for _metric in (
    Metric("test_mse", ("regression",), "test", _mean_of(squared_loss),
           "mean squared error of the current hypothesis on the test set"),
    Metric("test_error", ("binary",), "test", _mean_of(zero_one_loss),
           "0-1 error of the current hypothesis on the test set"),
    Metric("test_hinge", ("binary",), "test", _mean_of(hinge_loss),
           "mean hinge loss of the current hypothesis on the test set"),
    Metric("cumulative_loss", ("regression", "binary"), "online", lambda total, n: float(total),
           "sum of prequential losses so far (squared error; mistakes)"),
    Metric("online_loss", ("regression", "binary"), "online",
           lambda total, n: float(total / n) if n else float("nan"),
           "mean prequential loss so far (MSE; mistake rate)"),
    Metric("learn_seconds", ("regression", "binary"), "timing", lambda seconds, n: float(seconds),
           "wall seconds the learner spent learning so far, its prequential loss summed (runtime "
           "studies; not deterministic)"),
):
    METRICS.add(_metric.name, _metric)


def deterministic_metrics() -> list[str]:
    """Names of the metrics whose values a rerun reproduces bit for bit (all but timing):
    the ones ``dolb compare`` judges and ``dolb reproduce`` compares."""
    return [name for name, metric in METRICS.items() if metric.source != "timing"]


INFO_METRICS: dict[str, tuple[str, ...]] = {
    "cutoff": CUTOFF_REPORTED,
    "suffix": ("suffix_length", "suffix_bound"),
    "longest_survivor": ("survivor_rounds",),
}
"""What a conversion reports with its output hypothesis at each checkpoint (recorded
as metrics of that conversion; informational, neither better nor worse)."""
