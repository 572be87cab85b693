"""The record of the simulated cluster (bench ``simulated``, :mod:`dolb.bench.records`)
and what is derived from it: the costs of the engine's parts fitted across the runs,
the cost model's prediction of every run (:mod:`benchmarks.engine.cost_model`), its
predictions for the studies' cell costs on large clusters, and the figure of
efficiency against slots on the performance page.

The client's cost per cell is not fitted from the simulated runs: in them, from 16
slots on, every task holds one cell (cells of 0.5-1 s exceed every floor of the
batching), so cells and tasks rise together and a fit cannot tell a cost per cell from
one per task (it put 0.53 ms on each cell, 1.5 ms on each task). It is measured apart,
where the tasks stay the same and the cells double: the marginal client work per cell
of bench ``scale`` (:mod:`benchmarks.engine.scale_marginal`), for each study its own, for the
sleep cells the ``tiny`` workload's (cells as small: generated rows, one metric). The
simulated runs then give what is left: the client's CPU per task and per second of the
compute phase (:func:`~benchmarks.engine.cost_model.per_task_and_second`: the runs of 8 slots
last twice those of 16 to 64, so tasks and seconds are told apart).
"""

from __future__ import annotations

import io
import math
from dataclasses import replace
from typing import Any

import numpy as np

from benchmarks.engine.cost_model import Costs, amdahl, per_cell_and_task, per_task_and_second, predict, tasks_of_length
from benchmarks.engine.simulate import per_unit
from dolb.bench.records import derived, measurement, new_record

BENCH = "simulated"
CORES = 2
"""The cores of the machine the simulated cluster runs on, for the model's check."""
RUN_FIGURES = {"ideal": "s", "schedule": "s", "compute": "s", "client": "CPU s", "scheduler": "CPU s",
               "workers": "CPU s", "client_rss": "MiB", "scheduler_rss": "MiB", "cells": "cells", "tasks": "tasks",
               "parts": "parts", "load": "load average", "speed": "core share"}
"""What the record keeps of each run (see :func:`benchmarks.engine.simulate.measure_run`). The
first simulated records also kept the ``waves`` of tasks and the ``pauses`` between them
(and a fitted ``wave_pause``), from before a tuning's rungs stopped waiting for each
other; they read as before, those figures unused."""
CLUSTER_FIGURES = {"joined": "s", "start_cpu": "CPU s/process", "start_load": "load average", "first_run": "s"}
"""... and of each cluster's start."""
STUDY_SLOTS = (64, 256, 1000)
"""Cluster sizes the studies' cell costs are predicted for."""
SWEEP_CELLS = 1_000_000
"""The cells of the sweeps predicted for the studies' cell times."""
STUDIES = ("tiny", "irma", "cutoff_rcv1", "linear_zoo")
SLEEP_CELLS_LIKE = "tiny"
"""The workload of bench ``scale`` whose client work per cell the sleep cells are given."""


def fitted_costs(found: list[dict[str, Any]], client_cell: float = 0.0) -> Costs:
    """The engine's costs fitted over every run: the client's CPU per task and per
    second beyond ``client_cell`` seconds a cell (measured apart: see the module); the
    workers' per cell and per task (their idle rates taken off); the scheduler's per
    task."""
    runs = [run for slots in found for run in slots["runs"].values()]
    cells, tasks = [run["cells"] for run in runs], [run["tasks"] for run in runs]

    def busy(key: str) -> list[float]:
        return [max(0.0, run[key] - run[f"{key}_idle"] * run["compute"]) for run in runs]

    client_task, client_idle = per_task_and_second([run["client"] - client_cell * run["cells"] for run in runs],
                                                   tasks, [run["compute"] for run in runs])
    worker = per_cell_and_task(busy("workers"), cells, tasks)
    return Costs(client_cell, client_task, sum(busy("scheduler")) / sum(tasks), worker[0], worker[1], client_idle)


