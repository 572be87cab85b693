"""Where a piece of code runs, for the messages that must say so: the Dask worker's
address and its host, and a store fault told with them."""

from __future__ import annotations

import socket

from distributed import get_worker

from dolb.data.store.object_stores import fault_error
from dolb.errors import StoreFault


def worker_name() -> str:
    """The address of the Dask worker running this code (``"client"`` outside one)."""
    try:
        return get_worker().address
    except ValueError:
        return "client"


def on_this_host(worker: str | None = None) -> str:
    """Where a set-up fault met here is: ``" on host NAME (worker ADDRESS)"`` on a Dask
    worker, nothing on the client (whose user reads it on its own console). ``worker``:
    the worker's address where Dask does not say it (a function of ``client.run``)."""
    worker = worker or worker_name()
    return "" if worker == "client" else f" on host {socket.gethostname()} (worker {worker})"


def located(fault: StoreFault, worker: str | None = None) -> StoreFault:
    """``fault`` naming the host it was met on (:func:`on_this_host`)."""
    return fault if fault.fault is None else fault_error(fault.where, fault.fault, on_this_host(worker))
