"""Diagonal AROW as a dolb learner, in plain NumPy."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from dolb.learners import OnlineLearner, Param, register


@register
class DiagonalArow(OnlineLearner):
    """Adaptive regularization of weight vectors, diagonal version (Crammer, Kulesza and
    Dredze, "Adaptive regularization of weight vectors", NIPS 2009).

    The learner keeps a mean w (zero at first) and a diagonal confidence Σ (one at first).
    On an example (x, y) with margin m = ⟨w, x⟩ and v = Σᵢ Σᵢᵢ xᵢ², it updates when
    y·m < 1: β = 1 / (v + r), α = (1 − y·m)·β, w ← w + α·y·Σx and Σᵢᵢ ← Σᵢᵢ − β·(Σᵢᵢ xᵢ)².
    It predicts with the mean: the decision value ⟨w, x⟩.

    Examples
    --------
    >>> import numpy as np
    >>> learner = DiagonalArow(2, r=1.0)
    >>> learner.learn(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([1.0, -1.0]))
    array([0., 0.])
    >>> learner.mean, learner.diagnostics()
    (array([ 0.5, -0.5]), {'updates': 2.0})
    """

    name = "arow"
    task = "binary"
    params = {"r": Param(1.0, above=0.0, doc="regularisation: the larger, the smaller each step")}
    test_params = {"r": 0.5}

    def __init__(self, n_features, n_train=None, conversions=("last",), **params):
        super().__init__(n_features, n_train, conversions, **params)
        self.mean = np.zeros(self.n_features)
        self.confidence = np.ones(self.n_features)
        self.updates = 0

    def _learn(self, X, y):
        r = self.config["r"]
        predictions = np.empty(y.shape[0])
        for i in range(y.shape[0]):
            columns, values = _row(X, i)
            margin = float(self.mean[columns] @ values)
            predictions[i] = margin
            if y[i] * margin < 1.0:
                spread = self.confidence[columns] * values
                beta = 1.0 / (float(spread @ values) + r)
                alpha = (1.0 - y[i] * margin) * beta
                self.mean[columns] += alpha * y[i] * spread
                self.confidence[columns] -= beta * spread**2
                self.updates += 1
        return predictions

    def _predict(self, X):
        return np.asarray(X @ self.mean).ravel()

    def diagnostics(self):
        return {"updates": float(self.updates)}

    def state_nbytes(self):
        return self.mean.nbytes + self.confidence.nbytes


def _row(X, i):
    """(columns, values) of row ``i`` of a dense array or a CSR matrix."""
    if sp.issparse(X):
        start, stop = X.indptr[i], X.indptr[i + 1]
        return X.indices[start:stop], X.data[start:stop]
    return slice(None), X[i]
