"""The page of a result folder, ``report/index.html``: one self-contained file (figures
inlined, no network) with the study's description, where and how it ran (from the run
record, :mod:`dolb.results.history`), every report's figure and table, and the cells
that failed with their error.

The reports are read back from what :func:`dolb.results.report.render_report` wrote
(their JSON, CSV and PNG), so the page is the same whether the reports were drawn on the
client or on the workers.
"""

from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from dolb import location
from dolb.results import query
from dolb.results.history import machines
from dolb.results.html import Section, html_page
from dolb.results.kinds import ReportSpec
from dolb.results.report import report_folder, report_stem
from dolb.results.store import ResultStore
from dolb.results.tables import lift_constants

SHOWN_PACKAGES = ("dolb", "numpy", "numba", "dask", "distributed", "pandas", "scipy", "zarr")
"""Package versions the provenance box names (the run record holds every one)."""
PHASES = ("plan", "data", "cluster", "compute", "write", "aggregate", "reports")
"""A run's phases in the order they happen (its record keeps them by name)."""
FAILURES_SHOWN = 200
"""Failed cells listed at most (``dolb status DIR`` lists all)."""


def provenance(record: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """What the provenance box says of a run: pipeline, run, versions, commit, cluster,
    the machines that did its arithmetic, cells and timings.

    Examples
    --------
    >>> facts = dict(provenance({"run_id": "r1", "pipeline": "p", "pipeline_path": "/p.toml",
    ...     "counts": {"cells": 3, "computed": 2, "cached": 1, "failed": 0}, "seconds": 1.5,
    ...     "client": {"python": "3.11", "packages": {"numpy": "2.0"}}}))
    >>> facts["cells"], facts["versions"], facts["git commit"]
    ('3: 2 computed, 1 cached, 0 failed', 'python 3.11, numpy 2.0', 'unknown')
    """
    client = record.get("client", {})
    packages = client.get("packages", {})
    versions = ", ".join([f"python {client.get('python', '?')}"] +
                         [f"{name} {packages[name]}" for name in SHOWN_PACKAGES if packages.get(name)])
    options = record.get("options", {})
    if options.get("scheduler"):
        cluster = f"scheduler {options['scheduler']}"
    elif options.get("cluster"):
        cluster = f"cluster file {options['cluster']}"
    else:
        cluster = "local cluster"
    workers = record.get("workers", {})
    if workers or not record.get("ended"):  # a run not finished has not recorded its workers yet
        cluster += f", {len(workers)} workers" if workers else ", workers not recorded (the run has not finished)"
    else:
        cluster += ", no workers started (every cell was stored)"
    if record.get("gather") and record["gather"] != "none":
        cluster += f"; result parts written by the {record['gather']}"
    counts = record.get("counts", {})
    cells = (f"{counts.get('cells', '?')}: {counts.get('computed', 0)} computed, {counts.get('cached', 0)} cached, "
             f"{counts.get('failed', 0)} failed")
    found = record.get("timings", {})
    order = [phase for phase in PHASES if phase in found] + sorted(set(found) - set(PHASES))
    timings = ", ".join(f"{phase} {found[phase]:.1f} s" for phase in order)
    seconds = f"{record['seconds']:.1f} s" if "seconds" in record else "did not finish"
    return (
        ("pipeline", f"{record.get('pipeline', '?')} ({record.get('pipeline_path', '?')})"),
        ("run", f"{record.get('run_id', '?')}, started {record.get('started', '?')}, ended "
                f"{record.get('ended') or '?'}"),
        ("versions", versions),
        *((("learner plugins", "; ".join(f"{name} {found}" for name, found in sorted(plugins.items()))),)
          if (plugins := client.get("plugins")) else ()),
        ("git commit", client.get("git_commit") or "unknown"),
        ("host", f"{client.get('host', '?')}, {client.get('platform', '?')}, {client.get('cpu_count', '?')} CPUs"),
        ("cluster", cluster),
        ("machines", machines(record)),
        ("cells", cells),
        ("time", f"{seconds}" + (f" ({timings})" if timings else "")),
    )


def _read(store: ResultStore, name: str) -> bytes | None:
    """The bytes of ``report/<name>`` in the result folder, None when it has none."""
    path = f"{store.path}/report/{name}"
    return store.fs.cat_file(path) if store.fs.exists(path) else None


def report_section(store: ResultStore, reports: tuple[ReportSpec, ...], index: int, scratch: Path) -> Section:
    """The page's section of report ``reports[index]``: its figure, then its table with
    constant columns lifted into the caption; its PNG copied into ``scratch`` to embed."""
    report, stem = reports[index], report_stem(reports, index)
    found = _read(store, f"{stem}.json")
    if found is None:
        return Section(report.title, ("Not drawn: run `dolb report` on this folder.",))
    shown = json.loads(found)
    if shown["error"]:
        return Section(shown["title"], (f"Not available: {shown['error']}",))
    figures = ()
    if shown["figure"] and (png := _read(store, shown["figure"])) is not None:
        figures = (scratch / shown["figure"],)
        figures[0].write_bytes(png)
    table, caption = None, ""
    if shown["table"] and (csv := _read(store, shown["table"])) is not None:
        table, caption = lift_constants(pd.read_csv(io.BytesIO(csv), keep_default_na=False, na_values=[""]))
    return Section(shown["title"], tuple(shown["notes"]), table, figures, caption)


def failure_section(store: ResultStore) -> Section | None:
    """The failed cells of the folder with the first line of their error (None if none)."""
    failed = query.failures(store)
    if failed.empty:
        return None
    columns = [c for c in ["cell_id", "experiment", "dataset", "learner", "params", "complexity", "split", "rung"]
               if c in failed.columns]  # a tuning trial's rung (experiment <name>/tuning)
    table = failed[columns].assign(error=failed["error"].map(lambda e: str(e).splitlines()[0] if e else ""))
    note = f"{len(failed)} cells failed; `dolb run --retry-failed` runs them again."
    if len(failed) > FAILURES_SHOWN:
        note += f" The first {FAILURES_SHOWN} are listed; `dolb status DIR` lists all."
    return Section("Failed cells", (note,), table.head(FAILURES_SHOWN))


def write_run_page(store: ResultStore, reports: tuple[ReportSpec, ...], record: dict[str, Any],
                   description: str = "", failures: bool = True, partial: str = "") -> str:
    """Write ``report/index.html`` of a result folder after its reports were drawn;
    return where it is. ``failures=False``: the caller knows that no cell of the folder
    failed, and the store is not asked (a scan of every stored row). ``partial``: why the
    page shows only part of the run (it is still running, or did not finish), said
    first, above the provenance."""
    with tempfile.TemporaryDirectory() as scratch:
        sections = [Section("Partial results", (partial,))] if partial else []
        sections += [Section("Provenance", facts=provenance(record))]
        sections += [report_section(store, reports, index, Path(scratch)) for index in range(len(reports))]
        failed = failure_section(store) if failures else None
        if failed is not None:
            sections.append(failed)
        title = f"{record.get('pipeline', 'dolb')}: {'partial ' if partial else ''}results"
        page = html_page(title, sections, description)
    with report_folder(store) as folder:
        (folder / "index.html").write_text(page, encoding="utf-8")
    return location.joined(store.location, "report", "index.html")
