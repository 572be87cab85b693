"""The protocol every online learner follows, its parameter checks and the registry.

A learner holds its state in NumPy arrays and runs one compiled (Numba) kernel over a
whole block of examples, example by example: predict, suffer a loss, update. Python code
runs once per block, never once per example.

A block's features are either a 2-D ``float64`` NumPy array or a
``scipy.sparse.csr_matrix``; its targets a 1-D ``float64`` array (regression values,
or -1/+1 for binary classification).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar

import numpy as np
import scipy.sparse as sp

from dolb.errors import ConfigError
from dolb.registry import Registry


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
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{where}: expected a number, got {value!r}")
        if self.kind is int:
            if float(value) != int(value):
                raise ConfigError(f"{where}: expected a whole number, got {value!r}")
            value = int(value)
        else:
            value = float(value)
            if not math.isfinite(value):
                raise ConfigError(f"{where}: expected a finite number, got {value!r}")
        if self.above is not None and not value > self.above:
            raise ConfigError(f"{where}: must be above {self.above!r}, got {value!r}")
        if self.low is not None and value < self.low:
            raise ConfigError(f"{where}: {value!r} is below the minimum {self.low!r}")
        if self.high is not None and value > self.high:
            raise ConfigError(f"{where}: {value!r} is above the maximum {self.high!r}")
        return value


@dataclass(frozen=True)
class Hypothesis:
    """An output hypothesis: what a learner (through an online-to-batch conversion)
    offers at a checkpoint.

    Attributes
    ----------
    predict : callable
        ``predict(X) -> ndarray`` of regression values or decision values.
    info : dict
        Numbers the conversion reports with its output (e.g. the chosen cutoff ``k``
        and the value of its risk bound); recorded as metrics named ``<key>``.
    """

    predict: Callable[[Any], np.ndarray]
    info: dict[str, float] = field(default_factory=dict)


class OnlineLearner:
    """Base class of every online learner.

    Subclasses declare ``name`` (the registry key), ``task`` (``"regression"`` or
    ``"binary"``), ``params`` (a mapping of parameter name to :class:`Param`) and,
    when the learner has a complexity level, ``complexity_param`` (the name of the
    parameter a pipeline's ``complexity`` values set). They implement
    :meth:`_learn` and :meth:`_predict`.

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
    **params
        Values for the parameters the subclass declares.
    """

    name: ClassVar[str] = ""
    task: ClassVar[str] = ""
    params: ClassVar[dict[str, Param]] = {}
    complexity_param: ClassVar[str | None] = None
    conversions_supported: ClassVar[tuple[str, ...]] = ("last",)

    def __init__(
        self,
        n_features: int,
        n_train: int | None = None,
        conversions: tuple[str, ...] = ("last",),
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
        self.config = self.check_params(params)
        self.n_seen = 0

    @classmethod
    def check_params(cls, params: dict[str, Any]) -> dict[str, Any]:
        """Return the full parameter set (defaults filled in), or raise ConfigError."""
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

    def learn(self, X, y: np.ndarray) -> np.ndarray:
        """Run one block test-then-train; return the prediction made for each example
        before the learner updated on it."""
        y = np.ascontiguousarray(y, dtype=np.float64)
        X = as_block(X, self.n_features)
        if X.shape[0] != y.shape[0]:
            raise ValueError(f"block has {X.shape[0]} rows but {y.shape[0]} targets")
        predictions = self._learn(X, y)
        self.n_seen += y.shape[0]
        return predictions

    def predict(self, X) -> np.ndarray:
        """Outputs of the current hypothesis (regression values or decision values)."""
        return self._predict(as_block(X, self.n_features))

    def outputs(self) -> dict[str, Hypothesis]:
        """The output hypothesis of every attached conversion, now.

        The base implementation offers the last hypothesis only; learners that feed
        online-to-batch conversions (:mod:`dolb.conversions`) override it.
        """
        return {"last": Hypothesis(self.predict)}

    def _learn(self, X, y: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _predict(self, X) -> np.ndarray:
        raise NotImplementedError


def as_block(X, n_features: int):
    """Return ``X`` as a C-contiguous float64 array or a float64 CSR matrix with
    ``n_features`` columns."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
    else:
        X = np.ascontiguousarray(X, dtype=np.float64)
        if X.ndim == 1:
            X = X.reshape(-1, 1)
    if X.shape[1] != n_features:
        raise ValueError(f"block has {X.shape[1]} features, learner expects {n_features}")
    return X


LEARNERS: Registry[type[OnlineLearner]] = Registry("learner", entry_point_group="dolb.learners")
"""Every learner, by name: dolb's own and those other packages add through the
``dolb.learners`` entry point group (see :mod:`dolb.registry`)."""


def register(cls: type[OnlineLearner]) -> type[OnlineLearner]:
    """Class decorator adding a learner to :data:`LEARNERS` under ``cls.name``."""
    if not cls.name or cls.task not in ("regression", "binary"):
        raise TypeError(f"{cls.__name__} must set name and task ('regression' or 'binary')")
    if cls.complexity_param is not None and cls.complexity_param not in cls.params:
        raise TypeError(f"{cls.__name__}.complexity_param names no declared parameter")
    LEARNERS.add(cls.name, cls)
    return cls


def learner_class(name: str) -> type[OnlineLearner]:
    """The learner class registered as ``name``; ConfigError if there is none."""
    return LEARNERS[name]


def registered_learners() -> dict[str, type[OnlineLearner]]:
    """A copy of the registry: name to class."""
    return dict(LEARNERS.items())
