"""Expand a pipeline into cells: the unit of scheduling, caching and reporting.

A cell is one learner configuration (with its complexity level) on one experiment's
dataset, task and split. Cells that differ only in their split form a
:class:`CellGroup`: the client holds groups (a few per configuration, whatever the
number of splits) and sends a worker a group with the split indices to run, so neither
its memory nor its work per cell grows with a spec dict per cell.

A cell's identity is a hash of its group's canonical spec (which holds the fingerprints
of the data it reads, the package version and the learner's code: see
:mod:`dolb.learners.code`) and its split index: a result stored
under that identity is never computed again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

import dolb
from dolb.data.labels import HOW_TO_MAP, HOW_TO_MAP_ARRAYS, check_binary
from dolb.data.splits import DEFAULT_WINDOW, labelled_rows, sequence_length
from dolb.data.store import Dataset
from dolb.errors import ConfigError
from dolb.evaluation.cell import Cell, CellLabels, CellSpec, CellSplit
from dolb.evaluation.checkpoints import resolve_checkpoints
from dolb.experiment.pipeline import ExperimentSpec, Pipeline, SplitSpec
from dolb.identity import digest
from dolb.learners import learner_class
from dolb.learners.code import learner_code
from dolb.results import store
from dolb.seeding import seed_for


@dataclass(frozen=True)
class CellGroup:
    """The cells of one configuration on one experiment's dataset, one per split.

    ``template`` is the cells' spec with the split index left out; ``key`` is the hash
    of its canonical dict. A cell's id is a hash of ``key`` and the split index.
    """

    key: str
    experiment: str
    template: CellSpec
    train_path: str
    test_path: str | None
    n_train: int
    n_splits: int
    timeout: float | None = None
    memory: int | None = None
    state_every: float | None = None

    def cell_id(self, index: int) -> str:
        """The id of the cell of split ``index``."""
        return cell_id(self.key, index)

    def cell(self, index: int) -> Cell:
        """The cell of split ``index``, spec and all."""
        spec = replace(self.template, split=replace(self.template.split, index=int(index)))
        trial = None if spec.tuning is None else spec.tuning.state
        return Cell(
            self.cell_id(index), spec, self.train_path, self.test_path,
            self.n_train, self.timeout, self.memory, self.state_every,
            None if trial is None else cell_id(trial, index),
        )

    @property
    def coordinates(self) -> dict[str, Any]:
        """The columns that place this group's cells in a results table (all but the
        split): display columns and one ``param_<name>`` column per parameter."""
        s = self.template
        return {
            "experiment": self.experiment,
            "dataset": s.dataset,
            "task": s.task,
            "learner": s.learner,
            "params": params_label(s),
            "complexity": complexity_label(s.complexity),
            "seed": s.seed,
        } | {f"param_{k}": v for k, v in s.params.items()} | {
            key: getattr(s.tuning, key) for key in TRIAL_COLUMNS if s.tuning is not None}



TRIAL_COLUMNS = tuple(name for name, _ in store.TRIAL_COLUMNS)
"""The columns that place a tuning trial's rows (see :mod:`dolb.experiment.tuned_cells`)."""


def params_label(template: CellSpec) -> str:
    """The ``params`` column of a template's cells: its parameters, or for a tuned
    configuration ``"tuned"`` and the parameters it was not tuned over (its values,
    chosen per split, are in the ``param_`` columns).

    >>> from types import SimpleNamespace as Spec
    >>> params_label(Spec(params={"C": 0.3, "variant": "pa1"}, complexity_param=None,
    ...                   tuned={"space": [{"name": "C"}]}))
    'tuned, variant=pa1'
    """
    if template.tuned is None:
        return format_params(template.params, template.complexity_param)
    searched = {dimension["name"] for dimension in template.tuned["space"]}
    fixed = {k: v for k, v in template.params.items() if k not in searched}
    return ", ".join([store.TUNED, format_params(fixed, template.complexity_param)]).rstrip(", ")


def format_params(params: dict[str, Any], skip: str | None = None) -> str:
    """``"a=1, b=x"``: a configuration's parameters as one readable, sortable string."""
    return ", ".join(f"{k}={v}" for k, v in sorted(params.items()) if k != skip)


def complexity_label(level) -> str:
    """A complexity level as the string the tables show: ``""`` for none, ``"4"`` for 4.

    Examples
    --------
    >>> complexity_label(None), complexity_label(4), complexity_label(0.5)
    ('', '4', '0.5')
    """
    if level is None or (isinstance(level, float) and level != level):
        return ""
    return str(level)


def spec_hash(spec: dict[str, Any]) -> str:
    """The hash of a canonical (JSON-ready) spec (:meth:`CellSpec.canonical
    <dolb.evaluation.cell.CellSpec.canonical>`)."""
    return digest(spec)


