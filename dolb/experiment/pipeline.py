"""Pipeline files: TOML in, a validated :class:`Pipeline` out.

A pipeline file describes one study: its datasets, experiments, reports and execution
(docs/guide/pipelines.md walks through one; the pipeline reference lists every key)::

    [pipeline]
    name = "irma"
    seed = 2013                       # root of every random choice

    [datasets.irma]                   # a generator, an importer, or stores on disk
    generator = "irma"
    params = { n_sequences = 1000, length = 150 }

    [experiments.table1]
    dataset = "irma"
    task = "regression"               # or "binary" (targets -1/+1)
    split = { scheme = "sequences", count = 1000 }
    checkpoints = [10, 80, 150]       # or { log = 20 } or "all"
    metrics = ["test_mse"]
    learners = [{ learner = "irma", complexity = [4, 6, 10], params = { domain_high = 3.0 } }]

A learner's ``params`` values may be lists: each combination is one configuration.
Every mistake is one :class:`~dolb.errors.ConfigError` line naming the file and the key
path at fault; the checks are the pydantic models of :mod:`dolb.experiment.schema`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from dolb.experiment import schema
from dolb.experiment.schema_tuning import default_metric
from dolb.experiment.search import Dimension, Tuning
from dolb.experiment.shipped import data_location
from dolb.results.kinds import ReportSpec, default_title
from dolb.validation import read_toml, validate


@dataclass(frozen=True)
class DatasetSpec:
    """Where an experiment's examples come from: a generator, an importer (a file in
    another format, converted once into a store) or stores on disk."""

    name: str
    generator: str | None = None
    importer: str | None = None
    params: tuple[tuple[str, Any], ...] = ()
    train: str | None = None
    test: str | None = None


@dataclass(frozen=True)
class SplitSpec:
    """How one dataset is cut into ``count`` train/test splits and ordered.

    ``sequences``: split *i* is the *i*-th run of consecutive training rows
    (``length`` rows, default ``n_rows // count``), tested on the dataset's test part.
    ``holdout``: a seeded random ``test_fraction`` of the rows is the test set.
    ``given``: the whole training part, tested on the test part; with
    ``order = "random"`` each split is another seeded ordering.
    ``order = "windowed"``: a seeded two-level shuffle with ``window`` chunks a window
    (:func:`dolb.data.splits.windowed_order`).
    """

    scheme: str
    count: int
    length: int | None = None
    test_fraction: float = 0.2
    order: str = "stored"
    window: int | None = None


@dataclass(frozen=True)
class LearnerSpec:
    """One learner with a grid of parameter values and complexity levels."""

    learner: str
    complexity: tuple[Any, ...]
    grid: tuple[tuple[tuple[str, Any], ...], ...]
    search: tuple[Dimension, ...] = ()
    """The parameters tuned in each split (:mod:`dolb.experiment.search`); none: not tuned."""
    tuning: Tuning | None = None
    """How they are tuned: the learner's own ``tuning``, else its experiment's."""
    configurations: tuple[tuple[dict[str, Any], Any], ...] = field(default=(), repr=False, compare=False)
    """Each configuration's checked parameters (defaults filled in, the stream's
    ``label_rate`` where the learner takes one) and complexity level: the pipeline's
    check of them (:meth:`dolb.experiment.schema.Learner.check`), the only one."""


@dataclass(frozen=True)
class ExperimentSpec:
    """Learners compared on one or more datasets (problems) with one split scheme, set
    of checkpoints and metrics. ``label_rate`` < 1 makes the streams semi-supervised:
    each training example's label is revealed with that probability (seeded per split),
    the first ``labelled_first`` always; see :func:`dolb.data.splits.labelled_rows`."""

    name: str
    datasets: tuple[str, ...]
    task: str
    split: SplitSpec
    checkpoints: Any  # tuple of training sizes, ("log", n) or "all"
    metrics: tuple[str, ...]
    learners: tuple[LearnerSpec, ...]
    conversions: tuple[str, ...] = ("last",)
    label_rate: float = 1.0
    labelled_first: int = 0
    tuning: Tuning | None = None


@dataclass(frozen=True)
class Pipeline:
    """A validated pipeline file."""

    path: str
    name: str
    description: str
    seed: int
    datasets: dict[str, DatasetSpec]
    experiments: dict[str, ExperimentSpec]
    reports: tuple[ReportSpec, ...]
    batch_examples: int | None
    cell_timeout: float | None = None
    cell_memory: int | None = None
    state_every: float | None = None
    arithmetic: str = "x86-64-v3"


def load_pipeline(path: str | Path, text: str | None = None, data: str | Path | None = None) -> Pipeline:
    """Read and validate a pipeline file (or its ``text``, read as if it were the file
    at ``path``: relative paths in it are relative to that file's folder; ``data``: the
    data folder of a shipped pipeline, see :func:`dolb.experiment.shipped.data_location`).

    Raises
    ------
    ConfigError
        The file is missing, is not UTF-8 TOML, or has an unknown key, a missing key or
        a value of the wrong type; the one-line message names the file and the key path.
    """
    raw = read_toml(path, "pipeline file", text)
    checked = validate(schema.PipelineFile, raw, path)
    base = Path(path).parent
    execution = checked.execution
    return Pipeline(
        path=str(path),
        name=checked.pipeline.name,
        description=checked.pipeline.description,
        seed=checked.pipeline.seed,
        datasets={name: _dataset(name, spec, base, data) for name, spec in checked.datasets.items()},
        experiments={name: _experiment(name, spec) for name, spec in checked.experiments.items()},
        reports=_reports(checked.reports + _tuning_reports(checked)),
        batch_examples=execution.batch_examples,
        cell_timeout=execution.cell_timeout,
        cell_memory=execution.cell_memory,
        state_every=execution.state_every,
        arithmetic=execution.arithmetic,
    )


def _location(value: str, base: Path) -> str:
    """A path relative to the pipeline file's folder made absolute; a URL as it is."""
    return value if "://" in value else str((base / value).resolve())


