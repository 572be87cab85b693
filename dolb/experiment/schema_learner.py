"""The ``learners`` entries of a pipeline's experiments (see :mod:`dolb.experiment.schema`):
each checked once, every configuration of its grid by the learner's own declarations
(``learner_class(name).check_params``), a mistake put at its key path."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from importlib.metadata import entry_points
from typing import Any

from pydantic import PrivateAttr

from dolb.errors import ConfigError
from dolb.experiment.schema_tuning import Dimension, Tuning, check_search
from dolb.learners import learner_class
from dolb.validation import Table, problem, shown, unknown_key

_PARAMETER_ERROR = re.compile(r"learner '[^']*', parameter '(?P<name>[^']*)': (?P<problem>.*)", re.S)
"""A learner's message about one of its parameters (``Param.check``)."""

SCRIPT_MODULES = ("__main__", "__mp_main__")
"""Where a class defined in the running script (or a notebook) lives."""


def _unreachable(cls: type) -> str | None:
    """Why no worker finds the learner class ``cls`` by its name, or None: workers look
    learners up in the registry, which holds dolb's and imports the packages of the
    ``dolb.learners`` entry points, never the caller's script or another module of its."""
    module = cls.__module__
    if module in SCRIPT_MODULES:
        return f"is defined in the script ({module}), which the workers do not run"
    imported = {"dolb", *(point.value.split(":")[0].split(".")[0] for point in entry_points(group="dolb.learners"))}
    if module.split(".")[0] not in imported:
        return f"is defined in the module {module}, which no dolb.learners entry point imports, nor any worker"
    return None


def _no_repeats(values: Iterable[Any], *at: str | int) -> None:
    """A problem at ``at`` if a value is listed twice (the same cells twice over)."""
    seen = []
    for value in values:
        if value in seen:
            raise problem(f"{shown(value)} is listed twice", *at)
        seen.append(value)


class Learner(Table):
    """One entry of an experiment's ``learners``: a learner, its parameter grid (a
    list value is one configuration per item) and its complexity levels."""

    learner: str
    params: dict[str, Any] = {}
    complexity: Any = None
    search: dict[str, Dimension] = {}
    tuning: Tuning | None = None
    _configurations: tuple = PrivateAttr(default=())

    def levels(self) -> tuple[Any, ...]:
        """The complexity levels; ``(None,)`` when none is given."""
        if self.complexity is None:
            return (None,)
        return tuple(self.complexity) if isinstance(self.complexity, list) else (self.complexity,)

    def value_lists(self) -> tuple[list[str], list[list[Any]]]:
        """The parameter names, sorted, and the list of values of each."""
        names_ = sorted(self.params)
        return names_, [v if isinstance(v, list) else [v] for v in (self.params[n] for n in names_)]

    def grid(self) -> tuple[tuple[tuple[str, Any], ...], ...]:
        """Every configuration: one ``((name, value), ...)`` per combination of values."""
        names_, value_lists = self.value_lists()
        return tuple(tuple(zip(names_, combo)) for combo in itertools.product(*value_lists))

    def check(self, task: str, conversions: tuple[str, ...], label_rate: float, *at: str | int) -> None:
        """Raise a :func:`~dolb.validation.problem` (below the key path ``at`` of this
        entry) if the learner is unknown, does not fit the task or the conversions, or
        its parameter declarations refuse any configuration; keep every configuration's
        checked parameters (:meth:`configurations`): the only check they get. A learner
        taking a ``label_rate`` has the stream's (``label_rate`` < 1) unless it sets one."""
        try:
            cls = learner_class(self.learner)
        except ConfigError as exc:
            raise problem(str(exc), *at, "learner") from None
        unreachable = _unreachable(cls)
        if unreachable:
            raise problem(f"learner {self.learner!r} {unreachable}: define it in a module of an installed package "
                          "that registers it through the dolb.learners entry point", *at, "learner")
        if cls.task != task:
            raise problem(f"{self.learner!r} is a {cls.task} learner, the experiment is {task}", *at, "learner")
        for conversion in conversions:
            if conversion not in cls.conversions_supported:
                raise problem(
                    f"{self.learner!r} does not support conversion {conversion!r} "
                    f"(supported: {', '.join(cls.conversions_supported)})",
                    *at, "learner",
                )
        if self.complexity is not None:
            if cls.complexity_param is None:
                raise problem(f"learner {self.learner!r} has no complexity level", *at, "complexity")
            if cls.complexity_param in self.params:
                raise problem("set by 'complexity'; give it there only", *at, "params", cls.complexity_param)
            if not self.levels():
                raise problem("must not be empty", *at, "complexity")
            _no_repeats(self.levels(), *at, "complexity")
        for name in self.params:
            if name not in cls.params:
                what = f"unknown parameter of learner {self.learner!r}"
                raise unknown_key(name, sorted(cls.params), what, (*at, "params"))
        check_search(self.search, self.params, cls, *at)
        names_, value_lists = self.value_lists()
        for name, values in zip(names_, value_lists):
            if not values:
                raise problem("an empty list gives no configuration", *at, "params", name)
            _no_repeats(values, *at, "params", name)
        checked = []
        for combo in itertools.product(*(range(len(v)) for v in value_lists)):
            values = {n: value_lists[j][i] for j, (n, i) in enumerate(zip(names_, combo))}
            for k, level in enumerate(self.levels()):  # every configuration now, not on a worker later
                if level is not None:
                    values[cls.complexity_param] = level
                if "label_rate" in cls.params and label_rate < 1.0:
                    values.setdefault("label_rate", label_rate)  # T/l: the stream's, unless set
                try:
                    checked.append((cls.check_params(values), level))
                except ConfigError as exc:
                    where = self._where(str(exc), cls.complexity_param, dict(zip(names_, combo)), k)
                    raise problem(where[0], *at, *where[1:]) from None
        self._configurations = tuple(checked)

    def configurations(self) -> tuple[tuple[dict[str, Any], Any], ...]:
        """Each configuration's checked parameters (defaults filled in) and complexity
        level, grid by level, as :meth:`check` found them."""
        return self._configurations

    def _where(
        self, message: str, complexity_param: str | None, indices: dict[str, int], level: int
    ) -> tuple[str, ...]:
        """``(problem, *keys)``: a learner's message put at the parameter, and the item
        of its list of values, that it names; the whole message if it names none."""
        match = _PARAMETER_ERROR.fullmatch(message)
        name = match["name"] if match else None
        if name is not None and name == complexity_param and self.complexity is not None:
            keys = ("complexity", level) if isinstance(self.complexity, list) else ("complexity",)
        elif name in self.params:
            keys = ("params", name, indices[name]) if isinstance(self.params[name], list) else ("params", name)
        else:
            return (message,)
        return (match["problem"], *keys)
