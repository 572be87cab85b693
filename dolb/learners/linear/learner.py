"""The base class of the linear binary classifiers: their state, their input checks, and
the hub that builds their conversions and runs the compiled driver.

A linear learner is one module: a subclass of :class:`LinearLearner` declaring its
``name``, its ``params`` and its ``step``, a function compiled with
``@numba.njit(inline="always")`` that the driver (:mod:`.driver`) calls on every
example, after the prediction, test-then-train (:mod:`dolb.learners.perceptron` is the
smallest)::

    step(P, A, F, v, idx, val, start, nnz, y, p, dot, t, delta, direct) -> (updated, s_new)

It gets the parameters ``P`` by name (a string choice as its integer code), its own
state arrays ``A`` (:meth:`LinearLearner._arrays`), the representation's floats ``F``
by slot (``F[SCALE]`` the s of w = s·v, ``F[NORM2]`` ‖v‖², ``F[PHI]``:
:mod:`.representation`), ``v``, the example (``idx[start + j]``, ``val[start + j]`` for
j < ``nnz``, label ``y`` ∈ {−1, +1}, prediction ``p`` = s·``dot``, round ``t``) and
``delta``, room for one change per coordinate. It moves each coordinate of v it changes
with :func:`~.representation.move` (or :func:`~.representation.scaled_row` for
v += c·x), which writes the change into ``delta`` or, when ``direct``, onto v; and
returns ``updated`` (what those helpers returned) and the new scale. It must not
allocate and must treat a stored zero of x as absent (:mod:`.layout`). The contract in
full, rule by rule: docs/design/linear-driver.md.
"""

from __future__ import annotations

import functools
import sys
from typing import Any, ClassVar, NoReturn

import numpy as np
import scipy.sparse as sp

from dolb.conversions import CONVERSIONS, REGISTRY
from dolb.conversions.history import History
from dolb.conversions.hypothesis import linear_hypothesis
from dolb.data.blocks import canonical, column_error, label_error, rows_from
from dolb.data.store.spans import RowSpans
from dolb.errors import ConfigError, DataError
from dolb.learners.base import OnlineLearner
from dolb.learners.linear.driver import FED, compile_driver, listens_to_nothing, switches
from dolb.learners.linear.layout import DenseLayout, csr_parts, row_arrays
from dolb.learners.linear.params import step_params_class, step_value
from dolb.learners.linear.representation import AGE, N_FLOATS, N_INTS, PHI, ROUNDS, SCALE


def read_only(a: np.ndarray) -> np.ndarray:
    """``a``, or a read-only view of it: the driver reads its input the same either way,
    and one type for both (a block from a store may be a view of a cached chunk, which is
    read-only) means one compiled driver."""
    if a.flags.writeable:
        a = a.view()
        a.flags.writeable = False
    return a


@functools.cache
def _absent_state(part: type) -> tuple:
    """The state the driver gets in the slot of an absent part, made once per class and
    shared: the driver never calls an absent part's hooks, so nothing writes it."""
    return part.off()


