"""The tuning stage of a sweep: trials run rung by rung on the cluster, then the
configuration each split chose runs as the experiment's cell.

Nothing waits for a wave. Each tuned configuration, dataset, bracket and split is a
:class:`TuningGroup` that goes its own way: its rung's trials run (or are read, when
stored); once the last of them is known the group promotes the best of them from those
losses alone (:func:`dolb.experiment.search.promote`: ties to the lower trial number,
failed trials last) and its next rung is ready at once, while other groups are still at
their first. Once every bracket of a split has ended, the split chooses and its chosen
configuration's cell is ready too. The cells of the sweep that depend on no tuning run
beside them. A decision depends only on its own rung's losses, never on the order they
came in, so a tuning gives the same trials, promotions and choices on any number of
workers, and after a kill: a rung already stored is read, not run again.

The workers send each trial's validation loss back with their task's outcome
(:attr:`~dolb.execution.tasks.TaskOutcome.losses`): no rung reads the result store; only
a resumed run reads the losses of the trials it finds stored, once.

Every decision is kept in the result folder's ``tuning/<pipeline>.parquet``, one typed row
per trial, rung and split (see :func:`decisions_table`).
"""

from __future__ import annotations

import logging
import math
import numbers
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from dolb.evaluation.run_cell import rung_state
from dolb.execution.batches import Batch
from dolb.execution.compute import CellRunner
from dolb.execution.ready import ReadyCells
from dolb.execution.tasks import TaskOutcome
from dolb.experiment.cells import CellGroup, cell_id, format_params
from dolb.experiment.search import Bracket, best, promote
from dolb.experiment.tuned_cells import TUNING_SUFFIX, TuningPlan, trial_group, tuned_group
from dolb.results import query
from dolb.results.failed import failure_line
from dolb.results.states import CellStates
from dolb.results.store import ResultStore
from dolb.results.tuning_report import TUNING_FOLDER

logger = logging.getLogger(__name__)

Todo = list[tuple[CellGroup, np.ndarray]]

FAILURES_LOGGED = 10
"""Failed trials a run logs one by one (``dolb status`` lists them all)."""

CHOSEN, TRIAL, UNTUNED = 0, 1, 2
"""The ranks of ready cells: a chosen configuration's cell (the end of its split's
chain) first, then trials (the later rungs first), then the cells no tuning waits for."""


@dataclass
class Tuned:
    """What the tuning stage did and chose."""

    todo: Todo = field(default_factory=list)
    """The cells of the chosen configurations that ran (neither stored nor failed, unless
    failed ones were run again), one group per configuration."""
    decisions: list[dict[str, Any]] = field(default_factory=list)
    """One row per trial, rung and split."""
    n_cells: int = 0
    n_computed: int = 0
    n_failed: int = 0
    examples: int = 0
    n_untuned: int = 0
    """Splits of a tuned configuration where every trial of every bracket failed: no cell
    of theirs runs (a choice among failures would be a wrong result in silence)."""

    def counts(self) -> dict[str, int]:
        """What the run record keeps of the tuning: trial cells, computed, failed, the
        training examples the computed ones learned (continuing from their previous rung),
        and the splits left without a choice (:attr:`n_untuned`)."""
        return {"cells": self.n_cells, "computed": self.n_computed - self.n_failed, "failed": self.n_failed,
                "examples": self.examples, "untuned": self.n_untuned}


def run_tuning(plans: list[TuningPlan], store: ResultStore, runner: CellRunner, stored: set[str], failed: set[str],
               retry_failed: bool, untuned: Todo = ()) -> Tuned:
    """Run every plan's trials and the configurations each split chose, each cell as
    soon as what it depends on is known, with the cells ``untuned`` (which depend on
    no tuning) beside them; cells in ``stored`` are not run (a chosen configuration's
    cell in ``failed`` neither, unless ``retry_failed``). Return what the tuning did,
    its decisions and the chosen cells that ran."""
    states = CellStates(store) if runner.destination.keep_states else None
    with ThreadPoolExecutor(max_workers=1) as forgetting:  # the trials' states, removed beside the run
        run = TuningRun(plans, ReadyCells(runner.batch_examples, runner.n_workers), stored, failed, retry_failed,
                        lambda: trial_losses(store),
                        None if states is None else lambda keys: forgetting.submit(states.forget, keys))
        for group, indices in sorted(untuned, key=lambda item: -item[0].n_train):  # the longest first
            run.ready.add((UNTUNED,), group, indices)
        run.start()
        total = planned(plans)[0] + sum(plan.n_splits for plan in plans) + sum(len(i) for _, i in untuned)  # at most
        runner.run(run.ready, total, run.taken)
    return run.finish()


