"""The tables of ``python -m benchmarks scale`` and its record (:mod:`dolb.bench.records`)."""

from __future__ import annotations

from typing import Any

from benchmarks.engine.scale_marginal import AMDAHL_WORKERS
from benchmarks.engine.scale_runs import WORKER_COUNTS
from dolb.bench.records import derived, measurement, new_record

CLIENT_TARGET_US = 50.0
"""The client's marginal CPU per cell every workload should stay under (µs)."""



def text_table(headers: list[str], rows: list[list[Any]]) -> str:
    """Rows under headers, columns right-aligned; floats to three significant figures,
    None as ``-``.

    Examples
    --------
    >>> print(text_table(["a", "b"], [[1.23456, None]]))
       a  b
    1.23  -
    """
    cells = [[_cell(value) for value in row] for row in rows]
    widths = [max([len(h), *(len(row[i]) for row in cells)]) for i, h in enumerate(headers)]
    lines = [headers] + cells
    return "\n".join("  ".join(value.rjust(width) for value, width in zip(line, widths)) for line in lines)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


RUN_HEADERS = ["run", "workers", "wall s", "start-up s", "imports", "data", "cluster", "compute s",
               "client µs/cell", "(in compute)", "worker µs/cell", "s %", "peak RSS MiB"]


def _run_row(label: str, workers: int, run: dict[str, Any]) -> list[Any]:
    share = run["share"] * 100 if run["share"] is not None else None
    return [label, workers, run["wall"], run["startup"], run["imports"], run["data"], run["cluster"],
            run["compute"], run["client_us"], run["client_compute_us"], run["worker_us"], share,
            run["peak_rss_mib"]]


def workload_text(name: str, measured: dict[str, Any]) -> str:
    """A workload's table (every run, then the medians) and its ratios."""
    summary = measured["summary"]
    rows = [_run_row(f"#{i}", run["requested"], run) for i, run in enumerate(measured["runs"], 1)]
    rows += [_run_row("median", count, medians) for count, medians in summary["by_workers"].items()]
    rows += [_run_row(f"own scheduler, {run['cells']:,} cells", run["requested"], run)
             for runs in measured.get("sizes", ()) for run in runs]
    one, two = WORKER_COUNTS[0], WORKER_COUNTS[-1]
    lines = [
        f"== {name}: {summary['cells']:,} cells ({measured['pipeline']})",
        text_table(RUN_HEADERS, rows),
        f"speed ratio {one} -> {two} workers: wall {_cell(summary['wall_ratio'])} (start-up included), "
        f"compute phase {_cell(summary['compute_ratio'])}",
    ]
    if summary["share"] is not None:
        predicted = ", ".join(f"{n} workers {value:.1f}x" for n, value in summary["amdahl"].items())
        lines.append(f"client share s = {summary['share']:.2%} (1-worker runs); Amdahl: {predicted}")
    if "marginal" in summary:
        lines.append(marginal_text(summary["marginal"]))
    return "\n".join(lines)


def marginal_text(found: dict[str, Any]) -> str:
    """A workload's marginal client cost (:func:`benchmarks.engine.scale_marginal.marginal`)."""
    work = found["client_work_us"]
    verdict = ("not measured" if work is None else "unresolved: not positive, below the runs' noise" if work <= 0
               else "met" if work <= CLIENT_TARGET_US else "NOT met")
    predicted = ", ".join(f"{n} workers {value:.1f}x" for n, value in found["amdahl"].items())
    return "\n".join([
        f"client's marginal CPU per cell ({found['cells']:,.0f} -> {found['cells'] + found['added']:,.0f} cells, "
        f"tasks {_cell(found['tasks_small'])} -> {_cell(found['tasks_large'])}): from the first submit "
        f"{_cell(found['client_marginal_us'])} µs = work {_cell(work)} µs + background "
        f"{_cell(found['client_background_us'])} µs (idle {_cell(found['idle_rate'])} CPU s/s); compute phase "
        f"{_cell(found['client_marginal_compute_us'])} µs, its main thread "
        f"{_cell(found['client_marginal_main_us'])} µs",
        f"client's fixed CPU a run {_cell(found['client_fixed_s'])} s; work target <= {CLIENT_TARGET_US:g} µs a cell "
        f"{verdict}; Amdahl from the {found['share_of']}'s share: {predicted or '-'}"])


def million_text(measured: dict[str, Any]) -> str:
    """The million workload's figures."""
    full, resume, killed, report = measured["full"], measured["resume"], measured["killed"], measured["report"]
    state = "killed" if killed["killed"] else "NOT killed (it finished before any part appeared)"
    return "\n".join([
        f"== million: {full['cells']:,} cells on {full['workers']} workers ({measured['pipeline']})",
        f"full run: wall {full['wall']:.1f} s, client peak RSS {full['peak_rss_mib']:.0f} MiB, "
        f"client {_cell(full['client_us'])} µs/cell, worker {_cell(full['worker_us'])} µs/cell",
        f"second run: {state} after {killed['seconds']:.1f} s, {killed['parts']} part(s) stored",
        f"resume: {resume['cached']:,} cells found stored, {resume['cells']:,} run, {resume['failed']} failed; "
        f"first submit {_cell(resume['to_first_submit'])} s after start, wall {resume['wall']:.1f} s",
        f"dolb report afterwards: exit status {report['status']} in {report['seconds']:.1f} s"
        + ("" if report["status"] == 0 else f" (see {report['log']})"),
    ])


