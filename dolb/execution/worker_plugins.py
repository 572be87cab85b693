"""The worker plugins of the embedded cluster: no HTTP server, dolb prepared as a worker
starts, a quick exit after a clean close, and no traceback when the client is gone; and
of every cluster a sweep runs on: kernels compiled once among workers sharing a cache."""

from __future__ import annotations

import atexit
import contextlib
import importlib
import logging
import os
import sys

from distributed import Worker
from distributed.diagnostics.plugin import WorkerPlugin


class NoHTTPServer(WorkerPlugin):
    """Closes the HTTP server a worker starts even without a dashboard (a plugin, so a
    worker its nanny restarts closes it too)."""

    name = "dolb-no-http-server"

    def setup(self, worker: Worker) -> None:
        worker.http_server.stop()


class Prepared(WorkerPlugin):
    """Prepares a worker for dolb's tasks as it starts, before it joins: imports dolb's
    tasks (learners, data stores) and initialises Numba's compiler (its typing and target
    contexts, most of a kernel warm-up whatever the kernels; best effort). With the
    embedded cluster started in the background, that happens while the client still
    plans the sweep, instead of when the kernel warm-up or the first task arrives."""

    name = "dolb-prepared"

    def setup(self, worker: Worker) -> None:
        importlib.import_module("dolb.execution.tasks")
        prepare_compiler()


def prepare_compiler() -> None:
    """Initialise Numba's compiler in this process: its typing and target contexts (best
    effort; once set up, a refresh costs nothing)."""
    with contextlib.suppress(Exception):
        from numba.core.registry import cpu_target

        cpu_target.typing_context.refresh()
        cpu_target.target_context.refresh()


class SharedCompilation(WorkerPlugin):
    """Makes a worker compile each cached kernel only under its file lock, so workers
    that share a Numba cache compile it once (:mod:`dolb.execution.compile_once`); and
    imports what the client's calls and the tasks use, once, before any task runs: two
    threads importing the same package at once (a call of the client's in the event
    loop, a warm-up task in a worker thread) may see it half imported (CPython's
    deadlock avoidance between module locks; seen with fsspec's)."""

    name = "dolb-shared-compilation"

    def setup(self, worker: Worker) -> None:
        import dolb.execution.compute
        import dolb.execution.tasks  # noqa: F401  (the cells' tasks)
        from dolb.execution.compile_once import share_compilation

        share_compilation()


class QuickExit(WorkerPlugin):
    """Ends a worker's process as soon as the worker has closed cleanly, without the
    interpreter's finalisation: a garbage collection over every module a worker holds
    (dolb's learners, Numba, pandas, DuckDB), ~1 s that the client waited for at the
    end of every run. Only after a clean close (:meth:`teardown` ran), whose exit
    status is 0 anyway; logs and standard streams are flushed first."""

    name = "dolb-quick-exit"

    def setup(self, worker: Worker) -> None:
        self.closed = False
        atexit.register(self._exit)

    def teardown(self, worker: Worker) -> None:
        self.closed = True

    def _exit(self) -> None:
        if self.closed:
            logging.shutdown()
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(0)


QUIET_AT_STOP = {
    "distributed.worker": ("Failed to communicate with scheduler during heartbeat", ""),
    "distributed.worker.state_machine": ("Async instruction for ", " ended with CancelledError"),
}
"""What an embedded worker logs as the client stops it, by logger: the error (with a
traceback) of a heartbeat that finds its scheduler gone, and the warning of each task
cancelled as the worker closes (``Async instruction for <Task cancelled ...> ended with
CancelledError``): logger -> how the message starts and ends."""


def _not_said_at_stop(record: logging.LogRecord) -> bool:
    """False for a record of :data:`QUIET_AT_STOP`."""
    start, end = QUIET_AT_STOP.get(record.name, (None, None))
    message = record.getMessage()
    return start is None or not (message.startswith(start) and message.endswith(end))


class QuietStop(WorkerPlugin):
    """Drops what an embedded worker logs when the client stops it mid-run
    (:data:`QUIET_AT_STOP`). The embedded cluster's scheduler runs in the client's
    process, so that happens only when the client stops or is stopped (Ctrl-C), which
    the client reports in one line of its own; the worker's lines, written to the same
    terminal, would follow it."""

    name = "dolb-quiet-stop"

    def setup(self, worker: Worker) -> None:
        for name in QUIET_AT_STOP:
            logger = logging.getLogger(name)
            if _not_said_at_stop not in logger.filters:
                logger.addFilter(_not_said_at_stop)
