"""Worker processes forked from one that has imported dolb: the start of many workers on
one machine without each importing the same modules.

A Dask worker process started the default way (``spawn``) is a new interpreter that
imports Dask and dolb's tasks, learners, data stores and Numba, and initialises Numba's
compiler: ~1.1 CPU s to join its scheduler, ~1.7 by its first cell; 64 workers on 2
cores joined in 269 s (a busy machine; at best ~40 s). With Dask's ``forkserver``
method, one server process imports all that once (the modules of
:data:`FORKSERVER_MODULES`) and every worker process is a fork of it: a worker then
costs its own start and its handshake with the scheduler, ~0.12 CPU s (64 joined in
35 s on the same busy machine). Start the workers of a machine so::

    DASK_DISTRIBUTED__WORKER__MULTIPROCESSING_METHOD=forkserver \\
        dask worker SCHEDULER --nworkers 64 --nthreads 1 --preload-nanny dolb.execution.forkserver

This module, preloaded by the nannies (in the process that starts the workers), adds
dolb's modules to what the server imports, before it starts. With the ``spawn`` method
it does nothing. The server is started once, with the environment of ``dask worker``:
variables that must be set before NumPy or Numba are imported (one BLAS thread, a pinned
arithmetic's) must be set there, as for any worker.
"""

from __future__ import annotations

FORKSERVER_MODULES = ("distributed", "distributed.worker", "dolb.execution.worker_imports")
"""What the fork server imports before it forks any worker."""


def dask_setup(nanny) -> None:
    """Dask's hook of a nanny preload: the fork server imports :data:`FORKSERVER_MODULES`
    (Dask's own choice, made at its first call, is replaced: these import it too)."""
    from distributed.utils import get_mp_context

    context = get_mp_context()
    if context.get_start_method() == "forkserver":
        context.set_forkserver_preload(list(FORKSERVER_MODULES))