def check_run(run: dict[str, Any], slots: int, costs: Costs, here: bool = True):
    """The model's prediction of a measured run (each cell the mean time its run's
    cells slept): ``here``, on this machine's :data:`CORES` cores at the share of a
    core a process got before the run; else with a core for each process, as on a
    cluster."""
    cells = np.full(run["cells"], run["slept"] / run["cells"])
    if not here:
        return predict(cells, slots, run["tasks"], costs)
    return predict(cells, slots, run["tasks"], costs, cores=CORES, speed=run.get("speed", 1.0))


def study_cells(scale: dict | None) -> dict[str, float]:
    """Each study's seconds a cell (worker time, the median of the 1-worker runs) in a
    record of bench ``scale``; empty without one."""
    found = {}
    for figure in (scale or {}).get("measurements", []):
        labels = figure["labels"]
        if (labels.get("figure") == "worker_us" and labels.get("workers") == "1" and "scheduler" not in labels
                and labels["workload"] in STUDIES):
            found[labels["workload"]] = float(np.median(figure["repeats"])) / 1e6
    return found


def client_cells(scale: dict | None) -> dict[str, float]:
    """Each study's client work per cell in a record of bench ``scale`` (its marginal
    figure ``client work``, µs, as seconds; none below zero: the runs' noise); empty
    without one."""
    return {figure["labels"]["workload"]: max(0.0, figure["value"]) / 1e6
            for figure in (scale or {}).get("derived", [])
            if figure["labels"].get("figure") == "client work" and figure["labels"].get("workload") in STUDIES}


def engine_batches(cells: int, seconds: float, slots: int) -> tuple[int, float]:
    """The tasks the engine's batching (:class:`~dolb.execution.batches.Batcher`, as
    installed, with no ``batch_examples`` cap) cuts ``cells`` cells of ``seconds`` each
    into on ``slots`` slots, and the mean work of its last ``slots`` tasks (seconds).
    As the engine does, it cuts a first wave of one task a slot before any cell has
    been timed, then learns the pace from the first of them.

    100 s of work on 2 slots: tasks of 1/32 of it (3.125 s), then guided sizes down
    to the floor of 0.25 s, and what is left (0.19 s):

    >>> tasks, tail = engine_batches(100_000, 0.001, slots=2)
    >>> tasks, round(tail, 3)
    (41, 0.22)
    """
    from types import SimpleNamespace

    from dolb.execution.batches import Batcher

    batches = Batcher([(SimpleNamespace(n_train=1), np.arange(cells))], max_examples=None, n_workers=slots)
    sizes = [sum(len(indices) for _, indices in next(batches)) for _ in range(min(slots, cells))]
    batches.took({1: (sizes[0], sizes[0] * seconds)})
    sizes += [sum(len(indices) for _, indices in batch) for batch in batches]
    return len(sizes), float(np.mean(sizes[-slots:])) * seconds


def study_predictions(cells: dict[str, float], client: dict[str, float], costs: Costs) -> list[dict]:
    """For each study's cell time whose client work per cell is known (``client``), a
    sweep of :data:`SWEEP_CELLS` cells on each of :data:`STUDY_SLOTS` slots (a core for
    each part, as on a cluster): the predicted efficiency, and its limit, with the
    engine's tasks (:func:`engine_batches`: their number and the length of the last
    ones) and with tasks of 0.25 s; and Amdahl's speed-up from the serial share of the
    client and the scheduler with the engine's tasks. The workers' costs are not added:
    a study's cell time is its worker's whole time a cell (reading, metrics and its part
    included)."""
    figures = []
    for study, seconds in cells.items():
        if study not in client:
            continue
        mine = replace(costs, client_cell=client[study], worker_cell=0.0, worker_task=0.0)
        sweep = np.full(SWEEP_CELLS, seconds)
        for slots in STUDY_SLOTS:
            today, tail = engine_batches(SWEEP_CELLS, seconds, slots)
            short = (tasks_of_length(sweep, slots), max(seconds, 0.25))
            for batching, (tasks, last) in (("engine's", (today, tail)), ("tasks of 0.25 s", short)):
                found = predict(sweep, slots, tasks, mine, tail=last)
                figures.append(derived({"study": study, "slots": slots, "batching": batching, "limit": found.limit,
                                        "figure": "predicted efficiency"}, "ratio", found.efficiency))
            serial = (len(sweep) * mine.client_cell + today * (mine.client_task + mine.scheduler_task)) / len(sweep)
            figures.append(derived({"study": study, "slots": slots, "batching": "engine's", "limit": "",
                                    "figure": "Amdahl speed-up"}, "ratio", amdahl(serial / seconds, slots)))
    return figures


