"""``python -m benchmarks cold-start``: a first run on a fresh machine, the cluster phase of ``dolb
run`` with an empty Numba cache (every kernel compiled), against the same run with the
cache it left.

Usage::

    python -m benchmarks cold-start                                  # pipelines/irma.toml, 2 workers
    python -m benchmarks cold-start --repeats 3 --record benchmarks/records
    python -m benchmarks cold-start --fresh-data                     # a fresh machine: no dataset either

Each repeat runs ``python3 -m dolb run PIPELINE --out DIR --workers N --no-progress`` in a
process of its own twice, into fresh result folders: first with ``NUMBA_CACHE_DIR`` a
new empty folder (cold), then again with the cache that run left (warm). Datasets come
from the usual data cache (built by the first run if missing), or with ``--fresh-data``
from a new empty one that the cold run builds them into (on its cluster, the kernels of
each dataset warmed as soon as it is built). The figures are the run records' phases
(``timings``: data, cluster, compute) and wall seconds; the bench fails (exit status 1) if the cold and
the warm run stored different values.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks import ROOT
from dolb.bench.records import measurement, new_record, write_record
from dolb.errors import ConfigError
from dolb.results.history import read_records
from dolb.results.query import rows
from dolb.results.store import RUN_COLUMNS, ResultStore

KEYS = ["cell_id", "conversion", "n_train", "metric"]


def dolb_run(pipeline: str | Path, out: str | Path, workers: int, variables: dict[str, str]) -> dict:
    """One ``dolb run PIPELINE --out OUT --workers N`` in a process of its own, from the
    source tree, with ``variables`` set in its environment; the run record it wrote
    (``out`` a new folder, a path or a URL)."""
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and k not in variables}
    environment |= {"PYTHONPATH": str(ROOT), **variables}
    subprocess.run([sys.executable, "-m", "dolb", "run", str(pipeline), "--out", str(out), "--workers", str(workers),
                    "--no-progress"], check=True, cwd=ROOT, env=environment, stdout=subprocess.DEVNULL)
    (record,) = read_records(ResultStore(str(out)))
    return record


def run(pipeline: str, out: Path, cache: Path, workers: int, data: Path | None) -> dict:
    """One ``dolb run`` with Numba's cache in ``cache`` (and the data cache ``data``, if
    given); its run record."""
    variables = {"NUMBA_CACHE_DIR": str(cache)} | ({} if data is None else {"DOLB_DATA_CACHE": str(data)})
    return dolb_run(pipeline, out, workers, variables)


def values(out: Path):
    """The deterministic columns of every stored row, sorted."""
    frame = rows(ResultStore(out)).drop(columns=[name for name, _ in RUN_COLUMNS])
    return frame.sort_values(KEYS, kind="stable").reset_index(drop=True)


def main(args) -> int:
    """``python -m benchmarks cold-start``: the runs of the module docstring; with ``args.record``
    a record of their phases. Exit status 1 when a cold and a warm run differ;
    ConfigError when the pipeline is found neither here nor in the source tree."""
    pipeline = next((path.resolve() for path in (Path(args.pipeline), ROOT / args.pipeline) if path.is_file()), None)
    if pipeline is None:
        raise ConfigError(f"--pipeline {args.pipeline}: no such file")
    found: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="dolb-cold-") as work:
        for repeat in range(args.repeats):
            cache = Path(work, f"numba-{repeat}")
            data = Path(work, f"data-{repeat}") if args.fresh_data else None
            for state in ("cold", "warm"):
                out = Path(work, f"{state}-{repeat}")
                record = run(str(pipeline), out, cache, args.workers, data)
                for figure in ("data", "cluster", "compute"):
                    found.setdefault((state, figure), []).append(record["timings"][figure])
                found.setdefault((state, "wall"), []).append(record["seconds"])
                print(f"{state}: {record['seconds']:.1f} s, {json.dumps(record['timings'])}", flush=True)
            if not values(Path(work, f"cold-{repeat}")).equals(values(Path(work, f"warm-{repeat}"))):
                print("dolb: the cold and the warm run stored different values", file=sys.stderr)
                return 1
    labels = {"pipeline": args.pipeline, "workers": str(args.workers)}
    if args.fresh_data:
        labels["datasets"] = "built by the cold run"
    measurements = [measurement(labels | {"cache": state, "figure": figure}, "s", repeats)
                    for (state, figure), repeats in found.items()]
    if args.record:
        print(f"record: {write_record(args.record, new_record('cold-start', measurements, command=args.command_line))}")
    return 0
