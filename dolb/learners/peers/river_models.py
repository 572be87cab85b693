"""river's linear models as dolb learners (https://riverml.xyz, the optional extra ``peers``).

river learns from one example at a time, a row being a ``{feature: value}`` dict: each
wrapper hands the model the row's non-zeros (dense and CSR blocks give the same dicts),
asks for its score, then calls ``learn_one``. Labels −1/+1 become river's ``False/True``.
A score is the model's raw output w·x + b (river's ``predict_proba_one`` is its sigmoid).

Examples
--------
>>> import numpy as np
>>> learner = RiverPerceptron(2)
>>> learner.learn(np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]), np.array([1.0, -1.0, 1.0]))
array([ 0.,  2., -1.])
>>> learner.predict(np.array([[0.0, 1.0]]))  # w = (0, 0), b = 1 after three mistakes
array([1.])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dolb.learners.base import Param, register
from dolb.learners.peers.peer import PeerLearner

L2 = Param(0.0, low=0.0, doc="L2 penalty λ: the gradient gains λ·w on the example's features (river's l2)")
LEARNING_RATE = Param(0.01, above=0.0, doc="the optimiser's learning rate (river's default 0.01)")
INTERCEPT_LR = Param(0.01, low=0.0, doc="the intercept's constant learning rate; 0: no intercept")


class RiverLearner(PeerLearner):
    """A river model: per-row scores from its raw output, checkpoint scores X·w + b from
    its weights."""

    package = "river"

    def _step(self, row: dict, target: float) -> float:
        score = self._score(row)
        self.model.learn_one(row, target > 0.0 if self.task == "binary" else target)
        return score

    def _score(self, row: dict) -> float:
        return self.model._raw_dot_one(row)  # river's w·x + b (its GLMs' own score)

    def _weights(self) -> tuple[dict, float]:
        return self.model.weights, self.model.intercept

    def _predict(self, X) -> np.ndarray:
        weights, intercept = self._weights()
        w = np.zeros(self.n_features)
        for feature, value in weights.items():
            w[feature] = value
        return np.asarray(X @ w).ravel() + intercept

    def state_nbytes(self) -> int:
        return 16 * len(self._weights()[0])


def _optimizer(name: str, learning_rate: float) -> Any:
    from river import optim

    return {"sgd": optim.SGD, "adagrad": optim.AdaGrad}[name](learning_rate)


@register
class RiverPerceptron(RiverLearner):
    """river's Perceptron (``river.linear_model.Perceptron``): SGD with learning rate 1 on
    the hinge loss at threshold 0, a mistake being y·(w·x + b) ≤ 0, and an intercept b
    learned at rate 1.

    dolb's ``perceptron`` has no intercept: on a stream with a constant feature 1 appended
    it makes the same mistakes (tested).

    Examples
    --------
    >>> RiverPerceptron(3).config
    {'l2': 0.0}
    """

    name = "river_perceptron"
    task = "binary"
    params = {"l2": L2}
    test_params = {}

    def _model(self) -> Any:
        from river import linear_model

        return linear_model.Perceptron(l2=self.config["l2"])


@register
class RiverLogistic(RiverLearner):
    """river's logistic regression (``river.linear_model.LogisticRegression``) with its SGD
    or AdaGrad optimiser and an intercept learned at a constant rate.

    Examples
    --------
    >>> RiverLogistic(3, optimizer="adagrad").config["optimizer"]
    'adagrad'
    """

    name = "river_logistic"
    task = "binary"
    params = {
        "optimizer": Param("sgd", str, choices=("sgd", "adagrad"), doc="river's optim.SGD or optim.AdaGrad"),
        "learning_rate": LEARNING_RATE,
        "l2": L2,
        "intercept_lr": INTERCEPT_LR,
    }
    test_params = {"optimizer": "adagrad", "learning_rate": 0.5}

    def _model(self) -> Any:
        from river import linear_model

        c = self.config
        return linear_model.LogisticRegression(optimizer=_optimizer(c["optimizer"], c["learning_rate"]), l2=c["l2"],
                                               intercept_lr=c["intercept_lr"])


@register
class RiverPA(RiverLearner):
    """river's Passive-Aggressive classifier (``river.linear_model.PAClassifier``; Crammer
    et al., JMLR 2006): PA (``mode`` 0), PA-I (1) or PA-II (2) with aggressiveness C and an
    optional intercept, which PA updates like a weight on a constant feature.

    Examples
    --------
    >>> RiverPA(3, mode=2).config
    {'C': 1.0, 'mode': 2, 'learn_intercept': True}
    """

    name = "river_pa"
    task = "binary"
    params = {
        "C": Param(1.0, above=0.0, doc="aggressiveness C (modes 1 and 2)"),
        "mode": Param(1, int, low=0, high=2, doc="0: PA, 1: PA-I, 2: PA-II"),
        "learn_intercept": Param(True, bool, doc="learn an intercept b"),
    }
    test_params = {}

    def _model(self) -> Any:
        from river import linear_model

        c = self.config
        return linear_model.PAClassifier(C=c["C"], mode=c["mode"], learn_intercept=c["learn_intercept"])

    def _score(self, row: dict) -> float:
        from river import utils

        return utils.math.dot(row, self.model.weights) + self.model.intercept  # as PAClassifier scores

    def _weights(self) -> tuple[dict, float]:
        return dict(self.model.weights), self.model.intercept


@register
class RiverLinearRegression(RiverLearner):
    """river's linear regression (``river.linear_model.LinearRegression``): SGD on the
    squared loss with an intercept learned at a constant rate.

    Examples
    --------
    >>> learner = RiverLinearRegression(1, learning_rate=0.5)
    >>> learner.learn(np.array([[1.0], [1.0]]), np.array([2.0, 2.0]))
    array([0.  , 2.04])
    """

    name = "river_linear_regression"
    task = "regression"
    params = {"learning_rate": LEARNING_RATE, "l2": L2, "intercept_lr": INTERCEPT_LR}
    test_params = {"learning_rate": 0.1, "intercept_lr": 0.1}

    def _model(self) -> Any:
        from river import linear_model, optim

        c = self.config
        return linear_model.LinearRegression(optimizer=optim.SGD(c["learning_rate"]), l2=c["l2"],
                                             intercept_lr=c["intercept_lr"])
