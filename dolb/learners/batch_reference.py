"""Batch references: a scikit-learn linear model fit on every training row seen so far.

At a checkpoint, the hypothesis is the model fit once on the whole training prefix
(``fit = "each"``), or only once its ``n_train`` rows are seen (``fit = "last"``: no
hypothesis before, so no test values; one made without ``n_train`` fits at each): what
an online learner's test error is read against. Such a learner keeps every row it has seen, so
its memory grows with the prefix (``state_nbytes``), and a fit costs what scikit-learn's
batch solver costs on all of them.

Its online (prequential) predictions come from refits on a fixed schedule, after 1, 2,
4, 8, … rows: example t + 1 is predicted by the model fit on the first 2^k rows, 2^k ≤ t
the largest such, and the first (no row seen) is predicted 0. So they depend on neither
the checkpoints nor the blocks, and cost at most twice the last fit.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from dolb.learners.base import Hypothesis, OnlineLearner, Param, register

FIT = Param("each", str, choices=("each", "last"),
            doc="fit at every checkpoint, or only at the end of the stream (then no test values before it)")
FIT_INTERCEPT = Param(True, bool, doc="learn an intercept (scikit-learn's fit_intercept)")
MAX_ITER = Param(1000, int, low=1, doc="the solver's iterations at most (scikit-learn's max_iter)")


class Constant:
    """A model predicting ``value`` for every row: the fit of a prefix with one label."""

    def __init__(self, value: float) -> None:
        self.value = value

    def predict(self, X) -> np.ndarray:
        return np.full(X.shape[0], self.value)


class BatchReference(OnlineLearner):
    """A scikit-learn model (:meth:`model`) fit on every row seen (see the module)."""

    wraps = "scikit-learn"
    reference = True
    """A reference for the other learners: tables show it after them, rankings leave it
    out of the ranks (:func:`dolb.results.tables.is_reference`)."""

    def __init__(self, n_features, n_train=None, conversions=("last",), **params):
        super().__init__(n_features, n_train, conversions, **params)
        self.rows: list = []  # the training rows, in blocks
        self.targets: list[np.ndarray] = []
        self.n_fitted = 0  # rows kept (unlabelled rows are not)
        self.online: Any = Constant(0.0)
        self.online_rows = 0  # the rows the online model was fit on

    def model(self) -> Any:
        """A new, unfitted scikit-learn estimator, as the parameters say."""
        raise NotImplementedError

    def _rows(self, X):
        """A block as it is kept and predicted: CSR for classification (so that dense and
        sparse streams fit and predict alike), dense float64 for regression."""
        if self.task == "binary":
            return sp.csr_matrix(X, dtype=np.float64)
        return X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)

    def _learn(self, X, y):
        X = self._rows(X)
        predictions = np.empty(y.shape[0])
        i = 0
        while i < y.shape[0]:  # cut where the kept rows reach the next power of two
            stop = min(y.shape[0], i + max(1, 2 * self.online_rows) - self.n_fitted)
            predictions[i:stop] = self._decision(self.online, X[i:stop])
            self.rows.append(X[i:stop])
            self.targets.append(y[i:stop].copy())
            self.n_fitted += stop - i
            i = stop
            if self.n_fitted == max(1, 2 * self.online_rows):
                self.online, self.online_rows = self.fit(), self.n_fitted
        return predictions

    def fit(self) -> Any:
        """The model fit on every row kept: a :class:`Constant` (the label) when they have
        one label alone, which scikit-learn's classifiers refuse."""
        X, y = self.training_set()
        labels = np.unique(y)
        if self.task == "binary" and labels.shape[0] == 1:
            return Constant(float(labels[0]))
        return self.model().fit(X, y)

    def training_set(self) -> tuple[Any, np.ndarray]:
        """The rows kept and their targets, as one matrix (kept so from then on)."""
        if len(self.rows) > 1:
            stack = sp.vstack if self.task == "binary" else np.vstack
            self.rows = [stack(self.rows, format="csr") if self.task == "binary" else stack(self.rows)]
            self.targets = [np.concatenate(self.targets)]
        X = self.rows[0]
        if sp.issparse(X) and X.indices.dtype != np.int32 and X.nnz < 2**31:  # as liblinear takes them
            X = self.rows[0] = sp.csr_matrix((X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)),
                                             shape=X.shape)
        return X, self.targets[0]

    def _decision(self, model: Any, X) -> np.ndarray:
        if isinstance(model, Constant) or self.task == "regression":
            return np.asarray(model.predict(X), dtype=np.float64)
        return np.asarray(model.decision_function(X), dtype=np.float64)

    def _predict(self, X):
        return self._decision(self.online, self._rows(X))

    def outputs(self) -> dict[str, Hypothesis]:
        if self.config["fit"] == "last" and self.n_train is not None and self.n_seen < self.n_train:
            return {}
        if not self.n_fitted:
            model: Any = Constant(0.0)
        elif self.n_fitted == self.online_rows:
            model = self.online
        else:
            model = self.fit()
        return {"last": Hypothesis(lambda X: self._decision(model, self._rows(X)), {"fit_rows": float(self.n_fitted)})}

    def state_nbytes(self) -> int:
        kept = sum(X.data.nbytes + X.indices.nbytes + X.indptr.nbytes if sp.issparse(X) else X.nbytes
                   for X in self.rows)
        return kept + sum(y.nbytes for y in self.targets)