class TuningGroup:
    """One tuned configuration's bracket on one dataset and split: the rung it is at,
    the trials alive there and the losses known of them."""

    def __init__(self, index: int, plan: TuningPlan, bracket: Bracket, split: int) -> None:
        self.index, self.plan, self.bracket, self.split = index, plan, bracket, split
        self.rung = 0
        self.alive = list(bracket.trials)
        self.losses: dict[int, float] = {}

    @property
    def known(self) -> bool:
        """Whether the loss of every trial alive at its rung is known."""
        return len(self.losses) == len(self.alive)

    @property
    def last(self) -> bool:
        """Whether it is at its bracket's last rung."""
        return self.rung + 1 == len(self.bracket.keep)

    @property
    def every_trial_failed(self) -> bool:
        """Whether its rung has nothing to choose from (the group ends, its split may fail)."""
        return all(loss != loss for loss in self.losses.values())

    def promoted(self) -> list[int]:
        """The trials its rung promotes to the next, from the rung's losses alone (none
        at the last rung, or when every trial failed)."""
        if self.last or self.every_trial_failed:
            return []
        return promote(self.losses, self.bracket.keep[self.rung + 1])


class TuningRun:
    """The tuning's state: every group at its rung, the cells running, each split's
    brackets still open and the last rungs' losses; the cells ready to run go to
    ``ready``, the batch source the cluster takes them from.

    Parameters
    ----------
    plans : list of TuningPlan
        The tuned configurations.
    ready : ReadyCells
        Where cells ready to run go.
    stored, failed : set of str
        The cells stored with a result (read, not run), and those whose every attempt
        failed (a chosen configuration's runs again only with ``retry_failed``).
    retry_failed : bool
        Run the chosen configurations' failed cells again.
    read_losses : callable
        The stored trials' losses by cell id and metric (read once, when one is needed).
    forget : callable, optional
        Removes the saved states of the names it is given: those no rung will start
        from, as soon as a rung is decided (a rung's state once the next rung is done or
        when its trial is not promoted). None: the workers keep no states.
    """

    def __init__(self, plans: list[TuningPlan], ready: ReadyCells, stored: set[str], failed: set[str],
                 retry_failed: bool, read_losses: Callable[[], dict[tuple[str, str], float]],
                 forget: Callable[[list[str]], Any] | None = None) -> None:
        self.plans, self.ready, self.stored, self.failed = plans, ready, stored, failed
        self.retry_failed, self.read_losses, self.forget = retry_failed, read_losses, forget
        self.stored_losses: dict[tuple[str, str], float] | None = None
        self.tuned = Tuned()
        self.rows: list[tuple[tuple, dict[str, Any]]] = []  # (rung, plan, bracket, split, trial), decision row
        self.running: dict[str, tuple[TuningGroup, int]] = {}  # a trial cell's id -> its group and trial
        self.open_brackets: dict[tuple[int, int], int] = {}  # (plan, split) -> brackets not ended
        self.finals: dict[tuple[int, int], dict[int, float]] = {}  # (plan, split) -> last rungs' losses
        self.chosen: dict[tuple[int, int], int] = {}  # (plan, split) -> its trial
        self.groups: dict[tuple, CellGroup] = {}  # the cell groups made so far, by what makes them

    def start(self) -> None:
        """Open the first rung of every group."""
        for p, plan in enumerate(self.plans):
            for split in range(plan.n_splits):
                self.open_brackets[(p, split)] = len(plan.brackets)
                for bracket in plan.brackets:
                    self._open(TuningGroup(p, plan, bracket, split))

    def _trial_group(self, group: TuningGroup, trial: int) -> CellGroup:
        key = ("trial", group.index, group.bracket.index, trial, group.rung)
        if key not in self.groups:
            self.groups[key] = trial_group(group.plan, group.bracket, trial, group.rung)
        return self.groups[key]

    def _open(self, group: TuningGroup) -> None:
        """Make the cells of ``group``'s rung ready (those stored: their losses read);
        decide at once when every one was stored."""
        metric = group.plan.tuning.metric
        for trial in group.alive:
            cells = self._trial_group(group, trial)
            cell = cells.cell_id(group.split)
            self.tuned.n_cells += 1
            if cell in self.stored:
                if self.stored_losses is None:
                    self.stored_losses = self.read_losses()
                group.losses[trial] = self.stored_losses.get((cell, metric), math.nan)
            else:
                self.running[cell] = (group, trial)
                rank = (TRIAL, -group.rung, group.index, group.split, group.bracket.index, trial)
                self.ready.add(rank, cells, np.array([group.split], dtype=np.int64))
        if group.known:
            self._decide(group)

    def taken(self, batch: Batch, outcome: TaskOutcome) -> None:
        """Take a task's outcome: each trial's loss (NaN: it failed, and the first
        :data:`FAILURES_LOGGED` failures are logged with their error); decide the rungs
        whose last loss this was."""
        failures = dict(outcome.failures)
        for cells, indices in batch:
            for split in indices.tolist():
                cell = cells.cell_id(split)
                if cell not in self.running:
                    continue  # not a trial
                group, trial = self.running.pop(cell)
                self.tuned.n_computed += 1
                if cell in failures:
                    self._failed(cells, split, cell, failures[cell])
                budgets = cells.template.tuning.budgets
                self.tuned.examples += budgets[-1] - (budgets[-2] if len(budgets) > 1 else 0)
                group.losses[trial] = outcome.losses.get(cell, math.nan)
                if group.known:
                    self._decide(group)

    def _failed(self, cells: CellGroup, split: int, cell: str, error: str) -> None:
        """Count a failed trial; log it (learner, configuration, dataset, split, rung and
        error, on one line) while fewer than :data:`FAILURES_LOGGED` were."""
        self.tuned.n_failed += 1
        if self.tuned.n_failed <= FAILURES_LOGGED:
            row = cells.coordinates | {"cell_id": cell, "split": split, "error": error}
            logger.warning("tuning trial failed (it ranks last at its rung): %s", failure_line(row))
        elif self.tuned.n_failed == FAILURES_LOGGED + 1:
            logger.warning("more tuning trials failed, not logged one by one: `dolb status` of the result folder "
                           "lists them all")

    def _decide(self, group: TuningGroup) -> None:
        """Record the decisions of ``group``'s rung; open its next rung, or end it."""
        kept = group.promoted()
        for trial in group.alive:
            row = _decision(group.plan, self._trial_group(group, trial), group.split, group.losses[trial],
                            trial in kept)
            self.rows.append(((group.rung, group.index, group.bracket.index, group.split, trial), row))
        if self.forget is not None:
            self.forget(self._done_states(group, kept))
        if group.every_trial_failed:
            logger.warning("%s: split %d: every trial of bracket %d failed at rung %d", group.plan.label,
                           group.split, group.bracket.index, group.rung)
        elif kept:
            group.rung, group.alive, group.losses = group.rung + 1, kept, {}
            self._open(group)
            return
        else:
            self.finals.setdefault((group.index, group.split), {}).update(group.losses)
        self._end_bracket(group.index, group.split)

    def _done_states(self, group: TuningGroup, kept: list[int]) -> list[str]:
        """The states no rung of ``group`` will start from once its rung is decided: the
        previous rung's of its trials (this rung is done; were it run again, it would
        start anew, to the same bits) and this rung's of the trials not promoted."""
        done = []
        for trial in group.alive:
            state = cell_id(self._trial_group(group, trial).template.tuning.state, group.split)
            done += [rung_state(state, group.rung - 1)] if group.rung else []
            done += [rung_state(state, group.rung)] if not group.last and trial not in kept else []
        return done

    def _end_bracket(self, p: int, split: int) -> None:
        """One more bracket of ``split`` ended: when it was the last, the split chooses
        the best trial of its brackets' last rungs, and that configuration's cell is ready."""
        self.open_brackets[(p, split)] -= 1
        if self.open_brackets[(p, split)] or (p, split) not in self.finals:
            return
        plan, trial = self.plans[p], best(self.finals[(p, split)])
        self.chosen[(p, split)] = trial
        if ("chosen", p, trial) not in self.groups:
            self.groups[("chosen", p, trial)] = tuned_group(plan, trial)
        cells = self.groups[("chosen", p, trial)]
        cell = cells.cell_id(split)
        if cell not in self.stored and (self.retry_failed or cell not in self.failed):
            self.ready.add((CHOSEN, -cells.n_train, p, split), cells, np.array([split], dtype=np.int64))
            self.tuned.todo.append((cells, np.array([split], dtype=np.int64)))

    def finish(self) -> Tuned:
        """What the tuning did, once no cell is left to run: the decisions in the order of
        rung, plan, bracket, split and trial, each marked chosen or not."""
        if self.running:  # a trial that never told its loss would leave its rung undecided
            raise RuntimeError(f"the tuning ended with {len(self.running)} trials unreported")
        tuned = self.tuned
        for (_, p, _, split, trial), row in sorted(self.rows, key=lambda item: item[0]):
            row["chosen"] = self.chosen.get((p, split)) == trial
            tuned.decisions.append(row)
        tuned.n_untuned = sum(plan.n_splits for plan in self.plans) - len(self.chosen)
        tuned.todo = _merged(tuned.todo)
        return tuned


