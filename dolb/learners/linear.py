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
[1e-3, 1e3] the driver folds s into v (v ← s·v, s ← 1: O(d), rare: SGD's L2 shrinking
reaches 1e-3 after ln(1000)/(η·α) rounds, the margin Perceptron's projections after
about 7·√m updates); a learner must not assume more about v than w = s·v, ‖v‖² = F[1]
and Φ = F[2].

Driver
------
One loop, written once (:func:`_drive`), runs a whole block: for each example it
predicts s·⟨v, x⟩, asks the learner's *step* for its update, applies it, detects whether
the hypothesis changed, and feeds the requested conversions. A learner is its step:

    step(P, A, F, v, idx, val, start, nnz, y, p, dot, t, delta) -> (updated, s_new)

``P`` the learner's parameters (float64 array), ``A`` a tuple of its own state arrays;
the example's coordinates and values are ``idx[start + j]``, ``val[start + j]`` for
j < ``nnz`` (the block's CSR arrays: no slicing, whose reference counting would cost
more than a sparse step), ``y`` ∈ {−1, +1}, ``p = s·dot`` the prediction, ``t`` the
1-based round. When it updates, the step writes the change of v at ``idx[start + j]``
into ``delta[j]`` and returns ``(True, s_new)``; the driver applies it.

Per learner the driver is specialised at compile time on its step: a copy of
:func:`_drive` whose global ``step`` is that learner's function (a closure or a
dispatcher argument would do the same, but Numba keys their disk cache on the
process-specific identity of the captured function: they recompile in every process
and pile up cache files). Steps and the conversions' feed functions are inlined
(``inline="always"``): the loop has no calls. The driver is cached on disk under a name
carrying a hash of every source it is built from (Numba's cache only tracks the file of
the function itself); steps are not cached on their own, so that a change in a helper
they call can never be missed.

Input
-----
Blocks arrive as dense arrays or CSR matrices; a dense block is run in place as a CSR
matrix that stores every entry (the column indices are built once and shared), or, when
at least half of it is zeros, copied into CSR without them; a CSR block with unsorted or
duplicate indices is made canonical first. A step must treat a
stored zero x_j as absent (its update of v_j, and of any per-coordinate state, is
exactly nothing): dense and sparse input then give bit-identical learners.

