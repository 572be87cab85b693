"""Workers lost while the embedded cluster starts: a run goes on with the others.

A worker process can die at any moment of a cluster's start (killed by the user, by the
out-of-memory killer on a loaded machine). Before its nanny's start handshake is over,
Dask's LocalCluster gives up the whole cluster (``RuntimeError: Nanny failed to
start``); after it, the nanny starts another process, but a call the client is making
to every worker at that moment (checking their versions, warming their kernels) fails
with the lost worker's closed connection (or a timeout connecting to it). Here the cluster replaces a worker lost as it
starts (once) and goes on with those that started; the calls to every worker leave the
lost one out. Results do not depend on which worker computes a cell, so a run stores
the same results with one worker fewer.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from typing import Any

from distributed import Client, LocalCluster
from distributed.core import Status
from distributed.diagnostics.plugin import WorkerPlugin

from dolb.errors import ConfigError

START_ROUNDS = 2
"""How often the cluster starts its missing workers: once, then once more for those
lost (a worker lost twice is left out)."""


class ReplacingCluster(LocalCluster):
    """A LocalCluster whose workers lost while they start are replaced, once; it goes on
    with the workers that started, and fails (:class:`~dolb.errors.ConfigError`, one
    line) only when none did. ``lost`` counts the workers lost."""

    lost = 0

    async def _correct_state_internal(self) -> None:
        # LocalCluster starts (and stops) its workers here, as its worker_spec says
        for _ in range(START_ROUNDS):
            try:
                await super()._correct_state_internal()
                return
            except Exception:
                failed = [name for name, nanny in self.workers.items() if nanny.status == Status.failed]
                if not failed:
                    raise
                self._replace(failed)
        self._drop_missing()

    def _replace(self, failed: list) -> None:
        """Forget the nannies ``failed``: the next round starts their workers again,
        under the same names (a lost worker never joined the scheduler, or the
        scheduler sees it go long before its successor, a second of imports later,
        joins)."""
        for name in failed:
            del self.workers[name]
        self.lost += len(failed)

    def _drop_missing(self) -> None:
        """Give up the workers that did not start in :data:`START_ROUNDS` attempts;
        ConfigError when no worker started."""
        for name in set(self.worker_spec) - set(self.workers):
            del self.worker_spec[name]
        if not self.workers:
            raise ConfigError(f"the local cluster could not start a worker ({self.lost} lost while starting)")


def lost_line(lost: int, running: int) -> str:
    """What the run says when ``lost`` workers were lost while the cluster started.

    Examples
    --------
    >>> lost_line(1, 2)
    'dolb: a worker was lost while the cluster started; going on with 2 workers'
    >>> lost_line(3, 1)
    'dolb: 3 workers were lost while the cluster started; going on with 1 worker'
    """
    what = "a worker was" if lost == 1 else f"{lost} workers were"
    return f"dolb: {what} lost while the cluster started; going on with {running} worker{'s' * (running != 1)}"


def _not_a_failed_broadcast(record: logging.LogRecord) -> bool:
    """False for the error a scheduler logs when it cannot reach a worker (its
    connection closed, or refused until a timeout) during a call to every worker."""
    return not record.getMessage().startswith("broadcast to ")


@contextlib.contextmanager
def _lost_workers_unlogged() -> Iterator[None]:
    """Drop, while a call to every worker lasts, the error the embedded scheduler (it
    runs in this process) logs for a worker it cannot reach during the call: the call
    leaves it out, and its nanny logs that it starts another. (Errors of the function
    called are answers, not broadcast failures: they are not dropped.)"""
    logger = logging.getLogger("distributed.scheduler")
    logger.addFilter(_not_a_failed_broadcast)
    try:
        yield
    finally:
        logger.removeFilter(_not_a_failed_broadcast)


def run_on_workers(client: Client, function: Callable, *args: Any) -> dict[str, Any]:
    """``client.run(function, *args)``: the result of each worker, by address, except of
    a worker lost meanwhile (out of reach: an OSError; its nanny starts another). An error
    of ``function`` itself is raised, as ``client.run`` raises it."""
    with _lost_workers_unlogged():
        answers = client.run(function, *args, on_error="return")
    for answer in answers.values():
        if isinstance(answer, Exception) and not isinstance(answer, OSError):
            raise answer
    return {address: answer for address, answer in answers.items() if not isinstance(answer, OSError)}


def register_on_workers(client: Client, plugin: WorkerPlugin) -> None:
    """Register ``plugin`` on every worker, those that join later included. A worker
    lost while it sets the plugin up (or just before) fails the scheduler's call with
    its closed connection or a connection timeout; the scheduler has stored the plugin
    by then and gives it to the worker started in its place. (If the scheduler itself
    is the one out of reach, the client's next call says so.)"""
    with contextlib.suppress(OSError), _lost_workers_unlogged():
        client.register_plugin(plugin)
