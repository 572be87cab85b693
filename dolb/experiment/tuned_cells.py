"""The cells of tuning: each tuned configuration's trials, rung by rung, and the cells of
the configuration each split chose.

A :class:`TuningPlan` is one configuration of a learner entry with a ``search``, on one
dataset of an experiment with ``[tuning]``: its brackets of trials
(:func:`dolb.experiment.search.brackets`) are the same in every split; the splits differ
in which trials they promote. A trial's rung is a cell group (:func:`trial_group`) of the
experiment ``<name>/tuning`` whose cells (one per split where the trial reached that
rung) learn from the split's tuning stream up to the rung's budget and score the
validation; the rung after resumes from the state the trial left (:attr:`Cell.trial_state
<dolb.evaluation.cell.Cell.trial_state>`). The configuration a split chose then runs as
any cell of the experiment (:func:`tuned_group`), labelled ``params = "tuned"`` with its
values in the ``param_`` columns.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from dolb.data.splits import validation_size
from dolb.data.store import Dataset
from dolb.errors import ConfigError
from dolb.evaluation.cell import CellSpec, CellTrial
from dolb.experiment.cells import CellGroup, cell_template, make_group, n_train_rows, params_label, spec_hash
from dolb.experiment.pipeline import ExperimentSpec, Pipeline
from dolb.experiment.search import MAX_TRIALS, Bracket, Dimension, Tuning, brackets, n_trials
from dolb.learners import learner_class
from dolb.seeding import seed_for

TUNING_SUFFIX = "/tuning"
"""Trials' rows are stored under their experiment's name and this suffix: no table of
the experiment mixes them with its cells."""


@dataclass(frozen=True)
class TuningPlan:
    """One tuned configuration on one dataset: its brackets, and what its cells share."""

    pipeline: Pipeline
    experiment: ExperimentSpec
    learner_index: int
    dataset: str
    parts: dict[str, Dataset]
    template: CellSpec
    """The configuration's cell template at its listed values (the defaults)."""
    space: tuple[Dimension, ...]
    brackets: tuple[Bracket, ...]
    trial_params: dict[int, dict[str, Any]]
    """Every trial's full parameters (the configuration's, its trial values over them),
    checked once, when the plan is made; by trial number."""
    n_train: int
    n_stream: int

    @property
    def tuning(self) -> Tuning:
        """How this configuration is tuned (its learner entry's, or its experiment's)."""
        return self.experiment.learners[self.learner_index].tuning

    @property
    def n_splits(self) -> int:
        return self.experiment.split.count

    @property
    def label(self) -> str:
        """Where the plan is, in a message: experiment, dataset and learner."""
        return f"{self.experiment.name}/{self.dataset}/{self.template.learner}"

    @property
    def tuned_label(self) -> str:
        """The ``params`` label of the chosen configurations' cells (:func:`params_label`)."""
        return params_label(replace(self.template, tuned={"space": [vars(d) for d in self.space]}))


def tuning_plans(pipeline: Pipeline, datasets: dict[str, dict[str, Dataset]],
                 only: str | None = None) -> list[TuningPlan]:
    """Every tuned configuration of ``pipeline``, in a fixed order (experiment, dataset,
    learner, configuration; ``only``: those of that dataset); ConfigError for a budget
    the splits cannot give."""
    plans = []
    for experiment in pipeline.experiments.values():
        if not any(learner.search for learner in experiment.learners):
            continue
        for dataset in experiment.datasets:
            if only is None or dataset == only:
                plans.extend(_plans(pipeline, experiment, dataset, datasets[dataset]))
    return plans


def _plans(pipeline: Pipeline, experiment: ExperimentSpec, dataset: str, parts) -> Iterator[TuningPlan]:
    n_train = n_train_rows(pipeline, experiment, parts["train"])
    for index, learner in enumerate(experiment.learners):
        if not learner.search:
            continue
        where = f"{pipeline.path}: experiments.{experiment.name}." + (
            "tuning" if learner.tuning == experiment.tuning else f"learners[{index}].tuning")
        n_stream = _stream_length(learner.tuning, n_train, where)
        kinds = {d.name: learner_class(learner.learner).params[d.name].kind for d in learner.search}
        at = f"{pipeline.path}: experiments.{experiment.name}.learners[{index}].search"
        _check_size(learner.tuning, learner.search, kinds, n_stream, where, at)
        for number, (values, level) in enumerate(learner.configurations):
            template = cell_template(pipeline, experiment, dataset, parts, n_train, learner.learner, values, level)
            seed = seed_for(pipeline.seed, "tuning", experiment.name, index, number, learner.tuning.seed)
            found = tuple(brackets(learner.tuning, list(learner.search), kinds, n_stream, seed))
            trial_params = _trial_params(learner.learner, values, found, at)
            yield TuningPlan(pipeline, experiment, index, dataset, parts, template, learner.search, found,
                             trial_params, n_train, n_stream)


