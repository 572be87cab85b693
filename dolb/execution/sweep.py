"""The sweep: a pipeline's cells run on Dask; the workers store their own results.

The client only coordinates. It plans the cells as groups (one per configuration,
whatever the number of splits), asks the result store which cells exist, and submits
batches of cells (a bounded number at a time); the embedded cluster starts in the
background once there are cells to compute (a rerun that computes nothing starts none).
Each task runs its cells and writes its rows as one Parquet part into the result folder
when the workers can reach it, or sends them back as one Arrow table for the client to
append in large parts when they cannot. Datasets to generate or import are built as
tasks too, into a content-addressed cache outside the result folder. Every run appends a
record to the folder's history, with where its time went.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import socket
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from distributed import performance_report

from dolb.errors import ConfigError
from dolb.evaluation.saved_states import STATE_SAVES
from dolb.execution.arithmetic import pin_of
from dolb.execution.cluster import read_cluster_file
from dolb.execution.compute import CellRunner, gather_mode
from dolb.execution.data_place import DataPlace, place_data
from dolb.execution.datasets import cache_asked, data_cache, open_datasets
from dolb.execution.environment import fingerprint
from dolb.execution.lock import FolderLock, refuse_if_held, remove_uncommitted_parts
from dolb.execution.lost_workers import register_on_workers
from dolb.execution.phases import Phases
from dolb.execution.quiet import QuietWorker
from dolb.execution.run_end import compact_on_cluster, report_on_cluster
from dolb.execution.sweep_client import SweepCluster
from dolb.execution.sweep_summary import SweepSummary
from dolb.execution.tasks import Destination
from dolb.execution.tuning import Tuned, first_wave, run_tuning, write_decisions
from dolb.experiment.cells import CellGroup, cell_id, examples_of, expand_groups, group_ids, parameter_types
from dolb.experiment.pipeline import Pipeline, load_pipeline
from dolb.experiment.tuned_cells import TuningPlan, tuning_plans
from dolb.options import RunOptions
from dolb.results import query
from dolb.results.compaction import compact_after_run
from dolb.results.history import new_run_id, read_records, write_record
from dolb.results.page import write_run_page
from dolb.results.query import stored_cells
from dolb.results.report import write_reports
from dolb.results.states import CellStates
from dolb.results.store import ResultStore, result_schema

logger = logging.getLogger(__name__)


def plan_groups(pipeline: Pipeline, cache: Path | None = None) -> list[CellGroup]:
    """The pipeline's cell groups, building any missing dataset in this process."""
    return expand_groups(pipeline, open_datasets(pipeline, data_cache(cache)))


def check_owner(store: ResultStore, name: str) -> None:
    """ConfigError when the result folder holds runs of a pipeline other than ``name``."""
    others = sorted({record.get("pipeline") for record in read_records(store)} - {name})
    if others:
        raise ConfigError(
            f"{store.root}: holds the results of pipeline {others[0]!r}, not {name!r}: "
            "choose another --out, or --force to add this pipeline's results to it"
        )


def cells_to_run(
    groups: list[CellGroup], stored: set[str], failed: set[str], retry_failed: bool
) -> list[tuple[CellGroup, np.ndarray]]:
    """Each group with the split indices of its cells that are not stored (nor failed,
    unless ``retry_failed``); groups with nothing to do are left out. When nothing is
    to be skipped (a new result folder) every cell is to run, and no cell's id is
    computed: the client's planning is O(groups), not O(cells)."""
    if not stored and (retry_failed or not failed):
        return [(group, np.arange(group.n_splits, dtype=np.int64)) for group in groups if group.n_splits]
    todo = []
    for group in groups:
        ids = group_ids(group)
        keep = [i for i, cell in enumerate(ids) if cell not in stored and (retry_failed or cell not in failed)]
        if keep:
            todo.append((group, np.asarray(keep, dtype=np.int64)))
    return todo


