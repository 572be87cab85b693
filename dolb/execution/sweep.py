"""The sweep: a pipeline's cells run on Dask; the workers store their own results.

The client only coordinates. It plans the cells as groups (one per configuration,
whatever the number of splits), asks the result store which cells exist, and submits
batches of cells (a bounded number at a time); the embedded cluster starts in the
background once the pipeline is checked, while the client scans the result folder.
Each task runs its cells and writes its rows as one Parquet part into the result folder
when the workers can reach it, or sends them back as one Arrow table for the client to
append in large parts when they cannot. Datasets to generate or import are built as
tasks too, into a content-addressed cache outside the result folder. Every run appends a
record to the folder's history, with where its time went.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from distributed import performance_report, wait

from dolb.errors import ConfigError
from dolb.evaluation.saved_states import STATE_SAVES
from dolb.execution.arithmetic import pin_of
from dolb.execution.cluster import read_cluster_file
from dolb.execution.compute import CellRunner, gather_mode, warm_up_samples
from dolb.execution.datasets import data_cache, open_datasets
from dolb.execution.environment import fingerprint
from dolb.execution.lock import FolderLock, refuse_if_held
from dolb.execution.lost_workers import register_on_workers
from dolb.execution.phases import Phases
from dolb.execution.sweep_client import SweepCluster
from dolb.execution.tasks import Destination, KernelWarmUp
from dolb.execution.tuning import first_wave, run_tuning, write_decisions
from dolb.experiment.cells import CellGroup, cell_id, examples_of, expand_groups, group_ids, parameter_types
from dolb.experiment.pipeline import Pipeline, load_pipeline
from dolb.experiment.tuned_cells import tuning_plans
from dolb.results import query
from dolb.results.history import new_run_id, read_records, write_record
from dolb.results.page import write_run_page
from dolb.results.query import stored_cells
from dolb.results.report import render_report, reports_text, write_reports, write_summary
from dolb.results.states import CellStates
from dolb.results.store import ResultStore, result_schema

logger = logging.getLogger(__name__)

GATHER_MODES = ("auto", "workers", "client")
"""Who writes the result parts: the workers when they can reach the folder (``auto``,
checked at start), always the workers, or always the client."""


@dataclass
class SweepSummary:
    """What one ``dolb run`` did."""

    n_cells: int
    n_cached: int
    n_computed: int
    n_failed: int
    seconds: float
    report: str
    run_id: str = ""
    timings: dict[str, float] = field(default_factory=dict)
    gather: str = ""
    n_failed_before: int = 0
    """Cells of the pipeline whose stored attempt failed in an earlier run and that were
    not run again (``retry_failed`` off): they count among ``n_cached``."""

    @property
    def ok(self) -> bool:
        """Whether every cell of the pipeline is stored with a result (none failed, now
        or before)."""
        return self.n_failed == 0 and self.n_failed_before == 0

    def counts_line(self) -> str:
        """What the run did, on one line."""
        before = ""
        if self.n_failed_before:
            before = f" ({self.n_failed_before} failed in an earlier run: --retry-failed runs them again)"
        return (
            f"{self.n_cells} cells: {self.n_cached} already stored, {self.n_computed} computed, "
            f"{self.n_failed + self.n_failed_before} failed{before}"
        )

    def time_line(self) -> str:
        """Where the time went, on one line."""
        return "time: " + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in self.timings.items())


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
    unless ``retry_failed``); groups with nothing to do are left out."""
    todo = []
    for group in groups:
        ids = group_ids(group)
        keep = [i for i, cell in enumerate(ids) if cell not in stored and (retry_failed or cell not in failed)]
        if keep:
            todo.append((group, np.asarray(keep, dtype=np.int64)))
    return todo


