"""Run one cell: stream its training rows through its learner, test-then-train, and
record every metric at every checkpoint.

This is what a Dask task executes for each cell of its batch. A long cell can save its
state (learner, conversions, metrics so far, position in the stream) every
``state_every`` seconds; run again, it resumes from there and gives results identical
to an uninterrupted run, because it resumes at a block boundary of the same stream.
A state holds what the learner has learned (its conversions' logs up to the rows
learned: see :meth:`dolb.conversions.protocol.Fed.in_use`), never the data.
"""

from __future__ import annotations

import functools
import pickle
import time
from typing import Any, Protocol

import numpy as np
import psutil

from dolb.data.splits import labelled_rows, split_rows, validation_rows
from dolb.data.store import ChunkCache, Dataset, open_dataset
from dolb.data.stream import stream_blocks
from dolb.errors import DataError, DolbError
from dolb.evaluation.cell import Cell
from dolb.evaluation.checkpoints import resolve_checkpoints
from dolb.evaluation.metrics import METRICS
from dolb.learners import learner_class
from dolb.seeding import seed_for


class CellLimitError(DolbError):
    """A cell ran longer, or made its worker grow larger, than the pipeline allows."""


PROCESS = psutil.Process()


class StateKeeper(Protocol):
    """Where long cells keep their saved states, by cell id (in a result folder:
    :class:`dolb.results.states.CellStates`)."""

    def load(self, cell_id: str) -> bytes | None: ...

    def save(self, cell_id: str, data: bytes) -> None: ...

    def drop(self, cell_id: str) -> None: ...


def _check_limits(cell: Cell, started: float, seen: int) -> None:
    """Raise CellLimitError when ``cell`` is past its time or memory limit (checked
    between blocks: a single block is never interrupted)."""
    if cell.timeout is not None and time.perf_counter() - started > cell.timeout:
        raise CellLimitError(f"cell exceeded its time limit of {cell.timeout:g} s after {seen} examples")
    if cell.memory is not None:
        rss = PROCESS.memory_info().rss
        if rss > cell.memory:
            raise CellLimitError(
                f"cell exceeded its memory limit of {cell.memory / 2**20:.0f} MiB "
                f"(worker at {rss / 2**20:.0f} MiB) after {seen} examples"
            )


STATE_SAVES = ("state_saves", "state_bytes", "state_largest", "state_seconds")
"""What a cell's ``timing`` counts of the states it saved: how many, their bytes in all,
the largest, the seconds saving took (pickling included)."""

BLOCK_SIZE = 8192
"""Rows of a cell's block, at least."""
WORKER_CHUNK_CACHE = ChunkCache(max_bytes=64 << 20)
"""Decoded chunks kept by a worker process across cells: many small cells on one
dataset (1000 sequences of 150 rows, say) then decode each chunk once."""


def block_rows(learner: type, dataset: Dataset) -> int:
    """Rows of a cell's blocks: :data:`BLOCK_SIZE`, or for sparse rows and a learner
    with ``block_values`` as many as hold that many values on average. A block costs
    the linear learners Python around their compiled pass (its checks and arrays, the
    driver's call: 25-35 µs inside a pass), which short rows pay often: a9a's 14 values
    a row come in one block of 32,561 rows instead of four.

    >>> from dolb.learners import learner_class
    >>> a9a_like = type("Store", (), {"sparse": True, "n_rows": 32_561, "indptr": np.array([0, 451_592])})
    >>> block_rows(learner_class("perceptron"), a9a_like), block_rows(learner_class("batch_mr"), a9a_like)
    (75605, 8192)
    """
    if learner.block_values is None or not dataset.sparse or dataset.n_rows == 0:
        return BLOCK_SIZE
    values_per_row = max(1.0, float(dataset.indptr[-1]) / dataset.n_rows)
    return max(BLOCK_SIZE, int(learner.block_values / values_per_row))


@functools.lru_cache(maxsize=16)
def _dataset(path: str) -> Dataset:
    """Datasets stay open for the life of a worker process (metadata only)."""
    return open_dataset(path)


