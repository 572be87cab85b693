"""The pipeline file's schema: one pydantic model per TOML table.

:func:`dolb.experiment.pipeline.load_pipeline` validates a parsed file with
:class:`PipelineFile` (through :func:`dolb.validation.validate`, which names the file
and the key path of any error) and builds the spec dataclasses from the models. Rules
within a table are model validators of that table; rules between tables (an experiment's
datasets exist, a report's experiment and metric exist) are validators of
:class:`PipelineFile`. Learner parameters are checked by the learner's own declarations
(``learner_class(name).check_params``), for every configuration of the grid.

Examples
--------
>>> from dolb.validation import validate
>>> validate(Split, {"scheme": "holdout", "count": 3}, "p.toml").test_fraction
0.2
>>> validate(Split, {"scheme": "holdout", "cuont": 3}, "p.toml")
Traceback (most recent call last):
...
dolb.errors.ConfigError: p.toml: cuont: unknown key (did you mean 'count'?)
"""

import itertools
import math
import re
from collections.abc import Iterable
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field, PrivateAttr, model_validator

from dolb.errors import ConfigError
from dolb.evaluation.metrics import INFO_METRICS, METRICS
from dolb.experiment.schema_tuning import Dimension, Tuning, check_search, check_tuning
from dolb.learners import learner_class
from dolb.registry import did_you_mean
from dolb.results.kinds import REPORTS
from dolb.results.ranking import POSTHOC
from dolb.validation import NonNegativeInt, PositiveInt, Table, names, one_of, problem, shown, unknown_key

SPLIT_SCHEMES = ("sequences", "holdout", "given")
ORDERS = ("stored", "random", "windowed")
TASKS = ("regression", "binary")
COMPARABLE = ("conversion", "learner")
STATS = ("mean", "std", "var", "ci95", "median", "count")
ARITHMETIC = ("x86-64-v3", "x86-64-v2", "native")
"""What ``[execution] arithmetic`` may name: an x86-64 level every worker computes with
(its BLAS kernel and Numba target; see :mod:`dolb.execution.arithmetic`), or ``native``,
each worker its own CPU's."""
PATH_PARAMS = ("path", "test_path", "data_home")
"""Generator and importer parameters that name files: relative to the pipeline file."""

_PARAMETER_ERROR = re.compile(r"learner '[^']*', parameter '(?P<name>[^']*)': (?P<problem>.*)", re.S)
"""A learner's message about one of its parameters (``Param.check``)."""