def _merged(todo: Todo) -> Todo:
    """One item per group, its splits in order."""
    merged: dict[str, tuple[CellGroup, list]] = {}
    for group, indices in todo:
        merged.setdefault(group.key, (group, []))[1].extend(indices.tolist())
    return [(group, np.asarray(sorted(splits), dtype=np.int64)) for group, splits in merged.values()]


def _decision(plan: TuningPlan, group: CellGroup, split: int, loss: float, promoted: bool) -> dict[str, Any]:
    t = group.template
    return {
        "plan": plan, "experiment": plan.experiment.name, "dataset": plan.dataset, "learner": t.learner,
        "configuration": format_params(plan.template.params, t.complexity_param), "tuned": plan.tuned_label,
        "conversion": plan.tuning.conversion if plan.tuning.validation == "holdout" else "online", "split": split,
        **{key: getattr(t.tuning, key) for key in ("bracket", "trial", "rung", "budget")},
        "params": format_params(t.params, t.complexity_param), "validation_loss": loss,
        "promoted": promoted, "chosen": False, "cell_id": group.cell_id(split),
        **{f"param_{name}": t.params[name] for name in sorted(d.name for d in plan.space)},
    }


def trial_losses(store: ResultStore) -> dict[tuple[str, str], float]:
    """Every stored value of a tuning trial (one conversion, one checkpoint each), by
    cell id and metric."""
    found = query.rows(store, "experiment LIKE ?", (f"%{TUNING_SUFFIX}",), columns=["cell_id", "metric", "value"])
    return dict(zip(zip(found["cell_id"], found["metric"]), found["value"]))


