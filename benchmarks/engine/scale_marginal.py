"""The client's marginal cost per cell in ``python -m benchmarks scale``: what one more cell
costs the ``dolb run`` process, apart from what a run costs whatever its size.

A run's client CPU is a fixed part (the interpreter and imports, planning, the cluster's
start and stop, the reports and the run page, the event loop's timers) plus a part that
grows with the cells (their ids, their batches and tasks, their outcomes and manifests).
Divided by the cells of one run, the fixed part dominates a run of a few hundred long
cells: the record's "client µs per cell" of such a run says little of what a larger
sweep costs. So each workload also runs at a larger size (:func:`larger_text`: every
split count and generated sequence count multiplied by :func:`factor_for`, cells of the
same kind and cost, at least :data:`MIN_ADDED` more), and the *marginal* cost per cell
is the difference of the medians of the two sizes over the cells added
(:func:`marginal`); the fixed part is what is left of the smaller run.

How it measures and what it found: ``docs/design/benchmarks.md`` (scale).
"""

from __future__ import annotations

import math
import re
import statistics
from pathlib import Path
from typing import Any

AMDAHL_WORKERS = (16, 64)
"""Cluster sizes the speed-up is predicted for."""
MIN_ADDED = 1_000
"""The larger run has at least this many cells more than the workload: the client's
CPU varies by 10-20 ms from run to run, 10-20 µs a cell over 1,000 cells added."""
WORKERS = 1
"""The workers of the runs the marginal cost is measured on (the client then has a
core of its own on 2 cores)."""
IDLE_SECONDS = 5.0
"""How long each run's idle client is measured (:data:`~benchmarks.engine.scale_runs.IDLE_PROBE`).
Its timers tick about once a second (the quiet settings of :mod:`dolb.execution.quiet`),
so a probe of 1 s caught one tick or two: its rate varied by ±20 %."""
COUNTS = re.compile(r"\b((?:count|n_sequences)\s*=\s*)(\d+)")
"""A split's count or a generated dataset's sequences, in a pipeline's text."""
WINDOWS = {"client_marginal_us": "client_cpu", "client_marginal_compute_us": "compute_cpu",
           "client_marginal_main_us": "main_cpu"}
"""The marginal figure of each window (see the module) -> the run's CPU seconds in it."""


def factor_for(cells: int) -> int:
    """How many times the cells of a workload of ``cells`` cells the larger run has: 2,
    or more to add at least :data:`MIN_ADDED` cells.

    >>> factor_for(20_000), factor_for(297), factor_for(120)
    (2, 5, 10)
    """
    return max(2, 1 + math.ceil(MIN_ADDED / cells))


def larger_text(text: str, factor: int) -> str:
    """A pipeline's text with ``factor`` times the cells: every split ``count`` and
    generated ``n_sequences`` multiplied (cells of the same kind, so of the same cost).

    >>> larger_text('split = { scheme = "sequences", count = 500, length = 150 }\\n'
    ...             'params = { n_sequences = 1000, length = 150 }', 2)
    'split = { scheme = "sequences", count = 1000, length = 150 }\\nparams = { n_sequences = 2000, length = 150 }'
    """
    return COUNTS.sub(lambda m: f"{m.group(1)}{int(m.group(2)) * factor}", text)


def write_larger(pipeline: Path, folder: Path, factor: int) -> Path:
    """Write :func:`larger_text` of ``pipeline`` into ``folder``; return its path
    (relative data paths of a pipeline under ``pipelines/`` are made absolute)."""
    text = pipeline.read_text(encoding="utf-8")
    text = re.sub(r'"(\.\.?/[^"]*)"', lambda m: f'"{(pipeline.parent / m.group(1)).resolve()}"', text)
    path = folder / f"{pipeline.stem}-x{factor}.toml"
    path.write_text(larger_text(text, factor), encoding="utf-8")
    return path


def amdahl(share: float, workers: int) -> float:
    """Amdahl's predicted speed-up on ``workers`` workers with serial fraction ``share``.

    Examples
    --------
    >>> round(amdahl(0.01, 64), 1)
    39.3
    """
    return 1 / (share + (1 - share) / workers)


def _median(runs: list[dict[str, Any]], key: str) -> float | None:
    values = [run[key] for run in runs if run.get(key) is not None]
    return statistics.median(values) if values else None