def run_sweep(pipeline_path: str | Path, out_dir: str | Path, options: RunOptions | None = None, *,
              pipeline_text: str | None = None) -> SweepSummary:
    """Run every cell of a pipeline that is not stored yet, then write the reports.

    Parameters
    ----------
    pipeline_path : path
        The pipeline file.
    out_dir : path or fsspec URL
        The result folder (created if needed; reused to resume).
    options : RunOptions, optional
        Where and how to run (the options of ``dolb run``; default: their defaults).
    pipeline_text : str, optional
        The pipeline's text, read as if it were ``pipeline_path`` (to run a recorded
        pipeline again).

    A sweep goes in four steps: :func:`_plan` checks everything and finds the cells to
    compute, before anything is written; :func:`_start_record` takes the folder's lock
    and writes the run's record; :func:`_compute` runs the tuning and the cells on the
    cluster; :func:`_finish` writes the reports, the record's counts and the run page.
    """
    with contextlib.ExitStack() as held:  # the folder lock, held to the end of the run
        return _sweep(Path(pipeline_path), out_dir, options or RunOptions(), pipeline_text, held)


@dataclass
class _Plan:
    """What a sweep found to do, once everything is checked."""

    pipeline: Pipeline
    store: ResultStore
    cache: str | Path
    groups: list[CellGroup]
    plans: list[TuningPlan]
    stored: set[str]
    failed: set[str]
    todo: list[tuple[CellGroup, np.ndarray]]
    """The groups with the split indices of their cells to compute (the cells of the
    configurations a tuning chooses join them)."""

    @functools.cached_property
    def first_trials(self) -> list[tuple[CellGroup, np.ndarray]]:
        """The cells of every tuning's first rung (made once: the schema's parameter
        types and the workers' warm-up read them)."""
        return first_wave(self.plans)

    @property
    def has_work(self) -> bool:
        """Whether there is anything to compute (cells or a tuning)."""
        return bool(self.todo or self.plans)

    @property
    def n_cells(self) -> int:
        return sum(group.n_splits for group in self.groups) + sum(plan.n_splits for plan in self.plans)

    def n_failed_before(self, retry_failed: bool) -> int:
        """The pipeline's cells whose stored attempt failed and that are not run again
        (no cell's id is computed when none failed)."""
        if retry_failed or not self.failed:
            return 0
        return len(self.failed & {i for g in self.groups for i in group_ids(g)})


@dataclass
class _Computed:
    """What the computation did (nothing, when there was nothing to compute)."""

    mode: str = "none"
    client_cpu: float = 0.0
    report: str | None = None
    """The reports' text, when the workers drew them."""
    runner: CellRunner | None = None
    tuned: Tuned | None = None
    compacted: bool = False
    """Whether the workers compacted the result folder (:mod:`dolb.execution.run_end`)."""
    compaction: str | None = None
    """Why the compaction at the run's end failed (None: it did not)."""

    @property
    def n_failed(self) -> int:
        """Cells of the pipeline that failed (a tuning's trials are counted apart)."""
        return 0 if self.runner is None else self.runner.n_failed - (self.tuned.n_failed if self.tuned else 0)


def _sweep(pipeline_path: Path, out_dir, options: RunOptions, pipeline_text: str | None,
           held: contextlib.ExitStack) -> SweepSummary:
    """The body of :func:`run_sweep`; the folder lock entered into ``held`` is released
    when it returns or raises."""
    started = time.perf_counter()
    phases = Phases()
    begun = time.gmtime()
    run_id = new_run_id(begun)
    cluster = SweepCluster(phases, options)
    computed = _Computed()
    try:
        plan = _plan(pipeline_path, out_dir, options, pipeline_text, cluster, phases)
        client = cluster.client() if plan.has_work else None  # a scheduler out of reach: nothing written
        record = _record(run_id, begun, pipeline_path, pipeline_text, plan, options)
        schema = result_schema(parameter_types(plan.groups + [group for group, _ in plan.first_trials]),
                               trials=bool(plan.plans))
        held.enter_context(FolderLock(plan.store, run_id))  # the first write: everything is checked
        _start_record(plan, record, schema, phases)
        if plan.has_work:
            computed = _compute(client, cluster, plan, schema, run_id, options, phases)
    finally:
        with phases("cluster"):  # closing it
            cluster.close()
    return _finish(plan, record, computed, options, phases, started, cluster.workers)