def summary_text(results: dict[str, dict[str, Any]]) -> str:
    """One row per measured workload."""
    two = WORKER_COUNTS[-1]
    headers = ["workload", "cells", "client µs/cell", "(in compute)", "work µs/cell", "(+ background)",
               "(main thread)", "fixed CPU s", "worker µs/cell", "work s %", f"start-up s ({two}w)",
               "wall 1w s", f"wall {two}w s", "wall ratio", "compute ratio",
               *(f"Amdahl {n}" for n in AMDAHL_WORKERS)]
    rows = []
    for name, measured in results.items():
        summary = measured["summary"]
        one, many = summary["by_workers"][WORKER_COUNTS[0]], summary["by_workers"][two]
        found = summary.get("marginal") or {"amdahl": {}}
        share = found["share"] * 100 if found.get("share") is not None else None
        rows.append([name, summary["cells"], one["client_us"], one["client_compute_us"],
                     found.get("client_work_us"), found.get("client_marginal_us"), found.get("client_marginal_main_us"),
                     found.get("client_fixed_s"), one["worker_us"], share,
                     many["startup"], one["wall"], many["wall"], summary["wall_ratio"], summary["compute_ratio"],
                     *(found["amdahl"].get(n) for n in AMDAHL_WORKERS)])
    title = ("== summary (medians; per-cell figures from the 1-worker runs; work: the client's marginal CPU per "
             "cell less its background, its share s of the worker's time per cell and Amdahl's law from it)")
    return title + "\n" + text_table(headers, rows)




RECORDED = ("wall", "startup", "compute", "client_us", "client_compute_us", "worker_us", "peak_rss_mib",
            "cpu", "client_cpu", "compute_cpu", "compute_wall", "main_cpu", "idle_rate", "tasks")
"""The figures of every run a record keeps (see the script's definitions; ``cpu``,
``client_cpu``, ``compute_cpu``, ``main_cpu`` and ``idle_rate``: the client's CPU of
:mod:`benchmarks.engine.scale_marginal`)."""
UNITS = {"client_us": "µs/cell", "client_compute_us": "µs/cell", "worker_us": "µs/cell", "peak_rss_mib": "MiB",
         "cpu": "CPU s", "client_cpu": "CPU s", "compute_cpu": "CPU s", "main_cpu": "CPU s", "idle_rate": "CPU s/s",
         "tasks": "tasks"}
MARGINAL = {"client_work_us": ("client work", "µs/cell"), "client_marginal_us": ("client marginal", "µs/cell"),
            "client_background_us": ("client background", "µs/cell"), "idle_rate": ("client idle", "CPU s/s"),
            "client_marginal_compute_us": ("client marginal in compute", "µs/cell"),
            "client_marginal_main_us": ("client marginal main thread", "µs/cell"),
            "client_fixed_s": ("client fixed", "CPU s"), "share": ("client marginal share s", "ratio")}
"""The derived figures of :func:`benchmarks.engine.scale_marginal.marginal` a record keeps: name and unit."""
OWN_SCHEDULER = "own process"
"""The ``scheduler`` label of the runs of the client's marginal cost (a scheduler and a
worker of processes of their own); the runs of the embedded cluster have none."""


def as_record(workloads: dict[str, dict[str, Any]], million: dict[str, Any] | None) -> dict:
    """The measured workloads as a record of bench ``scale``: each figure of
    :data:`RECORDED` of every run by workload and worker count (and, for the runs of
    the client's marginal cost, cells and :data:`OWN_SCHEDULER`), and per workload the
    speed ratios 1 -> 2 workers, the client share s and Amdahl's predictions; the
    million workload's full run and resume, each measured once."""
    figures, ratios = [], []
    for name, measured in workloads.items():
        cells = measured["summary"]["cells"]
        groups = [({"workload": name, "cells": cells, "workers": count},
                   [run for run in measured["runs"] if run["requested"] == count]) for count in WORKER_COUNTS]
        groups += [({"workload": name, "cells": runs[0]["cells"], "workers": runs[0]["requested"],
                     "scheduler": OWN_SCHEDULER}, runs) for runs in measured.get("sizes", ()) if runs]
        for labels, runs in groups:
            figures += [measurement(labels | {"figure": key}, UNITS.get(key, "s"), [run[key] for run in runs])
                        for key in RECORDED if all(run.get(key) is not None for run in runs)]
        summary = measured["summary"]
        found = {"wall 1 -> 2 workers": summary["wall_ratio"], "compute 1 -> 2 workers": summary["compute_ratio"],
                 "client share s": summary["share"],
                 **{f"Amdahl {n} workers": value for n, value in summary["amdahl"].items()}}
        ratios += [derived({"workload": name, "cells": cells, "figure": key}, "ratio", value)
                   for key, value in found.items() if value is not None]
        marginal = summary.get("marginal") or {"amdahl": {}}
        ratios += [derived({"workload": name, "cells": cells, "figure": label}, unit, marginal[key])
                   for key, (label, unit) in MARGINAL.items() if marginal.get(key) is not None]
        ratios += [derived({"workload": name, "cells": cells, "figure": f"Amdahl {n} workers, marginal share"},
                           "ratio", value) for n, value in marginal["amdahl"].items()]
    if million is not None:
        full, resume = million["full"], million["resume"]
        once = {"full run wall": (full["wall"], "s"), "full run peak RSS": (full["peak_rss_mib"], "MiB"),
                "resume to first submit": (resume["to_first_submit"], "s"), "resume wall": (resume["wall"], "s")}
        figures += [measurement({"workload": "million", "cells": full["cells"], "workers": full["workers"],
                                 "figure": key}, unit, [value]) for key, (value, unit) in once.items()
                    if value is not None]
    return new_record("scale", figures, ratios)
