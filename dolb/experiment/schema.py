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

import json
import math
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field, model_validator

from dolb.data.params import REQUIRED
from dolb.data.sources import IMPORTERS
from dolb.evaluation.metrics import INFO_METRICS, METRICS
from dolb.experiment.schema_learner import Learner
from dolb.experiment.schema_tuning import Tuning, check_tuning
from dolb.extras import POSTHOCS, missing
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
PATH_PARAMS = ("path", "test_path", "data_home", "labels_path", "test_labels_path")
"""Generator and importer parameters that name files: relative to the pipeline file."""


def _whole(value: Any, *at: str | int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise problem(f"expected a positive whole number, got {shown(value)}", *at)
    return value


def _checkpoints(raw: Any) -> Any:
    """A list of strictly increasing training sizes, ``{ log = N }`` (about N sizes
    spaced evenly on a log scale up to the training size) or ``"all"`` (every size)."""
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
    """Seconds: above 0 and finite."""
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
    """Not empty."""
    if not name.strip():
        raise problem("must not be empty: results, reports and the folder check carry it")
    return name


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
        """Exactly one of ``generator``, ``importer`` or ``train``; ``params`` only with a
        generator or an importer, ``test`` only with ``train``; file parameters are paths
        relative to the pipeline file."""
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
        for key in ("train", "test"):
            if getattr(self, key) is not None:
                _not_a_file(getattr(self, key), key)
        return self


def _not_a_file(path: str, key: str) -> None:
    """A problem if ``path`` ends as the files of an importer do (``.csv``): a store is
    a folder, and the message says how to import the file instead."""
    for name in IMPORTERS.names():
        importer = IMPORTERS[name]
        if path.lower().endswith(importer.suffixes):
            needed = [k for k, p in importer.params.items() if p.default is REQUIRED and k != "path"]
            params = ", ".join([f"path = {json.dumps(path)}"] + [f"{k} = ..." for k in needed])
            raise problem(f"{path!r} is a file, not a dataset store: give importer = {json.dumps(name)} and "
                          f"params = {{ {params} }} instead (see the pipeline reference), "
                          "or write a store with dolb.data.write_dataset", key)


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
        """``window`` only with the ``windowed`` order, ``length`` only with the
        ``sequences`` scheme, ``test_fraction`` only with ``holdout`` and strictly between
        0 and 1."""
        if self.window is not None and self.order != "windowed":
            raise problem("only the 'windowed' order takes a window", "window")
        if self.length is not None and self.scheme != "sequences":
            raise problem("only the 'sequences' scheme takes a length", "length")
        if "test_fraction" in self.model_fields_set and self.scheme != "holdout":
            raise problem("only the 'holdout' scheme takes a test_fraction", "test_fraction")
        if not 0.0 < self.test_fraction < 1.0:
            raise problem(f"must lie strictly between 0 and 1, got {self.test_fraction}", "test_fraction")
        return self


def _unique(values: tuple[str, ...]) -> tuple[str, ...]:
    """No conversion listed twice."""
    if len(set(values)) != len(values):
        raise problem("lists a conversion twice")
    return values


def _label_rate(rate: float) -> float:
    """In (0, 1]: the probability that a training example reveals its label."""
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
        """Every metric is one of the task's; every learner exists, fits the task and the
        conversions, and its parameter declarations accept every configuration of the
        grid and every complexity level."""
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
        """A paired report needs ``baseline`` (and may set ``compare``); no other report
        takes them; only a ranking report takes ``posthoc``."""
        if REPORTS[self.kind].paired:
            if self.baseline is None:
                raise problem("a paired report needs the baseline it compares with", "baseline")
        elif self.baseline is not None or "compare" in self.model_fields_set:
            raise problem("only a paired report takes 'compare' and 'baseline'")
        if self.kind != "ranking" and "posthoc" in self.model_fields_set:
            raise problem("only a ranking report takes 'posthoc'")
        if self.kind == "ranking" and (message := missing(POSTHOCS, f"the ranking report's {self.posthoc} test")):
            raise problem(message, "kind")
        return self


class Execution(Table):
    """``[execution]``: how cells are batched and limited, and the arithmetic of every worker."""

    batch_examples: PositiveInt | None = None
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
        """An experiment's datasets exist (with a test part for the ``sequences`` and
        ``given`` schemes); a report's experiment exists, its metric is one the experiment
        records, its baseline one of the experiment's conversions or learners."""
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
