"""The losses dolb scores predictions with, per example and summed as a stream goes:
the squared error for regression; for binary classification the online mistake
(``y * score <= 0``, the Perceptron's), the test mistake (the predicted label
``+1 if score > 0 else -1`` differs from ``y``, scikit-learn's and LIBSVM's rule) and
the hinge loss. The two mistakes differ only on a score of exactly 0: online, it is a
mistake whatever the label (the prequential losses and every conversion fed by them);
on a test set, it predicts the negative class. :mod:`dolb.evaluation.metrics` builds
every reported metric from them; a cell's running loss (:data:`RUNNING_LOSS`) is what
``OnlineLearner.learn_running`` returns, which a learner may compute as it learns
(the linear learners do, bit for bit the same: they are below evaluation, and so
these are too).
"""

from __future__ import annotations

import numba
import numpy as np


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
def _misclassified(scores, targets):
    """:func:`misclassified` of float64 arrays of one length."""
    out = np.empty(scores.shape[0])
    for i in range(scores.shape[0]):
        label = 1.0 if scores[i] > 0.0 else -1.0
        out[i] = 0.0 if label == targets[i] and not np.isnan(scores[i]) else 1.0
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
    """Per-example online mistake: 1 unless ``targets * scores > 0`` (a zero score is a
    mistake, as in the Perceptron, and so is a NaN score: a learner that diverged is
    not right). The prequential losses of a cell; a test set is scored by
    :func:`misclassified`. One compiled pass, where NumPy takes four (product,
    comparison, negation, cast).

    >>> zero_one_loss(np.array([0.5, 0.0, np.nan, -2.0]), np.array([1.0, 1.0, 1.0, 1.0])).tolist()
    [0.0, 1.0, 1.0, 1.0]
    """
    return _mistakes(*_checked("zero_one_loss", scores, targets))


def misclassified(scores, targets) -> np.ndarray:
    """Per-example test mistake: 1 unless the predicted label, ``+1 if score > 0 else
    -1``, is the target (``targets`` in {-1, +1}). A score of exactly 0 predicts -1, as
    scikit-learn's ``LinearClassifierMixin.predict`` (``classes_[0]``) and LIBSVM do: it
    is right on a negative example and wrong on a positive one. A NaN score is a mistake
    whatever the label (a learner that diverged is not right; scikit-learn would predict
    -1). What ``test_error`` averages (:mod:`dolb.evaluation.metrics`).

    >>> misclassified(np.array([0.5, 0.0, 0.0, np.nan, -2.0]), np.array([1.0, 1.0, -1.0, -1.0, -1.0])).tolist()
    [0.0, 1.0, 0.0, 1.0, 0.0]
    """
    return _misclassified(*_checked("misclassified", scores, targets))


def running_zero_one_loss(scores, targets, total: float = 0.0) -> np.ndarray:
    """``total`` plus the running sum of :func:`zero_one_loss`: entry i is ``total`` +
    the mistakes on examples 0..i. Bit for bit ``total + np.cumsum(zero_one_loss(scores,
    targets))`` (``total`` a count: whole numbers below 2**53 add exactly in any order),
    in one compiled pass where that takes three: ``OnlineLearner.learn_running`` sums
    it so for every block a cell learns, unless the learner counts its mistakes as it
    learns.

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
