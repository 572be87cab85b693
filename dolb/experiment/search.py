"""Adaptive hyper-parameter search: the search space, the trials and the rungs they run.

A tuned learner is searched *inside* each split of an experiment: its trials learn from
the split's training stream (less a seeded validation holdout, or all of it with
progressive validation) and are scored on that validation, never on the split's test
part. Each trial is one configuration; a *rung* runs trials up to a *budget* of training
examples; successive halving (Jamieson & Talwalkar, AISTATS 2016) keeps the best
``1/eta`` of a rung's trials for the next, larger budget, continuing them from their
state; Hyperband (Li et al., JMLR 18(185), 2018) runs several such brackets that trade
the number of trials against their first budget. ``grid`` and ``random`` run every trial
at the largest budget. This module is pure: which trials exist, their budgets, and which
a rung promotes (from its losses alone, ties to the lower trial number);
:mod:`dolb.execution.tuning` runs them as cells. Why: docs/design/pipelines.md.

Examples
--------
>>> rate = Dimension("eta", low=0.001, high=10.0, log=True, steps=5)
>>> [f"{v:g}" for v in rate.grid(float)]
['0.001', '0.01', '0.1', '1', '10']
>>> [b.budgets for b in brackets(Tuning("halving", trials=9, eta=3, min_budget=100), [rate], {"eta": float},
...                                     900, seed=np.random.SeedSequence(1))]
[(300, 900)]
>>> promote({0: 0.3, 1: 0.1, 2: float("nan"), 3: 0.1}, keep=2)
[1, 3]
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass
from decimal import Decimal, localcontext
from typing import Any

import numpy as np

METHODS = ("grid", "random", "halving", "hyperband")
VALIDATIONS = ("holdout", "progressive")


MAX_TRIALS = 10_000
"""The most trials a search plans for one tuned configuration (and the most points a
range's ``steps`` may ask for): a larger search is refused before anything is planned."""


@dataclass(frozen=True)
class Dimension:
    """One searched parameter: a list of ``choices``, or a range ``[low, high]``
    (``log``: uniform in its logarithm); ``steps``: the grid points of a range, the only
    values a search takes from it (it draws among them as among choices).

    A whole-number (``int``) parameter's range is that of the whole numbers inside
    ``[low, high]`` (:func:`ends`). Its grid spreads ``steps`` points over that range and
    rounds each to the nearest whole number (halves up), without repeats; a draw from it
    without ``steps`` takes each of its whole numbers alike, or, with ``log``, draws
    uniformly in the logarithm over ``[low - 1/2, high + 1/2]`` and rounds.
    """

    name: str
    choices: tuple[Any, ...] | None = None
    low: float | None = None
    high: float | None = None
    log: bool = False
    steps: int | None = None

    @property
    def finite(self) -> bool:
        """Whether the values are a grid's (choices, or a range with ``steps``)."""
        return self.choices is not None or self.steps is not None

    def grid(self, kind: type) -> tuple[Any, ...]:
        """The values a grid tries: the choices, or ``steps`` points spread evenly over
        the range (in its logarithm with ``log``), without repeats; the same bits on
        every machine (:func:`spaced`)."""
        if self.choices is not None:
            return self.choices
        return _range_grid(self.low, self.high, self.steps, self.log, kind)

    def sample(self, rng: np.random.Generator, kind: type) -> Any:
        """One value drawn from ``rng``: one of the grid's values, each alike, if the
        dimension is :attr:`finite`; else one of the range (see the class)."""
        if self.finite:
            points = self.grid(kind)
            return points[int(rng.integers(len(points)))]
        low, high = ends(self.low, self.high, kind)
        if kind is int and not self.log:
            return int(rng.integers(low, high + 1))
        if kind is int:  # uniform in the logarithm over the whole numbers' half-unit cells, rounded
            value = _exp(rng.uniform(_ln(low - 0.5), _ln(high + 0.5)))
            return min(max(math.floor(value + 0.5), low), high)
        if self.log:
            value = _exp(rng.uniform(_ln(low), _ln(high)))
        else:
            value = rng.uniform(low, high)
        return min(max(value, low), high)


@functools.lru_cache(maxsize=256)
def _range_grid(low: float, high: float, steps: int, log: bool, kind: type) -> tuple[Any, ...]:
    """A range's grid (:meth:`Dimension.grid`), computed once however often it is drawn from."""
    low, high = ends(low, high, kind)
    points = spaced(low, high, steps, log)
    return tuple(dict.fromkeys(math.floor(p + 0.5) if kind is int else float(p) for p in points))


def ends(low: float, high: float, kind: type) -> tuple[Any, Any]:
    """The ends of a range ``[low, high]`` as a parameter of ``kind`` takes them: the
    smallest and largest whole numbers inside it for an ``int`` (none inside: the first
    exceeds the second), the bounds themselves for a ``float``.

    >>> ends(1.5, 3.5, int), ends(2.2, 2.8, int), ends(1.5, 3.5, float)
    ((2, 3), (3, 2), (1.5, 3.5))
    """
    if kind is int:
        return math.ceil(low), math.floor(high)
    return low, high


def spaced(low: float, high: float, steps: int, log: bool) -> list[float]:
    """``steps`` points from ``low`` to ``high``, evenly spaced, or with ``log`` evenly in
    the logarithm: NumPy's ``linspace`` and ``geomspace`` (``10 ** linspace(log10 low,
    log10 high)``, the ends exactly ``low`` and ``high``) in the same double-precision
    steps, but with the logarithm and the power computed by :mod:`decimal` (software
    arithmetic, to 40 digits) and rounded once: the same bits on every machine, where
    NumPy's vectorised ``power`` differs in the last bit between processors.

    >>> spaced(0.0, 1.0, 5, False), spaced(0.001, 10.0, 5, True)
    ([0.0, 0.25, 0.5, 0.75, 1.0], [0.001, 0.01, 0.1, 1.0, 10.0])
    """
    if steps == 1 or low == high:
        return [low]
    if log:
        inner = spaced(_log10(low), _log10(high), steps, False)[1:-1]
        return [low, *(_power10(y) for y in inner), high]
    step = (high - low) / (steps - 1)
    return [low + i * step for i in range(steps - 1)] + [high]


_DIGITS = 40
"""Decimal digits of the exact logarithms and powers before their one rounding to a float."""


def _log10(x: float) -> float:
    with localcontext(prec=_DIGITS):
        return float(Decimal(x).log10())


def _power10(y: float) -> float:
    with localcontext(prec=_DIGITS):
        return float(Decimal(10) ** Decimal(y))


def _ln(x: float) -> float:
    with localcontext(prec=_DIGITS):
        return float(Decimal(x).ln())


def _exp(y: float) -> float:
    with localcontext(prec=_DIGITS):
        return float(Decimal(y).exp())


@dataclass(frozen=True)
class Tuning:
    """An experiment's ``[tuning]``: how each tuned learner is searched.

    ``trials``: configurations drawn (``random``, ``halving``; for ``halving`` over a
    space of choices only, the whole grid when not given); ``eta``: each rung keeps
    ``1/eta`` of its trials and multiplies the budget by ``eta``; ``min_budget`` and
    ``max_budget``: training examples of the first and last rungs, or fractions of the
    tuning stream (``max_budget`` defaults to the whole of it); ``validation``: ``holdout`` scores each rung on
    a seeded ``holdout`` fraction of the split's training stream kept out of learning,
    ``progressive`` on the online loss of the stream itself; ``metric``: what is
    minimised (a test metric on the holdout, ``online_loss`` for progressive);
    ``conversion``: whose hypothesis is scored; ``defaults``: also run each tuned
    learner at its listed parameters, to compare; ``seed``: of the draws and holdout.
    """

    method: str
    trials: int | None = None
    eta: int = 3
    min_budget: int | float | None = None
    max_budget: int | float | None = None
    validation: str = "holdout"
    holdout: float = 0.2
    metric: str = "test_error"
    conversion: str = "last"
    defaults: bool = True
    seed: int = 0

    def budgets(self, n_stream: int) -> tuple[int, int]:
        """The first and last rungs' budgets on a tuning stream of ``n_stream`` examples
        (a fraction is of the stream; the last defaults to all of it, the first to the last).

        >>> Tuning("halving", min_budget=0.05, max_budget=0.5).budgets(1000), Tuning("grid").budgets(1000)
        ((50, 500), (1000, 1000))
        """
        def resolved(budget):
            return max(1, int(round(budget * n_stream))) if isinstance(budget, float) else budget

        high = resolved(self.max_budget) or n_stream
        return resolved(self.min_budget) or high, high

    def summary(self) -> dict[str, Any]:
        """What a tuned cell's identity holds of its tuning (JSON-ready)."""
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class Bracket:
    """Trials that start together and are halved rung by rung: ``candidates[t]`` is
    trial ``first + t``; rung ``r`` runs ``keep[r]`` of them to ``budgets[r]``."""

    index: int
    first: int
    candidates: tuple[tuple[tuple[str, Any], ...], ...]
    budgets: tuple[int, ...]
    keep: tuple[int, ...]

    @property
    def trials(self) -> range:
        """The trial numbers of this bracket."""
        return range(self.first, self.first + len(self.candidates))

    def config(self, trial: int) -> dict[str, Any]:
        """The parameter values of ``trial``."""
        return dict(self.candidates[trial - self.first])


def rung_sizes(n: int, budgets: tuple[int, ...], eta: int) -> tuple[int, ...]:
    """Trials run at each rung: ``n``, then ``1/eta`` as many, while that leaves two or
    more to compare (a lone survivor needs no rung: its values are chosen).

    >>> rung_sizes(27, (1, 3, 9, 27), 3), rung_sizes(5, (1, 3, 9), 3), rung_sizes(6, (1, 3, 9), 3)
    ((27, 9, 3), (5,), (6, 2))
    """
    sizes = [n]
    while len(sizes) < len(budgets) and sizes[-1] // eta >= 2:
        sizes.append(sizes[-1] // eta)
    return tuple(sizes)


def halving_budgets(low: int, high: int, eta: int) -> tuple[int, ...]:
    """The rungs' budgets from ``high`` down: ``high``, ``high / eta``, ... while at
    least ``low``, in increasing order.

    >>> halving_budgets(100, 1000, 3)
    (111, 333, 1000)
    >>> halving_budgets(100, 900, 3)
    (100, 300, 900)
    """
    budgets = [high]
    while budgets[-1] // eta >= low:
        budgets.append(budgets[-1] // eta)
    return tuple(reversed(budgets))


def candidates(space: list[Dimension], kinds: dict[str, type], n: int | None, rng: np.random.Generator):
    """``n`` configurations drawn from ``space`` (``None``: every grid point)."""
    if n is None:
        names = [d.name for d in space]
        return tuple(tuple(zip(names, combo)) for combo in itertools.product(*(d.grid(kinds[d.name]) for d in space)))
    return tuple(tuple((d.name, d.sample(rng, kinds[d.name])) for d in space) for _ in range(n))


def n_trials(tuning: Tuning, space: list[Dimension], kinds: dict[str, type], n_stream: int) -> int:
    """How many trials :func:`brackets` plans, counted without drawing or listing them:
    the grid's size (``grid``, and ``halving`` without ``trials``), ``trials``
    (``random``, ``halving``), or the sum over Hyperband's brackets.

    >>> rate = Dimension("eta", low=0.001, high=10.0, log=True, steps=5)
    >>> n_trials(Tuning("grid"), [rate, Dimension("alpha", (0.0, 1.0))], {"eta": float, "alpha": float}, 900)
    10
    >>> n_trials(Tuning("hyperband", min_budget=1), [rate], {"eta": float}, 81)
    143
    """
    if tuning.method == "hyperband":
        low, high = tuning.budgets(n_stream)
        return sum(n for _, n in _hyperband_sizes(low, high, tuning.eta))
    if tuning.method == "grid" or tuning.trials is None:
        return math.prod(len(d.grid(kinds[d.name])) for d in space)
    return tuning.trials


def brackets(tuning: Tuning, space: list[Dimension], kinds: dict[str, type], n_stream: int,
             seed: np.random.SeedSequence) -> list[Bracket]:
    """The brackets of one tuned learner on a stream of ``n_stream`` training examples
    (the same in every split: the splits differ in which trials they promote).

    Halving's last rung is at ``max_budget`` and its first no lower than ``min_budget``,
    with as many rungs as halving its trials takes (scikit-learn's ``"exhaust"``); without
    ``trials`` it runs the whole grid."""
    low, high = tuning.budgets(n_stream)
    rng = np.random.default_rng(seed)
    if tuning.method in ("grid", "random"):
        drawn = candidates(space, kinds, None if tuning.method == "grid" else tuning.trials, rng)
        return [Bracket(0, 0, drawn, (high,), (len(drawn),))]
    if tuning.method == "halving":
        drawn = candidates(space, kinds, tuning.trials, rng)
        budgets = halving_budgets(low, high, tuning.eta)
        sizes = rung_sizes(len(drawn), budgets, tuning.eta)
        return [Bracket(0, 0, drawn, budgets[len(budgets) - len(sizes):], sizes)]  # the last rung at high
    found, first = [], 0
    for s, n in _hyperband_sizes(low, high, tuning.eta):
        budgets = tuple(int(round(high / tuning.eta ** (s - i))) for i in range(s + 1))
        keep = tuple(max(1, n // tuning.eta**i) for i in range(s + 1))
        found.append(Bracket(len(found), first, candidates(space, kinds, n, rng), budgets, keep))
        first += n
    return found


def _hyperband_sizes(low: int, high: int, eta: int) -> list[tuple[int, int]]:
    """Li et al.'s brackets ``(s, n)``, s = s_max, ..., 0: ``n = ceil((s_max + 1) / (s + 1)
    * eta**s)`` trials from budget ``high / eta**s``, each rung keeping ``1/eta``."""
    s_max = int(math.floor(math.log(high / low, eta) + 1e-9))
    return [(s, int(math.ceil((s_max + 1) / (s + 1) * eta**s))) for s in range(s_max, -1, -1)]


def promote(losses: dict[int, float], keep: int) -> list[int]:
    """The ``keep`` trials of lowest loss, in trial order; ties go to the lower trial
    number and a missing loss (NaN: the trial failed) ranks last."""
    ranked = sorted(losses, key=lambda trial: (_rank_value(losses[trial]), trial))
    return sorted(ranked[:keep])


def best(losses: dict[int, float]) -> int:
    """The trial of lowest loss (ties to the lower trial number)."""
    return min(losses, key=lambda trial: (_rank_value(losses[trial]), trial))


def _rank_value(loss: float) -> float:
    return math.inf if loss is None or loss != loss else loss


__all__ = ["MAX_TRIALS", "METHODS", "VALIDATIONS", "Bracket", "Dimension", "Tuning", "best", "brackets", "ends",
           "halving_budgets", "n_trials", "promote", "rung_sizes", "spaced"]
