"""The pipeline schema of tuning: an experiment's ``[tuning]`` and a learner's ``search``::

    [experiments.zoo.tuning]
    method = "halving"          # grid, random, halving or hyperband
    eta = 3                     # each rung keeps 1/eta of its trials, budget times eta
    min_budget = 500            # training examples of the first rung, or a fraction
    validation = "holdout"      # or "progressive" (the online loss of the stream)
    metric = "test_error"       # minimised on the validation

    learners = [{ learner = "sgd", params = { loss = "hinge" },
                  search = { eta = { low = 0.001, high = 10.0, log = true, steps = 27 } } }]

A ``search`` value is a list (the choices) or a range ``{ low, high, log, steps }``; a
search plans at most :data:`~dolb.experiment.search.MAX_TRIALS` trials per configuration.
The other keys (``max_budget``, ``trials``, ``holdout``, ``conversion``, ``defaults``,
``seed``) are in docs/guide/tuning.md.

Examples
--------
>>> from dolb.validation import validate
>>> validate(Dimension, {"low": 2.0, "high": 1.0}, "p.toml")
Traceback (most recent call last):
...
dolb.errors.ConfigError: p.toml: low: must not exceed high (got low 2, high 1)
"""

import math
from typing import Annotated, Any

from pydantic import AfterValidator, model_validator

from dolb.experiment.search import MAX_TRIALS, METHODS, VALIDATIONS, ends
from dolb.validation import PositiveInt, Table, one_of, problem, shown


class Dimension(Table):
    """One searched parameter: a list of choices, or a range ``{ low, high, log, steps }``
    (``log``: evenly in the logarithm). ``steps`` makes a range a grid of that many points,
    the only values any search takes from it; without ``steps``, a range is drawn from
    uniformly (``grid``, and ``halving`` without ``trials``, need ``steps``). A
    whole-number parameter takes only the whole numbers inside ``[low, high]``: a grid's
    points are rounded to them, without repeats; a draw takes each alike (with ``log``,
    evenly in their logarithm).
    """

    choices: list[Any] | None = None
    low: float | None = None
    high: float | None = None
    log: bool = False
    steps: PositiveInt | None = None

    @model_validator(mode="before")
    @classmethod
    def _listed(cls, raw: Any) -> Any:
        """A list is the choices."""
        return {"choices": raw} if isinstance(raw, list) else raw

    @model_validator(mode="after")
    def _bounds(self) -> "Dimension":
        """Either non-empty choices or a range with both ends, finite, low not above high
        (above 0 with log); steps at most 10,000 (the bound on a search's trials)."""
        if self.choices is not None:
            if not self.choices:
                raise problem("an empty list of choices gives no configuration", "choices")
            extra = sorted(k for k in ("low", "high", "log", "steps") if k in self.model_fields_set)
            if extra:
                raise problem("give either choices or a range (low, high), not both", extra[0])
            return self
        for key in ("low", "high"):
            if getattr(self, key) is None:
                raise problem("a range needs both low and high (or give choices)", key)
            if not math.isfinite(getattr(self, key)):
                raise problem(f"expected a finite number, got {shown(getattr(self, key))}", key)
        if self.low > self.high:
            raise problem(f"must not exceed high (got low {self.low:g}, high {self.high:g})", "low")
        if self.log and self.low <= 0:
            raise problem(f"a log-scale range needs low > 0, got {self.low:g}", "low")
        if self.steps is not None and self.steps > MAX_TRIALS:
            raise problem(f"{self.steps:,} steps exceed the bound of {MAX_TRIALS:,} trials a search plans per "
                          "configuration", "steps")
        return self