def run_sweep(
    pipeline_path: str | Path,
    out_dir: str | Path,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    cluster_file: str | Path | None = None,
    dashboard: bool = False,
    retry_failed: bool = False,
    progress: bool = True,
    report_file: str | Path | None = None,
    gather: str = "auto",
    data_dir: str | Path | None = None,
    pipeline_text: str | None = None,
    force: bool = False,
) -> SweepSummary:
    """Run every cell of a pipeline that is not stored yet, then write the reports.

    Parameters
    ----------
    pipeline_path : path
        The pipeline file.
    out_dir : path or fsspec URL
        The result folder (created if needed; reused to resume).
    workers, scheduler, cluster_file, dashboard
        Where to run, and whether the embedded cluster serves its dashboard; see
        :func:`dolb.execution.cluster.connect`.
    retry_failed : bool
        Run again the cells whose last attempt failed (by default they stay failed).
    progress : bool
        Show a progress bar on standard error.
    report_file : path, optional
        Where to save Dask's HTML performance report of the computation (one
        self-contained file: its scripts are inside, it opens offline).
    gather : {"auto", "workers", "client"}
        Who writes the result parts (see :data:`GATHER_MODES`).
    data_dir : path, optional
        The data cache (see :func:`dolb.execution.datasets.data_cache`).
    pipeline_text : str, optional
        The pipeline's text, read as if it were ``pipeline_path`` (to run a recorded
        pipeline again).
    force : bool
        Add to a result folder that holds another pipeline's results (refused by
        default: its reports and history would mix two studies).
    """
    with contextlib.ExitStack() as held:  # the folder lock, held to the end of the run
        return _sweep(
            pipeline_path, out_dir, held, workers=workers, scheduler=scheduler, cluster_file=cluster_file,
            dashboard=dashboard, retry_failed=retry_failed, progress=progress, report_file=report_file, gather=gather,
            data_dir=data_dir, pipeline_text=pipeline_text, force=force,
        )