@functools.lru_cache(maxsize=8)
def _test_set(path: str, fingerprint: str, rows: tuple[int, ...] | None, task: str):
    """The test set of a split, loaded once per worker process and kept while cells
    of the same split follow."""
    X, y = _dataset(path).read(slice(None) if rows is None else np.asarray(rows, dtype=np.int64))
    return X, _targets(y, task, path)


def _targets(y: np.ndarray, task: str, where: str) -> np.ndarray:
    if y.ndim != 1:
        raise DataError(f"{where}: a {task} task needs one target per row, the store has {y.shape[1]}")
    y = y.astype(np.float64)
    if task == "binary" and not np.all(np.abs(y) == 1.0):
        bad = int(np.flatnonzero(np.abs(y) != 1.0)[0])
        raise DataError(f"{where}: binary task needs labels -1/+1, row {bad} has {y[bad]!r}")
    return y


def cell_rows(cell: Cell, train: Dataset) -> tuple[np.ndarray, np.ndarray | None, str | None]:
    """The rows ``cell`` learns from (in order), the rows it is tested on (None: the
    test part's), and the file those are in. A tuning trial learns from its split's
    training rows less a seeded holdout, and is tested on that holdout (or, with
    progressive validation, on nothing but the stream)."""
    spec = cell.spec
    split = spec["split"]
    train_rows, test_rows = split_rows(
        split["scheme"],
        split["index"],
        train.n_rows,
        seed_for(spec["seed"], "split", spec["dataset"], split["index"]),
        length=split["length"],
        test_fraction=split["test_fraction"] or 0.2,
        order=split["order"],
        window=split.get("window"),
    )
    trial = spec.get("tuning")
    if trial is None:
        return train_rows, test_rows, cell.train_path if test_rows is not None else cell.test_path
    if trial["validation"] != "holdout":
        return train_rows, None, None
    seed = seed_for(spec["seed"], "validation", spec["dataset"], split["index"], trial["seed"])
    learn, held = validation_rows(train_rows, trial["holdout"], seed)
    return learn, held, cell.train_path


