"""Quiet Dask processes: the background work an idle client, scheduler, nanny or worker
does on a timer (its statistical profiler, event-loop health tick, system and memory
monitors, work stealing) made rare, so that the processes' CPU goes to the cells.

Dask's defaults suit an interactive session (a worker samples its own stack every 10 ms
for the dashboard); at hundreds of workers that background is what a sweep of short
cells pays for (what it costs: docs/design/execution.md).

:data:`QUIET` is set (``dask.config.set``) around every cluster dolb connects to or starts:
the embedded cluster's processes inherit it; workers started elsewhere (``dask worker``)
take it from their own configuration (see the clusters guide), and :class:`QuietWorker`,
registered on every worker a sweep uses, quiets those started without it.
"""

from __future__ import annotations

from distributed import Worker
from distributed.diagnostics.plugin import WorkerPlugin

QUIET = {
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.scheduler.work-stealing-interval": "1s",
    "distributed.worker.profile.enabled": False,
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.client.scheduler-info-interval": "10s",
}
"""Dask settings of every process of a dolb cluster: the event loop's health tick,
system monitor and work-stealing pass run every second or two instead of every
20–500 ms, no statistical profiler (the dashboard's profile page stays empty; task
stream, progress and memory are unchanged), memory checked every second instead of
every 100 ms (a cell's own ``cell_memory`` limit is enforced by the cell), and the
client asks the scheduler for its workers' identities every 10 s instead of every 2 s
(a round trip of the client's, and a message that grows with the workers; dolb counts
the workers with ``Client.nthreads``, a request of its own)."""

QUIET_CALLBACKS = {"tick": 1.0, "monitor": 2.0, "memory_monitor": 1.0}
"""A running worker's periodic callbacks :class:`QuietWorker` slows down: name ->
seconds between calls at least (the intervals of :data:`QUIET`)."""
PROFILER_CALLBACKS = ("profile", "profile-cycle")
"""A running worker's statistical profiler: :class:`QuietWorker` stops it."""


class QuietWorker(WorkerPlugin):
    """Quiets a worker started without :data:`QUIET` (by hand, by a job script): stops
    its statistical profiler and calls its tick and monitors no more often than
    :data:`QUIET_CALLBACKS` say. A worker already quiet is left as it is."""

    name = "dolb-quiet-worker"

    def setup(self, worker: Worker) -> None:
        for name in PROFILER_CALLBACKS:
            callback = worker.periodic_callbacks.pop(name, None)
            if callback is not None:
                callback.stop()
        for name, seconds in QUIET_CALLBACKS.items():
            callback = worker.periodic_callbacks.get(name)
            if callback is not None and callback.callback_time < seconds * 1000:
                callback.callback_time = seconds * 1000
