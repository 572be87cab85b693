"""What a worker does: run a batch of cells and store their rows itself, or send them
back as one Arrow table.

A task returns only a :class:`TaskOutcome`: counts, its cells' ids, the failures, and the
name of the part it wrote (or, when the workers cannot reach the result folder, the rows
as Arrow IPC bytes for the client to append). Nothing per row travels as a Python
object. (Its batch arrives as bytes: :mod:`dolb.execution.payload`.)
"""

from __future__ import annotations

import functools
import os
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from dolb.data.store.format import is_url
from dolb.data.store.object_stores import as_store_fault
from dolb.errors import DatasetChanged, DolbError, StorageError
from dolb.evaluation.cell import Cell
from dolb.evaluation.run_cell import run_cell
from dolb.evaluation.saved_states import add_saves
from dolb.execution.batches import Batch, Paces
from dolb.execution.where import located, on_this_host, worker_name
from dolb.results.cell_rows import CellRows
from dolb.results.states import CellStates
from dolb.results.store import ResultStore


@dataclass(frozen=True)
class Destination:
    """Where a task's rows go.

    Attributes
    ----------
    schema : pyarrow.Schema
        The run's result schema.
    run_id : str
        The run, written on every row.
    store : str or None
        The result folder when the workers write their parts there; None to send the
        rows back to the client.
    keep_states : bool
        Long cells save their states in the result folder (``store``), as
        :class:`dolb.results.states.CellStates`, and resume from them.
    """

    schema: pa.Schema
    run_id: str
    store: str | None
    keep_states: bool = False


@dataclass
class TaskOutcome:
    """What a task tells the client."""

    cells: list[str] = field(default_factory=list)
    """The ids of its cells, in the order of its rows (the manifest committing its part
    names them: the client does not hash a cell's spec)."""
    failures: list[tuple[str, str]] = field(default_factory=list)
    """(cell id, error) of each failed cell."""
    part: str | None = None
    """The part the worker wrote."""
    rows: bytes | None = None
    """The rows, as an Arrow IPC stream, when the client writes them."""
    storage_error: str | None = None
    """Why the worker could not write its part (the folder is full, ...): the run stops."""
    paces: Paces = field(default_factory=dict)
    """How long its cells took, by size (the client sizes later batches by it; none for
    a task that died)."""
    state_saves: dict[str, float] = field(default_factory=dict)
    """The states its cells saved (:data:`~dolb.evaluation.saved_states.STATE_SAVES`)."""
    losses: dict[str, float] = field(default_factory=dict)
    """The validation loss of each tuning trial's cell that ran (:func:`trial_loss`), by
    cell id: the client decides a rung from these, without reading the parts."""

    @property
    def n_cells(self) -> int:
        """Its cells, failed or not."""
        return len(self.cells)


def setup_fault(exc: BaseException, cell: Cell, destination: Destination) -> str | None:
    """Why ``cell`` could not start on this host, when that is the host's set-up and not
    the cell's: its object store failed or this host has no credentials for it
    (:func:`~dolb.data.store.object_stores.as_store_fault`), a dataset it reads is not
    the one the run was planned with (:class:`~dolb.errors.DatasetChanged`), or is a
    local path this host does not have (the workers do not see the client's files).
    None for the cell's own failure."""
    fault = as_store_fault(exc, _store_of(cell, destination))
    if fault is not None:
        return str(located(fault))
    if isinstance(exc, DatasetChanged):
        return (f"{exc.path}: the dataset there{on_this_host() or ' on this host'} is not the one the run was planned "
                "with (a copy of its own, or written anew since): give --data-cache URL, an object store every host "
                "reaches, or the same files on every host")
    missing = [path for path in (cell.train_path, cell.test_path) if path and not is_url(path)
               and not os.path.exists(path)]
    if missing:
        return (f"{missing[0]}: no dataset there{on_this_host() or ' on this host'}: the workers do not see the "
                "client's files; give --data-cache URL, an object store every host reaches, or the same files on "
                "every host")
    return None


PACKAGE_FOLDER = str(Path(__file__).resolve().parents[1])
"""dolb's own code: a failed cell's error names the last place in it that the error passed."""


def error_text(exc: BaseException) -> str:
    """What a failed cell stores, on one line: a DolbError's message (the user's
    mistake), else the type and message and where dolb raised it (a bug's file, line
    and function; the innermost frame of dolb's own code)."""
    if isinstance(exc, DolbError):
        return str(exc)
    message = " ".join(str(exc).split())
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    if isinstance(exc, MemoryError):
        text += " (the cell needs more memory than its worker has)"
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [frame for frame in frames if frame.filename.startswith(PACKAGE_FOLDER)] or frames
    if ours:
        frame = ours[-1]
        shown = frame.filename.removeprefix(PACKAGE_FOLDER.rsplit(os.sep, 1)[0] + os.sep)
        text += f" [{shown}:{frame.lineno} in {frame.name}]"
    return text