def cell_id(group_key: str, index: int) -> str:
    """The identity of the cell of split ``index`` in the group whose spec hashes to
    ``group_key``.

    Examples
    --------
    >>> cell_id("ab" * 32, 3) == cell_id("ab" * 32, 3) != cell_id("ab" * 32, 4)
    True
    """
    return hashlib.sha256(f"{group_key}:{index}".encode()).hexdigest()[:20]


def parameter_types(groups: list[CellGroup]) -> dict[str, type]:
    """The Python type of every learner parameter of ``groups`` (its declared kind;
    ``str`` where two learners declare one name with different kinds)."""
    kinds: dict[str, set[type]] = {}
    for learner in {group.template.learner for group in groups}:
        for name, param in learner_class(learner).params.items():
            kinds.setdefault(name, set()).add(param.kind)
    return {name: found.pop() if len(found) == 1 else str for name, found in kinds.items()}


def group_ids(group: CellGroup) -> np.ndarray:
    """Every cell id of ``group`` in split order, as an array of strings."""
    return np.array([cell_id(group.key, index) for index in range(group.n_splits)], dtype=object)


def n_train_rows(pipeline: Pipeline, experiment: ExperimentSpec, train: Dataset) -> int:
    """Training examples of one split; ConfigError naming the file and key if the
    split does not fit the data."""
    split = experiment.split
    if split.scheme == "sequences":
        try:
            return sequence_length(train.n_rows, split.count, split.length)
        except ConfigError as exc:
            raise ConfigError(f"{pipeline.path}: experiments.{experiment.name}.split: {exc}") from None
    if split.scheme == "holdout":
        return train.n_rows - int(round(split.test_fraction * train.n_rows))
    return train.n_rows


def _check_checkpoints(pipeline: Pipeline, experiment: ExperimentSpec, n_train: int) -> None:
    sizes = experiment.checkpoints
    if isinstance(sizes, tuple) and sizes and sizes[0] != "log" and sizes[-1] > n_train:
        raise ConfigError(
            f"{pipeline.path}: experiments.{experiment.name}.checkpoints: training size "
            f"{sizes[-1]} exceeds the {n_train} training examples of a split"
        )


def _check_report_sizes(pipeline: Pipeline, experiment: ExperimentSpec, dataset: str, n_train: int) -> None:
    """ConfigError for a report ``at`` a training size the experiment records no
    metric at (its table would be empty)."""
    recorded = set(resolve_checkpoints(experiment.checkpoints, n_train).tolist())
    for i, report in enumerate(pipeline.reports):
        if report.experiment != experiment.name or report.at is None:
            continue
        missing = [size for size in report.at if size not in recorded]
        if missing:
            raise ConfigError(
                f"{pipeline.path}: reports[{i}].at: {missing[0]} is not a checkpoint of experiment "
                f"{experiment.name!r} on dataset {dataset!r} (see experiments.{experiment.name}.checkpoints)"
            )


def _window(split: SplitSpec) -> int | None:
    """The window of a ``windowed`` order (none otherwise, so the cell ids of the other
    orders are what they always were)."""
    if split.order != "windowed":
        return None
    return DEFAULT_WINDOW if split.window is None else split.window


def _labels(experiment: ExperimentSpec) -> CellLabels | None:
    """The labels of a semi-supervised experiment (none otherwise, so the cell ids of
    fully labelled ones are what they always were)."""
    if experiment.label_rate == 1.0 and experiment.labelled_first == 0:
        return None
    return CellLabels(experiment.label_rate, experiment.labelled_first)


def _check_labels(pipeline: Pipeline, experiment: ExperimentSpec, dataset: str, n_train: int) -> None:
    """ConfigError if a cell's stream would reveal no label before its last checkpoint
    (a learner could learn nothing: its results would mean nothing)."""
    if experiment.label_rate == 1.0 or experiment.labelled_first > 0:
        return
    last = int(resolve_checkpoints(experiment.checkpoints, n_train)[-1])
    for index in range(experiment.split.count):
        seed = seed_for(pipeline.seed, "labels", dataset, index)
        if not labelled_rows(last, experiment.label_rate, 0, seed).any():
            raise ConfigError(
                f"{pipeline.path}: experiments.{experiment.name}.label_rate: split {index} of dataset {dataset!r} "
                f"would reveal no label in its first {last} examples (raise label_rate or set labelled_first)"
            )


_BINARY_LABELS: set[str] = set()
"""Fingerprints of the dataset parts whose labels are known to be -1/+1 (a content
fingerprint: read once a process, however many experiments and expansions name them)."""


