"""Every metric dolb reports, built on the losses of :mod:`dolb.losses`.

Three kinds of metric exist. A *test* metric scores the current hypothesis on the
held-out test set at a checkpoint. An *online* metric summarises the prequential
(test-then-train) losses of the examples seen so far: squared error for regression,
the 0-1 mistake (``y * prediction <= 0``, a zero score a mistake) for binary
classification. ``test_error`` scores a test set by the predicted label instead (``+1``
if the score is > 0, else ``-1``: scikit-learn's and LIBSVM's rule, a zero score right on
a negative example; :func:`dolb.losses.misclassified`). A *timing* metric
measures the run itself (seconds spent learning so far, for runtime studies): it is
neither judged by ``dolb compare`` nor compared by ``dolb reproduce``, whose values
are deterministic.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dolb.conversions.cutoff import REPORTED as CUTOFF_REPORTED
from dolb.losses import hinge_loss, misclassified, squared_loss
from dolb.registry import Registry


@dataclass(frozen=True)
class Metric:
    """A named metric.

    ``source`` is ``"test"`` (``compute(predictions, targets)`` on the test set),
    ``"online"`` (``compute(cumulative_loss, n_seen)`` from the prequential losses) or
    ``"timing"`` (``compute(learn_seconds, n_seen)``, not deterministic). ``version``
    counts the changes of its definition: a cell recording a metric past version 1 has
    the version in its identity (:func:`metric_versions`), so that no value stored under
    an older definition is taken for the new one.
    """

    name: str
    tasks: tuple[str, ...]
    source: str
    compute: Callable[..., float]
    doc: str
    version: int = 1
    proportion: tuple[str, ...] = ()
    """The tasks on which every value is a proportion, in [0, 1] (a rate of mistakes):
    its interval over splits is then one that stays in [0, 1]
    (:func:`dolb.results.intervals.mean_intervals`)."""


def _mean_of(loss):
    return lambda predictions, targets: float(np.mean(loss(predictions, targets)))


METRICS: Registry[Metric] = Registry("metric")
"""Every metric a pipeline may ask for, by name."""

for _metric in (
    Metric("test_mse", ("regression",), "test", _mean_of(squared_loss),
           "mean squared error of the current hypothesis on the test set"),
    Metric("test_error", ("binary",), "test", _mean_of(misclassified),
           "0-1 error of the current hypothesis's predicted labels on the test set (a score "
           "of 0 predicts -1)", version=2, proportion=("binary",)),
    Metric("test_hinge", ("binary",), "test", _mean_of(hinge_loss),
           "mean hinge loss of the current hypothesis on the test set"),
    Metric("cumulative_loss", ("regression", "binary"), "online", lambda total, n: float(total),
           "sum of prequential losses so far (squared error; mistakes)"),
    Metric("online_loss", ("regression", "binary"), "online",
           lambda total, n: float(total / n) if n else float("nan"),
           "mean prequential loss so far (MSE; mistake rate)", proportion=("binary",)),
    Metric("learn_seconds", ("regression", "binary"), "timing", lambda seconds, n: float(seconds),
           "wall seconds the learner spent learning so far, its prequential loss summed (runtime "
           "studies; not deterministic)"),
):
    METRICS.add(_metric.name, _metric)


def metric_versions(names) -> dict[str, int]:
    """{name: version} of the metrics of ``names`` whose definition has changed (version
    past 1); unknown names are left to the pipeline's checks.

    >>> metric_versions(["test_error", "test_hinge", "online_loss"])
    {'test_error': 2}
    """
    return {name: METRICS[name].version for name in names if name in METRICS and METRICS[name].version > 1}


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