def planned(plans: list[TuningPlan]) -> tuple[int, int, int]:
    """The trial cells of ``plans`` (every rung of every bracket, every split), the
    training examples they learn (a promoted trial continues from its previous rung),
    and the rungs they take at most; the chosen configurations' cells are not counted."""
    n_cells = examples = rungs = 0
    for plan in plans:
        for bracket in plan.brackets:
            starts = (0, *bracket.budgets)
            for rung, kept in enumerate(bracket.keep):
                n_cells += kept * plan.n_splits
                examples += kept * plan.n_splits * (bracket.budgets[rung] - starts[rung])
            rungs = max(rungs, len(bracket.keep))
    return n_cells, examples, rungs


def first_wave(plans: list[TuningPlan]) -> Todo:
    """The cells of every plan's first rung (all splits): what a run's workers warm up."""
    return [(trial_group(plan, bracket, trial, 0), np.arange(plan.n_splits))
            for plan in plans for bracket in plan.brackets for trial in bracket.trials]


def write_decisions(store: ResultStore, pipeline: str, tuned: Tuned) -> None:
    """Keep the decisions in ``tuning/<pipeline>.parquet`` (replaced whole: they are the
    same each time the tuning is read or run again)."""
    store.write_table(f"{TUNING_FOLDER}/{pipeline}.parquet", decisions_table(tuned))


def decisions_table(tuned: Tuned) -> pa.Table:
    """The decisions as a typed table (``param_`` columns typed as the learners declare:
    a column is empty where its learner has no such parameter)."""
    rows = [{k: v for k, v in row.items() if k != "plan"} for row in tuned.decisions]
    frame = pd.DataFrame(rows)  # typed from the rows: the frame fills a missing value with NaN
    fields = [pa.field(name, _arrow_type([row[name] for row in rows if row.get(name) is not None]))
              for name in frame.columns]
    return pa.Table.from_pandas(frame, schema=pa.schema(fields), preserve_index=False)


def _arrow_type(values: list) -> pa.DataType:
    """The type of a column of Python (or NumPy) scalars: bool, whole number, number or text."""
    for kind, arrow in ((bool, pa.bool_()), (numbers.Integral, pa.int64()), (numbers.Real, pa.float64())):
        if values and all(isinstance(v, (kind, np.bool_) if kind is bool else kind) for v in values):
            return arrow
    return pa.string()


__all__ = ["Tuned", "decisions_table", "first_wave", "planned", "run_tuning", "trial_losses",
           "write_decisions"]
