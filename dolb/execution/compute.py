"""Computing cells on the cluster: batches submitted a bounded number at a time, their
outcomes taken as they come and their rows written (by the workers, or by the client
when the workers cannot reach the result folder)."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable

import numpy as np
from distributed import as_completed
from tqdm import tqdm

from dolb.errors import StorageError
from dolb.evaluation.saved_states import add_saves
from dolb.execution.batches import Batch, Batcher
from dolb.execution.gather import ClientWriter
from dolb.execution.lost_workers import run_on_workers
from dolb.execution.phases import Phases
from dolb.execution.tasks import Destination, TaskOutcome, can_write, error_text, run_batch
from dolb.experiment.cells import CellGroup
from dolb.results.store import ResultStore

IN_FLIGHT_PER_WORKER = 4
"""Batches kept submitted per worker; more are sent as these complete."""


def warm_up_samples(todo: list[tuple[CellGroup, np.ndarray]]) -> list[tuple[str, list]]:
    """One cell per distinct learner, parameters, conversions and dataset, in groups of
    the same learner, conversions and dataset (whose kernels are the same, or nearly:
    what one worker warms; see :func:`dolb.execution.compile_once.warm_up_spread`), each
    with its key."""
    samples: dict[str, dict[str, object]] = {}
    for group, indices in todo:
        t = group.template
        kernels = repr((t.learner, t.conversions, group.train_path))
        samples.setdefault(kernels, {}).setdefault(repr(sorted(t.params.items())), group.cell(int(indices[0])))
    return [(key, list(cells.values())) for key, cells in samples.items()]


def gather_mode(client, store: ResultStore, gather: str) -> str:
    """``"workers"`` when every worker can write into the result folder (or that was
    asked), else ``"client"``."""
    if gather != "auto":
        return gather
    token = uuid.uuid4().hex
    probe = f".probe-{token}"
    store.write_text(probe, token)
    try:
        seen = run_on_workers(client, can_write, store.root, token)
    finally:
        store.fs.rm_file(f"{store.path}/{probe}")
    return "workers" if seen and all(seen.values()) else "client"


def compute(
    client, batches: Batcher, total: int, destination: Destination, store: ResultStore, n_workers: int,
    progress: bool, phases: Phases, taken: Callable[[Batch, TaskOutcome], None] | None = None,
) -> tuple[int, dict[str, float]]:
    """Submit batches (a bounded number at a time, cut as they are submitted) and take
    their outcomes as they come, telling ``batches`` how long each took; return the
    number of failed cells and the states their cells saved (tasks that died tell
    none). ``total``: the cells, for the progress bar.

    ``batches`` may have no batch ready while tasks run (its ``next`` then stops) and
    more once ``taken`` has been told a task's outcome: the computation ends when no
    task runs and no batch is ready (a tuning's :class:`~dolb.execution.ready.ReadyCells`
    is such a source, told by :meth:`~dolb.execution.tuning.TuningRun.taken`)."""
    batch_of = {}
    writer = ClientWriter(store, destination)
    queue = as_completed()

    def fill() -> None:
        while queue.count() < IN_FLIGHT_PER_WORKER * n_workers:
            batch = next(batches, None)
            if batch is None:
                return
            future = client.submit(run_batch, batch, destination, pure=False, retries=2)
            batch_of[future.key] = batch
            queue.add(future)

    n_failed, saves = 0, {}
    with tqdm(total=total, unit="cell", disable=not progress, file=sys.stderr) as bar, phases("compute"):
        fill()
        for future in queue:
            batch = batch_of.pop(future.key)
            try:
                outcome: TaskOutcome = future.result()
            except Exception as exc:
                outcome = writer.failed_batch(batch, error_text(exc))
            future.release()
            if outcome.storage_error:
                raise StorageError(outcome.storage_error)
            batches.took(outcome.paces)  # none from a task that died
            if taken is not None:
                taken(batch, outcome)
            fill()
            with phases("write"):
                writer.take(outcome, batch)
            n_failed += len(outcome.failures)
            add_saves(saves, outcome.state_saves)
            bar.update(outcome.n_cells)
    with phases("write"):
        writer.close()
    return n_failed, saves


class CellRunner:
    """Runs cells on the cluster: a list of them (:meth:`__call__`), or those a source
    makes ready as outcomes come (:meth:`run`: a sweep's tuning); counts what they did
    in all."""

    def __init__(self, client, destination: Destination, store: ResultStore, batch_examples: int, n_workers: int,
                 progress: bool, phases: Phases) -> None:
        self.client, self.destination, self.store = client, destination, store
        self.batch_examples, self.n_workers = batch_examples, n_workers
        self.progress, self.phases = progress, phases
        self.n_failed, self.n_tasks, self.saves = 0, 0, {}

    def __call__(self, todo: list[tuple[CellGroup, np.ndarray]]) -> int:
        """Run ``todo`` (groups, each with the split indices to run); return how many
        of its cells failed."""
        # the longest cells first, in batches that shrink as the sweep goes on: the
        # last ones are short, so no worker idles long at the end
        longest_first = sorted(todo, key=lambda item: -item[0].n_train)
        batches = Batcher(longest_first, self.batch_examples, n_workers=self.n_workers)
        return self.run(batches, sum(len(indices) for _, indices in todo))

    def run(self, batches, total: int, taken: Callable[[Batch, TaskOutcome], None] | None = None) -> int:
        """Run the cells ``batches`` cuts (see :func:`compute`; ``total``: the cells, for
        the progress bar); return how many failed."""
        n_failed, saves = compute(self.client, batches, total, self.destination, self.store, self.n_workers,
                                  self.progress, self.phases, taken)
        self.n_failed += n_failed
        self.n_tasks += batches.cut
        add_saves(self.saves, saves)
        return n_failed
