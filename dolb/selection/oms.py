"""Online model selection (OMS): two machines of neighbouring complexity, validated on
every example before they learn it; the more complex one takes over when it is
significantly better (ALGORITHMS.md §4).

``oms_learner(base)`` makes the OMS learner of a registered binary learner ``base``: it
has the base's parameters plus those of :data:`OMS_PARAMS`, and a complexity ladder
on one base parameter (``ladder_param``, by default the base's ``complexity_param``):

- ``ladder = "double"``: the value at level α is ``start · 2^(α−1)`` (RBF γ);
  ``start = 0`` chooses it by cross-validation on the first ``cv_examples`` examples;
- ``ladder = "step"``: the value at level α is α (a polynomial degree).

Machine 1 runs at α, machine 2 at α + 1. On each example both predict, then learn; their
0-1 losses feed :class:`~dolb.selection.welch.LossTally`, and when
:func:`~dolb.selection.welch.should_switch` says so: α ← α + 1, machine 1 ← machine 2,
machine 2 ← a new machine at α + 1 initialised from the new machine 1 (by the base's
``warm_started(other, **params)`` class method when it has one: LASVM PROCESSes the
other's support vectors under its own kernel; else it starts empty), and the tally restarts.
OMS outputs machine 1. Each switch is recorded: ``diagnostics()`` gives the level now,
the number of switches and the example count at each (``oms_switch_<k>_n``, the level
going from ``level_start + k − 1`` to ``level_start + k``). The two machines are called
example by example from Python (why: docs/design/kernel-learners.md).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from dolb.errors import ConfigError
from dolb.learners.base import Hypothesis, OnlineLearner, Param
from dolb.selection.welch import LossTally, should_switch

__all__ = ["OMS_PARAMS", "CV_STARTS", "OnlineModelSelection", "oms_learner"]

OMS_PARAMS = {
    "ladder": Param("double", str, choices=("double", "step"),
                    doc="complexity ladder: start·2^(level−1) (double) or the level itself (step)"),
    "ladder_param": Param("", str, doc="base parameter the ladder sets (empty: the base's complexity parameter)"),
    "start": Param(0.0, float, low=0.0, doc="ladder value at level 1 for 'double' (0: cross-validated)"),
    "level_start": Param(1, int, low=1, doc="level of machine 1 at the start"),
    "max_level": Param(12, int, low=2, doc="highest level machine 2 may reach"),
    "min_n": Param(30, int, low=2, doc="examples since the last switch before the t-test runs"),
    "p_value": Param(0.1, float, above=0.0, high=0.5, doc="one-sided level of the Welch t-test"),
    "cv_examples": Param(100, int, low=10, doc="examples the cross-validation of 'start' uses"),
}
"""The parameters OMS adds to its base learner's."""

CV_STARTS = tuple(0.001 * 2.0**k for k in range(8))
"""Values of ``start`` the cross-validation tries (0.001 to 0.128, doubling)."""
CV_FOLDS = 5
"""Contiguous folds of the cross-validation."""


