"""The protocol every online learner follows, its parameter checks and the registry.

A learner holds its state in NumPy arrays and runs one compiled (Numba) kernel over a
whole block of examples, example by example: predict, suffer a loss, update. Python code
runs once per block, never once per example.

A block's features are either a 2-D ``float64`` NumPy array or a
``scipy.sparse.csr_matrix``; its targets a 1-D ``float64`` array (regression values,
or -1/+1 for binary classification) and, optionally, a boolean ``labelled`` array: a
target whose flag is false must not be read. A supervised learner updates on labelled
examples only; a semi-supervised one (``semi_supervised = True``) learns from all.

What a learner offers at a checkpoint is a :class:`Hypothesis` per conversion: anything
that predicts (a weight vector, a support set with its coefficients, ...), with numbers
describing it (``info``); numbers describing the learner itself at that point (a kernel
learner's support vectors and kernel evaluations so far) come from
:meth:`OnlineLearner.diagnostics`. Both are recorded as metrics.

Each registered class also carries what the rest of dolb needs to run it without a list
of its own: ``bench_params`` (``dolb bench``) and ``test_params`` (the generic tests,
:func:`dolb.testing.check_learner`, which checks a class against this protocol). The
guide page ``docs/guide/own-learner.md`` writes a learner in a package of its own, step
by step.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from dolb.conversions.hypothesis import Hypothesis
from dolb.data.blocks import as_block
from dolb.errors import ConfigError
from dolb.losses import RUNNING_LOSS
from dolb.params import check_number
from dolb.registry import Registry

__all__ = ["LEARNERS", "Hypothesis", "OnlineLearner", "Param", "as_block", "declaration_problem", "learner_class",
           "register", "registered_learners"]


@dataclass(frozen=True)
class Param:
    """Declaration of one learner parameter.

    Parameters
    ----------
    default
        Value used when the pipeline does not set the parameter.
    kind
        ``float``, ``int``, ``bool`` or ``str``.
    low, high
        Inclusive bounds for numbers (``None``: unbounded).
    above
        Exclusive lower bound: the value must be greater (``above=0.0``: positive).
    choices
        Allowed values for strings.
    doc
        One line saying what the parameter means.
    """

    default: Any
    kind: type = float
    low: float | None = None
    high: float | None = None
    above: float | None = None
    choices: tuple[str, ...] | None = None
    doc: str = ""

    def check(self, learner: str, name: str, value: Any) -> Any:
        """Return ``value`` converted to ``kind``, or raise :class:`ConfigError`."""
        where = f"learner {learner!r}, parameter {name!r}"
        if self.kind is bool:
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: expected true or false, got {value!r}")
            return value
        if self.kind is str:
            if not isinstance(value, str):
                raise ConfigError(f"{where}: expected a string, got {value!r}")
            if self.choices is not None and value not in self.choices:
                raise ConfigError(f"{where}: {value!r} is not one of {', '.join(self.choices)}")
            return value
        return check_number(where, value, self.kind, self.low, self.high, self.above)


class OnlineLearner:
    """Base class of every online learner.

    Subclasses declare ``name`` (the registry key), ``task`` (``"regression"`` or
    ``"binary"``), ``params`` (a mapping of parameter name to :class:`Param`) and,
    when the learner has a complexity level, ``complexity_param`` (the name of the
    parameter a pipeline's ``complexity`` values set). They implement
    :meth:`_learn` (``_learn(X, y)``; ``_learn(X, y, labelled)`` when
    ``semi_supervised``) and :meth:`_predict`, and may override :meth:`outputs`,
    :meth:`diagnostics`, :meth:`state_nbytes` and :meth:`learn_running`.

    Parameters
    ----------
    n_features : int
        Number of input features.
    n_train : int, optional
        Number of training examples the learner will see, for learners that need the
        horizon in advance.
    conversions : tuple of str
        Online-to-batch conversions to feed while learning (names from
        ``conversions_supported``); their outputs come from :meth:`outputs`.
    checked : bool, keyword-only
        True when ``params`` are already the full output of :meth:`check_params` (every
        declared parameter, checked and converted), as a cell's are (the pipeline checks
        each configuration once, when it is loaded): they are then taken as they are
        (only :meth:`check_available` runs, on the machine the learner runs on). False
        (the default) for parameters given by hand: they are checked here.
    **params
        Values for the parameters the subclass declares.

    A subclass's ``__init__`` hands ``checked`` on to this one: one that takes
    ``**params`` and passes them to ``super().__init__`` does so as it is (and must not
    read ``params`` before: only ``self.config`` is sure to be checked).
    """

    name: ClassVar[str] = ""
    task: ClassVar[str] = ""
    params: ClassVar[dict[str, Param]] = {}
    complexity_param: ClassVar[str | None] = None
    conversions_supported: ClassVar[tuple[str, ...]] = ("last",)
    semi_supervised: ClassVar[bool] = False
    refits_per_block: ClassVar[bool] = False
    """True for a batch learner that refits once per block (``batch_mr``): its predictions
    inside a block come from the fit before the block, so they depend on block sizes."""
    block_values: ClassVar[int | None] = None
    """For a learner whose results do not depend on where its stream is cut into blocks
    (its tests check it, bit for bit) and whose cost per block is Python around one
    compiled pass: the stored values a cell's block of sparse rows may hold, so that
    short rows come in fewer, larger blocks (:func:`~dolb.evaluation.run_cell.block_rows`).
    None: blocks of :data:`~dolb.evaluation.run_cell.BLOCK_SIZE` rows."""
    checks_columns: ClassVar[bool] = False
    """True for a learner that checks the column indices of a CSR block's rows as it
    reads them (a column outside the matrix, or rows not in canonical order): its blocks
    then have only their row pointers checked before (:func:`~dolb.data.blocks.as_block`)."""
    reads_spans: ClassVar[bool] = False
    """True for a learner that takes a store's permuted rows left in place in their decoded
    chunk (:class:`~dolb.data.store.spans.RowSpans`, asked of the stream with
    ``in_place``); any other learner gets them gathered into CSR."""
    revision: ClassVar[int] = 1
    """The revision of a built-in learner's code: raised when a change of its source
    changes its results, so that cells stored by the earlier code are computed anew (see
    :mod:`dolb.learners.code`; a plugin learner is identified by its package instead)."""
    wraps: ClassVar[str | None] = None
    """The distribution of a library whose learner this one runs (its version is part of
    the cells' identity)."""
    bench_params: ClassVar[dict[str, Any] | None] = None
    """Parameters ``dolb bench`` runs the learner with (None: not benchmarked). Its
    streams are binary: 50,000 sparse features, or 100 dense ones, rows of norm 1."""
    test_params: ClassVar[dict[str, Any]] = {}
    """Parameters the generic tests run the learner with, on small streams: binary rows
    of norm at most 1, or for regression one input in [0, 1]."""

    def __init__(
        self,
        n_features: int,
        n_train: int | None = None,
        conversions: tuple[str, ...] = ("last",),
        *,
        checked: bool = False,
        **params: Any,
    ) -> None:
        if int(n_features) < 1:
            raise ConfigError(f"learner {self.name!r}: n_features must be at least 1, got {n_features}")
        unsupported = [c for c in conversions if c not in self.conversions_supported]
        if unsupported:
            raise ConfigError(
                f"learner {self.name!r} does not support conversion {unsupported[0]!r} "
                f"(supported: {', '.join(self.conversions_supported)})"
            )
        self.n_features = int(n_features)
        self.n_train = n_train
        self.conversions = tuple(conversions)
        if checked:  # but a worker may lack a package the machine that checked them had
            self.check_available()
            self.config = params
        else:
            self.config = self.check_params(params)
        self.n_seen = 0

    @classmethod
    def unavailable(cls) -> str | None:
        """Why the learner cannot run here (an optional package it wraps is missing, see
        :mod:`dolb.learners.peers`), as one line; None when it can."""
        return None

    @classmethod
    def check_available(cls) -> None:
        """Raise ConfigError, saying why, if the learner is :meth:`unavailable`."""
        missing = cls.unavailable()
        if missing:
            raise ConfigError(missing)

    @classmethod
    def check_params(cls, params: dict[str, Any]) -> dict[str, Any]:
        """Return the full parameter set (defaults filled in), or raise ConfigError
        (also when the learner is :meth:`unavailable`)."""
        cls.check_available()
        unknown = sorted(set(params) - set(cls.params))
        if unknown:
            known = ", ".join(sorted(cls.params)) or "none"
            raise ConfigError(
                f"learner {cls.name!r}: unknown parameter {unknown[0]!r} (known: {known})"
            )
        checked = {}
        for key, spec in cls.params.items():
            value = params.get(key, spec.default)
            checked[key] = spec.check(cls.name, key, value)
        return checked

    def learn(self, X, y: np.ndarray, labelled: np.ndarray | None = None) -> np.ndarray:
        """Run one block test-then-train; return the prediction made for each example
        before the learner updated on it.

        ``labelled`` (booleans, one per row; default all true) says which targets may be
        read. A supervised learner learns from the runs of labelled rows and predicts
        the others with the hypothesis of the moment, never reading their targets.
        """
        X, y, labelled = self._block(X, y, labelled)
        if self.semi_supervised:
            predictions = self._learn(X, y, np.ones(y.shape, bool) if labelled is None else labelled)
        elif labelled is None or labelled.all():
            predictions = self._learn(X, y)
        else:
            return self._learn_labelled_runs(X, y, labelled)
        self.n_seen += y.shape[0]
        return predictions

    def learn_running(self, X, y, labelled: np.ndarray | None = None, total: float = 0.0) -> np.ndarray:
        """Run one block as :meth:`learn` does; return the prequential loss summed over
        the stream after each of its examples, from ``total`` (the loss summed before
        the block): what a cell records. Its value is the task's running loss of the
        predictions, :data:`~dolb.losses.RUNNING_LOSS` (0-1 mistakes, or
        squared errors); a learner may compute it as it learns, bit for bit the same
        (the linear learners count their mistakes in their compiled pass, which then
        spares a second pass over the predictions and the targets)."""
        return RUNNING_LOSS[self.task](self.learn(X, y, labelled), y, total)

    def _block(self, X, y, labelled: np.ndarray | None) -> tuple:
        """(X, y, labelled) checked and as the learner takes them (see :meth:`learn`)."""
        y = np.ascontiguousarray(y, dtype=np.float64)
        # the columns are left to the learner only in a block it gets whole (runs of
        # labelled rows are slices, and a slice of a CSR matrix drops the column indices
        # outside it)
        whole = labelled is None
        X = as_block(X, self.n_features, f"learner {self.name!r}", self.n_seen,
                     columns=not (self.checks_columns and whole), spans=self.reads_spans and whole)
        if X.shape[0] != y.shape[0]:
            raise ValueError(f"block has {X.shape[0]} rows but {y.shape[0]} targets")
        if labelled is not None:
            labelled = np.asarray(labelled)
            if labelled.dtype != np.bool_ or labelled.shape != y.shape:
                raise ValueError(f"labelled must be {y.shape[0]} booleans, got {labelled.dtype} {labelled.shape}")
        return X, y, labelled

    def _learn_labelled_runs(self, X, y: np.ndarray, labelled: np.ndarray) -> np.ndarray:
        """Learn the runs of labelled rows, predict the runs of unlabelled ones."""
        predictions = np.empty(y.shape[0])
        cuts = np.flatnonzero(labelled[1:] != labelled[:-1]) + 1
        bounds = [0, *cuts.tolist(), y.shape[0]]
        for a, b in itertools.pairwise(bounds):
            predictions[a:b] = self._learn(X[a:b], y[a:b]) if labelled[a] else self._predict(X[a:b])
            self.n_seen += b - a
        return predictions

    def predict(self, X) -> np.ndarray:
        """Outputs of the current hypothesis (regression values or decision values)."""
        return self._predict(as_block(X, self.n_features, f"learner {self.name!r}"))

    def outputs(self) -> dict[str, Hypothesis]:
        """The output hypothesis of every attached conversion, now.

        The base implementation offers the last hypothesis only; learners that feed
        online-to-batch conversions (:mod:`dolb.conversions`) override it.
        """
        return {"last": Hypothesis(self.predict)}

    def diagnostics(self) -> dict[str, float]:
        """Numbers describing the learner now (e.g. a kernel learner's number of support
        vectors and of kernel evaluations so far), recorded at every checkpoint as
        metrics of that name. Default: none."""
        return {}

    def state_nbytes(self) -> int:
        """Bytes of the state that grows with the stream (``dolb bench`` reports it).
        Default: 0."""
        return 0

    def _learn(self, X, y: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _predict(self, X) -> np.ndarray:
        raise NotImplementedError


LEARNERS: Registry[type[OnlineLearner]] = Registry("learner", entry_point_group="dolb.learners")
"""Every learner, by name: dolb's own and those other packages add through the
``dolb.learners`` entry point group (see :mod:`dolb.registry`)."""


def declaration_problem(cls: type[OnlineLearner]) -> str | None:
    """What is wrong with a learner class's declarations (``name``, ``task``,
    ``params``, ``complexity_param``, ``conversions_supported``), as one line; None when
    nothing is. :func:`register` refuses a class with a problem."""
    if not cls.name or not isinstance(cls.name, str) or cls.task not in ("regression", "binary"):
        return f"{cls.__name__} must set name and task ('regression' or 'binary')"
    if not isinstance(cls.params, dict) or not all(isinstance(p, Param) for p in cls.params.values()):
        return f"{cls.__name__}.params must map each parameter's name to a Param"
    if cls.complexity_param is not None and cls.complexity_param not in cls.params:
        return f"{cls.__name__}.complexity_param names no declared parameter"
    if "last" not in cls.conversions_supported:
        return f"{cls.__name__}.conversions_supported must include 'last'"
    return None


def register(cls: type[OnlineLearner]) -> type[OnlineLearner]:
    """Class decorator adding a learner to :data:`LEARNERS` under ``cls.name``; TypeError
    for a class with a :func:`declaration_problem`."""
    problem = declaration_problem(cls)
    if problem:
        raise TypeError(problem)
    LEARNERS.add(cls.name, cls)
    if not cls.__module__.startswith("dolb."):  # a plugin's code, as it is imported
        from dolb.learners.code import remember_source

        remember_source(cls)
    return cls


def learner_class(name: str) -> type[OnlineLearner]:
    """The learner class registered as ``name``; ConfigError if there is none."""
    return LEARNERS[name]


def registered_learners(task: str | None = None, supports: tuple[str, ...] = ()) -> dict[str, type[OnlineLearner]]:
    """Name to class of the registered learners (of ``task`` when given, supporting
    every conversion of ``supports``), sorted by name."""
    return {
        name: cls
        for name, cls in LEARNERS.items()
        if (task is None or cls.task == task) and set(supports) <= set(cls.conversions_supported)
    }
