"""Run one cell: stream its training rows through its learner, test-then-train, and
record every metric at every checkpoint.

This is what a Dask task executes for each cell of its batch. A long cell can save its
state (learner, conversions, metrics so far, position in the stream) every
``state_every`` seconds; run again, it resumes from there and gives results identical
to an uninterrupted run, because it resumes at a block boundary of the same stream
(:mod:`dolb.evaluation.saved_states`).

:func:`run_cell` reads as the steps of a cell: the rows it learns and is tested on
(:func:`cell_rows`), where it starts (:class:`Progress`: new, or a saved state), its
blocks (:func:`_blocks`), each learned and recorded at the checkpoints it passes
(:func:`_learn_block`, :class:`Recorder`), states saved between blocks
(:class:`~dolb.evaluation.saved_states.PeriodicSaves`), and its result record.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from dolb.data.blocks import row_range
from dolb.data.labels import check_binary
from dolb.data.splits import labelled_rows, split_rows, validation_rows
from dolb.data.store import ChunkCache, Dataset, open_dataset
from dolb.data.stream import stream_blocks
from dolb.errors import DataError, DatasetChanged, DolbError
from dolb.evaluation import saved_states
from dolb.evaluation.cell import Cell, CellSpec
from dolb.evaluation.checkpoints import resolve_checkpoints
from dolb.evaluation.metrics import METRICS
from dolb.evaluation.resident import resident_bytes
from dolb.evaluation.saved_states import PeriodicSaves, StateKeeper, load_state
from dolb.learners import OnlineLearner, learner_class
from dolb.seeding import seed_for


class CellLimitError(DolbError):
    """A cell ran longer, or made its worker grow larger, than the pipeline allows."""


def _check_limits(cell: Cell, started: float, seen: int) -> None:
    """Raise CellLimitError when ``cell`` is past its time or memory limit (checked
    between blocks: a single block is never interrupted)."""
    if cell.timeout is not None and time.perf_counter() - started > cell.timeout:
        raise CellLimitError(f"cell exceeded its time limit of {cell.timeout:g} s after {seen} examples")
    if cell.memory is not None:
        rss = resident_bytes()
        if rss > cell.memory:
            raise CellLimitError(
                f"cell exceeded its memory limit of {cell.memory / 2**20:.0f} MiB "
                f"(worker at {rss / 2**20:.0f} MiB) after {seen} examples"
            )


BLOCK_SIZE = 8192
"""Rows of a cell's block, at least."""
WORKER_CHUNK_CACHE = ChunkCache(max_bytes=64 << 20)
"""Decoded chunks kept by a worker process across cells: many small cells on one
dataset (1000 sequences of 150 rows, say) then decode each chunk once."""


