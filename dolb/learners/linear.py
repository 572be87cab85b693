"""Common ground of the linear online classifiers: the hypothesis representation, the one
compiled driver loop, and the feeding of the online-to-batch conversions.

Representation
--------------
Every linear learner keeps its hypothesis as w = s · v: a dense vector ``v`` and a scalar
scale ``s`` (``F[0]``). An update changes ``v`` only on the coordinates of the current
example (a sparse Δ) and may change ``s``; shrinking all of w (L2 regularisation) or
projecting it onto a ball is a change of ``s`` alone, so every update costs O(nnz(x)).
``F[1]`` holds ‖v‖² for learners that project (they keep it up to date themselves) and
``F[2]`` the product Φ of all rescalings applied to v so far. When |s| leaves
[1e-100, 1e100] the driver folds s into v (v ← s·v, s ← 1: O(d), rare); a learner must
not assume more about v than w = s·v, ‖v‖² = F[1] and Φ = F[2].

Driver
------
One loop, written once (:func:`_drive`), runs a whole block: for each example it
predicts s·⟨v, x⟩, asks the learner's *step* for its update, applies it, detects whether
the hypothesis changed, and feeds the requested conversions. A learner is its step:

    step(P, A, F, v, idx, val, nnz, y, p, dot, t, delta) -> (updated, s_new)

``P`` the learner's parameters (float64 array), ``A`` a tuple of its own state arrays,
``idx``/``val`` the example's coordinates and values (``nnz`` of them), ``y`` ∈ {−1, +1},
``p = s·dot`` the prediction, ``t`` the 1-based round. When it updates, the step writes
the change of v on ``idx`` into ``delta[:nnz]`` and returns ``(True, s_new)``; the driver
applies it. Per learner the driver is specialised at compile time on the step (a copy of
:func:`_drive` whose global ``step`` is that learner's function), so the step is inlined
and the compiled driver is cached on disk under a name carrying a hash of the sources it
depends on (Numba's cache only tracks the file of the function itself).

Blocks arrive as dense arrays or CSR matrices; dense blocks are converted to CSR (zeros
dropped) so both give bit-identical learners. Conversions (:mod:`dolb.conversions`) see
each round (the hypothesis in use, its age, the loss), each change (the sparse Δ, the
new scale) and each fold; those not requested are skipped by one predictable branch.
"""

from __future__ import annotations

import hashlib
import math
import types
from pathlib import Path
from typing import Any, ClassVar

import numba
import numpy as np
import scipy.sparse as sp

from dolb.conversions import CONVERSIONS
from dolb.conversions import average as _average
from dolb.conversions import cutoff as _cutoff
from dolb.conversions import history as _history
from dolb.conversions import longest_survivor as _survivor
from dolb.conversions import suffix as _suffix
from dolb.conversions.average import Average
from dolb.conversions.cutoff import Cutoff
from dolb.conversions.history import History
from dolb.conversions.last import Last
from dolb.conversions.longest_survivor import LongestSurvivor
from dolb.conversions.suffix import Suffix
from dolb.errors import ConfigError, DataError
from dolb.learners.base import OnlineLearner, Param

FOLD_LOW = 1e-100
FOLD_HIGH = 1e100

HINGE, LOGISTIC = 0, 1
LOSSES = ("hinge", "logistic")

# flags passed to the driver
_AVG, _SURV, _HIST, _SUFFIX, _CUTOFF, _BUCKETS, _HINGE_BOUND = range(7)


@numba.njit(cache=True)
def dloss(kind, y, p):
    """Derivative in p of the loss at prediction p, label y: hinge max(0, 1 − yp) (0 at
    the kink) or logistic ln(1 + exp(−yp))."""
    z = y * p
    if kind == HINGE:
        return -y if z < 1.0 else 0.0
    if z > 0.0:
        e = math.exp(-z)
        return -y * e / (1.0 + e)
    return -y / (1.0 + math.exp(z))


@numba.njit(cache=True)
def scaled_row(delta, val, nnz, c):
    """delta[j] = c · val[j]: the common update v += c·x."""
    for j in range(nnz):
        delta[j] = c * val[j]