def _whole(value: Any, *at: str | int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise problem(f"expected a positive whole number, got {shown(value)}", *at)
    return value


def _checkpoints(raw: Any) -> Any:
    """``"all"``, ``("log", n)`` or a tuple of strictly increasing training sizes."""
    if raw == "all":
        return "all"
    if isinstance(raw, dict):
        for key in raw:
            if key != "log":
                raise unknown_key(key, ("log",))
        if "log" not in raw:
            raise problem("missing required key", "log")
        return ("log", _whole(raw["log"], "log"))
    if isinstance(raw, list) and raw:
        sizes = [_whole(size, i) for i, size in enumerate(raw)]
        if sizes != sorted(set(sizes)):
            raise problem("training sizes must be strictly increasing")
        return tuple(sizes)
    raise problem(f'expected a list of training sizes, {{ log = N }} or "all", got {shown(raw)}')


def _seconds(value: float) -> float:
    if not 0 < value < math.inf:
        raise problem(f"must be a positive, finite number of seconds, got {value}")
    return float(value)


def _bytes(value: Any) -> Any:
    """A memory size such as ``"2 GB"`` as bytes; anything else as it is."""
    if not isinstance(value, str):
        return value
    from dask.utils import parse_bytes

    try:
        return parse_bytes(value)
    except ValueError:
        raise problem(f"{value!r} is not a memory size such as '2 GB'") from None


Seconds = Annotated[float, AfterValidator(_seconds)]
Memory = Annotated[PositiveInt, BeforeValidator(_bytes)]
Checkpoints = Annotated[Any, AfterValidator(_checkpoints)]


def _named(name: str) -> str:
    if not name.strip():
        raise problem("must not be empty: results, reports and the folder check carry it")
    return name


def _no_repeats(values: Iterable[Any], *at: str | int) -> None:
    """A problem at ``at`` if a value is listed twice (the same cells twice over)."""
    seen = []
    for value in values:
        if value in seen:
            raise problem(f"{shown(value)} is listed twice", *at)
        seen.append(value)


class Head(Table):
    """``[pipeline]``: the study's name, description and root seed."""

    name: Annotated[str, AfterValidator(_named)]
    seed: NonNegativeInt
    description: str = ""


class Dataset(Table):
    """``[datasets.<name>]``: a generator, an importer or stores on disk."""

    generator: str | None = None
    importer: str | None = None
    params: dict[str, Any] = {}
    train: str | None = None
    test: str | None = None

    @model_validator(mode="after")
    def _one_source(self) -> "Dataset":
        sources = [k for k in ("generator", "importer", "train") if getattr(self, k) is not None]
        if len(sources) != 1:
            raise problem("give exactly one of 'generator', 'importer' or 'train'")
        if self.train is not None and "params" in self.model_fields_set:
            raise problem("only a generator or an importer takes params", "params")
        if self.train is None and self.test is not None:
            raise problem(f"the {sources[0]} makes its own test part", "test")
        for key in PATH_PARAMS:
            if key in self.params and not isinstance(self.params[key], str):
                raise problem(f"expected a path, got {shown(self.params[key])}", "params", key)
        return self


class Split(Table):
    """``split = {...}``: how a dataset is cut into train/test splits and ordered."""

    scheme: one_of(SPLIT_SCHEMES)
    count: PositiveInt = 1
    length: PositiveInt | None = None
    test_fraction: float = 0.2
    order: one_of(ORDERS) = "stored"
    window: PositiveInt | None = None

    @model_validator(mode="after")
    def _scheme_keys(self) -> "Split":
        if self.window is not None and self.order != "windowed":
            raise problem("only the 'windowed' order takes a window", "window")
        if self.length is not None and self.scheme != "sequences":
            raise problem("only the 'sequences' scheme takes a length", "length")
        if "test_fraction" in self.model_fields_set and self.scheme != "holdout":
            raise problem("only the 'holdout' scheme takes a test_fraction", "test_fraction")
        if not 0.0 < self.test_fraction < 1.0:
            raise problem(f"must lie strictly between 0 and 1, got {self.test_fraction}", "test_fraction")
        return self


class Learner(Table):
    """One entry of an experiment's ``learners``: a learner, its parameter grid (a
    list value is one configuration per item) and its complexity levels."""

    learner: str
    params: dict[str, Any] = {}
    complexity: Any = None
    search: dict[str, Dimension] = {}
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


def _unique(values: tuple[str, ...]) -> tuple[str, ...]:
    if len(set(values)) != len(values):
        raise problem("lists a conversion twice")
    return values


def _label_rate(rate: float) -> float:
    if not (math.isfinite(rate) and 0.0 < rate <= 1.0):
        raise problem(f"the fraction of labelled examples must lie in (0, 1], got {rate}")
    return rate


class Experiment(Table):
    """``[experiments.<name>]``: learners compared on datasets with one split scheme."""

    dataset: names()
    task: one_of(TASKS)
    split: Split
    checkpoints: Checkpoints = ("log", 20)
    metrics: names()
    conversions: Annotated[names(), AfterValidator(_unique)] = ("last",)
    learners: Annotated[list[Learner], Field(min_length=1)]
    label_rate: Annotated[float, AfterValidator(_label_rate)] = 1.0
    labelled_first: NonNegativeInt = 0
    tuning: Tuning | None = None

    @model_validator(mode="after")
    def _metrics_and_learners(self) -> "Experiment":
        known = tuple(m for m, metric in METRICS.items() if self.task in metric.tasks)
        for i, metric in enumerate(self.metrics):
            if metric not in known:
                raise problem(f"{metric!r} is not one of {', '.join(known)}{did_you_mean(metric, known)}", "metrics", i)
        for i, learner in enumerate(self.learners):
            learner.check(self.task, self.conversions, self.label_rate, "learners", i)
        check_tuning(self.tuning, self.learners, self.task, self.conversions)
        return self


class Report(Table):
    """``[[reports]]``: a table or figure drawn from one experiment's results."""

    kind: one_of(tuple(REPORTS.names()))
    experiment: str
    metric: str
    at: list[PositiveInt] | None = None
    stats: names(STATS) = ("mean", "std", "ci95")
    title: str | None = None
    compare: one_of(COMPARABLE) = "conversion"
    baseline: str | None = None
    posthoc: one_of(POSTHOC) = "nemenyi"

    @model_validator(mode="after")
    def _paired_keys(self) -> "Report":
        if REPORTS[self.kind].paired:
            if self.baseline is None:
                raise problem("a paired report needs the baseline it compares with", "baseline")
        elif self.baseline is not None or "compare" in self.model_fields_set:
            raise problem("only a paired report takes 'compare' and 'baseline'")
        if self.kind != "ranking" and "posthoc" in self.model_fields_set:
            raise problem("only a ranking report takes 'posthoc'")
        return self


class Execution(Table):
    """``[execution]``: how cells are batched and limited, and the arithmetic of every worker."""

    batch_examples: PositiveInt = 200_000
    cell_timeout: Seconds | None = None
    cell_memory: Memory | None = None
    state_every: Seconds | None = None
    arithmetic: one_of(ARITHMETIC) = "x86-64-v3"


class PipelineFile(Table):
    """A whole pipeline file."""

    pipeline: Head
    datasets: Annotated[dict[str, Dataset], Field(min_length=1)]
    experiments: Annotated[dict[str, Experiment], Field(min_length=1)]
    reports: list[Report] = []
    execution: Execution = Execution()

    @model_validator(mode="after")
    def _references(self) -> "PipelineFile":
        for name, experiment in self.experiments.items():
            for dataset in experiment.dataset:
                if dataset not in self.datasets:
                    hint = did_you_mean(dataset, self.datasets)
                    raise problem(f"no dataset {dataset!r} in [datasets]{hint}", "experiments", name, "dataset")
                spec = self.datasets[dataset]
                scheme = experiment.split.scheme
                if scheme in ("sequences", "given") and spec.train is not None and spec.test is None:
                    raise problem(
                        f"{scheme!r} needs a dataset with a test part", "experiments", name, "split", "scheme"
                    )
        for i, report in enumerate(self.reports):
            if report.experiment not in self.experiments:
                hint = did_you_mean(report.experiment, self.experiments)
                raise problem(f"no experiment {report.experiment!r}{hint}", "reports", i, "experiment")
            spec = self.experiments[report.experiment]
            if report.kind == "tuning" and spec.tuning is None:
                raise problem(f"experiment {report.experiment!r} has no [tuning]", "reports", i, "kind")
            reported = spec.metrics + tuple(m for c in spec.conversions for m in INFO_METRICS.get(c, ()))
            if report.metric not in reported:
                raise problem(
                    f"{report.metric!r} is not one of {', '.join(reported)}{did_you_mean(report.metric, reported)}",
                    "reports", i, "metric",
                )
            if report.baseline is not None:
                compared = spec.conversions if report.compare == "conversion" else [e.learner for e in spec.learners]
                if report.baseline not in compared:
                    raise problem(
                        f"no {report.compare} {report.baseline!r} in experiment {report.experiment!r} "
                        f"(it has: {', '.join(dict.fromkeys(compared))}){did_you_mean(report.baseline, compared)}",
                        "reports", i, "baseline",
                    )
        return self