@functools.lru_cache(maxsize=4)
def _store(root: str) -> ResultStore:
    """The result store of a sweep's folder, made once per worker process (its file
    system resolved once, not once per task)."""
    return ResultStore(root)


FAULTS: dict[str, str] = {}
"""The object store's fault each run met in this process, by run id: the run stops, and
its tasks still queued here tell it at once instead of each waiting out the store's
retries again."""


def run_batch(batch: Batch, destination: Destination) -> TaskOutcome:
    """Run every cell of ``batch``; a cell that raises is stored as failed, with its
    error, and the others go on. An object store's fault is no cell's failure: the task
    stops there, writes nothing and tells it (``storage_error``), and the run stops."""
    if destination.run_id in FAULTS:
        return TaskOutcome(storage_error=FAULTS[destination.run_id])
    rows = CellRows(destination.schema, destination.run_id, worker_name())
    outcome = TaskOutcome()
    states = CellStates(_store(destination.store)) if destination.keep_states else None
    for group, indices in batch:
        coordinates = group.coordinates
        for index in indices.tolist():
            cell = group.cell(index)
            where = coordinates | {"split": index}
            started = time.perf_counter()
            try:
                result = run_cell(cell, states)
                rows.add_ok(cell.id, where, result)
            except Exception as exc:
                fault = setup_fault(exc, cell, destination)
                if fault is not None:
                    FAULTS[destination.run_id] = fault
                    return TaskOutcome(storage_error=fault)
                stored = error_text(exc)
                outcome.failures.append((cell.id, stored))
                rows.add_failed(cell.id, where, stored)
            else:  # a failed cell may stop at once: it tells nothing of the pace
                add_saves(outcome.state_saves, result["timing"])
                if cell.spec.tuning is not None:
                    outcome.losses[cell.id] = trial_loss(result, cell.spec.metrics[0])
                cells, seconds = outcome.paces.get(group.n_train, (0, 0.0))
                outcome.paces[group.n_train] = (cells + 1, seconds + time.perf_counter() - started)
            outcome.cells.append(cell.id)
    table = rows.table()
    if destination.store is not None:
        try:
            outcome.part = _store(destination.store).write_part(table)
        except Exception as exc:  # told, not raised: Dask would retry it and log a traceback
            fault = as_store_fault(exc, destination.store)
            if fault is None and not isinstance(exc, StorageError):
                raise
            fault = fault and located(fault)
            outcome.storage_error = str(fault or exc)
            if fault is not None:
                FAULTS[destination.run_id] = str(fault)
    else:
        outcome.rows = to_ipc(table)
    return outcome


def _store_of(cell: Cell, destination: Destination) -> str:
    """The URL a store fault met in ``cell`` is named by: its dataset's when that is
    behind one (cells read it most), else the result folder's (its saved states)."""
    return next((path for path in (cell.train_path, cell.test_path) if is_url(path)), destination.store or "")


def trial_loss(result: dict, metric: str) -> float:
    """A tuning trial's validation loss: the value of ``metric`` its result row holds
    (the last one, were there several: as a key of the stored rows keeps), NaN if none.

    >>> trial_loss({"metrics": {"online": {"n": [3.0]}, "last": {"test_error": [0.25]}}}, "test_error")
    0.25
    """
    found = [v for values in result["metrics"].values() for v in values.get(metric, ()) if v is not None]
    return float(found[-1]) if found else float("nan")


def to_ipc(table: pa.Table) -> bytes:
    """``table`` as Arrow IPC stream bytes."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def from_ipc(data: bytes) -> pa.Table:
    """The table :func:`to_ipc` wrote."""
    return pa.ipc.open_stream(data).read_all()


def can_write(store: str, token: str, dask_worker=None) -> bool | str:
    """Whether this process sees the probe file ``token`` the client wrote in the
    result folder (then it can write parts there too); the fault that stopped it from
    looking, naming this host (:func:`~dolb.execution.where.located`), when the folder's
    object store failed or this host has no credentials for it. ``dask_worker``: the
    worker, as ``client.run`` gives it."""
    try:
        return ResultStore(store).read_text(f".probe-{token}") == token
    except Exception as exc:
        fault = as_store_fault(exc, store)
        if fault is None:
            raise
        return str(located(fault, None if dask_worker is None else dask_worker.address))