@numba.njit(cache=True)
def norm_after(v, idx, delta, nnz, vnorm2):
    """‖v + Δ‖² from ‖v‖² in O(nnz)."""
    for j in range(nnz):
        d = delta[j]
        vnorm2 += d * (2.0 * v[idx[j]] + d)
    return max(vnorm2, 0.0)


def _drive(indptr, indices, data, y, P, A, v, F, I, delta, flags, avg, surv, hist, suf, cut, pred):
    """Run the learner ``step`` over one CSR block, test-then-train; fill ``pred``."""
    avg_on = flags[_AVG] != 0
    surv_on = flags[_SURV] != 0
    hist_on = flags[_HIST] != 0
    suffix_on = flags[_SUFFIX] != 0
    cut_on = flags[_CUTOFF] != 0
    buckets = flags[_BUCKETS] != 0
    hinge_bound = flags[_HINGE_BOUND] != 0
    s = F[0]
    rnd = I[0]
    age = I[1]
    for t in range(y.shape[0]):
        start = indptr[t]
        nnz = indptr[t + 1] - start
        idx = indices[start:start + nnz]
        val = data[start:start + nnz]
        dot = 0.0
        for j in range(nnz):
            dot += v[idx[j]] * val[j]
        p = s * dot
        pred[t] = p
        yt = y[t]
        rnd += 1
        age += 1
        # --- the round, seen by the conversions -------------------------------------
        if avg_on:
            _average.on_round(avg, s)
        if suffix_on or cut_on:
            if hinge_bound:
                loss = max(0.0, 1.0 - yt * p)
            else:
                loss = 1.0 if yt * p <= 0.0 else 0.0
            if suffix_on:
                _suffix.on_round(suf, rnd, loss)
            if cut_on:
                _cutoff.on_round(cut, age, loss)
        # --- the learner's update ------------------------------------------------------
        F[0] = s
        updated, s_new = step(P, A, F, v, idx, val, nnz, yt, p, dot, rnd, delta)
        if not updated:
            continue
        changed = s_new != s
        for j in range(nnz):
            new = v[idx[j]] + delta[j]
            if new != v[idx[j]]:
                changed = True
            delta[j] = new
        if not changed:
            continue
        # the live hypothesis s·v dies after `age` rounds
        if surv_on:
            _survivor.on_death(surv, s, age)
        if cut_on:
            _cutoff.on_death(cut, age, s, v, buckets)
        for j in range(nnz):
            old = v[idx[j]]
            v[idx[j]] = delta[j]
            delta[j] -= old
        if avg_on:
            _average.on_change(avg, idx, delta, nnz)
        if surv_on:
            _survivor.on_change(surv, idx, delta, nnz)
        if hist_on:
            _history.on_change(hist, idx, delta, nnz, s_new, age)
        s = s_new
        age = 0
        if not FOLD_LOW <= abs(s) <= FOLD_HIGH:
            phi = s
            vnorm2 = 0.0
            for i in range(v.shape[0]):
                v[i] *= phi
                vnorm2 += v[i] * v[i]
            F[1] = vnorm2
            F[2] *= phi
            s = 1.0
            if avg_on:
                _average.on_fold(avg, phi)
            if surv_on:
                _survivor.on_fold(surv, phi)
            if hist_on:
                _history.on_fold(hist, phi)
    F[0] = s
    I[0] = rnd
    I[1] = age


_DEPENDENCIES = [Path(__file__)] + sorted(Path(_average.__file__).parent.glob("*.py"))


def _compile_driver(step, name: str, module_file: str):
    """A cached njit copy of :func:`_drive` calling ``step``."""
    digest = hashlib.sha1()
    for path in _DEPENDENCIES + [Path(module_file)]:
        digest.update(path.read_bytes())
    g = dict(_drive.__globals__)
    g["step"] = step
    fn = types.FunctionType(_drive.__code__, g, f"_drive_{name}")
    fn.__qualname__ = f"_drive_{name}_{digest.hexdigest()[:12]}"
    fn.__module__ = __name__
    fn.__doc__ = _drive.__doc__
    return numba.njit(cache=True, nogil=True)(fn)


