"""Batch manifold regularisation: the yardstick of the online manifold regularisation
learners (ALGORITHMS.md §5) and a learner to compare them with."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from dolb.errors import DataError
from dolb.extras import OSQP, missing
from dolb.learners.base import Hypothesis, OnlineLearner, Param, register


def manifold_risk(alpha, K, W, y, labelled, lam1: float, lam2: float) -> float:
    """The batch risk of f = Σ α_i K(x_i, ·) on T points:
    J = (1/l) Σ_labelled max(0, 1 − y f(x)) + (λ₁/2) αᵀKα + (λ₂/2T) Σ_{s,t} (f_s − f_t)² w_st.

    >>> K = W = np.eye(2)
    >>> manifold_risk(np.array([1.0, -1.0]), K, W, np.array([1.0, -1.0]), np.array([True, True]), 0.5, 0.0)
    0.5
    """
    f = K @ alpha
    hinge = np.maximum(0.0, 1.0 - y[labelled] * f[labelled]).sum() / labelled.sum()
    graph = (W * (f[:, None] - f[None, :]) ** 2).sum() * lam2 / (2 * len(f))
    return float(hinge + lam1 / 2 * alpha @ K @ alpha + graph)


def decision_values(Z, X: np.ndarray, alpha: np.ndarray, gamma: float) -> np.ndarray:
    """f(z) = Σ_t α_t exp(−γ‖x_t − z‖²) for every row z of Z (dense or CSR); 0 before
    any example."""
    if not len(alpha):
        return np.zeros(Z.shape[0])
    return _rbf_kernel(Z, X, gamma=gamma) @ alpha


def _rbf_kernel(*args, **kwargs) -> np.ndarray:
    """scikit-learn's ``rbf_kernel``, imported when first used (importing scikit-learn
    takes a second, which every worker would pay at start for a learner few sweeps use)."""
    from sklearn.metrics.pairwise import rbf_kernel

    return rbf_kernel(*args, **kwargs)


def solve_manifold(K, W, y, labelled, lam1: float, lam2: float) -> np.ndarray:
    """α minimising :func:`manifold_risk`, through the dual of LapSVM (Belkin, Niyogi &
    Sindhwani 2006, without offset), a small quadratic program solved by OSQP.

    With L = D − W the graph Laplacian (Σ_{s,t} (f_s − f_t)² w_st = 2 fᵀLf), J is
    (1/l) Σ ξ_i + ½ αᵀ(λ₁K + (2λ₂/T) K L K)α subject to ξ_i ≥ 1 − y_i (Kα)_i, ξ_i ≥ 0 over
    the l labelled points. Its stationarity condition gives α = A⁻¹ Jᵀ Y β with
    A = λ₁ I + (2λ₂/T) L K (invertible: the eigenvalues of LK are ≥ 0, so A's are ≥ λ₁,
    even when K is singular, as RBF Gram matrices of dense data are to rounding) and the
    dual maximise Σ β_i − ½ βᵀ Q β, 0 ≤ β_i ≤ 1/l, Q = Y J K A⁻¹ Jᵀ Y: l variables,
    whatever T. The primal in (α, ξ) has T + l and a matrix K L K whose rounding makes
    it numerically indefinite, which OSQP then reports as unbounded."""
    import osqp

    T, rows = K.shape[0], np.flatnonzero(labelled)
    n_labelled = len(rows)
    laplacian = np.diag(W.sum(1)) - W
    A = lam1 * np.eye(T) + (2 * lam2 / T) * laplacian @ K
    targets = np.zeros((T, n_labelled))
    targets[rows, np.arange(n_labelled)] = y[rows]
    Z = np.linalg.solve(A, targets)  # α = Z β
    Q = y[rows, None] * (K[rows] @ Z)
    Q = (Q + Q.T) / 2
    solver = osqp.OSQP()
    solver.setup(sp.triu(sp.csc_matrix(Q), format="csc"), -np.ones(n_labelled), sp.identity(n_labelled, format="csc"),
                 np.zeros(n_labelled), np.full(n_labelled, 1.0 / n_labelled),
                 eps_abs=1e-10, eps_rel=1e-10, max_iter=200_000, verbose=False)
    result = solver.solve(raise_error=False)
    if result.info.status != "solved":
        raise DataError(f"learner 'batch_mr': the quadratic program on {T} examples ended {result.info.status!r}")
    return Z @ np.clip(result.x, 0.0, 1.0 / n_labelled)


@register
class BatchManifold(OnlineLearner):
    """Batch manifold regularisation (LapSVM without offset: Belkin, Niyogi & Sindhwani,
    "Manifold regularization: a geometric framework for learning from labeled and
    unlabeled examples", JMLR 2006), the batch risk J of Goldberg, Li & Zhu, "Online
    manifold regularization", ECML PKDD 2008, minimised exactly:

    J(f) = (1/l) Σ_t δ(y_t) max(0, 1 − y_t f(x_t)) + (λ₁/2)‖f‖²_K + (λ₂/2T) Σ_{s,t}
    (f(x_s) − f(x_t))² w_st, with K(x, z) = exp(−γ‖x − z‖²), w_st = exp(−‖x_s − x_t‖²/2σ²)
    over all T examples seen (labelled or not) and f = Σ_t α_t K(x_t, ·).

    It keeps every example (memory T·d, a dense T × T graph: for T up to a few thousand)
    and solves LapSVM's dual, a quadratic program in the l labelled points' multipliers
    (:func:`solve_manifold`), with OSQP (a well-kept QP solver, no modelling layer to
    install; ``pip install 'dolb[batch-mr]'``) after an O(T³) linear solve, at the end
    of each block; a block's predictions come from the solution before it. Hidden labels
    are never read.

    Examples
    --------
    >>> X = np.array([[0.0, 0.0], [0.1, 0.0], [1.0, 1.0], [1.1, 1.0]])
    >>> y = np.array([1.0, np.nan, -1.0, np.nan])
    >>> learner = BatchManifold(2, gamma=1.0, sigma=0.3)
    >>> _ = learner.learn(X, y, np.array([True, False, True, False]))
    >>> np.sign(learner.predict(X)).tolist()
    [1.0, 1.0, -1.0, -1.0]
    """

    name = "batch_mr"
    task = "binary"
    semi_supervised = True
    refits_per_block = True
    complexity_param = "gamma"
    params = {
        "gamma": Param(1.0, above=0.0, doc="RBF kernel width gamma: K = exp(-gamma |x - z|^2)"),
        "sigma": Param(1.0, above=0.0, doc="graph bandwidth sigma: w = exp(-|x - z|^2 / 2 sigma^2)"),
        "lam1": Param(1e-3, above=0.0, doc="weight lambda_1 of the RKHS norm"),
        "lam2": Param(1e-2, low=0.0, doc="weight lambda_2 of the graph term"),
        "max_examples": Param(5000, int, low=1, doc="examples it may keep (dense T x T graph, T^3 solve)"),
    }
    bench_params = None  # a batch solver: cubic in T
    test_params = {"gamma": 2.0, "sigma": 0.5, "max_examples": 400}

    @classmethod
    def unavailable(cls) -> str | None:
        """One line naming the extra to install when OSQP, its solver, is missing."""
        return missing(OSQP, f"learner {cls.name!r}")

    def __init__(self, n_features: int, n_train: int | None = None, conversions=("last",), **params) -> None:
        super().__init__(n_features, n_train, conversions, **params)
        self.X = np.empty((0, self.n_features))
        self.y = np.empty(0)
        self.labelled = np.empty(0, bool)
        self.alpha = np.empty(0)
        self.risk = float("nan")

    def _learn(self, X, y: np.ndarray, labelled: np.ndarray) -> np.ndarray:
        dense = X.toarray() if sp.issparse(X) else X
        predictions = self._predict(dense)
        if len(self.y) + len(y) > self.config["max_examples"]:
            raise DataError(f"learner 'batch_mr': more than max_examples = {self.config['max_examples']} examples "
                            "(the graph is dense: raise it or use an online learner)")
        self.X = np.vstack([self.X, dense])
        self.y = np.concatenate([self.y, np.where(labelled, y, 0.0)])  # hidden targets are never kept
        self.labelled = np.concatenate([self.labelled, labelled])
        self.alpha, self.risk = np.zeros(len(self.y)), float("nan")
        if self.labelled.any():
            gamma, sigma, lam1, lam2 = (self.config[key] for key in ("gamma", "sigma", "lam1", "lam2"))
            K, W = _rbf_kernel(self.X, gamma=gamma), _rbf_kernel(self.X, gamma=1.0 / (2 * sigma**2))
            self.alpha = solve_manifold(K, W, self.y, self.labelled, lam1, lam2)
            self.risk = manifold_risk(self.alpha, K, W, self.y, self.labelled, lam1, lam2)
        return predictions

    def diagnostics(self) -> dict[str, float]:
        """J(f*) on the examples seen (NaN before the first label): the yardstick of the
        online learners' ``online_risk``."""
        return {"batch_risk": self.risk}

    def _predict(self, X) -> np.ndarray:
        return decision_values(X, self.X, self.alpha, self.config["gamma"])

    def outputs(self) -> dict[str, Hypothesis]:
        X, alpha, gamma = self.X.copy(), self.alpha.copy(), self.config["gamma"]
        return {"last": Hypothesis(lambda Z: decision_values(Z, X, alpha, gamma))}

    def state_nbytes(self) -> int:
        return self.X.nbytes + self.y.nbytes + self.alpha.nbytes
