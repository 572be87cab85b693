"""Baselines that ignore the features: the majority class and no-change, for binary
classification, and their regression analogues, the running mean and the last target.

They are the references a stream learner's error is read against: the Kappa-M statistic
compares it with the majority class's, the Kappa-Temporal statistic with no-change's.
Each predicts example t from the targets 1..t−1 alone (test, then train), and its
hypothesis at a checkpoint is a constant: every test row gets the same prediction.
Their state is a few numbers, whatever the stream's length.
"""

from __future__ import annotations

import numpy as np

from dolb.learners.base import OnlineLearner, register


class ConstantBaseline(OnlineLearner):
    """A learner predicting one value whatever the features: :meth:`constant` now.

    Subclasses implement :meth:`_learn` (from the targets alone) and :meth:`constant`.
    """

    params = {}
    test_params = {}
    reference = True
    """A reference for the other learners: tables show it after them, rankings leave it
    out of the ranks (:func:`dolb.results.tables.is_reference`)."""

    def constant(self) -> float:
        """The prediction of every row now."""
        raise NotImplementedError

    def _predict(self, X) -> np.ndarray:
        return np.full(X.shape[0], self.constant())


@register
class Majority(ConstantBaseline):
    """The majority class: the label seen most often so far (Bifet, de Francisci Morales,
    Read, Holmes and Pfahringer, "Efficient online evaluation of big data stream
    classifiers", KDD 2015: the baseline of the Kappa-M statistic).

    With p_t and n_t the numbers of +1 and −1 labels among the first t examples, example
    t + 1 is predicted +1 if p_t ≥ n_t, else −1: a tie, and so the first example (no
    label seen), goes to +1. The decision value is the label, ±1. Unlabelled rows count
    for nothing.

    Examples
    --------
    >>> learner = Majority(1)
    >>> learner.learn(np.zeros((5, 1)), np.array([-1.0, -1.0, 1.0, 1.0, 1.0]))
    array([ 1., -1., -1., -1.,  1.])
    >>> learner.predict(np.zeros((2, 1)))
    array([1., 1.])
    """

    name = "majority"
    task = "binary"

    def __init__(self, n_features, n_train=None, conversions=("last",), **params):
        super().__init__(n_features, n_train, conversions, **params)
        self.positives = 0
        self.negatives = 0

    def _learn(self, X, y):
        positive = y > 0.0
        before = np.concatenate(([0], np.cumsum(positive)[:-1])) + self.positives
        negatives_before = np.arange(y.shape[0]) + (self.positives + self.negatives) - before
        self.positives += int(positive.sum())
        self.negatives += int(y.shape[0] - positive.sum())
        return np.where(before >= negatives_before, 1.0, -1.0)

    def constant(self):
        return 1.0 if self.positives >= self.negatives else -1.0


@register
class RunningMean(ConstantBaseline):
    """The mean of the targets seen so far, the majority class's analogue for regression
    (the prediction minimising the squared error on the examples seen: the reference of
    the coefficient of determination, R² = 1 − MSE / MSE of the mean).

    Example t + 1 is predicted (y_1 + … + y_t) / t, the sum taken in stream order; the
    first example (no target seen) is predicted 0.

    Examples
    --------
    >>> learner = RunningMean(1)
    >>> learner.learn(np.zeros((4, 1)), np.array([2.0, 4.0, 0.0, 1.0]))
    array([0., 2., 3., 2.])
    >>> learner.predict(np.zeros((1, 1)))
    array([1.75])
    """

    name = "running_mean"
    task = "regression"

    def __init__(self, n_features, n_train=None, conversions=("last",), **params):
        super().__init__(n_features, n_train, conversions, **params)
        self.total = 0.0
        self.count = 0

    def _learn(self, X, y):
        sums = np.cumsum(np.concatenate(([self.total], y)))  # sequential: the same bits however cut
        counts = np.arange(self.count, self.count + y.shape[0] + 1)
        means = np.divide(sums, counts, out=np.zeros_like(sums), where=counts > 0)
        self.total, self.count = float(sums[-1]), int(counts[-1])
        return means[:-1]

    def constant(self):
        return self.total / self.count if self.count else 0.0


class LastTarget(ConstantBaseline):
    """Predicts the last target seen; ``first`` before any."""

    first = 0.0

    def __init__(self, n_features, n_train=None, conversions=("last",), **params):
        super().__init__(n_features, n_train, conversions, **params)
        self.last = self.first

    def _learn(self, X, y):
        predictions = np.concatenate(([self.last], y[:-1])) if y.shape[0] else np.empty(0)
        if y.shape[0]:
            self.last = float(y[-1])
        return predictions

    def constant(self):
        return self.last


@register
class NoChange(LastTarget):
    """No-change: the last label seen (Žliobaitė, Bifet, Read, Pfahringer and Holmes,
    "Evaluation methods and decision theory for classification of streaming data with
    temporal dependence", Machine Learning 98, 2015: the baseline of the Kappa-Temporal
    statistic, which tells a learner that exploits the labels' autocorrelation from one
    that learns from the features).

    Example t + 1 is predicted y_t; the first example (no label seen) is predicted +1.
    Its online mistakes are the number of label changes along the stream, plus one if
    the first label is −1. Unlabelled rows leave the last label as it was.

    Examples
    --------
    >>> learner = NoChange(1)
    >>> learner.learn(np.zeros((4, 1)), np.array([-1.0, -1.0, 1.0, -1.0]))
    array([ 1., -1., -1.,  1.])
    >>> learner.predict(np.zeros((2, 1)))
    array([-1., -1.])
    """

    name = "no_change"
    task = "binary"
    first = 1.0


@register
class NoChangeRegression(LastTarget):
    """No-change for regression, the persistence forecast: the last target seen (the
    regression form of the no-change baseline of Žliobaitė et al., Machine Learning 98,
    2015).

    Example t + 1 is predicted y_t; the first example (no target seen) is predicted 0.

    Examples
    --------
    >>> learner = NoChangeRegression(1)
    >>> learner.learn(np.zeros((3, 1)), np.array([0.5, 2.0, 1.0]))
    array([0. , 0.5, 2. ])
    """

    name = "no_change_regression"
    task = "regression"