def block_rows(learner: type, dataset: Dataset) -> int:
    """Rows of a cell's blocks: :data:`BLOCK_SIZE`, or for sparse rows and a learner
    with ``block_values`` as many as hold that many values on average: a block costs
    the linear learners Python around their compiled pass, which short rows would pay
    often (docs/design/linear-driver.md).

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


def _planned(path: str, fingerprint: str) -> Dataset:
    """The dataset at ``path``, checked to be the one the cell was planned with: its
    fingerprint is ``fingerprint``, else :class:`~dolb.errors.DatasetChanged`."""
    dataset = _dataset(path)
    if dataset.fingerprint != fingerprint:
        raise DatasetChanged(path)
    return dataset


@functools.lru_cache(maxsize=8)
def _test_set(path: str, fingerprint: str, rows: tuple[int, ...] | None, task: str):
    """The test set of a split, loaded once per worker process and kept while cells
    of the same split follow."""
    X, y = _dataset(path).read(slice(None) if rows is None else np.asarray(rows, dtype=np.int64))
    return X, _targets(y, task, path)


@functools.lru_cache(maxsize=64)
def _checkpoints(spec: tuple | str, n_train: int) -> np.ndarray:
    """The training sizes of :func:`~dolb.evaluation.checkpoints.resolve_checkpoints`,
    resolved once for the cells that share them (read-only)."""
    sizes = resolve_checkpoints(spec, n_train)
    sizes.flags.writeable = False
    return sizes


def _targets(y: np.ndarray, task: str, where: str) -> np.ndarray:
    if y.ndim != 1:
        raise DataError(f"{where}: a {task} task needs one target per row, the store has {y.shape[1]}")
    if task == "binary":
        check_binary(y, where)
    return y.astype(np.float64)


def cell_rows(cell: Cell, train: Dataset) -> tuple[np.ndarray, np.ndarray | None, str | None]:
    """The rows ``cell`` learns from (in order), the rows it is tested on (None: the
    test part's), and the file those are in. A tuning trial learns from its split's
    training rows less a seeded holdout, and is tested on that holdout (or, with
    progressive validation, on nothing but the stream)."""
    spec = cell.spec
    split = spec.split
    train_rows, test_rows = split_rows(
        split.scheme,
        split.index,
        train.n_rows,
        seed_for(spec.seed, "split", spec.dataset, split.index),
        length=split.length,
        test_fraction=split.test_fraction or 0.2,
        order=split.order,
        window=split.window,
    )
    trial = spec.tuning
    if trial is None:
        return train_rows, test_rows, cell.train_path if test_rows is not None else cell.test_path
    if trial.validation != "holdout":
        return train_rows, None, None
    seed = seed_for(spec.seed, "validation", spec.dataset, split.index, trial.seed)
    learn, held = validation_rows(train_rows, trial.holdout, seed)
    return learn, held, cell.train_path


@dataclass
class Progress:
    """How far a cell got: its learner, the values recorded, examples learned and their
    cumulative online loss, the next checkpoint, seconds spent learning. It is what a
    state saves (:meth:`state`)."""

    learner: Any
    values: dict[str, dict[str, list]]
    """values[conversion][metric]: one value per checkpoint; online metrics under "online"."""
    seen: int = 0
    total: float = 0.0
    next_cp: int = 0
    learn_seconds: float = 0.0

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> Progress:
        """The progress a saved state holds (one saved before timing was kept has no
        ``learn_seconds``)."""
        return cls(state["learner"], state["values"], state["seen"], state["total"], state["next_cp"],
                   state.get("learn_seconds", 0.0))

    def state(self) -> dict[str, Any]:
        """What a state saves."""
        return {"learner": self.learner, "values": self.values, "seen": self.seen, "total": self.total,
                "next_cp": self.next_cp, "learn_seconds": self.learn_seconds}


class Recorder:
    """Records a cell's metrics, its learner's diagnostics and its hypotheses' info at
    each checkpoint, into a :class:`Progress`'s values.

    Parameters
    ----------
    cell : Cell
        The cell.
    test_rows, test_path
        Its test set (see :func:`cell_rows`), read only when it has test metrics.
    learner
        Its learner (whose diagnostics need the state after exactly n examples).
    """

    def __init__(self, cell: Cell, test_rows: np.ndarray | None, test_path: str | None, learner) -> None:
        spec = cell.spec
        self.metrics = [METRICS[name] for name in spec.metrics]
        self.test_metrics = [m for m in self.metrics if m.source == "test"]
        if self.test_metrics:
            self.X_test, self.y_test = _test_set(
                test_path,
                _dataset(test_path).fingerprint,
                None if test_rows is None else tuple(test_rows.tolist()),
                spec.task,
            )
        self.exact = bool(self.test_metrics or learner.diagnostics() or any(m.source == "timing" for m in self.metrics))
        """Whether blocks are cut at checkpoints: test metrics, diagnostics and timing
        need the learner after exactly n examples; online metrics need no cut."""

    def record(self, progress: Progress, k: int, n: int, cumulative: float) -> None:
        """Values at checkpoint ``k`` (after ``n`` examples, ``cumulative`` online loss)."""
        online = progress.values.setdefault("online", {})
        for metric in self.metrics:
            if metric.source == "online":
                _put(online, metric.name, k, metric.compute(cumulative, n))
            elif metric.source == "timing":
                _put(online, metric.name, k, metric.compute(progress.learn_seconds, n))
        for key, value in progress.learner.diagnostics().items():
            _put(online, key, k, float(value))
        if not self.test_metrics:
            return
        for conversion, hypothesis in progress.learner.outputs().items():
            scores = hypothesis.predict(self.X_test)
            found = progress.values.setdefault(conversion, {})
            for metric in self.test_metrics:
                _put(found, metric.name, k, metric.compute(scores, self.y_test))
            for key, value in hypothesis.info.items():
                _put(found, key, k, float(value))


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
        (:data:`~dolb.evaluation.saved_states.STATE_SAVES`). A tuning trial's rung also
        resumes from the state its previous rung left under ``cell.trial_state``, and
        leaves its own there.
    """
    started, cpu_started = time.perf_counter(), time.process_time()
    train = _planned(cell.train_path, cell.spec.train_fingerprint)
    if cell.test_path is not None and cell.spec.test_fingerprint is not None:  # a tuning's trial reads no test part
        _planned(cell.test_path, cell.spec.test_fingerprint)
    train_rows, test_rows, test_path = cell_rows(cell, train)
    checkpoints = _checkpoints(cell.spec.checkpoints, len(train_rows))
    progress, own_state = _start(cell, states, len(train_rows), train.n_features)
    resumed_from = progress.seen
    recorder = Recorder(cell, test_rows, test_path, progress.learner)
    saves = PeriodicSaves(states, cell.id, cell.state_every)
    labelled = _labelled(cell, len(train_rows))
    # Nothing is recorded after the last checkpoint: the stream stops there (the learner
    # still knows the split's full length, n_train, for horizon-dependent steps).
    last = int(checkpoints[-1]) if len(checkpoints) else len(train_rows)
    peak_rss = 0
    for X, y in _blocks(cell, train, train_rows, progress, last):
        _learn_block(cell, progress, recorder, checkpoints, X, y, labelled, started)
        peak_rss = max(peak_rss, resident_bytes())  # sampled once a block
        if progress.seen < last:
            saves.maybe_save(progress.state())
    _leave_states(cell, states, progress, own_state or saves.any)
    timing = {
        "cell_seconds": time.perf_counter() - started,
        "cell_cpu_seconds": time.process_time() - cpu_started,
        "cell_peak_rss": peak_rss,
        "resumed_from": resumed_from,
        **saves.counts,
    }
    return {"id": cell.id, "status": "ok", "n_train": len(train_rows), "checkpoints": checkpoints.tolist(),
            "metrics": progress.values, "timing": timing}


def _labelled(cell: Cell, n_train: int) -> np.ndarray | None:
    """Which rows of a semi-supervised cell's stream reveal their label (None: all)."""
    spec = cell.spec
    if spec.labels is None:
        return None
    seed = seed_for(spec.seed, "labels", spec.dataset, spec.split.index)
    return labelled_rows(n_train, spec.labels.rate, spec.labels.first, seed)


def _blocks(cell: Cell, train: Dataset, rows: np.ndarray, progress: Progress, last: int) -> Iterator:
    """The blocks ``(X, y)`` still to learn, piece after piece (see :func:`_pieces`).

    A resumed cell starts at a block boundary of the same stream (states are saved only
    after whole blocks), so its blocks, and every sum over them, are the same."""
    for low, high in _pieces(cell.spec, last):
        if high <= progress.seen:
            continue
        blocks = stream_blocks(train, rows=rows[max(low, progress.seen):high],
                               block_size=block_rows(type(progress.learner), train),
                               cache=WORKER_CHUNK_CACHE, in_place=progress.learner.reads_spans)
        for X, y in blocks:
            yield X, _targets(y, cell.spec.task, cell.train_path)


def _learn_block(cell: Cell, progress: Progress, recorder: Recorder, checkpoints: np.ndarray, X, y: np.ndarray,
                 labelled: np.ndarray | None, started: float) -> None:
    """Learn one block, recording at the checkpoints it passes; with ``recorder.exact``
    the block is cut at each checkpoint (the learner must be the one after exactly
    that many examples)."""
    start = 0
    while start < len(y):
        stop = len(y)
        if recorder.exact and progress.next_cp < len(checkpoints):
            stop = min(stop, int(checkpoints[progress.next_cp]) - progress.seen + start)
        seen = progress.seen
        flags = None if labelled is None else labelled[seen : seen + stop - start]
        learning = time.perf_counter()
        whole = start == 0 and stop == len(y)
        running = progress.learner.learn_running(X if whole else row_range(X, start, stop), y[start:stop], flags,
                                                 progress.total)
        progress.learn_seconds += time.perf_counter() - learning
        end = seen + (stop - start)
        while progress.next_cp < len(checkpoints) and checkpoints[progress.next_cp] <= end:
            n = int(checkpoints[progress.next_cp])
            recorder.record(progress, progress.next_cp, n, float(running[n - seen - 1]))
            progress.next_cp += 1
        progress.total = float(running[-1]) if len(running) else progress.total
        progress.seen, start = end, stop
        _check_limits(cell, started, progress.seen)


def _leave_states(cell: Cell, states: StateKeeper | None, progress: Progress, drop_own: bool) -> None:
    """What a finished cell leaves: a tuning trial's rung the state its next rung starts
    from; its own saved states dropped."""
    if states is not None and cell.trial_state is not None and cell.spec.tuning.save:
        saved_states.save_state(states, rung_state(cell.trial_state, cell.spec.tuning.rung), progress.state())
    if drop_own:
        states.drop(cell.id)


def rung_state(trial_state: str, rung: int) -> str:
    """The name of the state a tuning trial leaves at ``rung`` for the next (its
    ``trial_state``, then the rung). Each rung has its own: a rung run again (its
    result lost with a client killed before it was committed) starts from its previous
    rung's state, which no later rung has replaced.

    >>> rung_state("0a1b", 2)
    '0a1br2'
    """
    return f"{trial_state}r{rung}"


def _start(cell: Cell, states: StateKeeper | None, n_train: int, n_features: int) -> tuple[Progress, bool]:
    """The progress ``cell`` starts from, and whether it is one of its own saves (to drop
    once it is done): its own last save, else (a tuning trial) the state its previous
    rung left, recording anew from there, else a new learner."""
    spec = cell.spec
    state = load_state(states if cell.state_every is not None else None, cell.id)
    if state is not None:
        return Progress.from_state(state), True
    rung = None if cell.trial_state is None else cell.spec.tuning.rung
    state = load_state(states, rung_state(cell.trial_state, rung - 1)) if rung else None
    if state is not None:
        return Progress.from_state(state | {"values": {}, "next_cp": 0}), False
    return Progress(_new_learner(spec, n_features, n_train), {}), False


def _new_learner(spec: CellSpec, n_features: int, n_train: int) -> OnlineLearner:
    """A new learner of ``spec``, its parameters taken as checked (the pipeline checked
    them, once per configuration: see ``checked`` of :class:`~dolb.learners.base.OnlineLearner`)."""
    return learner_class(spec.learner)(n_features, n_train=n_train, conversions=spec.conversions, checked=True,
                                       **spec.params)


def _pieces(spec: CellSpec, last: int) -> list[tuple[int, int]]:
    """The pieces of the stream learned one after another: the whole of it up to
    ``last``, or a tuning trial's rungs (``[0, b0)``, ``[b0, b1)``...), whether it resumes
    from the previous rung's state or starts anew (its blocks are then the same)."""
    ends = list(spec.tuning.budgets) if spec.tuning is not None else [last]
    return list(zip([0, *ends[:-1]], ends))


def _put(table: dict[str, list], key: str, k: int, value: float) -> None:
    """``table[key][k] = value``, checkpoints before ``k`` where the key was not reported
    (a diagnostic that appears later, such as a model-selection switch) holding None."""
    column = table.setdefault(key, [])
    column.extend([None] * (k - len(column)))
    column.append(value)


def warm_up(cell: Cell) -> None:
    """Compile (or load from Numba's cache) the kernels ``cell`` runs: learn, the online
    loss, its conversions' outputs and predict, on two rows of its own training data, so
    that a worker's first cell does not pay for them."""
    train = _dataset(cell.train_path)
    X, y = train.read(np.arange(min(2, train.n_rows)))
    spec = cell.spec
    learner = _new_learner(spec, train.n_features, len(y))
    y = _targets(y, spec.task, cell.train_path)
    learner.learn_running(X, y)
    for hypothesis in learner.outputs().values():
        hypothesis.predict(X)
