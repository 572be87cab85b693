"""Pipeline files: TOML in, a validated :class:`Pipeline` out.

A pipeline file describes one study::

    [pipeline]
    name = "irma"
    seed = 2013                       # root of every random choice

    [datasets.irma]                   # a generator, an importer, or stores on disk
    generator = "irma"
    params = { n_sequences = 1000, length = 150 }
    # importer = "svmlight"           # instead: a file converted once into a store
    # params = { path = "a9a", test_path = "a9a.t" }   # paths relative to this file
    # train = "path/to/store"         # instead: stores on disk
    # test = "path/to/test-store"     # optional

    [experiments.table1]
    dataset = "irma"                  # or a list: one panel per dataset in figures
    task = "regression"               # or "binary" (targets -1/+1)
    split = { scheme = "sequences", count = 1000 }
    checkpoints = [10, 80, 150]       # or { log = 20 } or "all"
    metrics = ["test_mse"]
    conversions = ["last"]            # online-to-batch conversions to score (default)
    learners = [
      { learner = "irma", complexity = [4, 6, 10], params = { domain_high = 3.0 } },
    ]

    [execution]                       # optional
    batch_examples = 200000           # training examples per Dask task, at most
    cell_timeout = 600                # seconds; a cell running longer fails
    cell_memory = "4 GB"              # a cell whose worker grows past this fails
    state_every = 300                 # seconds; a longer cell saves its state this often
                                      # and a re-run resumes from it (preemption)

    [[reports]]
    kind = "table"                    # or "curve", "paired", "ranking"
    experiment = "table1"
    metric = "test_mse"
    at = [10, 80, 150]
    stats = ["mean", "var"]

A learner's ``params`` values may be lists: each combination is one configuration.
Every mistake is reported as one :class:`~dolb.errors.ConfigError` line naming the file
and the key at fault.
"""

from __future__ import annotations

import itertools
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dolb.errors import ConfigError
from dolb.evaluation.metrics import INFO_METRICS, METRICS
from dolb.learners import learner_class