def run_cell(cell: Cell, states: StateKeeper | None = None) -> dict[str, Any]:
    """Run ``cell``; return its result record (deterministic but for ``timing``).

    Parameters
    ----------
    cell : Cell
        The cell.
    states : StateKeeper, optional
        Where the cell saves its state every ``cell.state_every`` seconds and looks for
        a state to resume from, by cell id (``load``, ``save`` and ``drop``, as
        :class:`dolb.results.states.CellStates` does in a result folder); its states are
        dropped once the cell is done; its ``timing`` counts the saves
        (:data:`STATE_SAVES`). A tuning trial's rung also resumes from the state its
        previous rung left under ``cell.trial_state``, and leaves its own there.
    """
    spec = cell.spec
    started, cpu_started = time.perf_counter(), time.process_time()
    train = _dataset(cell.train_path)
    train_rows, test_rows, test_path = cell_rows(cell, train)
    checkpoints = resolve_checkpoints(spec["checkpoints"], len(train_rows))
    labels = spec.get("labels")
    labelled = None if labels is None else labelled_rows(
        len(train_rows), labels["rate"], labels["first"], seed_for(spec["seed"], "labels", spec["dataset"],
                                                                   spec["split"]["index"]))
    metrics = [METRICS[name] for name in spec["metrics"]]
    test_metrics = [m for m in metrics if m.source == "test"]
    if test_metrics:
        X_test, y_test = _test_set(
            test_path,
            _dataset(test_path).fingerprint,
            None if test_rows is None else tuple(test_rows.tolist()),
            spec["task"],
        )
    periodic = states if cell.state_every is not None else None
    state, kept = _start(cell, states, len(train_rows), train.n_features)
    resumed_from = state["seen"]
    learner, values = state["learner"], state["values"]
    seen, total, next_cp = state["seen"], state["total"], state["next_cp"]
    learn_seconds = state.get("learn_seconds", 0.0)  # a state saved before timing was kept has none
    peak_rss, saved = 0, time.perf_counter()
    saves = dict.fromkeys(STATE_SAVES, 0)
    # the learner's diagnostics, test and timing metrics need the state after exactly n examples
    exact = bool(test_metrics or learner.diagnostics() or any(m.source == "timing" for m in metrics))

    def record(k: int, n: int, cumulative: float) -> None:
        """Values at checkpoint ``k`` (after ``n`` examples)."""
        online = values.setdefault("online", {})
        for metric in metrics:
            if metric.source == "online":
                _put(online, metric.name, k, metric.compute(cumulative, n))
            elif metric.source == "timing":
                _put(online, metric.name, k, metric.compute(learn_seconds, n))
        for key, value in learner.diagnostics().items():
            _put(online, key, k, float(value))
        if not test_metrics:
            return
        for conversion, hypothesis in learner.outputs().items():
            scores = hypothesis.predict(X_test)
            found = values.setdefault(conversion, {})
            for metric in test_metrics:
                _put(found, metric.name, k, metric.compute(scores, y_test))
            for key, value in hypothesis.info.items():
                _put(found, key, k, float(value))

    def now_state() -> dict[str, Any]:
        return {"learner": learner, "values": values, "seen": seen, "total": total, "next_cp": next_cp,
                "learn_seconds": learn_seconds}

    # A resumed cell starts at a block boundary of the same stream (states are saved only
    # after whole blocks), so its blocks, and every sum over them, are the same.
    # Nothing is recorded after the last checkpoint: the stream stops there (the learner
    # still knows the split's full length, n_train, for horizon-dependent steps).
    last = int(checkpoints[-1]) if len(checkpoints) else len(train_rows)
    for low, high in _pieces(spec, last):
        if high <= seen:
            continue
        blocks = stream_blocks(train, rows=train_rows[max(low, seen):high],
                               block_size=block_rows(type(learner), train),
                               cache=WORKER_CHUNK_CACHE, in_place=learner.reads_spans)
        for X, y in blocks:
            y = _targets(y, spec["task"], cell.train_path)
            start = 0
            while start < len(y):
                # With test metrics or diagnostics the block is cut at each checkpoint (the
                # learner must be the one after exactly that many examples); online metrics
                # need no cut.
                stop = len(y)
                if exact and next_cp < len(checkpoints):
                    stop = min(stop, int(checkpoints[next_cp]) - seen + start)
                flags = None if labelled is None else labelled[seen : seen + stop - start]
                learning = time.perf_counter()
                whole = start == 0 and stop == len(y)  # not sliced: a slice copies, and loses the block's flags
                running = learner.learn_running(X if whole else X[start:stop], y[start:stop], flags, total)
                learn_seconds += time.perf_counter() - learning
                end = seen + (stop - start)
                while next_cp < len(checkpoints) and checkpoints[next_cp] <= end:
                    n = int(checkpoints[next_cp])
                    record(next_cp, n, float(running[n - seen - 1]))
                    next_cp += 1
                total = float(running[-1]) if len(running) else total
                seen, start = end, stop
                _check_limits(cell, started, seen)
            peak_rss = max(peak_rss, PROCESS.memory_info().rss)  # sampled once a block
            now = time.perf_counter()
            if periodic is not None and seen < last and now - saved >= cell.state_every:
                size = _save_state(periodic, cell.id, now_state())
                saved, kept = time.perf_counter(), True
                add_saves(saves, {"state_saves": 1, "state_bytes": size, "state_largest": size,
                                  "state_seconds": saved - now})
    if states is not None and cell.trial_state is not None and spec["tuning"]["save"]:
        _save_state(states, cell.trial_state, now_state())  # where the trial's next rung starts
    if kept:
        states.drop(cell.id)
    return {
        "id": cell.id,
        "status": "ok",
        "n_train": len(train_rows),
        "checkpoints": checkpoints.tolist(),
        "metrics": values,
        "timing": {
            "cell_seconds": time.perf_counter() - started,
            "cell_cpu_seconds": time.process_time() - cpu_started,
            "cell_peak_rss": peak_rss,
            "resumed_from": resumed_from,
            **saves,
        },
    }


