"""What a sweep's task carries: its batch and destination as bytes, and the function it
calls, in a module that imports nothing heavy.

The scheduler unpickles every task it is sent, which imports the module of the task's
function and of every object among its arguments. A batch of :class:`CellGroup` objects
would make it import ``dolb.experiment.cells`` and with it the learners, Numba and
pandas: 1.5–2.4 s of a scheduler's start while every worker idles, and the CPU of
unpickling every batch. As bytes, pickled on the client and unpickled on the worker,
the batch costs the scheduler nothing but the bytes, and the scheduler imports only
this module.
"""

from __future__ import annotations

import functools
import pickle


def encode(value) -> bytes:
    """``value`` pickled, for a task's arguments."""
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


@functools.lru_cache(maxsize=4)
def _decoded(data: bytes):
    """A destination unpickled once per worker (every task of a sweep sends the same)."""
    return pickle.loads(data)


def run_batch(batch: bytes, destination: bytes):
    """The function of a sweep's task: :func:`dolb.execution.tasks.run_batch` of the
    batch and destination :func:`encode` made (imported here, on the worker). Datasets
    behind a URL reopen as the batch is unpickled: their object store out of reach is
    told as a cell's would be (the run stops), not raised (Dask would retry the task)."""
    from dolb.errors import StoreFault
    from dolb.execution.tasks import TaskOutcome
    from dolb.execution.tasks import run_batch as run

    try:
        cells = pickle.loads(batch)
    except StoreFault as exc:
        return TaskOutcome(storage_error=str(exc))
    return run(cells, _decoded(destination))


def call(function_and_arguments: bytes):
    """The function of any other task whose arguments would make the scheduler import
    dolb's heavy modules: ``function(*arguments)`` of ``encode((function, arguments))``."""
    function, arguments = pickle.loads(function_and_arguments)
    return function(*arguments)