def _sweep(pipeline_path, out_dir, held: contextlib.ExitStack, *, workers, scheduler, cluster_file, dashboard,
           retry_failed, progress, report_file, gather, data_dir, pipeline_text, force) -> SweepSummary:
    """The body of :func:`run_sweep`; the folder lock entered into ``held`` is released
    when it returns or raises."""
    if gather not in GATHER_MODES:
        raise ConfigError(f"--gather: expected one of {', '.join(GATHER_MODES)}, got {gather!r}")
    started = time.perf_counter()
    phases = Phases()
    begun = time.gmtime()
    run_id = new_run_id(begun)
    cluster = SweepCluster(phases, workers=workers, scheduler=scheduler, cluster_file=cluster_file,
                            dashboard=dashboard)
    try:
        with phases("plan"):
            pipeline = load_pipeline(pipeline_path, pipeline_text)
            cluster.pin = pin_of(pipeline.arithmetic)
            if cluster_file is not None:
                read_cluster_file(cluster_file)  # checked before any dataset is built
            cache = data_cache(data_dir)
            store = ResultStore(out_dir)
            store.check_creatable()
        with phases("data"):
            datasets = open_datasets(pipeline, cache, builder=cluster.client)
        with phases("plan"):
            groups = expand_groups(pipeline, datasets)  # the last check of the pipeline
            plans = tuning_plans(pipeline, datasets)
            if not force:
                check_owner(store, pipeline.name)
            refuse_if_held(store)
        cluster.start()  # everything is checked: the embedded cluster starts while the client scans the folder
        with phases("plan"):
            stored, failed = stored_cells(store)
            todo = cells_to_run(groups, stored, failed, retry_failed)
        n_cells = sum(group.n_splits for group in groups) + sum(plan.n_splits for plan in plans)
        n_failed_before = 0 if retry_failed else len(failed & {i for g in groups for i in group_ids(g)})
        logger.info("%s: %d cells, %d to compute; results in %s", pipeline.name, n_cells,
                    sum(len(indices) for _, indices in todo), store.root)
        client = cluster.client() if todo or plans else None  # a scheduler out of reach: nothing written
        record = {
            "run_id": run_id,
            "pipeline": pipeline.name,
            "pipeline_path": str(Path(pipeline_path).absolute()),
            "pipeline_text": pipeline_text or Path(pipeline_path).read_text(encoding="utf-8"),
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", begun),
            "ended": None,
            "options": {"workers": workers, "scheduler": scheduler,
                        "cluster_file": None if cluster_file is None else str(cluster_file),
                        "retry_failed": retry_failed, "gather": gather, "data_cache": str(cache)},
            "groups": [[group.key, group.n_splits] for group in groups],
            "client": {"host": socket.gethostname(), **fingerprint()},
        }
        first_trials = first_wave(plans)
        schema = result_schema(parameter_types(groups + [group for group, _ in first_trials]), trials=bool(plans))
        held.enter_context(FolderLock(store, run_id))  # the first write: everything is checked
        if todo or plans:
            with phases("write"):  # before any part of this run: readers see its columns
                store.extend_schema(schema)
        write_record(store, record)
        store.write_text("pipeline.toml", record["pipeline_text"])
        mode, client_cpu, report, runner, tuned = "none", 0.0, None, None, None
        if todo or plans:
            with phases("cluster"):
                register_on_workers(client, KernelWarmUp(warm_up_samples(todo + first_trials)))
                mode = gather_mode(client, store, gather)
            destination = Destination(
                schema=schema,
                run_id=run_id,
                store=store.root if mode == "workers" else None,
                keep_states=mode == "workers",
            )
            n_workers = max(1, len(cluster.workers))
            logger.info("%d workers; result parts written by the %s", n_workers, mode)
            runner = CellRunner(client, destination, store, pipeline.batch_examples, n_workers, progress, phases)
            recording = (performance_report(filename=str(report_file), mode="inline")  # no CDN: opens offline
                         if report_file else contextlib.nullcontext())
            cpu_started = time.process_time()
            with recording:
                if plans:
                    tuned = run_tuning(plans, store, runner, stored)
                    write_decisions(store, pipeline.name, tuned)
                    todo += tuned.cells_to_run(stored, failed, retry_failed)
                if todo:
                    runner(todo)
            client_cpu = time.process_time() - cpu_started
            if mode == "workers":  # they can reach the folder: they draw the reports, in parallel
                report = _report_on_cluster(client, pipeline, store, phases)
    finally:
        with phases("cluster"):  # closing it
            cluster.close()
    _tidy_states(store)
    n_todo = sum(len(indices) for _, indices in todo)
    n_failed = 0 if runner is None else runner.n_failed - (tuned.n_failed if tuned else 0)
    saves = {} if runner is None else runner.saves
    if report is None and store.exists():
        with phases("aggregate"):
            summary = query.summary(store)
        with phases("reports"):
            report = write_reports(pipeline.reports, store, summary)
    seconds = time.perf_counter() - started
    record |= {
        "ended": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "seconds": round(seconds, 3),
        "counts": {"cells": n_cells, "cached": n_cells - n_todo, "computed": n_todo - n_failed, "failed": n_failed},
        "examples": examples_of(todo),
        "gather": mode,
        "tasks": 0 if runner is None else runner.n_tasks,
        "timings": phases.rounded(),
        "client_cpu_seconds": round(client_cpu, 3),
        "state_saves": {key: round(saves.get(key, 0), 3) for key in STATE_SAVES},
        **({} if tuned is None else {"tuning": tuned.counts()}),
        "workers": cluster.workers,
    }
    write_record(store, record)
    if store.exists():
        write_run_page(store, pipeline.reports, record, pipeline.description, failures=bool(failed) or n_failed > 0)
    report = "No results stored." if report is None else report
    return SweepSummary(n_cells, n_cells - n_todo, n_todo - n_failed, n_failed, seconds, report,
                        run_id, phases.rounded(), mode, n_failed_before)


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


def _report_on_cluster(client, pipeline: Pipeline, store: ResultStore, phases: Phases) -> str:
    """Summarise the store and draw every report as tasks: the summary once, then each
    report (and ``summary.csv``) in parallel; the client receives only their text. The
    summary is copied to every worker first: held by one, it would draw all the reports
    there, the scheduler placing tasks where their input is."""
    with phases("aggregate"):
        summary = client.submit(query.summary, store, pure=False)
        wait([summary])
        if len(pipeline.reports) > 1:
            client.replicate([summary])
    with phases("reports"):
        written = client.submit(write_summary, store, summary, pure=False)
        texts = [client.submit(render_report, pipeline.reports, i, store, summary, pure=False)
                 for i in range(len(pipeline.reports))]
        client.gather([written])
        return reports_text(client.gather(texts), store)


__all__ = ["SweepSummary", "cells_to_run", "plan_groups", "run_sweep"]