def _plan(pipeline_path: Path, out_dir, options: RunOptions, pipeline_text: str | None, cluster: SweepCluster,
          phases: Phases) -> _Plan:
    """Read and check the pipeline, open (or build) its datasets, and find the cells to
    compute; start the embedded cluster once all is checked and there is something to
    compute (into an empty folder, while the cells are listed)."""
    with phases("plan"):
        pipeline = load_pipeline(pipeline_path, pipeline_text, options.data)
        cluster.pin = pin_of(pipeline.arithmetic)
        if options.cluster is not None:
            read_cluster_file(options.cluster)  # checked before any dataset is built
        cache = data_cache(options.data_cache)
        store = ResultStore(out_dir)
        store.check_creatable()
        store.check_format()  # a store of another format is refused before any dataset is built
    with phases("data"):  # a dataset built on the cluster has its kernels warmed there as soon as it is
        place = DataPlace(cache) if cluster.embedded else place_data(cluster.client, pipeline, cache, store.root,
                                                                     cache_asked(options.data_cache))
        cache = place.cache
        datasets = open_datasets(pipeline, cache, builder=cluster.client, built=cluster.warm_built(pipeline),
                                 imports_here=place.imports_here)
    with phases("plan"):
        groups = expand_groups(pipeline, datasets)  # the last check of the pipeline
        plans = tuning_plans(pipeline, datasets)
        if not options.force:
            check_owner(store, pipeline.name)
        refuse_if_held(store)
    if not store.exists():  # every cell is to compute: the embedded cluster starts while their ids are listed
        cluster.start()
    with phases("plan"):
        stored, failed = stored_cells(store)
        todo = cells_to_run(groups, stored, failed, options.retry_failed)
    plan = _Plan(pipeline, store, cache, groups, plans, stored, failed, todo)
    if plan.has_work:  # a rerun that finds every cell stored starts no cluster
        cluster.start(todo + plan.first_trials)  # their kernels warmed as soon as the workers are up
    n_todo = sum(len(indices) for _, indices in todo)
    logger.info("%s: %d cells, %d stored, %d to compute%s; results in %s", pipeline.name, plan.n_cells,
                plan.n_cells - n_todo - sum(p.n_splits for p in plans), n_todo, " and a tuning" if plans else "",
                store.root)
    return plan


def _record(run_id: str, begun: time.struct_time, pipeline_path: Path, pipeline_text: str | None, plan: _Plan,
            options: RunOptions) -> dict:
    """The run's record as it starts (:func:`_finish` adds what the run did)."""
    return {
        "run_id": run_id,
        "pipeline": plan.pipeline.name,
        "pipeline_path": str(pipeline_path.absolute()),
        "pipeline_text": pipeline_text or pipeline_path.read_text(encoding="utf-8"),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", begun),
        "ended": None,
        "options": options.recorded() | {"data_cache": str(plan.cache)},
        "groups": [[group.key, group.n_splits] for group in plan.groups],
        "client": {"host": socket.gethostname(), **fingerprint()},
    }


def _start_record(plan: _Plan, record: dict, schema, phases: Phases) -> None:
    """Write the run's record and pipeline, the result schema first when cells will be
    stored (readers then see its columns before any part of this run)."""
    if plan.has_work:
        with phases("write"):
            plan.store.extend_schema(schema)
    write_record(plan.store, record)
    plan.store.write_text("pipeline.toml", record["pipeline_text"])