def _check_targets(pipeline: Pipeline, experiment: ExperimentSpec, dataset: str, parts: dict[str, Dataset]) -> None:
    """DataError naming the dataset, its part and the row if a binary experiment's
    dataset holds labels other than -1/+1: checked once, before any cell runs."""
    if experiment.task != "binary":
        return
    for part, stored in parts.items():
        if stored.fingerprint in _BINARY_LABELS:
            continue
        where = f"{pipeline.path}: experiments.{experiment.name}: dataset {dataset!r} ({part} part, {stored.path})"
        arrays = stored.provenance.get("source") == "arrays"
        check_binary(stored.labels(), where, HOW_TO_MAP_ARRAYS if arrays else HOW_TO_MAP)
        _BINARY_LABELS.add(stored.fingerprint)


def expand_groups(pipeline: Pipeline, datasets: dict[str, dict[str, Dataset]],
                  only: str | None = None) -> list[CellGroup]:
    """All cell groups of ``pipeline`` in a fixed order (experiment, dataset, learner,
    configuration, complexity), given each dataset's opened parts (``only``: those of
    that dataset)."""
    groups = []
    for experiment in pipeline.experiments.values():
        for dataset in experiment.datasets:
            if only is None or dataset == only:
                groups.extend(_experiment_groups(pipeline, experiment, dataset, datasets[dataset]))
    return groups


def _experiment_groups(
    pipeline: Pipeline, experiment: ExperimentSpec, dataset: str, parts: dict[str, Dataset]
) -> Iterator[CellGroup]:
    """The cell groups of one experiment on one of its datasets."""
    n_train = n_train_rows(pipeline, experiment, parts["train"])
    _check_checkpoints(pipeline, experiment, n_train)
    _check_report_sizes(pipeline, experiment, dataset, n_train)
    _check_labels(pipeline, experiment, dataset, n_train)
    _check_targets(pipeline, experiment, dataset, parts)
    for learner in experiment.learners:
        if learner.search and not learner.tuning.defaults:
            continue  # tuned only: its cells come from the tuning (dolb.experiment.tuned_cells)
        for params, level in learner.configurations:
            template = cell_template(pipeline, experiment, dataset, parts, n_train, learner.learner, params, level)
            yield make_group(pipeline, experiment, template, parts, n_train)


def cell_template(pipeline: Pipeline, experiment: ExperimentSpec, dataset: str, parts: dict[str, Dataset],
                  n_train: int, learner: str, params: dict[str, Any], level: Any) -> CellSpec:
    """The spec of the cells of one configuration (all but the split index), given its
    checked parameters (:attr:`LearnerSpec.configurations
    <dolb.experiment.pipeline.LearnerSpec.configurations>`)."""
    cls = learner_class(learner)
    train, test = parts["train"], parts.get("test")
    split = experiment.split
    return CellSpec(
        experiment=experiment.name,
        dataset=dataset,
        train_fingerprint=train.fingerprint,
        test_fingerprint=None if test is None else test.fingerprint,
        task=experiment.task,
        split=CellSplit(
            scheme=split.scheme,
            length=n_train if split.scheme == "sequences" else None,
            test_fraction=split.test_fraction if split.scheme == "holdout" else None,
            order=split.order,
            window=_window(split),
        ),
        learner=learner,
        params=params,
        complexity=level,
        complexity_param=cls.complexity_param,
        checkpoints=experiment.checkpoints,
        metrics=tuple(experiment.metrics),
        conversions=tuple(experiment.conversions),
        seed=pipeline.seed,
        dolb=dolb.__version__,
        labels=_labels(experiment),
        code=learner_code(cls),
    )


def make_group(pipeline: Pipeline, experiment: ExperimentSpec, template: CellSpec, parts: dict[str, Dataset],
               n_train: int, name: str | None = None) -> CellGroup:
    """The group of ``template``'s cells, one per split of ``experiment``."""
    test = parts.get("test")
    return CellGroup(
        key=spec_hash(template.canonical()),
        experiment=name or experiment.name,
        template=template,
        train_path=parts["train"].path,
        test_path=None if test is None else test.path,
        n_train=n_train,
        n_splits=experiment.split.count,
        timeout=pipeline.cell_timeout,
        memory=pipeline.cell_memory,
        state_every=pipeline.state_every,
    )


def examples_of(cells: list[tuple[CellGroup, np.ndarray]]) -> int:
    """The training examples of ``cells``: groups (anything with ``n_train``), each with
    the split indices of its cells.

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace as G
    >>> examples_of([(G(n_train=10), np.arange(3)), (G(n_train=4), np.arange(2))])
    38
    """
    return int(sum(group.n_train * len(indices) for group, indices in cells))