def _start(cell: Cell, states: StateKeeper | None, n_train: int, n_features: int) -> tuple[dict[str, Any], bool]:
    """The state ``cell`` starts from, and whether it is one of its own saves (to drop
    once it is done): its own last save, else (a tuning trial) the state its previous
    rung left, recording anew from there, else a new learner."""
    spec = cell.spec
    state = _load_state(states if cell.state_every is not None else None, cell.id)
    if state is not None:
        return state, True
    state = _load_state(states, cell.trial_state) if cell.trial_state is not None else None
    if state is not None:
        return state | {"values": {}, "next_cp": 0}, False
    learner = learner_class(spec["learner"])(
        n_features, n_train=n_train, conversions=tuple(spec["conversions"]), **spec["params"]
    )
    # values[conversion][metric] -> one value per checkpoint; online metrics under "online"
    return {"learner": learner, "values": {}, "seen": 0, "total": 0.0, "next_cp": 0, "learn_seconds": 0.0}, False


def _pieces(spec: dict[str, Any], last: int) -> list[tuple[int, int]]:
    """The pieces of the stream learned one after another: the whole of it up to
    ``last``, or a tuning trial's rungs (``[0, b0)``, ``[b0, b1)``...), whether it resumes
    from the previous rung's state or starts anew (its blocks are then the same)."""
    ends = spec["tuning"]["budgets"] if "tuning" in spec else [last]
    return list(zip([0, *ends[:-1]], ends))


def _put(table: dict[str, list], key: str, k: int, value: float) -> None:
    """``table[key][k] = value``, checkpoints before ``k`` where the key was not reported
    (a diagnostic that appears later, such as a model-selection switch) holding None."""
    column = table.setdefault(key, [])
    column.extend([None] * (k - len(column)))
    column.append(value)


def _save_state(states: StateKeeper, cell_id: str, state: dict[str, Any]) -> int:
    """Save a cell's state (whole or not at all: see ``states``); return its size in
    bytes."""
    data = pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
    states.save(cell_id, data)
    return len(data)


def add_saves(total: dict[str, float], saves: dict[str, float]) -> None:
    """Add ``saves`` (a cell's timing, or another total) to ``total``: the largest
    state is the larger one, the rest add up.

    >>> total = {}
    >>> add_saves(total, {"state_saves": 2, "state_bytes": 30, "state_largest": 20, "state_seconds": 0.5})
    >>> add_saves(total, {"state_saves": 1, "state_bytes": 25, "state_largest": 25, "state_seconds": 0.25})
    >>> total
    {'state_saves': 3, 'state_bytes': 55, 'state_largest': 25, 'state_seconds': 0.75}
    """
    for key in STATE_SAVES:
        value = saves.get(key, 0)
        total[key] = max(total.get(key, 0), value) if key == "state_largest" else total.get(key, 0) + value


def _load_state(states: StateKeeper | None, cell_id: str) -> dict[str, Any] | None:
    """The state a cell saved (its id names the spec, data and version it belongs
    to), or None."""
    data = None if states is None else states.load(cell_id)
    return None if data is None else pickle.loads(data)


def warm_up(cell: Cell) -> None:
    """Compile (or load from Numba's cache) the kernels ``cell`` runs: learn, the online
    loss, its conversions' outputs and predict, on two rows of its own training data, so
    that a worker's first cell does not pay for them."""
    train = _dataset(cell.train_path)
    X, y = train.read(np.arange(min(2, train.n_rows)))
    spec = cell.spec
    learner = learner_class(spec["learner"])(
        train.n_features, n_train=len(y), conversions=tuple(spec["conversions"]), **spec["params"]
    )
    y = _targets(y, spec["task"], cell.train_path)
    learner.learn_running(X, y)
    for hypothesis in learner.outputs().values():
        hypothesis.predict(X)
