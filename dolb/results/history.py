"""The run history of a result folder: one record per ``dolb run``, never overwritten.

A record (``DIR/runs/<run id>.json``) says what the run was asked (pipeline text and
path, options), what it did (cells computed, cached, failed; where the time went) and
what it ran on (versions of the client and every worker), and which cell groups make up
its pipeline (so ``dolb status`` can speak of that pipeline's cells and ``dolb
reproduce`` can run it again).
"""

from __future__ import annotations

import calendar
import json
import time
import uuid
from typing import Any

from dolb.errors import DataError
from dolb.results.record_check import check_record
from dolb.results.store import ResultStore

RUNS = "runs"
"""The history's folder inside a result folder."""


def new_run_id(when: time.struct_time) -> str:
    """A unique, time-ordered run id such as ``20261123T190102Z-1a2b3c`` for a run
    started at ``when`` (UTC), the time its record's ``started`` says too."""
    return time.strftime("%Y%m%dT%H%M%SZ", when) + "-" + uuid.uuid4().hex[:6]


def write_record(store: ResultStore, record: dict[str, Any]) -> None:
    """Add (or complete) the record of run ``record["run_id"]``."""
    store.write_text(f"{RUNS}/{record['run_id']}.json", json.dumps(record, indent=1, sort_keys=True))


def read_records(store: ResultStore) -> list[dict[str, Any]]:
    """Every run record of the folder, oldest first, each checked
    (:func:`~dolb.results.record_check.check_record`: DataError naming the file and the
    key at fault)."""
    records = []
    if store.fs.isfile(f"{store.path}/{RUNS}"):
        raise DataError(f"{store.shown(f'{store.path}/{RUNS}')}: a file, where the folder of run records should be")
    for name in store.list(RUNS):
        if not name.endswith(".json"):
            continue
        where = store.shown(f"{store.path}/{RUNS}/{name}")
        text = store.read_text(f"{RUNS}/{name}")
        if text is None:
            raise DataError(f"{where}: listed but not readable (a link to nowhere?)")
        try:
            record = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise DataError(f"{where}: not a run record ({exc})") from None
        check_record(record, where)
        if name != f"{record['run_id']}.json":  # what names a record in messages
            raise DataError(f"{where}: not a run record (its run_id {record['run_id']!r} is not its file's name)")
        records.append(record)
    return records


def find_record(store: ResultStore, run_id: str | None = None) -> dict[str, Any]:
    """The record of run ``run_id`` (default: the last finished run)."""
    records = read_records(store)
    if run_id is None:
        finished = [r for r in records if r.get("ended")]
        if not finished:
            raise DataError(f"{store.root}: no finished run recorded (run `dolb run` first)")
        return finished[-1]
    for record in records:
        if record["run_id"] == run_id:
            return record
    known = ", ".join(r["run_id"] for r in records) or "none"
    raise DataError(f"{store.root}: no run {run_id!r} recorded (runs: {known})")


def last_record(store: ResultStore) -> dict[str, Any]:
    """The record of the folder's last run, finished or not (DataError when none is)."""
    records = read_records(store)
    if not records:
        raise DataError(f"{store.root}: no run recorded (run `dolb run` first)")
    return records[-1]


def recorded_pipeline(store: ResultStore, record: dict[str, Any], doing: str) -> tuple[str, str]:
    """The path and text of the pipeline a run ran, as its record keeps them;
    DataError naming the record file when it lacks one (``doing``: what needs them,
    e.g. ``"reproduce this run"``)."""
    for key in ("pipeline_text", "pipeline_path"):
        if key not in record:
            where = store.shown(f"{store.path}/{RUNS}/{record['run_id']}.json")
            raise DataError(f"{where}: no {key} recorded (a damaged or foreign run record); cannot {doing}")
    return record["pipeline_path"], record["pipeline_text"]


def planned_cells(record: dict[str, Any]) -> int:
    """The cells of the pipeline a run ran, as its record lists its groups (its
    tuning's trials and chosen cells aside)."""
    return sum(count for _, count in record.get("groups", []))


def live_line(record: dict[str, Any], stored: tuple[int, int, int], holder: dict[str, Any], now: float) -> str:
    """One line for a run still running: since when, where (its host and pid, and
    whether the process was seen alive from here), the cells stored and failed so far
    of its pipeline's, and the cells it stored or failed per second since it started
    (``now``: the time, seconds since the epoch).

    >>> print(live_line({"run_id": "r1", "started": "2026-11-26T21:00:00Z", "groups": [["k", 40]]}, (12, 2, 1),
    ...                 {"host": "h", "pid": 7, "checked": True}, calendar.timegm((2026, 11, 26, 21, 0, 4))))
    r1  2026-11-26T21:00:00Z  running on h (pid 7): 12 cells stored, 1 failed so far of the 40 cells of its \
pipeline, on 2 workers; 3.2 cells/s
    """
    cells, workers, failed = stored
    seconds = now - calendar.timegm(time.strptime(record["started"], "%Y-%m-%dT%H:%M:%SZ"))
    rate = f"{(cells + failed) / seconds:.1f} cells/s" if seconds > 0 else "no rate yet"
    where = f"running on {holder['host']} (pid {holder['pid']})"
    if not holder["checked"]:
        where += ", not checked from here (another host)"
    return (f"{record['run_id']}  {record['started']}  {where}: {cells} cells stored, {failed} failed so far of the "
            f"{planned_cells(record)} cells of its pipeline, on {workers} workers; {rate}")