def _trial_params(learner: str, values: dict[str, Any], found: tuple[Bracket, ...], at: str) -> dict[int, dict]:
    """The full parameters of every trial of ``found`` (``values`` with the trial's over
    them), checked now rather than on a worker later; ConfigError at the key path ``at``."""
    check = learner_class(learner).check_params
    try:
        return {trial: check(values | bracket.config(trial)) for bracket in found for trial in bracket.trials}
    except ConfigError as exc:
        raise ConfigError(f"{at}: {exc}") from None


def _check_size(tuning: Tuning, space: tuple[Dimension, ...], kinds: dict[str, type], n_stream: int,
                tuning_at: str, search_at: str) -> None:
    """ConfigError if the search plans more than :data:`~dolb.experiment.search.MAX_TRIALS`
    trials per configuration, counted before any is drawn: at the ``tuning`` (key path
    ``tuning_at``) for Hyperband's brackets, at the ``search`` (``search_at``) for a grid."""
    count = n_trials(tuning, list(space), kinds, n_stream)
    if count > MAX_TRIALS:
        at, fewer = (f"{tuning_at}.min_budget", "a larger min_budget or eta") if tuning.method == "hyperband" \
            else (search_at, "fewer steps or choices")
        raise ConfigError(f"{at}: {tuning.method} plans {count:,} trials per configuration, over the bound of "
                          f"{MAX_TRIALS:,} ({fewer})")


def _stream_length(tuning: Tuning, n_train: int, at: str) -> int:
    """Training examples a split leaves for tuning; ConfigError (at the key path ``at``)
    if a budget exceeds it."""
    n_stream = n_train
    if tuning.validation == "holdout":
        try:
            n_stream = n_train - validation_size(n_train, tuning.holdout)
        except ConfigError as exc:
            raise ConfigError(f"{at}.holdout: {exc}") from None
    for key, budget in zip(("min_budget", "max_budget"), tuning.budgets(n_stream)):
        if budget > n_stream:
            raise ConfigError(f"{at}.{key}: {budget} exceeds the {n_stream} training examples a split leaves "
                              "for tuning")
    low, high = tuning.budgets(n_stream)
    if low > high:
        raise ConfigError(f"{at}.min_budget: {low} examples exceed the max_budget's {high} on dataset of "
                          f"{n_stream} tuning examples")
    return n_stream


def trial_group(plan: TuningPlan, bracket: Bracket, trial: int, rung: int) -> CellGroup:
    """The cells of ``trial`` at ``rung`` of ``bracket``, one per split."""
    tuning = plan.tuning
    trial_spec = CellTrial(
        validation=tuning.validation,
        holdout=tuning.holdout if tuning.validation == "holdout" else None,
        seed=tuning.seed,
        bracket=bracket.index,
        trial=trial,
    )
    template = replace(
        plan.template,
        experiment=plan.experiment.name + TUNING_SUFFIX,
        test_fingerprint=None,  # never the test part
        params=plan.trial_params[trial],
        metrics=(tuning.metric,),
        conversions=(tuning.conversion,),
        tuning=trial_spec,
    )
    # the trial's state between rungs is named by its spec at no rung, without checkpoints
    state = spec_hash({k: v for k, v in template.canonical().items() if k != "checkpoints"})
    template = replace(template, checkpoints=(bracket.budgets[rung],), tuning=replace(
        trial_spec,
        state=state,
        rung=rung,
        budget=bracket.budgets[rung],
        budgets=tuple(bracket.budgets[: rung + 1]),  # the stream is learned in these pieces
        save=rung + 1 < len(bracket.keep),
    ))
    return make_group(plan.pipeline, plan.experiment, template, plan.parts, bracket.budgets[rung],
                      name=plan.experiment.name + TUNING_SUFFIX)


def tuned_group(plan: TuningPlan, trial: int) -> CellGroup:
    """The cells of the configuration of ``trial``, chosen by the tuning of ``plan`` (the
    caller runs those of the splits that chose it)."""
    template = replace(plan.template, params=plan.trial_params[trial],
                       tuned={"tuning": plan.tuning.summary(), "space": [vars(d) for d in plan.space]})
    return make_group(plan.pipeline, plan.experiment, template, plan.parts, plan.n_train)


__all__ = ["TUNING_SUFFIX", "TuningPlan", "trial_group", "tuned_group", "tuning_plans"]
