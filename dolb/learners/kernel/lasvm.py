"""LASVM, the online SVM solver (its compiled steps in :mod:`.solver`)."""

from __future__ import annotations

import copy

import numpy as np

from dolb.conversions.hypothesis import Hypothesis
from dolb.data.blocks import as_block
from dolb.learners.base import Param, register
from dolb.learners.kernel.cache import HITS, MISSES, RowCache
from dolb.learners.kernel.kernels import KERNEL_PARAMS, LABEL
from dolb.learners.kernel.learner import KernelLearner
from dolb.learners.kernel.solver import GAP, STEPS, decision_bias, finish, lasvm_block


@register
class LASVM(KernelLearner):
    """LASVM (Bordes, Ertekin, Weston & Bottou, "Fast kernel classifiers with online and
    active learning", JMLR 2005): an online solver of the SVM dual with box constraint
    C, one PROCESS and one REPROCESS per example.

    Each example is first predicted, f(x) = Σ_s α_s K(x_s, x) + b, then PROCESSed: it
    joins the support vectors S with α = 0 and its gradient g = y − Σ_s α_s K_s, and is
    paired with the extreme opposite (y = +1: j = argmin g over α_s > A_s; y = −1:
    i = argmax g over α_s < B_s) for one direction step if the pair is τ-violating
    (g_i − g_j > τ). Then one REPROCESS: a step on the most violating pair if
    τ-violating; with the pair chosen again after the step, every s with α_s = 0 and
    (y_s = −1, g_s ≥ g_i) or (y_s = +1, g_s ≤ g_j) leaves S; b = (g_i + g_j)/2. While
    seeding, the first ``seed_per_class`` examples of each class are PROCESSed without
    REPROCESS. The curvature K_ii + K_jj − 2K_ij of a step is floored at 1e-12. While
    the examples seen are of one class only (no pair, every α = 0), b is that class's
    label, so f predicts it (the SVM optimum on one class; see
    :func:`~.solver.decision_bias`); before any example f ≡ 0.

    Kernel rows of support vectors are kept in an LRU cache of ``cache_mb`` (float32
    rows); memory is O(cache + #SV·d) whatever the stream length. Conversions: ``last``
    (the online machine) and ``finished`` (a copy after FINISH, REPROCESS until
    δ = g_i − g_j ≤ τ; the online machine is untouched; also :meth:`finished`).
    Diagnostics: support vectors and kernel evaluations so far (one per kernel value
    computed, cache hits not counted). The complexity level is ``gamma``; a polynomial
    ladder sets ``degree`` per configuration.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [1.0, 1.0], [0.1, 0.0], [0.9, 1.0]])
    >>> learner = LASVM(2, C=10.0, seed_per_class=1)
    >>> learner.learn(X, np.array([-1.0, 1.0, -1.0, 1.0])).round(3)
    array([ 0.   , -1.   , -0.956,  0.952])
    >>> np.sign(learner.predict(np.array([[0.2, 0.1], [0.8, 0.9]])))
    array([-1.,  1.])
    >>> learner.diagnostics()["n_sv"], learner.finished().n_sv
    (3.0, 2)
    """

    name = "lasvm"
    params = {
        **KERNEL_PARAMS,
        "C": Param(1.0, above=0.0, doc="box constraint C of the SVM dual"),
        "tau": Param(1e-3, above=0.0, doc="tolerance tau of a violating pair g_i - g_j > tau"),
        "seed_per_class": Param(5, int, low=0, doc="first examples of each class PROCESSed without REPROCESS"),
        "cache_mb": Param(100.0, above=0.0, doc="size of the LRU kernel-row cache in MB (two rows at least)"),
    }
    conversions_supported = ("last", "finished")
    bench_params = None  # support vectors grow with the label noise: quadratic on dolb bench's noisy streams
    test_params = {"gamma": 2.0, "C": 10.0, "cache_mb": 0.01}

    def __init__(self, n_features, n_train=None, conversions=("last",), **params):
        super().__init__(n_features, n_train, conversions, **params)
        c = self.config
        self.P = (c["C"], c["tau"], c["seed_per_class"])
        self.cache: RowCache | None = None  # sized with the store
        self._seeding = True  # false while process_rows runs
        self._entries = (np.zeros(n_features, np.int32), np.zeros(n_features))

    def _grow(self, nnz):
        super()._grow(nnz)
        width = self.store.capacity
        if self.cache is None:
            self.cache = RowCache(self.config["cache_mb"], width)
        elif self.cache.lines.shape[1] != width:
            self.cache = self.cache.resized(width, self.n_sv)

    def _buffers(self) -> tuple:
        """Scratch arrays of the solver: a vector's entries (indices, values), d zeros,
        a kernel row."""
        return (*self._entries, self._work, self._row)

    def _run(self, indptr, indices, data, y, ids, t, pred):
        return lasvm_block(self.spec, self.P, self._seeding, indptr, indices, data, y, ids, t, self.store.arrays,
                           self.cache.arrays, self.F, self.I, self._buffers(), pred)

    def process_rows(self, X, y, ids=None) -> int:
        """PROCESS then REPROCESS each row (no seeding; a row whose id, when given, is a
        support vector's is not PROCESSed again); returns the direction steps made. A
        pass over a training set with ``ids`` its row numbers is one epoch of LASVM."""
        X = as_block(X, self.n_features, f"learner {self.name!r}")
        y = np.ascontiguousarray(y, dtype=np.float64)
        ids = np.full(y.shape[0], -1, np.int64) if ids is None else np.ascontiguousarray(ids, dtype=np.int64)
        before = int(self.I[STEPS])
        self._seeding = False
        try:
            self._run_all(X, y, ids)
        finally:
            self._seeding = True
        return int(self.I[STEPS]) - before

    def finish(self) -> None:
        """FINISH in place: REPROCESS until δ ≤ τ."""
        if self.store is not None:
            finish(self.spec, self.store.arrays, self.cache.arrays, self.P, self.F, self._buffers(), self.I)

    def finished(self) -> LASVM:
        """A finished copy (FINISH run on it); this machine is untouched."""
        other = copy.copy(self)
        other.store = copy.deepcopy(self.store)
        other.cache = None if self.cache is None else self.cache.copied()
        other.F, other.I = self.F.copy(), self.I.copy()
        other._work, other._row = self._work.copy(), self._row.copy()
        other._entries = tuple(a.copy() for a in self._entries)
        other.finish()
        return other

    @classmethod
    def warm_started(cls, other: LASVM, **params) -> LASVM:
        """A new machine with ``other``'s parameters updated by ``params`` (e.g. a
        larger ``gamma``), whose first examples are ``other``'s support vectors,
        PROCESSed and REPROCESSed under its own kernel."""
        new = cls(other.n_features, other.n_train, other.conversions, **{**other.config, **params})
        if other.n_sv:
            rows = other.support_vectors()
            new.process_rows(rows.toarray() if other.store.dense else rows, other.labels())
        return new

    def labels(self) -> np.ndarray:
        """y of the support vectors, in slot order."""
        return np.zeros(0) if self.store is None else self.store.slot_f[: self.n_sv, LABEL].copy()

    @property
    def bias(self) -> float:
        """b, the class's label while one class only has been seen (:func:`~.solver.decision_bias`)."""
        return float(decision_bias(self.F, self.I))

    @property
    def delta(self) -> float:
        """δ = g_i − g_j of the last REPROCESS."""
        return float(self.F[GAP])

    def outputs(self):
        out = {"last": Hypothesis(self.predict)}
        if "finished" in self.conversions:
            finished = self.finished()
            out["finished"] = Hypothesis(finished.predict, {"n_sv": float(finished.n_sv)})
        return out

    def diagnostics(self):
        found = super().diagnostics()
        if self.cache is not None:
            counts = self.cache.counts
            found["cache_hit_rate"] = float(counts[HITS] / max(1, counts[HITS] + counts[MISSES]))
        return found

    def state_nbytes(self):
        """Bytes of the support vectors' storage and of the cache."""
        return super().state_nbytes() + (0 if self.cache is None else self.cache.nbytes)
