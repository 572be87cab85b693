"""Computing cells on the cluster: batches submitted a bounded number at a time, their
outcomes taken as they come and their rows written (by the workers, or by the client
when the workers cannot reach the result folder)."""

from __future__ import annotations

import contextlib
import itertools
import sys
import uuid
from collections.abc import Callable, Iterator

import numpy as np
from distributed import as_completed
from tqdm import tqdm

from dolb.data.store.object_stores import store_fault
from dolb.errors import StorageError, StoreFault
from dolb.evaluation.saved_states import add_saves
from dolb.execution.batches import Batch, Batcher
from dolb.execution.gather import ClientWriter
from dolb.execution.lost_workers import run_on_workers
from dolb.execution.payload import encode, run_batch
from dolb.execution.phases import Phases
from dolb.execution.tasks import Destination, TaskOutcome, can_write, error_text
from dolb.experiment.cells import CellGroup
from dolb.results.store import ResultStore

WAKE_SECONDS = 10.0
"""How long the client waits for an outcome before it looks again whether any task is
left (each arrival wakes it at once: this is only a safety net; each wake costs the
client's CPU, a cost per second of the compute phase)."""
IN_FLIGHT_PER_WORKER = 2
"""Batches kept submitted per worker once a task has finished (one running, one waiting,
so a worker never waits for the client's round trip); more are sent as these complete.
Before any has finished, one per worker: those are cut before any cell was timed."""


def gather_mode(client, store: ResultStore, gather: str) -> str:
    """``"workers"`` when every worker can write into the result folder (or that was
    asked), else ``"client"``; StorageError naming the host of a worker that met a
    fault of the folder's object store (its credentials missing, say)."""
    if gather != "auto":
        return gather
    token = uuid.uuid4().hex
    probe = f".probe-{token}"
    store.write_text(probe, token)
    try:
        seen = run_on_workers(client, can_write, store.root, token)
    finally:
        store.fs.rm_file(f"{store.path}/{probe}")
    faults = sorted(answer for answer in seen.values() if isinstance(answer, str))
    if faults:
        raise StorageError(faults[0])
    return "workers" if seen and all(seen.values()) else "client"


def compute(
    client, batches: Batcher, total: int, destination: Destination, store: ResultStore, n_workers: int,
    progress: bool, phases: Phases, taken: Callable[[Batch, TaskOutcome], None] | None = None,
) -> tuple[int, dict[str, float]]:
    """Submit batches (a bounded number at a time, cut as they are submitted) and take
    their outcomes as they come, telling ``batches`` how long each took; return the
    number of failed cells and the states their cells saved (tasks that died tell
    none). ``total``: the cells, for the progress bar.

    The client's work is O(1) a task: a batch pickled and submitted (those cut at once
    in one message), its outcome (counts, cell ids, the name of its part) taken as it
    arrives, never a blocking round trip of its own.

    ``batches`` may have no batch ready while tasks run (its ``next`` then stops) and
    more once ``taken`` has been told a task's outcome: the computation ends when no
    task runs and no batch is ready (a tuning's :class:`~dolb.execution.ready.ReadyCells`
    is such a source, told by :meth:`~dolb.execution.tuning.TuningRun.taken`)."""
    submitter = Submitter(client, batches, destination)
    writer = ClientWriter(store, destination)
    queue = as_completed(submitter.submit(n_workers), with_results=True, raise_errors=False)
    n_failed, saves = 0, {}
    with (tqdm(total=total, unit="cell", disable=not progress, file=sys.stderr) as bar, phases("compute"),
          _tasks_ended_on_error(queue)):
        for done in arrivals(queue):
            outcomes = []
            for future, result in done:
                batch, outcome = submitter.outcome(future, result, writer)
                if outcome.storage_error:
                    raise StorageError(outcome.storage_error)
                batches.took(outcome.paces)  # none from a task that died
                if taken is not None:
                    taken(batch, outcome)
                outcomes.append(outcome)
            queue.update(submitter.submit(IN_FLIGHT_PER_WORKER * n_workers - submitter.in_flight))
            with phases("write"):
                for outcome in outcomes:
                    writer.take(outcome)
            for outcome in outcomes:
                n_failed += len(outcome.failures)
                add_saves(saves, outcome.state_saves)
                bar.update(outcome.n_cells)
    with phases("write"):
        writer.close()
    return n_failed, saves


def arrivals(queue: as_completed) -> Iterator[list]:
    """The outcomes of ``queue`` in batches as they arrive, as ``queue.batches()`` gives
    them, but waiting for each arrival: Dask's own loop wakes the waiting thread 10
    times a second to look, this one when a task's outcome arrives (and every
    :data:`WAKE_SECONDS` at most; why: docs/design/execution.md). It waits on the
    condition Dask notifies as it queues an outcome, and looks at the queue holding that
    condition, so an outcome queued in between is not missed."""
    while not queue.is_empty():
        with queue.thread_condition:
            if queue.queue.empty():
                queue.thread_condition.wait(timeout=WAKE_SECONDS)
        done = queue.next_batch(block=False)
        if done:
            yield done


@contextlib.contextmanager
def _tasks_ended_on_error(queue: as_completed) -> Iterator[None]:
    """On a result folder or an object store that fails (the run stops), wait for the
    tasks still running to end (each soon meets the same fault, within the store's
    retries) before the error goes on: then the cluster closes with its workers idle,
    none killed in the middle of a request (its nanny's warnings, Python's leaked
    semaphores on the terminal after the run's one line)."""
    try:
        yield
    except Exception as exc:
        if isinstance(exc, StorageError) or store_fault(exc) is not None:
            for _ in queue:
                pass
        raise


class Submitter:
    """Cuts batches and submits them as tasks of :func:`dolb.execution.payload.run_batch`,
    remembering each task's batch until its outcome is taken."""

    def __init__(self, client, batches: Batcher, destination: Destination) -> None:
        self.client, self.batches = client, batches
        self.destination = encode(destination)
        self.batch_of: dict[str, Batch] = {}

    @property
    def in_flight(self) -> int:
        """Tasks submitted whose outcome is not taken yet."""
        return len(self.batch_of)

    def submit(self, n: int) -> list:
        """Cut up to ``n`` batches and submit them in one message; their futures."""
        cut = list(itertools.islice(self.batches, max(n, 0)))
        if not cut:
            return []
        futures = self.client.map(run_batch, [encode(batch) for batch in cut], destination=self.destination,
                                  pure=False, retries=2)
        self.batch_of.update((future.key, batch) for future, batch in zip(futures, cut))
        return futures

    def outcome(self, future, result, writer: ClientWriter) -> tuple[Batch, TaskOutcome]:
        """The batch of ``future``'s task and its outcome (``result``); a task that died
        (its workers lost thrice) has its cells stored as failed by ``writer``."""
        batch = self.batch_of.pop(future.key)
        if future.status != "finished":
            try:
                future.result()
            except Exception as exc:  # whatever killed it is the cells' error, but an object store's fault
                if isinstance(exc, StoreFault) or store_fault(exc) is not None:  # the sweep names it
                    raise
                result = writer.failed_batch(batch, error_text(exc))
        future.release()
        return batch, result


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