def as_record(found: list[dict[str, Any]], scale: dict | None) -> dict:
    """The measured slot counts (:func:`benchmarks.engine.simulate.simulate` of each) as a
    record: every run's figures and per-unit costs, each cluster's start, every run's
    efficiency beside the model's, the fitted costs, and the studies' predictions
    (their cell times and client work per cell from the ``scale`` record, when given;
    the sleep cells' client work per cell is :data:`SLEEP_CELLS_LIKE`'s, or none)."""
    client = client_cells(scale)
    costs = fitted_costs(found, client.get(SLEEP_CELLS_LIKE, 0.0))
    figures, ratios = [], []
    for slots in found:
        where = {"slots": slots["slots"], "processes": slots["processes"], "start": slots["start_method"]}
        figures += [measurement(where | {"workload": "cluster", "figure": key}, unit, [slots[key]])
                    for key, unit in CLUSTER_FIGURES.items()]
        for workload, run in slots["runs"].items():
            labels = where | {"workload": workload}
            figures += [measurement(labels | {"figure": key}, unit, [run[key]]) for key, unit in RUN_FIGURES.items()]
            figures += [measurement(labels | {"figure": key}, "CPU s", [value]) for key, value in per_unit(run).items()]
            model, cluster = check_run(run, slots["slots"], costs), check_run(run, slots["slots"], costs, here=False)
            ratios += [derived(labels | {"limit": "", "figure": "efficiency"}, "ratio", run["efficiency"]),
                       derived(labels | {"limit": "", "figure": "schedule efficiency"}, "ratio",
                               run["ideal"] / run["schedule"]),
                       derived(labels | {"limit": "", "figure": "efficiency against the schedule"}, "ratio",
                               run["schedule"] / run["compute"]),
                       derived(labels | {"limit": model.limit, "figure": "predicted efficiency"}, "ratio",
                               model.efficiency),
                       derived(labels | {"limit": cluster.limit, "figure": "predicted efficiency, a core each"},
                               "ratio", cluster.efficiency)]
    ratios += [derived({"part": part, "figure": "cost per unit"}, "CPU s", value)
               for part, value in vars(costs).items()]
    ratios += study_predictions(study_cells(scale), client, costs)
    return new_record(BENCH, figures, ratios)


def found_of(record: dict) -> list[dict[str, Any]]:
    """The slot counts and runs a record of this bench was made of (what :func:`as_record`
    takes), rebuilt from its figures: so a record's costs and predictions can be derived
    again with a later model or ``scale`` record, without running the cluster again.
    Each run's idle rates are rebuilt from its busy costs per unit and its compute phase."""
    slots: dict[int, dict[str, Any]] = {}
    for figure in record["measurements"]:
        labels = figure["labels"]
        one = slots.setdefault(int(labels["slots"]), {"slots": int(labels["slots"]),
                                                      "processes": int(labels["processes"]),
                                                      "start_method": labels.get("start", "spawn"), "runs": {}})
        if labels["workload"] == "cluster":
            one[labels["figure"]] = figure["repeats"][0]
        else:
            one["runs"].setdefault(labels["workload"], {})[labels["figure"]] = figure["repeats"][0]
    for one in slots.values():
        for run in one["runs"].values():
            run |= {count: int(run[count]) for count in ("cells", "tasks", "parts")}
            run["slept"] = run["ideal"] * one["slots"]
            run["efficiency"] = run["ideal"] / run["compute"]
            for part, unit, per in (("scheduler", "tasks", "scheduler_per_task"),
                                    ("workers", "cells", "workers_per_cell")):
                run[f"{part}_idle"] = (run[part] - run[per] * run[unit]) / run["compute"]
    return [slots[n] for n in sorted(slots)]