def marginal(small: list[dict[str, Any]], large: list[dict[str, Any]], worker_us: float | None) -> dict[str, Any]:
    """The marginal client CPU per cell of each window, the fixed part and Amdahl's law
    from the marginal share.

    Parameters
    ----------
    small, large : list of dict
        :func:`~benchmarks.engine.scale_runs.derive` of the runs of the workload and of its
        larger pipeline, on :data:`WORKERS` worker(s).
    worker_us : float or None
        The worker time per cell (µs) of the workload on 1 worker.

    Returns
    -------
    dict
        ``cells`` (of the smaller runs), ``added`` (cells the larger runs have more),
        each figure of :data:`WINDOWS` (µs a cell; None without both sizes),
        ``idle_rate`` (the median of the runs'), ``client_background_us`` (its CPU in
        the compute phase's added seconds, a cell), ``client_work_us`` (the whole
        marginal after planning less that), ``client_fixed_s`` (the whole process's CPU
        less the marginal cost of its cells), ``tasks_small`` and ``tasks_large``
        (median tasks), ``share`` (the work per cell over ``worker_us``; where the
        work measured is not positive, below the runs' noise, the whole marginal's,
        which bounds it, and ``share_of`` says which), and ``amdahl`` (cluster size ->
        speed-up; none when neither is positive).

    Examples
    --------
    >>> small = [{"cells": 100, "cpu": 3.0, "client_cpu": 1.0, "compute_cpu": 0.5, "main_cpu": 0.1, "tasks": 10,
    ...           "compute_wall": 5.0, "idle_rate": 0.02}]
    >>> large = [{"cells": 200, "cpu": 3.3, "client_cpu": 1.3, "compute_cpu": 0.7, "main_cpu": 0.11, "tasks": 20,
    ...           "compute_wall": 10.0, "idle_rate": 0.02}]
    >>> found = marginal(small, large, worker_us=50_000.0)
    >>> round(found["client_marginal_us"]), round(found["client_background_us"]), round(found["client_work_us"])
    (3000, 1000, 2000)
    >>> round(found["client_marginal_main_us"]), round(found["client_fixed_s"], 1)
    (100, 2.7)
    >>> round(found["share"], 3), found["share_of"], round(found["amdahl"][64], 1)
    (0.04, 'work', 18.2)

    A work below the noise: the whole marginal (background included) bounds it.

    >>> large[0]["compute_wall"] = 25.0
    >>> found = marginal(small, large, worker_us=50_000.0)
    >>> round(found["client_work_us"]), found["share_of"], round(found["share"], 3), round(found["amdahl"][64], 1)
    (-1000, 'marginal', 0.06, 13.4)
    """
    cells, bigger = _median(small, "cells"), _median(large, "cells")
    found: dict[str, Any] = {"cells": cells, "added": None if cells is None or bigger is None else bigger - cells,
                             "tasks_small": _median(small, "tasks"), "tasks_large": _median(large, "tasks")}
    added = found["added"]
    for figure, key in WINDOWS.items():
        one, two = _median(small, key), _median(large, key)
        found[figure] = (two - one) / added * 1e6 if None not in (one, two) and added else None
    per_cell = found["client_marginal_us"]
    whole = _median(small, "cpu")
    found["client_fixed_s"] = whole - per_cell * cells / 1e6 if None not in (whole, per_cell) else None
    idle, walls = _median(small + large, "idle_rate"), (_median(small, "compute_wall"), _median(large, "compute_wall"))
    found["idle_rate"] = idle
    found["client_background_us"] = (idle * (walls[1] - walls[0]) / added * 1e6
                                     if None not in (idle, *walls) and added else None)
    background = found["client_background_us"]
    found["client_work_us"] = per_cell - background if None not in (per_cell, background) else per_cell
    work = found["client_work_us"]
    found["share_of"] = "work" if work is None or work > 0 else "marginal"
    bound = work if found["share_of"] == "work" else per_cell
    share = bound / worker_us if bound is not None and worker_us else None
    found["share"] = share
    found["amdahl"] = {n: amdahl(share, n) for n in AMDAHL_WORKERS} if share is not None and share > 0 else {}
    return found