def describe(record: dict[str, Any], stored: tuple[int, int, int] = (0, 0, 0)) -> str:
    """One line for a run: when, cells computed, cached and failed, workers, time, the
    states its cells saved and its tuning's trial cells, if any. A run that did not finish (killed) recorded no
    counts: ``stored``, the cells its workers stored, how many workers did and the cells
    that failed (:func:`dolb.results.query.cells_by_run`), says what it did (a run still
    running: :func:`live_line`).

    >>> saves = {"state_saves": 3, "state_bytes": 3 << 20, "state_largest": 1 << 20, "state_seconds": 0.25}
    >>> line = describe({"run_id": "r1", "pipeline": "p", "started": "2026-11-26T21:00:00Z", "ended": "x",
    ...                  "seconds": 12.5, "counts": {"computed": 1}, "workers": {"w1": {}}, "state_saves": saves})
    >>> line.split("; ")[1:]
    ['12.5 s', '3 states saved (3.0 MiB, the largest 1.0 MiB, in 0.2 s)']
    >>> describe({"run_id": "r2", "ended": "x", "tuning": {"cells": 39, "computed": 30, "failed": 0,
    ...                                                   "examples": 12500}}).split("; ")[-1]
    'tuning: 39 trial cells, 30 computed, 0 failed (12,500 training examples)'
    """
    if not record.get("ended"):
        cells, workers, failed = stored
        return (f"{record['run_id']}  {record.get('started', '?')}  did not finish: {cells} cells stored by it, "
                f"{failed} failed, on {workers} workers")
    counts = record.get("counts", {})
    state = f"{record.get('seconds', 0):.1f} s"
    saves = record.get("state_saves", {})
    if saves.get("state_saves"):
        state += (f"; {saves['state_saves']} states saved ({saves['state_bytes'] / 2**20:.1f} MiB, the largest "
                  f"{saves['state_largest'] / 2**20:.1f} MiB, in {saves['state_seconds']:.1f} s)")
    tuning = record.get("tuning")
    if tuning:
        state += (f"; tuning: {tuning['cells']} trial cells, {tuning['computed']} computed, {tuning['failed']} failed "
                  f"({tuning['examples']:,} training examples)")
    return (
        f"{record['run_id']}  {record.get('started', '?')}  {counts.get('computed', 0)} computed, "
        f"{counts.get('cached', 0)} cached, {counts.get('failed', 0)} failed on "
        f"{len(record.get('workers', {}))} workers; {state}"
    )


def _kinds(record: dict[str, Any]) -> dict[str, int]:
    """Each kind of worker of a run (its CPU, BLAS, Numba target and NumPy instruction
    set, as a phrase) and how many there were; empty when the record lists no workers
    (a run that did not finish)."""
    kinds: dict[str, int] = {}
    for worker in record.get("workers", {}).values():
        found = worker["arithmetic"]
        blas = ", ".join(f"{b['library']} {b['version']} {b['kernel']} x{b['threads']}" for b in found["blas"])
        phrase = f"{found['cpu']}, {blas or 'no BLAS loaded'}, Numba {found['numba_cpu']}, NumPy {found['numpy_simd']}"
        kinds[phrase] = kinds.get(phrase, 0) + 1
    return kinds


def machines(record: dict[str, Any]) -> str:
    """What did a run's arithmetic, one phrase per kind of worker: ``2 workers on AMD
    EPYC, openblas 0.3.31 Haswell x1, Numba znver5, NumPy X86_V3`` (a record without
    workers, of a run that did not finish: ``machines not recorded``; a run that started
    none: ``no workers: nothing to compute``)."""
    if record.get("workers") == {}:
        return "no workers: nothing to compute"
    kinds = _kinds(record)
    if not kinds:
        return "machines not recorded"
    return "; ".join(f"{count} worker{'s' if count > 1 else ''} on {phrase}" for phrase, count in kinds.items())


def same_machines(one: dict[str, Any], two: dict[str, Any]) -> bool:
    """Whether two runs' workers were of the same kinds (however many of each), or
    either record lists none."""
    kinds = set(_kinds(one)), set(_kinds(two))
    return not all(kinds) or kinds[0] == kinds[1]