@register
class BatchClassifier(BatchReference):
    """A batch linear classifier fit on the training prefix: scikit-learn's
    ``LogisticRegression`` (L2, solver ``lbfgs``) or ``LinearSVC`` (L2, squared hinge), the
    batch reference of an online linear classifier.

    ``model = "logistic"`` minimises C·Σ log(1 + exp(−y_i(⟨w, x_i⟩ + b))) + ½‖w‖²;
    ``"linear_svc"`` minimises C·Σ max(0, 1 − y_i(⟨w, x_i⟩ + b))² + ½‖w‖²
    (``dual = "auto"``). Both run with ``tol = 1e-4``, ``max_iter`` and ``random_state = 0``,
    so a fit is deterministic; the decision value is ``decision_function``. Rows are kept
    as CSR, whichever way they came, so a dense and a sparse stream give the same fits.
    A prefix with one label is fit by the constant decision value of that label.

    Examples
    --------
    >>> learner = BatchClassifier(1, fit_intercept=False)
    >>> learner.learn(np.array([[1.0], [1.0], [-1.0]]), np.array([1.0, 1.0, -1.0]))
    array([0., 1., 1.])
    >>> float(learner.outputs()["last"].predict(np.array([[1.0]]))[0]) > 0
    True
    """

    name = "batch_reference"
    task = "binary"
    params = {
        "model": Param("logistic", str, choices=("logistic", "linear_svc"), doc="the scikit-learn model fit"),
        "C": Param(1.0, above=0.0, doc="inverse regularisation strength (scikit-learn's C)"),
        "fit_intercept": FIT_INTERCEPT,
        "max_iter": MAX_ITER,
        "fit": FIT,
    }
    test_params = {}

    def model(self):
        from sklearn.linear_model import LogisticRegression
        from sklearn.svm import LinearSVC

        c = self.config
        if c["model"] == "logistic":
            return LogisticRegression(C=c["C"], fit_intercept=c["fit_intercept"], solver="lbfgs", tol=1e-4,
                                      max_iter=c["max_iter"], random_state=0)
        return LinearSVC(C=c["C"], fit_intercept=c["fit_intercept"], loss="squared_hinge", dual="auto", tol=1e-4,
                         max_iter=c["max_iter"], random_state=0)


@register
class BatchRidge(BatchReference):
    """Ridge regression fit on the training prefix, scikit-learn's ``Ridge`` (solver
    ``cholesky``): it minimises Σ (y_i − ⟨w, x_i⟩ − b)² + α‖w‖², on the raw input
    features (no polynomial basis), the batch reference of an online linear regressor.

    Rows are kept dense.

    Examples
    --------
    >>> learner = BatchRidge(1, alpha=1.0, fit_intercept=False)
    >>> learner.learn(np.array([[1.0], [1.0]]), np.array([2.0, 2.0]))
    array([0., 1.])
    >>> learner.outputs()["last"].predict(np.array([[1.0]]))
    array([1.33333333])
    """

    name = "batch_ridge"
    task = "regression"
    params = {
        "alpha": Param(1.0, low=0.0, doc="the penalty's weight (scikit-learn's alpha)"),
        "fit_intercept": FIT_INTERCEPT,
        "fit": FIT,
    }
    test_params = {}

    def model(self):
        from sklearn.linear_model import Ridge

        return Ridge(alpha=self.config["alpha"], fit_intercept=self.config["fit_intercept"], solver="cholesky")