KINDS = {"efficiency": "measured", "predicted efficiency": "model, this machine",
         "predicted efficiency, a core each": "model, a core each",
         "schedule efficiency": "the cells' best (no cost)"}
"""The lines of the figure, by the derived figure each draws."""


def efficiency_figure(record: dict) -> bytes:
    """The performance page's figure: efficiency against slots, measured and predicted
    (on this machine, and with a core for each process), for each workload (PNG)."""
    from dolb.results.figure_style import LINE_STYLES, MARKERS, PALETTE, new_figure

    series: dict[tuple[str, str], dict[int, float]] = {}
    for figure in record["derived"]:
        labels = figure["labels"]
        if labels.get("figure") in KINDS and "workload" in labels:
            series.setdefault((labels["workload"], labels["figure"]), {})[int(labels["slots"])] = figure["value"]
    canvas, axes = new_figure(width=6.5, height=4.2, layout="constrained")
    axis = axes[0, 0]
    workloads = sorted({workload for workload, _ in series})
    for (workload, kind), points in sorted(series.items()):
        slots, i, style = sorted(points), workloads.index(workload), list(KINDS).index(kind)
        axis.plot(slots, [points[n] * 100 for n in slots], color=PALETTE[i % len(PALETTE)],
                  linestyle=LINE_STYLES[style], marker=MARKERS[i % len(MARKERS)],
                  fillstyle="none" if style else "full", markersize=6 + 2 * style,
                  label=f"{workload}: {KINDS[kind]}")
    axis.set_xscale("log", base=2)
    ticks = sorted({n for points in series.values() for n in points})
    axis.set_xticks(ticks, [str(n) for n in ticks])
    axis.set_xlabel("worker slots")
    axis.set_ylabel("efficiency: ideal / compute phase (%)")
    lowest = min(value for points in series.values() for value in points.values()) * 100
    axis.set_ylim(max(0, 10 * math.floor((lowest - 2) / 10)), 101)  # the lines lie close: not from zero
    axis.grid(alpha=0.3)
    axis.legend(loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0)
    axis.set_title("Simulated cluster: cells that only sleep")
    out = io.BytesIO()
    canvas.savefig(out, format="png")
    return out.getvalue()


MACHINE_LIMITS = 0.95
"""A run is limited by this machine when the model, given its cores and core share,
predicts less than this fraction of the efficiency it predicts with a core for each
process."""


def limits_text(record: dict) -> str:
    """Which measured runs this machine limits (its :data:`CORES` cores shared by the
    client, the scheduler and the workers, at the core share measured before each run)
    and which it does not, by the model: see :data:`MACHINE_LIMITS`."""
    runs = [f for f in record["derived"] if "workload" in f["labels"]]
    here = {_key(f["labels"]): f for f in runs if f["labels"]["figure"] == "predicted efficiency"}
    cluster = {_key(f["labels"]): f for f in runs if f["labels"]["figure"] == "predicted efficiency, a core each"}
    limited, free = [], []
    for key, figure in here.items():
        labels, alone = figure["labels"], cluster.get(key)
        run = f"{labels['workload']} at {labels['slots']} slots"
        if alone is not None and figure["value"] < MACHINE_LIMITS * alone["value"]:
            limited.append(f"{run} ({figure['value']:.0%} here, {alone['value']:.0%} with a core each; "
                           f"limit here: {labels['limit']})")
        elif alone is not None:
            free.append(f"{run} (limit: {labels['limit']})")
    return (f"Limited by this machine ({CORES} cores shared by client, scheduler and workers, at the core share "
            f"measured before each run), by the model: {'; '.join(limited) or 'none'}. Not limited by it: "
            f"{'; '.join(free) or 'none'}.")