SPLIT_SCHEMES = ("sequences", "holdout", "given")
ORDERS = ("stored", "random")
TASKS = ("regression", "binary")
REPORT_KINDS = ("table", "curve", "paired", "ranking")
COMPARABLE = ("conversion", "learner")
STATS = ("mean", "std", "var", "ci95", "median", "count")
PATH_PARAMS = ("path", "test_path", "data_home")
"""Generator and importer parameters that name files: relative to the pipeline file."""


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
    """

    scheme: str
    count: int
    length: int | None = None
    test_fraction: float = 0.2
    order: str = "stored"


@dataclass(frozen=True)
class LearnerSpec:
    """One learner with a grid of parameter values and complexity levels."""

    learner: str
    complexity: tuple[Any, ...]
    grid: tuple[tuple[tuple[str, Any], ...], ...]


@dataclass(frozen=True)
class ExperimentSpec:
    """Learners compared on one or more datasets (problems) with one split scheme, set
    of checkpoints and metrics."""

    name: str
    datasets: tuple[str, ...]
    task: str
    split: SplitSpec
    checkpoints: Any  # tuple of training sizes, ("log", n) or "all"
    metrics: tuple[str, ...]
    learners: tuple[LearnerSpec, ...]
    conversions: tuple[str, ...] = ("last",)


@dataclass(frozen=True)
class ReportSpec:
    """A table or a figure drawn from one experiment's results.

    ``table``: configurations against training sizes. ``curve``: a figure of the metric
    against training size, one panel per dataset. ``paired``: each value of ``compare``
    (a conversion or a learner) against ``baseline``, paired over splits, with a paired
    t-test. ``ranking``: configurations ranked on every dataset at the largest training
    size in ``at``, ordered by mean rank.
    """

    kind: str
    experiment: str
    metric: str
    at: tuple[int, ...] | None
    stats: tuple[str, ...]
    title: str
    compare: str = "conversion"
    baseline: str | None = None


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
    batch_examples: int
    cell_timeout: float | None = None
    cell_memory: int | None = None
    state_every: float | None = None


def load_pipeline(path: str | Path, text: str | None = None) -> Pipeline:
    """Read and validate a pipeline file (or its ``text``, read as if it were the file
    at ``path``: relative paths in it are relative to that file's folder).

    Raises
    ------
    ConfigError
        The file is missing, is not TOML, or has an unknown key, a missing field or a
        value of the wrong type; the message names the file and the key.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8") if text is None else text
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read pipeline file ({exc.strerror})") from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None
    return _Checker(str(path)).pipeline(raw)


class _Checker:
    """Validates the raw TOML document, naming the file and the key on every error."""

    def __init__(self, file: str) -> None:
        self.file = file

    def fail(self, key: str, message: str) -> ConfigError:
        return ConfigError(f"{self.file}: {key}: {message}")

    def table(self, value: Any, key: str, required: tuple[str, ...], optional: tuple[str, ...]) -> dict:
        if not isinstance(value, dict):
            raise self.fail(key, f"expected a table, got {type(value).__name__}")
        for name in value:
            if name not in required and name not in optional:
                allowed = ", ".join(required + optional)
                raise self.fail(f"{key}.{name}", f"unknown key (allowed: {allowed})")
        for name in required:
            if name not in value:
                raise self.fail(f"{key}.{name}", "missing required key")
        return value

    def typed(self, value: Any, key: str, kind: type | tuple[type, ...], what: str) -> Any:
        if isinstance(value, bool) and kind is not bool:
            raise self.fail(key, f"expected {what}, got {value!r}")
        if not isinstance(value, kind):
            raise self.fail(key, f"expected {what}, got {value!r}")
        return value

    def positive_int(self, value: Any, key: str) -> int:
        value = self.typed(value, key, int, "a positive whole number")
        if value < 1:
            raise self.fail(key, f"expected a positive whole number, got {value}")
        return value

    def choice(self, value: Any, key: str, choices: tuple[str, ...]) -> str:
        value = self.typed(value, key, str, "a string")
        if value not in choices:
            raise self.fail(key, f"{value!r} is not one of {', '.join(choices)}")
        return value

    def string_list(self, value: Any, key: str, choices: tuple[str, ...] | None = None) -> tuple[str, ...]:
        if isinstance(value, str):
            value = [value]
        value = self.typed(value, key, list, "a list of strings")
        if not value:
            raise self.fail(key, "must not be empty")
        for i, item in enumerate(value):
            if choices is None:
                self.typed(item, f"{key}[{i}]", str, "a string")
            else:
                self.choice(item, f"{key}[{i}]", choices)
        return tuple(value)

    # -- sections -----------------------------------------------------------------------

    def pipeline(self, raw: dict) -> Pipeline:
        self.table(raw, "(top level)", ("pipeline", "datasets", "experiments"), ("reports", "execution"))
        head = self.table(raw["pipeline"], "pipeline", ("name", "seed"), ("description",))
        name = self.typed(head["name"], "pipeline.name", str, "a string")
        seed = self.typed(head["seed"], "pipeline.seed", int, "a whole number")
        if seed < 0:
            raise self.fail("pipeline.seed", "must not be negative")
        description = self.typed(head.get("description", ""), "pipeline.description", str, "a string")
        datasets = self.typed(raw["datasets"], "datasets", dict, "a table of datasets")
        if not datasets:
            raise self.fail("datasets", "must name at least one dataset")
        datasets = {k: self.dataset(k, v) for k, v in datasets.items()}
        experiments = self.typed(raw["experiments"], "experiments", dict, "a table of experiments")
        if not experiments:
            raise self.fail("experiments", "must name at least one experiment")
        experiments = {k: self.experiment(k, v, datasets) for k, v in experiments.items()}
        reports_raw = self.typed(raw.get("reports", []), "reports", list, "an array of tables")
        reports = tuple(self.report(i, r, experiments) for i, r in enumerate(reports_raw))
        execution = self.table(
            raw.get("execution", {}), "execution", (),
            ("batch_examples", "cell_timeout", "cell_memory", "state_every"),
        )
        batch_examples = self.positive_int(
            execution.get("batch_examples", 200_000), "execution.batch_examples"
        )
        cell_timeout = self.seconds(execution.get("cell_timeout"), "execution.cell_timeout")
        state_every = self.seconds(execution.get("state_every"), "execution.state_every")
        cell_memory = execution.get("cell_memory")
        if cell_memory is not None:
            cell_memory = self.memory(cell_memory, "execution.cell_memory")
        return Pipeline(
            path=self.file,
            name=name,
            description=description,
            seed=seed,
            datasets=datasets,
            experiments=experiments,
            reports=reports,
            batch_examples=batch_examples,
            cell_timeout=cell_timeout,
            cell_memory=cell_memory,
            state_every=state_every,
        )

    def seconds(self, value: Any, key: str) -> float | None:
        """A positive, finite number of seconds, or None when absent."""
        if value is None:
            return None
        value = float(self.typed(value, key, (int, float), "seconds"))
        if not 0 < value < float("inf"):
            raise self.fail(key, f"must be a positive, finite number of seconds, got {value}")
        return value

    def memory(self, value: Any, key: str) -> int:
        """Bytes from a number or a string such as ``"2 GB"``."""
        from dask.utils import parse_bytes

        if isinstance(value, str):
            try:
                value = parse_bytes(value)
            except ValueError:
                raise self.fail(key, f"{value!r} is not a memory size such as '2 GB'") from None
        return self.positive_int(value, key)

    def dataset(self, name: str, raw: Any) -> DatasetSpec:
        key = f"datasets.{name}"
        raw = self.table(raw, key, (), ("generator", "importer", "params", "train", "test"))
        sources = [k for k in ("generator", "importer", "train") if k in raw]
        if len(sources) != 1:
            raise self.fail(key, "give exactly one of 'generator', 'importer' or 'train'")
        base = Path(self.file).parent

        def location(value: Any, where: str) -> str:
            value = self.typed(value, where, str, "a path or URL")
            return value if "://" in value else str((base / value).resolve())

        if "train" in raw:
            if "params" in raw:
                raise self.fail(f"{key}.params", "only a generator or an importer takes params")
            test = raw.get("test")
            return DatasetSpec(
                name,
                train=location(raw["train"], f"{key}.train"),
                test=None if test is None else location(test, f"{key}.test"),
            )
        if "test" in raw:
            raise self.fail(f"{key}.test", f"the {sources[0]} makes its own test part")
        maker = self.typed(raw[sources[0]], f"{key}.{sources[0]}", str, "a string")
        params = dict(self.typed(raw.get("params", {}), f"{key}.params", dict, "a table"))
        for path_key in PATH_PARAMS:  # file names are relative to the pipeline file
            if path_key in params:
                value = self.typed(params[path_key], f"{key}.params.{path_key}", str, "a path")
                params[path_key] = str((base / value).resolve())
        return DatasetSpec(name, params=tuple(sorted(params.items())), **{sources[0]: maker})

    def split(self, raw: Any, key: str) -> SplitSpec:
        raw = self.table(raw, key, ("scheme",), ("count", "length", "test_fraction", "order"))
        scheme = self.choice(raw["scheme"], f"{key}.scheme", SPLIT_SCHEMES)
        count = self.positive_int(raw.get("count", 1), f"{key}.count")
        length = raw.get("length")
        if length is not None:
            if scheme != "sequences":
                raise self.fail(f"{key}.length", "only the 'sequences' scheme takes a length")
            length = self.positive_int(length, f"{key}.length")
        fraction = raw.get("test_fraction", 0.2)
        if "test_fraction" in raw and scheme != "holdout":
            raise self.fail(f"{key}.test_fraction", "only the 'holdout' scheme takes a test_fraction")
        fraction = float(self.typed(fraction, f"{key}.test_fraction", (int, float), "a number"))
        if not 0.0 < fraction < 1.0:
            raise self.fail(f"{key}.test_fraction", f"must lie strictly between 0 and 1, got {fraction}")
        order = self.choice(raw.get("order", "stored"), f"{key}.order", ORDERS)
        return SplitSpec(scheme, count, length, fraction, order)

    def checkpoints(self, raw: Any, key: str) -> Any:
        if raw == "all":
            return "all"
        if isinstance(raw, dict):
            self.table(raw, key, ("log",), ())
            return ("log", self.positive_int(raw["log"], f"{key}.log"))
        if isinstance(raw, list) and raw:
            sizes = [self.positive_int(v, f"{key}[{i}]") for i, v in enumerate(raw)]
            if sizes != sorted(set(sizes)):
                raise self.fail(key, "training sizes must be strictly increasing")
            return tuple(sizes)
        raise self.fail(key, 'expected a list of training sizes, { log = N } or "all"')

    def learner(self, raw: Any, key: str, task: str, conversions: tuple[str, ...]) -> LearnerSpec:
        raw = self.table(raw, key, ("learner",), ("params", "complexity"))
        name = self.typed(raw["learner"], f"{key}.learner", str, "a string")
        try:
            cls = learner_class(name)
        except ConfigError as exc:
            raise self.fail(f"{key}.learner", str(exc)) from None
        if cls.task != task:
            raise self.fail(f"{key}.learner", f"{name!r} is a {cls.task} learner, the experiment is {task}")
        for conversion in conversions:
            if conversion not in cls.conversions_supported:
                raise self.fail(
                    f"{key}.learner",
                    f"{name!r} does not support conversion {conversion!r} "
                    f"(supported: {', '.join(cls.conversions_supported)})",
                )
        params = self.typed(raw.get("params", {}), f"{key}.params", dict, "a table")
        complexity = raw.get("complexity")
        if complexity is None:
            complexity = (None,)
        else:
            if cls.complexity_param is None:
                raise self.fail(f"{key}.complexity", f"learner {name!r} has no complexity level")
            if cls.complexity_param in params:
                raise self.fail(
                    f"{key}.params.{cls.complexity_param}",
                    "set by 'complexity'; give it there only",
                )
            complexity = tuple(complexity) if isinstance(complexity, list) else (complexity,)
            if not complexity:
                raise self.fail(f"{key}.complexity", "must not be empty")
        names = sorted(params)
        value_lists = [v if isinstance(v, list) else [v] for v in (params[n] for n in names)]
        for n, values in zip(names, value_lists):
            if not values:
                raise self.fail(f"{key}.params.{n}", "an empty list gives no configuration")
        grid = tuple(tuple(zip(names, combo)) for combo in itertools.product(*value_lists))
        for combo in grid:  # check every configuration now, not on a worker later
            for level in complexity:
                values = dict(combo)
                if level is not None:
                    values[cls.complexity_param] = level
                try:
                    cls.check_params(values)
                except ConfigError as exc:
                    raise self.fail(f"{key}", str(exc)) from None
        return LearnerSpec(name, complexity, grid)

    def experiment(self, name: str, raw: Any, datasets: dict[str, DatasetSpec]) -> ExperimentSpec:
        key = f"experiments.{name}"
        raw = self.table(
            raw, key, ("dataset", "task", "split", "learners", "metrics"), ("checkpoints", "conversions")
        )
        names = self.string_list(raw["dataset"], f"{key}.dataset")
        for name_ in names:
            if name_ not in datasets:
                raise self.fail(f"{key}.dataset", f"no dataset {name_!r} in [datasets]")
        task = self.choice(raw["task"], f"{key}.task", TASKS)
        split = self.split(raw["split"], f"{key}.split")
        for name_ in names:
            spec = datasets[name_]
            if split.scheme in ("sequences", "given") and not (spec.generator or spec.importer or spec.test):
                raise self.fail(f"{key}.split.scheme", f"{split.scheme!r} needs a dataset with a test part")
        checkpoints = self.checkpoints(raw.get("checkpoints", {"log": 20}), f"{key}.checkpoints")
        metric_names = tuple(m for m, metric in METRICS.items() if task in metric.tasks)
        metrics = self.string_list(raw["metrics"], f"{key}.metrics", metric_names)
        conversions = self.string_list(raw.get("conversions", ["last"]), f"{key}.conversions")
        if len(set(conversions)) != len(conversions):
            raise self.fail(f"{key}.conversions", "lists a conversion twice")
        learners_raw = self.typed(raw["learners"], f"{key}.learners", list, "an array of learners")
        if not learners_raw:
            raise self.fail(f"{key}.learners", "must list at least one learner")
        learners = tuple(
            self.learner(v, f"{key}.learners[{i}]", task, conversions) for i, v in enumerate(learners_raw)
        )
        return ExperimentSpec(name, names, task, split, checkpoints, metrics, learners, conversions)

    def report(self, index: int, raw: Any, experiments: dict[str, ExperimentSpec]) -> ReportSpec:
        key = f"reports[{index}]"
        raw = self.table(
            raw, key, ("kind", "experiment", "metric"), ("at", "stats", "title", "compare", "baseline")
        )
        kind = self.choice(raw["kind"], f"{key}.kind", REPORT_KINDS)
        experiment = self.typed(raw["experiment"], f"{key}.experiment", str, "an experiment name")
        if experiment not in experiments:
            raise self.fail(f"{key}.experiment", f"no experiment {experiment!r}")
        spec = experiments[experiment]
        reported = spec.metrics + tuple(m for c in spec.conversions for m in INFO_METRICS.get(c, ()))
        metric = self.choice(raw["metric"], f"{key}.metric", reported)
        at = raw.get("at")
        if at is not None:
            at = self.typed(at, f"{key}.at", list, "a list of training sizes")
            at = tuple(self.positive_int(v, f"{key}.at[{i}]") for i, v in enumerate(at))
        stats = self.string_list(raw.get("stats", ["mean", "std", "ci95"]), f"{key}.stats", STATS)
        title = self.typed(raw.get("title", f"{experiment}: {metric}"), f"{key}.title", str, "a string")
        compare = self.choice(raw.get("compare", "conversion"), f"{key}.compare", COMPARABLE)
        baseline = raw.get("baseline")
        if kind == "paired":
            if baseline is None:
                raise self.fail(f"{key}.baseline", "a paired report needs the baseline it compares with")
            self.typed(baseline, f"{key}.baseline", str, "a string")
        elif baseline is not None or "compare" in raw:
            raise self.fail(key, "only a paired report takes 'compare' and 'baseline'")
        return ReportSpec(kind, experiment, metric, at, stats, title, compare, baseline)