def _compute(client, cluster: SweepCluster, plan: _Plan, schema, run_id: str, options: RunOptions,
             phases: Phases) -> _Computed:
    """Run the tuning, then the cells to compute (the chosen configurations' among
    them), on the cluster; the workers draw the reports when they can reach the folder."""
    store = plan.store
    with phases("cluster"):
        register_on_workers(client, QuietWorker())  # workers started without dolb's quiet settings
        mode = gather_mode(client, store, options.gather)
        cluster.warmed()
    destination = Destination(schema=schema, run_id=run_id, store=store.root if mode == "workers" else None,
                              keep_states=mode == "workers")
    n_workers = max(1, sum(client.nthreads().values()))  # slots: a worker of k threads runs k tasks at once
    logger.info("%d worker slots; result parts written by the %s", n_workers, mode)
    runner = CellRunner(client, destination, store, plan.pipeline.batch_examples, n_workers, options.progress, phases)
    computed = _Computed(mode=mode, runner=runner)
    recording = (performance_report(filename=str(options.performance_report), mode="inline")  # no CDN: opens offline
                 if options.performance_report else contextlib.nullcontext())
    cpu_started = time.process_time()
    with recording:
        if plan.plans:  # the tuning, the cells it chooses and every other cell, each as soon as it can
            computed.tuned = run_tuning(plan.plans, store, runner, plan.stored, plan.failed, options.retry_failed,
                                        plan.todo)
            write_decisions(store, plan.pipeline.name, computed.tuned)
            plan.todo += computed.tuned.todo
        elif plan.todo:
            runner(plan.todo)
    computed.client_cpu = time.process_time() - cpu_started
    if mode == "workers":  # they can reach the folder: they compact it and draw the reports, in parallel
        with phases("write"):
            computed.compaction = compact_on_cluster(client, store, run_id)
        computed.compacted = True
        computed.report = report_on_cluster(client, plan.pipeline, store, phases)
    return computed


def _finish(plan: _Plan, record: dict, computed: _Computed, options: RunOptions, phases: Phases, started: float,
            workers: dict) -> SweepSummary:
    """Tidy the saved states, write the reports (unless the workers did), the record's
    counts and timings, and the run page; return the run's summary."""
    store = plan.store
    _tidy_states(store)
    remove_uncommitted_parts(store)
    if computed.runner is not None and not computed.compacted:
        with phases("write"):
            computed.compaction = compact_after_run(store, record["run_id"])
    if computed.compaction:
        logger.warning("%s", computed.compaction)
    n_cells, n_todo, n_failed = plan.n_cells, sum(len(indices) for _, indices in plan.todo), computed.n_failed
    n_untuned = 0 if computed.tuned is None else computed.tuned.n_untuned  # neither stored nor run
    saves = {} if computed.runner is None else computed.runner.saves
    report = computed.report
    if report is None and store.exists():
        with phases("aggregate"):
            summary = query.summary(store)
        with phases("reports"):
            report = write_reports(plan.pipeline.reports, store, summary)
    seconds = time.perf_counter() - started
    record |= {
        "ended": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "seconds": round(seconds, 3),
        "counts": {"cells": n_cells, "cached": n_cells - n_todo - n_untuned, "computed": n_todo - n_failed,
                   "failed": n_failed + n_untuned},
        "examples": examples_of(plan.todo),
        "gather": computed.mode,
        "tasks": 0 if computed.runner is None else computed.runner.n_tasks,
        "timings": phases.rounded(),
        "client_cpu_seconds": round(computed.client_cpu, 3),
        "state_saves": {key: round(saves.get(key, 0), 3) for key in STATE_SAVES},
        **({} if computed.tuned is None else {"tuning": computed.tuned.counts()}),
        "workers": workers,
    }
    write_record(store, record)
    if store.exists():  # its page lists the failed cells, trials too
        write_run_page(store, plan.pipeline.reports, record, plan.pipeline.description,
                       failures=bool(plan.failed) or (computed.runner is not None and computed.runner.n_failed > 0))
    report = "No results stored." if report is None else report
    return SweepSummary(n_cells, n_cells - n_todo - n_untuned, n_todo - n_failed, n_failed, seconds, report,
                        record["run_id"], phases.rounded(), computed.mode, plan.n_failed_before(options.retry_failed),
                        {} if computed.tuned is None else computed.tuned.counts())


def _tidy_states(store: ResultStore) -> None:
    """Remove the saved states that no cell will resume from: of cells that are not in
    the last plan of any pipeline run here (their pipeline changed), and whatever saves
    stopped midway left. (A cell that is done removed its own.)"""
    states = CellStates(store)
    if not states.files():
        return
    latest = {record["pipeline"]: record for record in read_records(store)}
    states.keep_only({cell_id(key, index) for record in latest.values()
                      for key, count in record.get("groups", []) for index in range(count)})


__all__ = ["SweepSummary", "cells_to_run", "plan_groups", "run_sweep"]