def _key(labels: dict[str, str]) -> tuple:
    """A figure's labels but its name and limit, as a key."""
    return tuple(sorted((k, v) for k, v in labels.items() if k not in ("figure", "limit")))


def _values(record: dict, key: str) -> dict[tuple, float]:
    """``{_key(labels): value}`` of the figures named ``key`` (a measurement's first
    repeat, or a derived value)."""
    return {_key(figure["labels"]): figure["repeats"][0] if "repeats" in figure else figure["value"]
            for figure in record["measurements"] + record["derived"] if figure["labels"].get("figure") == key}


def _percent(value: float | None) -> float | str:
    """A ratio in percent; "" when a record has none (those before it was measured)."""
    return "" if value is None else value * 100


def simulated_text(record: dict) -> str:
    """The record as the bench prints it: a row per run, a row per cluster, the fitted
    costs and the studies' predictions."""
    from benchmarks.engine.scale_text import text_table

    limits = {_key(f["labels"]): f["labels"]["limit"] for f in record["derived"]
              if f["labels"].get("figure") == "predicted efficiency"}
    columns = {key: _values(record, key) for key in
               ("cells", "tasks", "parts", "ideal", "compute", "efficiency", "schedule efficiency",
                "predicted efficiency", "client_per_cell", "scheduler_per_task", "workers_per_cell", "client_rss",
                "scheduler_rss")}
    rows = []
    for key in sorted(columns["compute"], key=lambda k: (int(dict(k)["slots"]), dict(k)["workload"])):
        labels = dict(key)
        value = {name: column.get(key) for name, column in columns.items()}
        rows.append([int(labels["slots"]), int(labels["processes"]), labels["workload"], int(value["cells"]),
                     int(value["tasks"]), int(value["parts"]), value["ideal"], value["compute"],
                     value["efficiency"] * 100, _percent(value["schedule efficiency"]),
                     value["predicted efficiency"] * 100, limits.get(key, ""),
                     value["client_per_cell"] * 1e6, value["scheduler_per_task"] * 1e3,
                     value["workers_per_cell"] * 1e3, value["client_rss"], value["scheduler_rss"]])
    runs = text_table(["slots", "procs", "workload", "cells", "tasks", "parts", "ideal s", "compute s", "eff %",
                       "cells' best %", "model %", "limit", "client µs/cell", "sched ms/task", "workers ms/cell",
                       "client MiB", "sched MiB"], rows)
    loads = _values(record, "start_load")
    clusters = [[int(dict(k)["slots"]), int(dict(k)["processes"]), dict(k).get("start", "spawn"), v,
                 _values(record, "start_cpu")[k], loads.get(k, ""), _values(record, "first_run")[k]]
                for k, v in sorted(_values(record, "joined").items(), key=lambda kv: int(dict(kv[0])["slots"]))]
    starts = text_table(["slots", "procs", "started by", "workers joined s", "start CPU s/process", "load average",
                         "first run s"], clusters)
    costs = ", ".join(f"{dict(k)['part']} {v * 1e3:.3g} {'ms/s' if dict(k)['part'] == 'client_idle' else 'ms'}"
                      for k, v in _values(record, "cost per unit").items())
    studies = [[dict(k)["study"], int(dict(k)["slots"]), dict(k)["batching"], v * 100, limits.get(k, "")]
               for k, v in _values(record, "predicted efficiency").items() if "study" in dict(k)]
    predicted = text_table(["study", "slots", "batching", "predicted eff %", "limit"], studies)
    return "\n\n".join(["== simulated cluster: runs", runs, "== cluster start", starts,
                        f"== cost per unit (CPU), fitted over the runs: {costs}",
                        "== studies' cell times, predicted (each with its client work a cell from the scale "
                        "record)", predicted, limits_text(record)])