def _mistakes(scores: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """0-1 losses, a zero score counting as a mistake: the online validation's rule
    (ALGORITHMS.md §4), which the cross-validation of ``start`` keeps (a test set is
    scored by :func:`dolb.losses.misclassified`)."""
    return (targets * scores <= 0.0).astype(np.int64)


class OnlineModelSelection(OnlineLearner):
    """OMS over a base learner (see the module docstring; made by :func:`oms_learner`).

    Reference: the OMS paper of ALGORITHMS.md §4 (online model selection with LASVM).
    """

    task = "binary"
    base: ClassVar[type[OnlineLearner]]

    def __init__(self, n_features: int, n_train: int | None = None, conversions=("last",), **params: Any) -> None:
        super().__init__(n_features, n_train, conversions, **params)
        own = {name: self.config[name] for name in OMS_PARAMS}
        self.ladder, self.ladder_param = own["ladder"], self.ladder_of(self.config)
        self.base_params = {name: self.config[name] for name in self.base.params}
        self.start = own["start"] if self.ladder == "double" else 1.0
        self.level = own["level_start"]
        self.max_level, self.min_n, self.p_value = own["max_level"], own["min_n"], own["p_value"]
        self.cv_examples = own["cv_examples"]
        self.switches: list[int] = []
        self.tally = LossTally()
        self.machines: list[OnlineLearner] | None = None
        if self.start > 0.0:
            self._check_levels()

    @classmethod
    def ladder_of(cls, params: dict[str, Any]) -> str:
        """The base parameter the ladder sets, given checked parameters."""
        return params["ladder_param"] or cls.base.complexity_param

    @classmethod
    def check_params(cls, params: dict[str, Any]) -> dict[str, Any]:
        """The base's and the ladder's checks, and: ``ladder_param`` names a numeric
        parameter of the base (a whole number climbs by ``step`` only), which the
        pipeline leaves to the ladder (at its default)."""
        checked = super().check_params(params)
        ladder_param = cls.ladder_of(checked)
        if ladder_param not in cls.base.params:
            raise ConfigError(f"learner {cls.name!r}, parameter 'ladder_param': {ladder_param!r} is not a "
                              f"parameter of {cls.base.name!r} (it has: {', '.join(sorted(cls.base.params))})")
        kind = cls.base.params[ladder_param].kind
        if kind not in (int, float):
            raise ConfigError(f"learner {cls.name!r}, parameter 'ladder_param': {ladder_param!r} is a {kind.__name__} "
                              f"parameter of {cls.base.name!r}; a ladder sets a number")
        if kind is int and checked["ladder"] == "double":
            raise ConfigError(f"learner {cls.name!r}, parameter 'ladder': 'double' sets start·2^(level−1), not the "
                              f"whole number {ladder_param!r} takes; use ladder = \"step\"")
        if checked["level_start"] + 1 > checked["max_level"]:
            raise ConfigError(f"learner {cls.name!r}, parameter 'max_level': a ladder needs two rungs, "
                              f"level_start + 1 = {checked['level_start'] + 1} > max_level = {checked['max_level']}")
        if checked[ladder_param] != cls.params[ladder_param].default:
            raise ConfigError(f"learner {cls.name!r}, parameter {ladder_param!r}: set by the ladder (give its "
                              "level-1 value as 'start', or a 'level_start')")
        return checked

    # --------------------------------------------------------------------- the ladder
    def value_at(self, level: int) -> float | int:
        """The ladder parameter's value at ``level``."""
        return self.start * 2.0 ** (level - 1) if self.ladder == "double" else level

    def machine_at(self, level: int, source: OnlineLearner | None = None) -> OnlineLearner:
        """A new base machine at ``level``, initialised from ``source`` when the base
        can be (a ``warm_started(source, **params)`` class method)."""
        params = self.base_params | {self.ladder_param: self.value_at(level)}
        if source is not None and hasattr(self.base, "warm_started"):
            return self.base.warm_started(source, **params)
        return self.base(self.n_features, self.n_train, ("last",), **params)

    def _check_levels(self) -> None:
        for level in (self.level, self.level + 1):
            self.base.check_params(self.base_params | {self.ladder_param: self.value_at(level)})

    def _cross_validated_start(self, X, y: np.ndarray) -> float:
        """The ``CV_STARTS`` value with the fewest held-out mistakes of a machine at
        level 1 over ``CV_FOLDS`` contiguous folds of these rows (ties: the smaller)."""
        folds = np.array_split(np.arange(y.shape[0]), CV_FOLDS)
        best, fewest = CV_STARTS[0], None
        for start in CV_STARTS:
            self.start = start
            wrong = 0
            for held in folds:
                train = np.setdiff1d(np.arange(y.shape[0]), held)
                machine = self.machine_at(1)
                machine.learn(X[train], y[train])
                wrong += int(_mistakes(machine.predict(X[held]), y[held]).sum())
            if fewest is None or wrong < fewest:
                best, fewest = start, wrong
        return best

    # --------------------------------------------------------------------- learning
    def _learn(self, X, y: np.ndarray) -> np.ndarray:
        if self.machines is None:
            if self.start == 0.0:
                n_cv = min(self.cv_examples, y.shape[0])
                self.start = self._cross_validated_start(X[:n_cv], y[:n_cv])
                self._check_levels()
            self.machines = [self.machine_at(self.level), self.machine_at(self.level + 1)]
        rows = X.tocsr() if sp.issparse(X) else X
        predictions = np.empty(y.shape[0])
        for i in range(y.shape[0]):
            row, target = rows[i : i + 1], y[i : i + 1]
            first, second = (machine.learn(row, target)[0] for machine in self.machines)
            predictions[i] = first
            self.tally.add(int(target[0] * first <= 0.0), int(target[0] * second <= 0.0))  # 0-1 losses
            if self.level + 1 < self.max_level and should_switch(self.tally, self.p_value, self.min_n):
                self._switch(self.n_seen + i + 1)
        return predictions

    def _switch(self, n: int) -> None:
        """Machine 2 becomes machine 1 after ``n`` examples; a new machine 2 one level up."""
        self.switches.append(n)
        self.level += 1
        self._check_levels()
        promoted = self.machines[1]
        self.machines = [promoted, self.machine_at(self.level + 1, source=promoted)]
        self.tally = LossTally()

    def _predict(self, X) -> np.ndarray:
        if self.machines is None:
            return np.zeros(X.shape[0])
        return self.machines[0].predict(X)

    def outputs(self) -> dict[str, Hypothesis]:
        if self.machines is None:
            return {"last": Hypothesis(self._predict)}
        return {"last": self.machines[0].outputs()["last"]}

    def diagnostics(self) -> dict[str, float]:
        found = {} if self.machines is None else dict(self.machines[0].diagnostics())
        found |= {"oms_level": float(self.level), "oms_value": float(self.value_at(self.level)),
                  "oms_start": float(self.start), "oms_switches": float(len(self.switches))}
        found |= {f"oms_switch_{k}_n": float(n) for k, n in enumerate(self.switches, start=1)}
        return found

    def state_nbytes(self) -> int:
        return 0 if self.machines is None else sum(machine.state_nbytes() for machine in self.machines)

    def __reduce__(self):
        """Pickled by its registered name (its class is made by :func:`oms_learner`, so
        pickle cannot find it by its module and class name): a cell's state can be saved.

        >>> import pickle
        >>> from dolb.learners import LEARNERS
        >>> oms = LEARNERS["oms_lasvm"](2)
        >>> type(pickle.loads(pickle.dumps(oms))) is type(oms)
        True
        """
        return _registered, (self.name,), self.__dict__


def _registered(name: str) -> OnlineModelSelection:
    """An empty instance of the registered learner ``name`` (pickle fills its state)."""
    from dolb.learners import learner_class

    cls = learner_class(name)
    return cls.__new__(cls)


def oms_learner(base: type[OnlineLearner]) -> type[OnlineLearner]:
    """The OMS learner class over ``base`` (a binary learner), named ``oms_<base>``, with
    the base's parameters and :data:`OMS_PARAMS`; not registered (pass the result to
    :func:`dolb.learners.register`).

    Examples
    --------
    >>> from dolb.learners.kernel.lasvm import LASVM
    >>> OMS = oms_learner(LASVM)
    >>> OMS.name, OMS.params["ladder"].default, "gamma" in OMS.params
    ('oms_lasvm', 'double', True)

    """
    if base.task != "binary":
        raise TypeError(f"OMS selects among binary classifiers; {base.name!r} is a {base.task} learner")
    clash = sorted(set(base.params) & set(OMS_PARAMS))
    if clash:
        raise TypeError(f"learner {base.name!r} already has a parameter {clash[0]!r}, which OMS adds")
    ladder_value = base.test_params.get(base.complexity_param, 1.0) if base.complexity_param else 1.0
    namespace = {
        "name": f"oms_{base.name}",
        "base": base,
        "params": dict(base.params) | OMS_PARAMS,
        "test_params": {k: v for k, v in base.test_params.items() if k != base.complexity_param}
        | {"start": float(ladder_value), "min_n": 10},
        "__doc__": f"""Online model selection over {base.name!r}: two machines of neighbouring complexity,
    the more complex one taking over when a one-sided Welch t-test on their validation
    0-1 losses says it is better (the OMS paper, ALGORITHMS.md §4; see
    :mod:`dolb.selection.oms`). Parameters: those of {base.name!r} and the ladder's.

    Examples
    --------
    An XOR-like problem: the ladder climbs from {base.complexity_param} = 0.05 as the data
    asks for a narrower kernel.

    >>> import numpy as np
    >>> from dolb.learners import LEARNERS
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 2))
    >>> y = np.where(X[:, 0] * X[:, 1] > 0, 1.0, -1.0)
    >>> oms = LEARNERS["oms_{base.name}"](2, start=0.05, min_n=20)
    >>> predictions = oms.learn(X, y)
    >>> oms.switches, oms.level
    ([83, 111, 239, 277], 5)
    """,
        "__module__": __name__,
    }
    return type(f"OMS_{base.__name__}", (OnlineModelSelection,), namespace)
