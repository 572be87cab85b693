"""The tables of ``dolb bench scale`` and its record (:mod:`dolb.bench.records`)."""

from __future__ import annotations

from typing import Any

from dolb.bench.records import derived, measurement, new_record
from dolb.bench.scale_runs import AMDAHL_WORKERS, WORKER_COUNTS

CLIENT_TARGET_US = 20.0
"""Client time per cell the tiny workload should stay under (µs)."""



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
    if name == "tiny":
        client = summary["by_workers"][one]["client_us"]
        verdict = "met" if client is not None and client <= CLIENT_TARGET_US else "NOT met"
        lines.append(f"client time per cell ({one}-worker median): {_cell(client)} µs; "
                     f"target <= {CLIENT_TARGET_US:g} µs {verdict}")
    return "\n".join(lines)


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
    headers = ["workload", "cells", "client µs/cell", "(in compute)", "worker µs/cell", "s %",
               f"start-up s ({two}w)",
               "wall 1w s", f"wall {two}w s", "wall ratio", "compute ratio",
               *(f"Amdahl {n}" for n in AMDAHL_WORKERS)]
    rows = []
    for name, measured in results.items():
        summary = measured["summary"]
        one, many = summary["by_workers"][WORKER_COUNTS[0]], summary["by_workers"][two]
        share = summary["share"] * 100 if summary["share"] is not None else None
        rows.append([name, summary["cells"], one["client_us"], one["client_compute_us"], one["worker_us"], share,
                     many["startup"],
                     one["wall"], many["wall"], summary["wall_ratio"], summary["compute_ratio"],
                     *(summary["amdahl"].get(n) for n in AMDAHL_WORKERS)])
    return "== summary (medians; per-cell figures and s from the 1-worker runs)\n" + text_table(headers, rows)




RECORDED = ("wall", "startup", "compute", "client_us", "client_compute_us", "worker_us", "peak_rss_mib")
"""The figures of every run a record keeps (see :mod:`dolb.bench.scale`'s definitions)."""
UNITS = {"client_us": "µs/cell", "client_compute_us": "µs/cell", "worker_us": "µs/cell", "peak_rss_mib": "MiB"}


def as_record(workloads: dict[str, dict[str, Any]], million: dict[str, Any] | None) -> dict:
    """The measured workloads as a record of bench ``scale``: each figure of
    :data:`RECORDED` of every run by workload and worker count, and per workload the
    speed ratios 1 -> 2 workers, the client share s and Amdahl's predictions; the
    million workload's full run and resume, each measured once."""
    figures, ratios = [], []
    for name, measured in workloads.items():
        cells = measured["summary"]["cells"]
        for count in WORKER_COUNTS:
            runs = [run for run in measured["runs"] if run["requested"] == count]
            figures += [measurement({"workload": name, "cells": cells, "workers": count, "figure": key},
                                    UNITS.get(key, "s"), [run[key] for run in runs])
                        for key in RECORDED if all(run[key] is not None for run in runs)]
        summary = measured["summary"]
        found = {"wall 1 -> 2 workers": summary["wall_ratio"], "compute 1 -> 2 workers": summary["compute_ratio"],
                 "client share s": summary["share"],
                 **{f"Amdahl {n} workers": value for n, value in summary["amdahl"].items()}}
        ratios += [derived({"workload": name, "cells": cells, "figure": key}, "ratio", value)
                   for key, value in found.items() if value is not None]
    if million is not None:
        full, resume = million["full"], million["resume"]
        once = {"full run wall": (full["wall"], "s"), "full run peak RSS": (full["peak_rss_mib"], "MiB"),
                "resume to first submit": (resume["to_first_submit"], "s"), "resume wall": (resume["wall"], "s")}
        figures += [measurement({"workload": "million", "cells": full["cells"], "workers": full["workers"],
                                 "figure": key}, unit, [value]) for key, (value, unit) in once.items()
                    if value is not None]
    return new_record("scale", figures, ratios)
