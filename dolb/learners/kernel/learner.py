"""The base class of the kernel classifiers: their support vectors, input checks, the
loop that runs a block through a learner's compiled code, and prediction."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from dolb.data.blocks import label_error
from dolb.errors import DataError
from dolb.learners.base import OnlineLearner
from dolb.learners.kernel.kernels import ALPHA, BIAS, EVALS, SupportRows, decision_values, kernel_spec
from dolb.learners.linear import csr_parts


class KernelLearner(OnlineLearner):
    """Base class of the kernel binary classifiers f(x) = Σ_s α_s K(x_s, x) + b
    (labels −1/+1, empty expansion and b = 0 at first).

    The support vectors are stored densely when the first block is dense, else as CSR
    (:class:`~.kernels.SupportRows`); either way a dense and a CSR stream give
    bit-identical learners. A subclass implements :meth:`_run` (run a block from
    example ``t`` on: compiled, no Python per example; it stops early, returning where,
    when the store is full) and may hold more state in :meth:`_grow`.
    """

    task: ClassVar[str] = "binary"
    complexity_param: ClassVar[str | None] = "gamma"

    def __init__(self, n_features: int, n_train: int | None = None, conversions: tuple[str, ...] = ("last",),
                 **params: Any) -> None:
        super().__init__(n_features, n_train, conversions, **params)
        self.spec = kernel_spec(self.config)
        self.store: SupportRows | None = None  # its layout is fixed by the first block
        self.F = np.zeros(2)  # F[BIAS], and the subclass's slot beside it
        self.I = np.zeros(5, np.int64)  # kernel evaluations, rounds learned, and counts of the subclass
        self._work = np.zeros(n_features)
        self._row = np.zeros(16)

    # --- what subclasses provide -----------------------------------------------------------

    def _run(self, indptr, indices, data, y, ids, t: int, pred: np.ndarray) -> int:
        raise NotImplementedError

    def _grow(self, nnz: int) -> None:
        """Room in the store for one more vector of ``nnz`` entries."""
        self.store.make_room(nnz)
        if self._row.shape[0] < self.store.capacity:
            self._row = np.zeros(self.store.capacity)

    # --- state -----------------------------------------------------------------------------

    @property
    def bias(self) -> float:
        return float(self.F[BIAS])

    @property
    def n_sv(self) -> int:
        return 0 if self.store is None else self.store.n

    @property
    def kernel_evals(self) -> int:
        return int(self.I[EVALS])

    def coefficients(self) -> np.ndarray:
        """α of the support vectors, in slot order (a copy)."""
        return np.zeros(0) if self.store is None else self.store.slot_f[: self.n_sv, ALPHA].copy()

    def support_vectors(self) -> sp.csr_matrix:
        """The support vectors as a CSR matrix, in slot order."""
        if self.store is None:
            return sp.csr_matrix((0, self.n_features))
        return self.store.rows(self.n_features)

    def diagnostics(self) -> dict[str, float]:
        return {"n_sv": float(self.n_sv), "kernel_evals": float(self.kernel_evals)}

    def state_nbytes(self) -> int:
        """Bytes of the support vectors' storage."""
        return 0 if self.store is None else self.store.nbytes

    # --- running blocks --------------------------------------------------------------------

    def _run_all(self, X, y: np.ndarray, ids: np.ndarray, labelled: np.ndarray | None = None) -> np.ndarray:
        """Run a block to its end, growing the store whenever the compiled code stops
        (``labelled``: see :func:`checked_block`); fixes the store's layout on the first
        block."""
        indptr, indices, data, y = checked_block(self.name, self.n_seen, X, y, labelled)
        if self.store is None:
            self.store = SupportRows(self.n_features, dense=not sp.issparse(X))
            self._grow(0)
        pred = np.empty(y.shape[0])
        t = 0
        while t < y.shape[0]:
            t = self._run(indptr, indices, data, y, ids, t, pred)
            if t < y.shape[0]:
                self._grow(int(indptr[t + 1] - indptr[t]))
        return pred

    def _learn(self, X, y):
        return self._run_all(X, y, self.n_seen + np.arange(y.shape[0], dtype=np.int64))

    def _predict(self, X):
        return self._decide(X, None if self.store is None else self.store.arrays)

    def _decide(self, X, store: tuple | None) -> np.ndarray:
        """Σ_s α_s K(x_s, x) + b for the rows of a checked block, from the store's arrays
        ``store`` (this learner's, or a copy with other coefficients)."""
        indptr, indices, data, _ = csr_parts(X)
        out = np.zeros(indptr.shape[0] - 1)
        if store is not None:
            decision_values(self.spec, store, indptr, indices, data, self.bias, np.zeros(self.n_features),
                            np.zeros(store[5].shape[0]), out)
        else:
            out += self.bias
        return out


def checked_block(name: str, n_seen: int, X, y: np.ndarray, labelled: np.ndarray | None = None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """CSR parts of a block and its targets, after checking that the labels are −1 or +1
    and the values finite (DataError naming the row, counted from ``n_seen``).

    With ``labelled`` (a semi-supervised learner), the targets of the rows flagged false
    are never read: they come back as 0, and only the others are checked."""
    if labelled is not None:
        y = np.where(labelled, y, 0.0)
    wrong = np.abs(y) != 1.0
    if labelled is not None:
        wrong &= labelled
    bad = np.flatnonzero(wrong)
    if bad.size:
        row = int(bad[0])
        raise label_error(f"learner {name!r}", n_seen + row, y[row])
    indptr, indices, data, bad = csr_parts(X)
    if bad >= 0:
        row = int(np.searchsorted(indptr, bad, side="right")) - 1
        raise DataError(f"learner {name!r}: row {n_seen + row} has a non-finite value")
    return indptr, indices, data, y