def _dataset(name: str, spec: schema.Dataset, base: Path, data: str | Path | None) -> DatasetSpec:
    if spec.train is not None:
        test = None if spec.test is None else _location(spec.test, base)
        return DatasetSpec(name, train=_location(spec.train, base), test=test)
    params = dict(spec.params)
    for key in schema.PATH_PARAMS:  # file names are relative to the pipeline file (see dolb.experiment.shipped)
        if key in params:
            params[key] = data_location(params[key], base, data)
    maker = {"generator": spec.generator} if spec.generator is not None else {"importer": spec.importer}
    return DatasetSpec(name, params=tuple(sorted(params.items())), **maker)


def _experiment(name: str, spec: schema.Experiment) -> ExperimentSpec:
    split = spec.split
    return ExperimentSpec(
        name,
        spec.dataset,
        spec.task,
        SplitSpec(split.scheme, split.count, split.length, split.test_fraction, split.order, split.window),
        spec.checkpoints,
        spec.metrics,
        tuple(LearnerSpec(learner.learner, learner.levels(), learner.grid(), _search(learner),
                          _tuning(learner.tuning or spec.tuning, spec) if learner.search else None,
                          configurations=learner.configurations())
              for learner in spec.learners),
        spec.conversions,
        spec.label_rate,
        spec.labelled_first,
        _tuning(spec.tuning, spec),
    )


def _search(learner: schema.Learner) -> tuple[Dimension, ...]:
    return tuple(Dimension(name, None if d.choices is None else tuple(d.choices), d.low, d.high, d.log, d.steps)
                 for name, d in sorted(learner.search.items()))


def _tuning(tuning: schema.Tuning | None, spec: schema.Experiment) -> Tuning | None:
    """A tuning of the experiment ``spec``, its metric and conversion filled in."""
    if tuning is None:
        return None
    return Tuning(
        tuning.method, tuning.trials, tuning.eta, tuning.min_budget, tuning.max_budget, tuning.validation,
        tuning.holdout, tuning.metric or default_metric(tuning.validation, spec.task),
        tuning.conversion or spec.conversions[0], tuning.defaults, tuning.seed,
    )


def _tuning_reports(checked: schema.PipelineFile) -> list[schema.Report]:
    """A ``tuning`` report of each experiment that tunes and asks for none: what its
    splits chose is shown whenever it tunes."""
    asked = {report.experiment for report in checked.reports if report.kind == "tuning"}
    return [schema.Report(kind="tuning", experiment=name, metric=experiment.metrics[0])
            for name, experiment in checked.experiments.items()
            if name not in asked and any(learner.search for learner in experiment.learners)]


def _reports(specs: list[schema.Report]) -> tuple[ReportSpec, ...]:
    """The reports, each with its title or one made from what it shows
    (:func:`~dolb.results.kinds.default_title`); a title given twice is numbered."""
    reports = []
    for spec in specs:
        report = ReportSpec(spec.kind, spec.experiment, spec.metric, None if spec.at is None else tuple(spec.at),
                            spec.stats, spec.title or "", spec.compare, spec.baseline, spec.posthoc)
        reports.append(report if spec.title else replace(report, title=default_title(report)))
    titles = Counter(report.title for report in reports)
    return tuple(
        replace(report, title=f"{report.title} (report {index + 1})") if titles[report.title] > 1 else report
        for index, report in enumerate(reports)
    )