def _budget(value: Any) -> Any:
    """A budget: a whole number of training examples, or a fraction in (0, 1] of the
    tuning stream (a float)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise problem(f"expected a number of training examples or a fraction of the stream, got {shown(value)}")
    if isinstance(value, int) and value < 1:
        raise problem(f"expected a positive number of training examples, got {value}")
    if isinstance(value, float) and not 0.0 < value <= 1.0:
        raise problem(f"a fraction of the tuning stream lies in (0, 1], got {value}")
    return value


Budget = Annotated[Any, AfterValidator(_budget)]


class Tuning(Table):
    """``[experiments.<name>.tuning]``: how the experiment's searched learners are tuned
    (a learner entry's own ``tuning``: how it is). A search plans at most 10,000 trials
    per configuration (the grid's points, ``trials``, or Hyperband's brackets)."""

    method: one_of(METHODS)
    trials: PositiveInt | None = None
    eta: PositiveInt = 3
    min_budget: Budget = None
    max_budget: Budget = None
    validation: one_of(VALIDATIONS) = "holdout"
    holdout: float = 0.2
    metric: str | None = None
    conversion: str | None = None
    defaults: bool = True
    seed: int = 0

    @model_validator(mode="after")
    def _consistent(self) -> "Tuning":
        """eta at least 2; holdout in (0, 1), with holdout validation only; min_budget not
        above max_budget, and given for halving and hyperband; trials given for random, not
        for grid or hyperband, and at most 10,000."""
        if self.eta < 2:
            raise problem(f"must be at least 2, got {self.eta}", "eta")
        if not 0.0 < self.holdout < 1.0:
            raise problem(f"must lie strictly between 0 and 1, got {self.holdout}", "holdout")
        if "holdout" in self.model_fields_set and self.validation != "holdout":
            raise problem("only holdout validation takes a holdout fraction", "holdout")
        same_kind = type(self.min_budget) is type(self.max_budget)
        if self.min_budget is not None and same_kind and self.min_budget > self.max_budget:
            raise problem(f"must not exceed max_budget ({self.max_budget}), got {self.min_budget}", "min_budget")
        if self.method in ("halving", "hyperband") and self.min_budget is None:
            raise problem(f"{self.method} needs the budget of its first rung", "min_budget")
        if self.method == "random" and self.trials is None:
            raise problem("random search needs a number of trials", "trials")
        if self.method in ("grid", "hyperband") and self.trials is not None:
            raise problem(f"{self.method} sets its own number of trials", "trials")
        if self.trials is not None and self.trials > MAX_TRIALS:
            raise problem(f"{self.trials:,} trials exceed the bound of {MAX_TRIALS:,} a search plans per "
                          "configuration", "trials")
        return self


def check_search(search: dict[str, Dimension], params: dict[str, Any], cls: type, *at: str | int) -> None:
    """A :func:`~dolb.validation.problem` (below the learner entry at ``at``) if a searched
    parameter is not the learner's, is also fixed in its ``params``, or has a value or
    bound the learner refuses."""
    from dolb.validation import unknown_key

    for name, dimension in search.items():
        where = (*at, "search", name)
        if name not in cls.params:
            raise unknown_key(name, sorted(cls.params), f"unknown parameter of learner {cls.name!r}", (*at, "search"))
        if name in params:
            raise problem("searched, and also fixed in params: give it in one place", *where)
        if name == cls.complexity_param:
            raise problem("a complexity level is not searched: list the levels in 'complexity'", *where)
        kind = cls.params[name].kind
        if dimension.choices is None and kind not in (int, float):
            raise problem(f"a {kind.__name__} parameter is searched over a list of choices", *where)
        values = dimension.choices
        if values is None:
            values = ends(dimension.low, dimension.high, kind)
            if values[0] > values[1]:
                raise problem(f"{name!r} takes whole numbers, and none lies between low {dimension.low:g} and high "
                              f"{dimension.high:g}", *where)
        for i, value in enumerate(values):
            try:
                cls.params[name].check(cls.name, name, value)
            except Exception as exc:  # ConfigError: the learner's own words, at the value
                message = str(exc).split(": ", 1)[-1]
                key = ("choices", i) if dimension.choices is not None else ("low" if i == 0 else "high",)
                raise problem(message, *where, *key) from None


def check_tuning(tuning: Tuning | None, learners: list, task: str, conversions: tuple[str, ...]) -> None:
    """A problem if an experiment's tuning tunes nothing, a learner searches without a
    tuning (the experiment's, or its own ``tuning``), tries the grid of a range without
    steps, or a tuning scores a metric or conversion the experiment cannot."""
    searched = [i for i, learner in enumerate(learners) if learner.search]
    for i, learner in enumerate(learners):
        if learner.tuning is not None and not learner.search:
            raise problem("nothing to tune: give the learner a 'search'", "learners", i, "tuning")
        if learner.search and learner.tuning is None and tuning is None:
            raise problem("a learner with a search needs a tuning: the experiment's [tuning] table or its own "
                          "'tuning'", "learners", i, "search")
        if learner.tuning is not None:
            _check_scores(learner.tuning, task, conversions, "learners", i, "tuning")
        chosen = learner.tuning or tuning
        if learner.search and chosen is not None:
            _check_grid(chosen, learner.search, "learners", i, "search")
    if tuning is not None:
        if not any(learners[i].tuning is None for i in searched):
            raise problem("nothing to tune: give a learner a 'search' (that has no 'tuning' of its own)", "tuning")
        _check_scores(tuning, task, conversions, "tuning")


def _check_grid(tuning: Tuning, search: dict[str, Dimension], *at: str | int) -> None:
    """A problem if ``tuning`` tries the whole grid (``grid``; ``halving`` without
    ``trials``) of a ``search`` that has a range without ``steps``."""
    if tuning.method == "grid" or (tuning.method == "halving" and tuning.trials is None):
        for name, dimension in search.items():
            if dimension.choices is None and dimension.steps is None:
                how = "grid search" if tuning.method == "grid" else "halving without trials"
                other = "" if tuning.method == "grid" else ", or give the tuning trials"
                raise problem(f"{how} tries every point of a grid: give the range steps{other}", *at, name, "steps")


def _check_scores(tuning: Tuning, task: str, conversions: tuple[str, ...], *at: str | int) -> None:
    """A problem if ``tuning`` scores a metric or conversion the experiment cannot."""
    from dolb.evaluation.metrics import METRICS

    metric = tuning.metric or default_metric(tuning.validation, task)
    source = "online" if tuning.validation == "progressive" else "test"
    known = [m for m, found in METRICS.items() if task in found.tasks and found.source == source]
    if metric not in known:
        raise problem(f"{tuning.validation} validation scores one of {', '.join(known)}, got {metric!r}",
                      *at, "metric")
    if tuning.conversion is not None and tuning.conversion not in conversions:
        raise problem(f"{tuning.conversion!r} is not one of the experiment's conversions "
                      f"({', '.join(conversions)})", *at, "conversion")


def default_metric(validation: str, task: str) -> str:
    """What tuning minimises unless told: the validation error (binary) or mean squared
    error (regression) on the holdout, or the online loss of progressive validation."""
    if validation == "progressive":
        return "online_loss"
    return "test_error" if task == "binary" else "test_mse"