Conversions (:mod:`dolb.conversions`) see each round (the hypothesis in use, its age,
the loss), each change (the sparse Δ, the new scale) and each fold; those not requested
are skipped by one predictable branch per round.
"""

from __future__ import annotations

import hashlib
import math
import re
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
from dolb.conversions.output import linear_hypothesis
from dolb.conversions.suffix import Suffix
from dolb.errors import ConfigError, DataError
from dolb.learners.base import OnlineLearner, Param

# |s| is kept within [FOLD_LOW, FOLD_HIGH]: lazy representations (the averaging
# accumulator a·v + u, the survivor's v − D) lose about log10(range) digits to
# cancellation between two folds, and a fold costs O(d).
FOLD_LOW = 1e-3
FOLD_HIGH = 1e3

HINGE, LOGISTIC = 0, 1
LOSSES = ("hinge", "logistic")

# flags passed to the driver
_AVG, _SURV, _HIST, _SUFFIX, _CUTOFF, _BUCKETS, _HINGE_BOUND = range(7)


@numba.njit(cache=True, inline="always")
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


@numba.njit(cache=True, inline="always")
def scaled_row(delta, val, start, nnz, c):
    """delta[j] = c · val[start + j]: the common update v += c·x."""
    for j in range(nnz):
        delta[j] = c * val[start + j]


@numba.njit(cache=True, inline="always")
def norm_after(v, idx, start, delta, nnz, vnorm2):
    """‖v + Δ‖² from ‖v‖² in O(nnz)."""
    for j in range(nnz):
        d = delta[j]
        vnorm2 += d * (2.0 * v[idx[start + j]] + d)
    return max(vnorm2, 0.0)


def _drive(indptr, indices, data, y, P, A, v, F, I, delta, flags, avg, surv, hist, suf, cut, pred):
    """Run the learner ``step`` over one CSR block, test-then-train; fill ``pred``."""
    avg_on = flags[_AVG] != 0
    surv_on = flags[_SURV] != 0
    surv_own = surv_on and surv[3][2] == 0  # survivor keeps its own D (no history)
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
        dot = 0.0
        for k in range(start, start + nnz):
            dot += v[indices[k]] * data[k]
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
        updated, s_new = step(P, A, F, v, indices, data, start, nnz, yt, p, dot, rnd, delta)  # noqa: F821 (set per learner)
        if not updated:
            continue
        changed = s_new != s
        if buckets:
            # cutoff's buckets add the dying hypothesis s·v: v changes after they did
            for j in range(nnz):
                old = v[indices[start + j]]
                new = old + delta[j]
                if new != old:
                    changed = True
                delta[j] = new
            if changed:
                _cutoff.on_death(cut, age, s, v, buckets)
            for j in range(nnz):
                p_j = indices[start + j]
                old = v[p_j]
                v[p_j] = delta[j]
                delta[j] -= old
        else:
            for j in range(nnz):
                p_j = indices[start + j]
                old = v[p_j]
                new = old + delta[j]
                v[p_j] = new
                delta[j] = new - old
                if new != old:
                    changed = True
            if changed and cut_on:
                _cutoff.on_death(cut, age, s, v, buckets)
        if not changed:
            continue
        # the live hypothesis s·v (v before the change) died after `age` rounds
        if surv_on:
            _survivor.on_death(surv, s, age, hist[6][0] - 1)
        if avg_on:
            _average.on_change(avg, indices, start, delta, nnz)
        if surv_own:
            _survivor.on_change(surv, indices, start, delta, nnz)
        if hist_on:
            _history.on_change(hist, indices, start, delta, nnz, s_new, age)
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
                _average.on_fold(avg, phi, v)
            if surv_own:
                _survivor.on_fold(surv, phi)
            if hist_on:
                _history.on_fold(hist, phi)
    F[0] = s
    I[0] = rnd
    I[1] = age


_DEPENDENCIES = [Path(__file__)] + sorted(Path(_average.__file__).parent.glob("*.py"))


def _prune_cache(name: str, current: str) -> None:
    """Remove Numba cache files of this learner's drivers built from older sources
    (best effort, in the default cache folder)."""
    folder = Path(__file__).parent / "__pycache__"
    pattern = re.compile(rf"linear\._drive_{re.escape(name)}_[0-9a-f]{{12}}-.*\.nb[ci]")
    for path in folder.glob(f"linear._drive_{name}_*.nb[ci]"):
        if pattern.fullmatch(path.name) and not path.name.startswith(f"linear.{current}-"):
            try:
                path.unlink()
            except OSError:  # another process got there first, or a read-only install
                pass


def _compile_driver(step, name: str, module_file: str):
    """A cached njit copy of :func:`_drive` calling ``step``."""
    digest = hashlib.sha1()
    for path in _DEPENDENCIES + [Path(module_file)]:
        digest.update(path.read_bytes())
    qualname = f"_drive_{name}_{digest.hexdigest()[:12]}"
    _prune_cache(name, qualname)
    g = dict(_drive.__globals__)
    g["step"] = step
    fn = types.FunctionType(_drive.__code__, g, f"_drive_{name}")
    fn.__qualname__ = qualname
    fn.__module__ = __name__
    fn.__doc__ = _drive.__doc__
    return numba.njit(cache=True, nogil=True)(fn)


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


class _DenseLayout:
    """indptr and column indices of dense blocks seen as CSR with every entry stored
    (zeros included), grown to the largest block and shared by later, smaller ones."""

    def __init__(self) -> None:
        self.rows, self.width = 0, 0
        self.indptr = np.zeros(1, np.int64)
        self.indices = np.zeros(0, np.int32)

    def parts(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n, d = X.shape
        if n > self.rows or d != self.width:
            self.rows, self.width = max(n, self.rows if d == self.width else 0), d
            self.indptr = np.arange(self.rows + 1, dtype=np.int64) * d
            self.indices = np.tile(np.arange(d, dtype=np.int32), self.rows)
        return self.indptr[: n + 1], self.indices[: n * d], X.reshape(-1)


@numba.njit(cache=True)
def _compact(X):
    """CSR parts of a dense block without its zeros."""
    n, d = X.shape
    indptr = np.zeros(n + 1, np.int64)
    for i in range(n):
        c = 0
        for j in range(d):
            c += X[i, j] != 0.0
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


_EXPONENT = np.int64(0x7FF0000000000000)


@numba.njit(cache=True)
def _scan_rows(indptr, indices, bits):
    """(number of non-finite values, number of places where a row's column indices do
    not increase). Flat loops without branches, so that they vectorise (``bits``: the
    values as int64): 0.15 ns per stored value."""
    n = bits.shape[0]
    nonfinite = 0
    for k in range(n):
        nonfinite += (bits[k] & _EXPONENT) == _EXPONENT
    disorder = 0
    for k in range(1, n):
        disorder += indices[k] <= indices[k - 1]
    # the comparisons across a row boundary do not count
    last = 0
    for i in range(1, indptr.shape[0] - 1):
        k = indptr[i]
        if k != last and k < n:
            disorder -= indices[k] <= indices[k - 1]
        last = k
    return nonfinite, disorder


def _scan(indptr, indices, data) -> tuple[int, bool]:
    """(first non-finite position or −1, whether every row's indices strictly increase)."""
    nonfinite, disorder = _scan_rows(indptr, indices, data.view(np.int64))
    first = int(np.flatnonzero(~np.isfinite(data))[0]) if nonfinite else -1
    return first, disorder == 0


def csr_parts(X, layout: _DenseLayout | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(indptr int64, indices int32, data float64, first non-finite position or −1) of a
    block, canonical (sorted, duplicates summed). A dense block is viewed in place, zeros
    included (its column indices from ``layout``, which keeps them for the next block),
    unless at least half of it is zeros (MNIST-like): then it is copied without them."""
    if not sp.issparse(X):
        X = np.ascontiguousarray(X, dtype=np.float64)
        if 2 * np.count_nonzero(X) <= X.size:
            parts = _compact(X)
        else:
            parts = (layout or _DenseLayout()).parts(X)
        bad, _ = _scan(*parts)
        return (*parts, bad)
    parts = (
        np.asarray(X.indptr, dtype=np.int64),
        np.asarray(X.indices, dtype=np.int32),
        np.ascontiguousarray(X.data, dtype=np.float64),
    )
    bad, canonical = _scan(*parts)
    if bad >= 0 or canonical:
        return (*parts, bad)
    X = sp.csr_matrix(X, dtype=np.float64, copy=True)
    X.sum_duplicates()
    return csr_parts(X)


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
        self._dense_layout = _DenseLayout()
        self._input_sparse: bool | None = None  # fixed by the first block
        self.history: History | None = None
        self._conv: dict[str, Any] = {}
        self._setup_conversions(sparse=True)

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

    def _setup_conversions(self, sparse: bool) -> None:
        """(Re)build the conversion states, before any example. The update log is kept
        when suffix averaging needs it, or cutoff averaging on sparse input; cutoff
        averaging on dense input without suffix averaging uses per-r buckets instead.
        Averaging and the longest survivor use the log whenever it exists (then they cost
        O(1) per round while streaming)."""
        wanted = set(self.conversions)
        buckets = not sparse and "suffix" not in wanted
        self.history = History(self) if "suffix" in wanted or ("cutoff" in wanted and not buckets) else None
        log = self.history is not None
        make = {
            "last": lambda: Last(self),
            "average": lambda: Average(self, use_history=log),
            "longest_survivor": lambda: LongestSurvivor(self, use_history=log),
            "suffix": lambda: Suffix(self),
            "cutoff": lambda: Cutoff(self, buckets=buckets),
        }
        self._conv = {name: make[name]() for name in self.conversions}

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_dense_layout"] = _DenseLayout()  # rebuilt from the next dense block
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        for owned in list(self._conv.values()) + [self.history]:
            if owned is not None:
                owned.bind(self)

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
                f"learner {self.name!r}: labels must be -1 or +1, "
                f"row {self.n_seen + row} has {float(y[row])!r}"
            )
        if self._input_sparse is None:
            self._input_sparse = sp.issparse(X)
            self._setup_conversions(sparse=self._input_sparse)
        indptr, indices, data, bad = csr_parts(X, self._dense_layout)
        if bad >= 0:
            row = int(np.searchsorted(indptr, bad, side="right")) - 1
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
        flags[_AVG] = "average" in c and c["average"].streams
        flags[_SURV] = "longest_survivor" in c
        flags[_HIST] = self.history is not None
        flags[_SUFFIX] = "suffix" in c
        flags[_CUTOFF] = "cutoff" in c
        flags[_BUCKETS] = "cutoff" in c and c["cutoff"].buckets
        flags[_HINGE_BOUND] = self.bound_loss == "hinge"
        pred = np.empty(n)
        self.driver()(
            indptr, indices, data, y, self.P, self.A, self.v, self.F, self.I, self._delta, flags,
            c["average"].arrays if flags[_AVG] else _average.off(),
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
        """The output hypothesis of every requested conversion, now. The outputs that
        are weighted sums of logged hypotheses are built in one pass over the log."""
        requests = {}
        for name, conv in self._conv.items():
            request = conv.log_request() if hasattr(conv, "log_request") else None
            if request is not None:
                requests[name] = request
        if requests:
            sums = self.history.weighted_sums(np.stack([r[0] for r in requests.values()]))
        out = {}
        for name, conv in self._conv.items():
            if name in requests:
                _, factor, info = requests[name]
                out[name] = linear_hypothesis(sums[list(requests).index(name)] * factor, info)
            else:
                out[name] = conv.output()
        return out

    def conversion(self, name: str):
        """The live conversion object ``name`` (for its bounds, or H*_k of any k)."""
        if name not in self._conv:
            raise ConfigError(
                f"learner {self.name!r} was not built with conversion {name!r} "
                f"(it has: {', '.join(self.conversions)})"
            )
        return self._conv[name]


LOSS_PARAM = Param("hinge", str, choices=LOSSES, doc="loss: hinge max(0, 1 - y<w,x>) or logistic")