@numba.njit(cache=True)
def _dense_to_csr(X):
    n, d = X.shape
    indptr = np.zeros(n + 1, np.int64)
    for i in range(n):
        c = 0
        for j in range(d):
            if X[i, j] != 0.0:
                c += 1
        indptr[i + 1] = indptr[i] + c
    indices = np.empty(indptr[n], np.int32)
    data = np.empty(indptr[n])
    k = 0
    for i in range(n):
        for j in range(d):
            if X[i, j] != 0.0:
                indices[k] = j
                data[k] = X[i, j]
                k += 1
    return indptr, indices, data


@numba.njit(cache=True)
def row_norms_squared(indptr, data):
    """‖x_t‖² of every row of a CSR block."""
    n = indptr.shape[0] - 1
    out = np.zeros(n)
    for i in range(n):
        acc = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            acc += data[k] * data[k]
        out[i] = acc
    return out


def csr_parts(X) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(indptr int64, indices int32, data float64) of a block, canonical (sorted,
    duplicates summed); a dense block loses its zeros."""
    if not sp.issparse(X):
        return _dense_to_csr(np.ascontiguousarray(X, dtype=np.float64))
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return (
        np.asarray(X.indptr, dtype=np.int64),
        np.asarray(X.indices, dtype=np.int32),
        np.ascontiguousarray(X.data, dtype=np.float64),
    )


class LinearLearner(OnlineLearner):
    """Base class of the linear binary classifiers (labels −1/+1, no bias, w_0 = 0).

    A subclass declares ``name``, ``params`` and ``step`` (an ``njit`` function, see the
    module docstring), and overrides :meth:`_parameters` (the float64 array ``P``),
    :meth:`_arrays` (the tuple ``A``), :meth:`_initial_scale` and, for a loss other than
    0-1 in the conversions' bound, ``bound_loss`` and :attr:`loss_bound`.

    Every conversion of :mod:`dolb.conversions` is supported. The loss their bounds use
    (``bound_loss``) is the 0-1 loss (C = 1) unless the subclass says otherwise.
    """

    task: ClassVar[str] = "binary"
    conversions_supported: ClassVar[tuple[str, ...]] = CONVERSIONS
    bound_loss: ClassVar[str] = "zero_one"
    step: ClassVar[Any] = None
    _driver: ClassVar[Any] = None

    def __init__(
        self,
        n_features: int,
        n_train: int | None = None,
        conversions: tuple[str, ...] = ("last",),
        **params: Any,
    ) -> None:
        super().__init__(n_features, n_train, conversions, **params)
        if len(set(self.conversions)) != len(self.conversions):
            raise ConfigError(f"learner {self.name!r}: a conversion is listed twice: {self.conversions}")
        d = self.n_features
        self.v = np.zeros(d)
        self.F = np.array([self._initial_scale(), 0.0, 1.0])
        self.I = np.zeros(2, np.int64)  # rounds seen, age of the live hypothesis
        self.P = np.asarray(self._parameters(), dtype=np.float64)
        self.A = self._arrays()
        self._delta = np.zeros(d)
        self._buckets: bool | None = None  # cutoff's representation, fixed by the first block
        self.history: History | None = None
        self._conv: dict[str, Any] = {}
        for conv in self.conversions:
            self._conv[conv] = self._make_conversion(conv, buckets=False)
        if "suffix" in self._conv or "cutoff" in self._conv:
            self.history = History(self)

    # --- what subclasses provide ---------------------------------------------------------

    def _parameters(self) -> list[float]:
        return [0.0]

    def _arrays(self) -> tuple:
        return (np.zeros(0),)

    def _initial_scale(self) -> float:
        return 1.0

    def _check_block(self, indptr, indices, data) -> None:
        """Raise DataError for rows the learner cannot take (default: none)."""

    @property
    def loss_bound(self) -> float:
        """Upper bound C of the loss the conversions' bounds use."""
        return 1.0

    # --- state ---------------------------------------------------------------------------

    @property
    def scale(self) -> float:
        return float(self.F[0])

    @property
    def rounds(self) -> int:
        """Examples learned so far."""
        return int(self.I[0])

    @property
    def live_age(self) -> int:
        """Rounds the current hypothesis has been used on (0 right after an update)."""
        return int(self.I[1])

    def weights(self) -> np.ndarray:
        """The current hypothesis w = s·v (a copy)."""
        return self.F[0] * self.v

    # --- the protocol --------------------------------------------------------------------

    def _make_conversion(self, name: str, buckets: bool):
        if name == "last":
            return Last(self)
        if name == "average":
            return Average(self)
        if name == "longest_survivor":
            return LongestSurvivor(self)
        if name == "suffix":
            return Suffix(self)
        return Cutoff(self, buckets=buckets)

    def _fix_cutoff_representation(self, sparse: bool) -> None:
        self._buckets = not sparse
        if "cutoff" in self._conv and self._buckets:
            self._conv["cutoff"] = self._make_conversion("cutoff", buckets=True)
            if "suffix" not in self._conv:
                self.history = None

    @classmethod
    def driver(cls):
        """The compiled driver of this learner (built on first use)."""
        if cls.__dict__.get("_driver") is None:
            import sys

            cls._driver = _compile_driver(cls.step, cls.name, sys.modules[cls.__module__].__file__)
        return cls._driver

    def _learn(self, X, y):
        bad = np.flatnonzero(np.abs(y) != 1.0)
        if bad.size:
            row = int(bad[0])
            raise DataError(
                f"learner {self.name!r}: labels must be -1 or +1, row {self.n_seen + row} has {y[row]!r}"
            )
        if self._buckets is None:
            self._fix_cutoff_representation(sp.issparse(X))
        indptr, indices, data = csr_parts(X)
        if not np.all(np.isfinite(data)):
            k = int(np.flatnonzero(~np.isfinite(data))[0])
            row = int(np.searchsorted(indptr, k, side="right")) - 1
            raise DataError(f"learner {self.name!r}: row {self.n_seen + row} has a non-finite value")
        self._check_block(indptr, indices, data)
        n = y.shape[0]
        for conv in self._conv.values():
            if hasattr(conv, "reserve"):
                conv.reserve(n, data.shape[0])
        if self.history is not None:
            self.history.reserve(n, data.shape[0])
        c = self._conv
        flags = np.zeros(7, np.int64)
        flags[_AVG] = "average" in c
        flags[_SURV] = "longest_survivor" in c
        flags[_HIST] = self.history is not None
        flags[_SUFFIX] = "suffix" in c
        flags[_CUTOFF] = "cutoff" in c
        flags[_BUCKETS] = bool(self._buckets)
        flags[_HINGE_BOUND] = self.bound_loss == "hinge"
        pred = np.empty(n)
        self.driver()(
            indptr, indices, data, y, self.P, self.A, self.v, self.F, self.I, self._delta, flags,
            c["average"].arrays if "average" in c else _average.off(),
            c["longest_survivor"].arrays if "longest_survivor" in c else _survivor.off(),
            self.history.arrays if self.history is not None else _history.off(),
            c["suffix"].arrays if "suffix" in c else _suffix.off(),
            c["cutoff"].arrays if "cutoff" in c else _cutoff.off(),
            pred,
        )
        return pred

    def _predict(self, X):
        return np.asarray(X @ self.weights(), dtype=np.float64).reshape(-1)

    def outputs(self):
        """The output hypothesis of every requested conversion, now."""
        return {name: conv.output() for name, conv in self._conv.items()}

    def conversion(self, name: str):
        """The live conversion object ``name`` (for its bounds, or H*_k of any k)."""
        if name not in self._conv:
            raise ConfigError(
                f"learner {self.name!r} was not built with conversion {name!r} "
                f"(it has: {', '.join(self.conversions)})"
            )
        return self._conv[name]


def positive(cls_name: str, key: str, value: float) -> None:
    """ConfigError unless value > 0 (Param bounds are inclusive)."""
    if not value > 0:
        raise ConfigError(f"learner {cls_name!r}, parameter {key!r}: must be above 0, got {value!r}")


LOSS_PARAM = Param("hinge", str, choices=LOSSES, doc="loss: hinge max(0, 1 - y<w,x>) or logistic")
