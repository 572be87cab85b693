"""The tuning stage of a sweep: trials run rung by rung on the cluster, then the
configuration each split chose runs as the experiment's cell.

Rung ``r`` of every tuned configuration, dataset, bracket and split runs as one wave of
cells (the parallelism is theirs: trials × splits × learners × datasets); once the wave
is stored, each split promotes the best of its trials from the stored losses alone
(:func:`dolb.experiment.search.promote`: ties to the lower trial number), so a tuning
gives the same trials, promotions and choices on any number of workers, and after a
kill: a rung already stored is read, not run again.

Every decision is kept in the result folder's ``tuning/<pipeline>.parquet``, one typed row
per trial, rung and split (see :func:`decisions_table`).
"""

from __future__ import annotations

import logging
import numbers
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from dolb.experiment.cells import CellGroup, format_params
from dolb.experiment.search import best, promote
from dolb.experiment.tuned_cells import TUNING_SUFFIX, TuningPlan, trial_group, tuned_group
from dolb.results import query
from dolb.results.store import ResultStore
from dolb.results.tuning_report import TUNING_FOLDER

logger = logging.getLogger(__name__)

Todo = list[tuple[CellGroup, np.ndarray]]


@dataclass
class Tuned:
    """What the tuning stage did and chose."""

    todo: Todo = field(default_factory=list)
    """The cells of the chosen configurations (every split's; the caller skips those stored)."""
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

    def cells_to_run(self, stored: set[str], failed: set[str], retry_failed: bool) -> Todo:
        """The chosen configurations' cells not stored yet (nor failed, unless
        ``retry_failed``)."""
        todo = []
        for group, splits in self.todo:
            ids = [group.cell_id(i) for i in splits]
            keep = [i for i, cell in zip(splits, ids) if cell not in stored and (retry_failed or cell not in failed)]
            if keep:
                todo.append((group, np.asarray(keep, dtype=np.int64)))
        return todo


def run_tuning(plans: list[TuningPlan], store: ResultStore, compute: Callable[[Todo], int],
               stored: set[str]) -> Tuned:
    """Run every plan's trials, wave by wave (``compute`` runs a wave's cells that are
    not in ``stored`` and returns how many failed); return the chosen cells and the
    decisions."""
    tuned = Tuned()
    alive = {(p, b.index, i): list(b.trials) for p, plan in enumerate(plans) for b in plan.brackets
             for i in range(plan.n_splits)}
    finals: dict[tuple[int, int], dict[int, float]] = {}
    rung = 0
    while alive:
        wave = _wave(plans, alive, rung)
        todo = [(group, np.asarray([i for i in indices if group.cell_id(i) not in stored], dtype=np.int64))
                for group, indices in wave.values()]
        todo = [(group, indices) for group, indices in todo if len(indices)]
        tuned.n_cells += sum(len(indices) for _, indices in wave.values())
        if todo:
            tuned.n_failed += compute(todo)
            tuned.n_computed += sum(len(indices) for _, indices in todo)
            tuned.examples += sum(_learned(group) * len(indices) for group, indices in todo)
            stored |= {group.cell_id(int(i)) for group, indices in todo for i in indices}  # run: not again
        losses = trial_losses(store)
        alive = _promote(plans, alive, wave, losses, rung, tuned, finals)
        rung += 1
    _choose(plans, finals, tuned)
    tuned.n_untuned = sum(plan.n_splits for plan in plans) - len(finals)
    return tuned


def _learned(group: CellGroup) -> int:
    """Training examples a trial's rung learns: from the previous rung's budget on."""
    budgets = group.template.tuning.budgets
    return budgets[-1] - (budgets[-2] if len(budgets) > 1 else 0)


def _wave(plans: list[TuningPlan], alive: dict, rung: int) -> dict[tuple[int, int, int], tuple[CellGroup, list[int]]]:
    """The cells of ``rung``: per plan, bracket and trial, the splits where it is alive."""
    wave = {}
    for (p, b, i), trials in sorted(alive.items()):
        bracket = plans[p].brackets[b]
        for trial in trials:
            if (p, b, trial) not in wave:
                wave[(p, b, trial)] = (trial_group(plans[p], bracket, trial, rung), [])
            wave[(p, b, trial)][1].append(i)
    return wave


def _promote(plans, alive: dict, wave: dict, losses: dict[tuple[str, str], float], rung: int, tuned: Tuned,
             finals: dict) -> dict:
    """The trials alive at the next rung, per plan, bracket and split; the decisions of
    this rung added to ``tuned``; each bracket's last losses kept in ``finals``."""
    promoted = {}
    for (p, b, i), trials in sorted(alive.items()):
        plan, bracket = plans[p], plans[p].brackets[b]
        metric = plan.tuning.metric
        found = {t: losses.get((wave[(p, b, t)][0].cell_id(i), metric), float("nan")) for t in trials}
        more = rung + 1 < len(bracket.keep)
        every_trial_failed = all(loss != loss for loss in found.values())
        kept = promote(found, bracket.keep[rung + 1]) if more and not every_trial_failed else []
        if every_trial_failed:  # nothing to choose from: the bracket ends here, its split may fail
            logger.warning("%s: split %d: every trial of bracket %d failed at rung %d", plan.label, i, b, rung)
        elif more:
            promoted[(p, b, i)] = kept
        else:
            finals.setdefault((p, i), {}).update(found)
        for trial in trials:
            group = wave[(p, b, trial)][0]
            tuned.decisions.append(_decision(plan, group, i, found[trial], trial in kept))
    return promoted


def _choose(plans: list[TuningPlan], finals: dict[tuple[int, int], dict[int, float]], tuned: Tuned) -> None:
    """The trial each plan's split chose (the best of its brackets' last rungs), marked
    in the decisions; the cells of the chosen configurations added to the todo, one
    group per configuration with the splits that chose it."""
    chosen, groups = set(), {}
    for (p, split), found in sorted(finals.items()):
        plan, trial = plans[p], best(found)
        chosen.add((id(plan), split, trial))
        group = tuned_group(plan, trial)
        groups.setdefault(group.key, (group, []))[1].append(split)
    for row in tuned.decisions:
        row["chosen"] = (id(row["plan"]), row["split"], row["trial"]) in chosen
    tuned.todo.extend(groups.values())


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
    and the waves they take; the chosen configurations' cells are not counted."""
    n_cells = examples = waves = 0
    for plan in plans:
        for bracket in plan.brackets:
            starts = (0, *bracket.budgets)
            for rung, kept in enumerate(bracket.keep):
                n_cells += kept * plan.n_splits
                examples += kept * plan.n_splits * (bracket.budgets[rung] - starts[rung])
            waves = max(waves, len(bracket.keep))
    return n_cells, examples, waves


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
