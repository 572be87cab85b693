"""scikit-learn's ``partial_fit`` linear models as dolb learners.

Each row is scored with the estimator's ``decision_function`` (0 before its first update),
then learned with ``partial_fit`` on that one row, so the scores are the test-then-train
predictions dolb's metrics need. With ``shuffle=False`` one ``partial_fit`` call over a
block runs the same per-example updates in the block's order (its step counter ``t_``
carries over between calls), so a block at a time would give the same weights (to
1e-12 in the tests; not with the L1 penalty, whose cumulative truncation restarts at
each call), but not the score of each row before its update, which is why the rows go
one at a time; this costs
about a millisecond a row (scikit-learn's per-call checks); see docs/guide/learners.md.

scikit-learn is one of dolb's own dependencies; these learners need version 1.8 or later
(the PA learning rates of ``SGDClassifier``), which the extra ``peers`` asks for.

Examples
--------
>>> import numpy as np
>>> learner = SklearnPerceptron(2)
>>> learner.learn(np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]), np.array([1.0, -1.0, 1.0]))
array([ 0.,  2., -1.])
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from dolb.learners.base import Param, register
from dolb.learners.peers.peer import INSTALL, PeerLearner

CLASSES = np.array([-1.0, 1.0])
FIT_INTERCEPT = Param(True, bool, doc="learn an intercept (scikit-learn's fit_intercept)")
ALPHA = Param(0.0001, low=0.0, doc="the penalty's weight (scikit-learn's alpha)")
PENALTY = Param("l2", str, choices=("l2", "l1", "none"), doc="scikit-learn's penalty ('none': None)")
ETA0 = Param(0.01, above=0.0, doc="initial learning rate (scikit-learn's eta0)")


class SklearnLearner(PeerLearner):
    """A scikit-learn linear model fed one row at a time (``shuffle=False``, one pass)."""

    package = "sklearn"
    wraps = "scikit-learn"

    def _rows(self, X) -> Iterator[Any]:
        return (X[i:i + 1] for i in range(X.shape[0]))

    def _step(self, row, target: float) -> float:
        score = self._predict(row)[0]
        if self.task == "binary":
            self.model.partial_fit(row, np.array([target]), classes=CLASSES)
        else:
            self.model.partial_fit(row, np.array([target]))
        return score

    def _predict(self, X) -> np.ndarray:
        if not hasattr(self.model, "coef_"):
            return np.zeros(X.shape[0])
        return np.asarray(self.model.decision_function(X) if self.task == "binary" else self.model.predict(X),
                          dtype=np.float64)

    def state_nbytes(self) -> int:
        return self.model.coef_.nbytes if hasattr(self.model, "coef_") else 0


def _penalty(name: str) -> str | None:
    return None if name == "none" else name


@register
class SklearnSGD(SklearnLearner):
    """scikit-learn's ``SGDClassifier`` (``partial_fit``, ``shuffle=False``): SGD on the
    hinge or logistic loss with an L2 or L1 penalty and scikit-learn's learning-rate
    schedules.

    Examples
    --------
    >>> SklearnSGD(3).model.get_params()["learning_rate"]
    'optimal'
    """

    name = "sklearn_sgd"
    task = "binary"
    params = {
        "loss": Param("hinge", str, choices=("hinge", "log_loss", "modified_huber"), doc="scikit-learn's loss"),
        "penalty": PENALTY,
        "alpha": ALPHA,
        "schedule": Param("optimal", str, choices=("optimal", "constant", "invscaling"),
                               doc="scikit-learn's learning_rate (the step schedule)"),
        "eta0": ETA0,
        "power_t": Param(0.5, low=0.0, doc="exponent of the invscaling schedule"),
        "fit_intercept": FIT_INTERCEPT,
    }
    test_params = {}

    def _model(self) -> Any:
        from sklearn.linear_model import SGDClassifier

        c = self.config
        return SGDClassifier(loss=c["loss"], penalty=_penalty(c["penalty"]), alpha=c["alpha"],
                             learning_rate=c["schedule"], eta0=c["eta0"], power_t=c["power_t"],
                             fit_intercept=c["fit_intercept"], shuffle=False, random_state=0)


@register
class SklearnPerceptron(SklearnLearner):
    """scikit-learn's ``Perceptron`` (``partial_fit``, ``shuffle=False``, no penalty): a
    mistake is y·(w·x + b) ≤ 0, then w ← w + η₀·y·x and b ← b + η₀·y.

    With η₀ = 1 and no intercept it is dolb's ``perceptron``, bit for bit (tested).

    Examples
    --------
    >>> SklearnPerceptron(3, fit_intercept=False).model.get_params()["fit_intercept"]
    False
    """

    name = "sklearn_perceptron"
    task = "binary"
    params = {"eta0": Param(1.0, above=0.0, doc="the step η₀ (scikit-learn's eta0)"), "fit_intercept": FIT_INTERCEPT}
    test_params = {}

    def _model(self) -> Any:
        from sklearn.linear_model import Perceptron

        c = self.config
        return Perceptron(eta0=c["eta0"], fit_intercept=c["fit_intercept"], shuffle=False, random_state=0)


@register
class SklearnPA(SklearnLearner):
    """scikit-learn's Passive-Aggressive classifier (Crammer et al., JMLR 2006), PA-I or PA-II
    with aggressiveness C: ``SGDClassifier(loss="hinge", penalty=None, learning_rate="pa1"
    or "pa2", eta0=C)``, which replaces the deprecated ``PassiveAggressiveClassifier``.

    Examples
    --------
    >>> SklearnPA(3, variant="pa2").model.get_params()["learning_rate"]
    'pa2'
    """

    name = "sklearn_pa"
    task = "binary"

    @classmethod
    def unavailable(cls) -> str | None:
        """One line when scikit-learn is older than 1.8 (no PA learning rates), else None."""
        import sklearn

        if tuple(int(part) for part in sklearn.__version__.split(".")[:2]) >= (1, 8):
            return None
        return f"learner {cls.name!r} needs scikit-learn 1.8 or later, found {sklearn.__version__}: {INSTALL}"

    params = {
        "variant": Param("pa1", str, choices=("pa1", "pa2"), doc="PA-I or PA-II"),
        "C": Param(1.0, above=0.0, doc="aggressiveness C (scikit-learn's eta0)"),
        "fit_intercept": FIT_INTERCEPT,
    }
    test_params = {}

    def _model(self) -> Any:
        from sklearn.linear_model import SGDClassifier

        c = self.config
        return SGDClassifier(loss="hinge", penalty=None, learning_rate=c["variant"], eta0=c["C"],
                             fit_intercept=c["fit_intercept"], shuffle=False, random_state=0)


@register
class SklearnSGDRegressor(SklearnLearner):
    """scikit-learn's ``SGDRegressor`` (``partial_fit``, ``shuffle=False``): SGD on the
    squared, Huber or ε-insensitive loss with an L2 or L1 penalty.

    Examples
    --------
    >>> SklearnSGDRegressor(1).model.get_params()["loss"]
    'squared_error'
    """

    name = "sklearn_sgd_regressor"
    task = "regression"
    params = {
        "loss": Param("squared_error", str, choices=("squared_error", "huber", "epsilon_insensitive"),
                      doc="scikit-learn's loss"),
        "penalty": PENALTY,
        "alpha": ALPHA,
        "schedule": Param("invscaling", str, choices=("optimal", "constant", "invscaling"),
                               doc="scikit-learn's learning_rate (the step schedule)"),
        "eta0": ETA0,
        "power_t": Param(0.25, low=0.0, doc="exponent of the invscaling schedule"),
        "fit_intercept": FIT_INTERCEPT,
    }
    test_params = {"eta0": 0.1}

    def _model(self) -> Any:
        from sklearn.linear_model import SGDRegressor

        c = self.config
        return SGDRegressor(loss=c["loss"], penalty=_penalty(c["penalty"]), alpha=c["alpha"],
                            learning_rate=c["schedule"], eta0=c["eta0"], power_t=c["power_t"],
                            fit_intercept=c["fit_intercept"], shuffle=False, random_state=0)