class LinearLearner(OnlineLearner):
    """Base class of the linear binary classifiers (labels −1/+1, no bias, w_0 = 0).

    A subclass declares ``name``, ``params`` and ``step`` (an ``njit`` function with the
    contract in this module's docstring), which reads its parameters by name from the record ``P``
    (:mod:`.params`: a field per declared parameter, string choices as integer codes).
    It may declare ``derived_params`` (more fields of ``P``, valued by
    :meth:`_derived_params`) and override :meth:`_arrays` (the tuple ``A``),
    :meth:`_initial_scale`, :meth:`_check_block` (with ``checks_rows = True``) and, for a
    loss other than 0-1 in the conversions' bound, ``bound_loss`` and :attr:`loss_bound`.

    Input rows are checked as the driver reads them (:mod:`.driver`): a row with a label
    other than ±1, a column index outside the matrix or a non-finite value is a
    :class:`~dolb.errors.DataError` naming it, raised after the rows before it in its
    block were learned; from a row whose column indices are out of order on, the block
    is made canonical (sorted, duplicates summed) and learned on. A learner with
    ``checks_rows`` has its whole block checked, made canonical and scanned before
    :meth:`_check_block` sees it, and before it learns any of it.

    Every conversion of :mod:`dolb.conversions` is supported. The loss their bounds use
    (``bound_loss``) is the 0-1 loss (C = 1) unless the subclass says otherwise.
    """

    task: ClassVar[str] = "binary"
    conversions_supported: ClassVar[tuple[str, ...]] = CONVERSIONS
    bound_loss: ClassVar[str] = "zero_one"
    derived_params: ClassVar[tuple[str, ...]] = ()
    checks_rows: ClassVar[bool] = False
    block_values: ClassVar[int | None] = 1 << 20  # 8-12 MB of a block's values and column indices
    step: ClassVar[Any] = None
    StepParams: ClassVar[type]
    _drivers: ClassVar[dict[bool, Any]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.StepParams = step_params_class(cls, cls.params, cls.derived_params)
        cls._drivers = {}
        # the driver checks the column indices as it reads them, and reads rows left in
        # place, unless the whole block is checked first (its check needs CSR, canonical)
        cls.checks_columns = cls.reads_spans = not cls.checks_rows

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
        self.F = np.zeros(N_FLOATS)
        self.F[SCALE], self.F[PHI] = self._initial_scale(), 1.0  # ‖v‖² = 0
        self.I = np.zeros(N_INTS, np.int64)
        declared = {key: step_value(self.params[key], value) for key, value in self.config.items()}
        self.P = self.StepParams(**declared, **self._derived_params())
        self.A = self._arrays()
        self._delta = np.zeros(d)
        self._dense_layout = DenseLayout()
        self._input_sparse: bool | None = None  # fixed by the first block
        self.history: History | None = None
        self._conv: dict[str, Any] = {}
        self._setup_conversions(sparse=True)

    # --- what subclasses provide ---------------------------------------------------------

    def _derived_params(self) -> dict[str, Any]:
        """The values of ``derived_params``."""
        return {}

    def _arrays(self) -> tuple:
        return (np.zeros(0),)

    def _initial_scale(self) -> float:
        return 1.0

    def _check_block(self, indptr, indices, data) -> None:
        """Raise DataError for rows the learner cannot take (called with ``checks_rows``
        only, on finite rows)."""

    @property
    def loss_bound(self) -> float:
        """Upper bound C of the loss the conversions' bounds use."""
        return 1.0

    # --- state ---------------------------------------------------------------------------

    @property
    def scale(self) -> float:
        return float(self.F[SCALE])

    @property
    def rounds(self) -> int:
        """Examples learned so far."""
        return int(self.I[ROUNDS])

    @property
    def live_age(self) -> int:
        """Rounds the current hypothesis has been used on (0 right after an update)."""
        return int(self.I[AGE])

    def weights(self) -> np.ndarray:
        """The current hypothesis w = s·v (a copy)."""
        return self.F[SCALE] * self.v

    def state_nbytes(self) -> int:
        """Bytes the conversions hold (the update log: the bytes in use)."""
        used = self.history.used_bytes if self.history is not None else 0
        return used + sum(conv.nbytes for conv in self._conv.values())

    # --- the hub -------------------------------------------------------------------------

    def _setup_conversions(self, sparse: bool) -> None:
        """(Re)build the conversion states, before any example: the update log is kept
        when a requested conversion requires it on this input, and then every conversion
        may use it (averaging and the longest survivor then cost O(1) per round while
        streaming; cutoff averaging uses it instead of per-r buckets)."""
        log = any(REGISTRY[name].requires_log(sparse) for name in self.conversions)
        self.history = History(self) if log else None
        self._conv = {name: REGISTRY[name](self, log) for name in self.conversions}
        parts = self._fed()
        # fixed from now on: the switches, and the states of the absent parts (never fed)
        self._switches = switches(parts, hinge=self.bound_loss == "hinge")
        self._quiet = listens_to_nothing(self._switches)
        self._absent = [_absent_state(cls) if part is None else None for cls, part in zip(FED, parts)]

    def _fed(self) -> list:
        """The part in every slot of the driver (None: absent)."""
        return [self.history] + [self._conv.get(part.name) for part in FED[1:]]

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_dense_layout"] = DenseLayout()  # rebuilt from the next dense block
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._quiet = listens_to_nothing(self._switches)  # a state saved before the quiet driver lacks it
        for part in self._fed():
            if part is not None:
                part.bind(self)

    @classmethod
    def driver(cls, quiet: bool = False):
        """The compiled driver of this learner, its quiet copy when ``quiet`` (see
        :mod:`.driver`; each built on first use)."""
        if quiet not in cls._drivers:
            cls._drivers[quiet] = compile_driver(cls.step, cls.name, sys.modules[cls.__module__].__file__, quiet)
        return cls._drivers[quiet]

    def learn_running(self, X, y, labelled: np.ndarray | None = None, total: float = 0.0) -> np.ndarray:
        """As :meth:`OnlineLearner.learn_running`: the mistakes counted by the driver as
        it learns a whole block, rather than from the predictions after, in a second pass."""
        if labelled is not None:
            return super().learn_running(X, y, labelled, total)
        X, y, _ = self._block(X, y, None)
        running = self._learn(X, y, float(total))
        self.n_seen += y.shape[0]
        return running

    def _learn(self, X, y, total: float | None = None):
        """The predictions on block ``X``, or from ``total`` the running mistakes."""
        if self._input_sparse is None:
            self._input_sparse = sp.issparse(X)
            if not self._input_sparse:  # built for sparse input, as the first block is not
                self._setup_conversions(sparse=False)
        n = y.shape[0]
        if self.checks_rows:  # its check needs the rows finite: scanned first
            indptr, indices, data, bad = csr_parts(X, self._dense_layout)
            if bad >= 0:
                self._non_finite(int(np.searchsorted(indptr, bad, side="right")) - 1)
            self._check_block(indptr, indices, data)
            rows = (indptr[:-1], indptr[1:], indices, data)
        else:  # values checked as the driver reads them
            rows = row_arrays(X, self._dense_layout)
        out = np.empty(n)
        first = 0  # the block's row that row 0 of the arrays is
        while (done := first + self._drive(X, rows, y[first:], out[first:], total)) < n:
            # stopped before row `done`: the rows before it are learned
            self._refuse(*rows[:3], y, done - first, done)
            # only its column indices are out of order: the rest of the block made canonical
            X = canonical(rows_from(X, done - first))
            rows = row_arrays(X)
            if total is not None and done > first:
                total = out[done - 1]
            first = done
        return out

    def _refuse(self, begins, ends, indices, y, row: int, done: int) -> None:
        """The driver stopped before block row ``done`` (row ``row`` of ``begins`` and
        ``ends``), the rows before it learned: raise the DataError naming it, or return
        if its column indices are only out of order."""
        labelled = abs(y[done]) == 1.0
        columns = indices[begins[row] : ends[row]]
        outside = np.flatnonzero((columns < 0) | (columns >= self.n_features))
        if labelled and not outside.size and np.any(columns[1:] <= columns[:-1]):
            return
        self.n_seen += done
        if not labelled:
            raise label_error(f"learner {self.name!r}", self.n_seen, y[done])
        if outside.size:
            raise column_error(f"learner {self.name!r}", self.n_seen, int(columns[outside[0]]), self.n_features)
        self._non_finite(0)

    def _non_finite(self, row: int) -> NoReturn:
        raise DataError(f"learner {self.name!r}: row {self.n_seen + row} has a non-finite value")

    def _states(self, rows: int, values: int) -> tuple:
        """The state of every slot of the driver, each part with room for a block of
        ``rows`` rows and at most ``values`` stored values. (The quiet driver, whose
        parts listen to nothing, gets none.)"""
        parts = self._fed()
        for part in parts:
            if part is not None:
                part.reserve(rows, values)
        return tuple(part.arrays if off is None else off for part, off in zip(parts, self._absent))

    def _drive(self, X, rows: tuple, y, out, total: float | None) -> int:
        """Run the compiled driver over the ``rows`` of block ``X`` (its
        :func:`.layout.row_arrays`, or its CSR arrays so arranged), filling ``out`` with
        the predictions, or from ``total`` the running mistakes; the number of rows it
        ran."""
        begins, ends, indices, data = rows
        ahead = isinstance(X, RowSpans)  # rows anywhere in the decoded chunk: asked for ahead
        states = () if self._quiet else self._states(y.shape[0], X.nnz if ahead else data.shape[0])
        indices, data = read_only(indices), read_only(data)
        return self.driver(self._quiet)(
            begins, ends, indices, data, y, self.P, self.A, self.v, self.F, self.I, self._delta, self._switches,
            states, out, ahead, total is not None, 0.0 if total is None else total
        )

    def _predict(self, X):
        return np.asarray(X @ self.weights(), dtype=np.float64).reshape(-1)

    def outputs(self):
        """The output hypothesis of every requested conversion, now. The outputs that
        are weighted sums of logged hypotheses are built in one pass over the log."""
        requests = {}
        for name, conv in self._conv.items():
            request = conv.log_request()
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
