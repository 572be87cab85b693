"""The Dask client of a sweep: the embedded cluster started in the background while the
client plans, or a scheduler or cluster file reached on first use; its workers checked
once, made to compute with the pipeline's pinned arithmetic, and given the kernels to
warm as soon as they are up."""

from __future__ import annotations

import contextlib
import contextvars
import signal
import threading
from collections.abc import Callable

from dolb.execution.arithmetic import Pin, pin_workers
from dolb.execution.cluster import connect
from dolb.execution.lost_workers import register_on_workers
from dolb.execution.phases import Phases
from dolb.execution.warm_up import KernelWarmUp, Samples, dataset_samples, warm_up_samples
from dolb.execution.worker_plugins import SharedCompilation
from dolb.options import RunOptions


class SweepCluster:
    """The sweep's Dask client, its workers checked once.

    The embedded cluster (no scheduler, no cluster file) is started in the background by
    :meth:`start`, once the pipeline is checked and there is something to compute: its
    workers spawn, import dolb and join while the client goes on. Otherwise (a scheduler,
    a cluster file, or datasets to build first) the cluster is reached on first use.
    :meth:`close` waits for a start under way, then closes.
    """

    def __init__(self, phases: Phases, options: RunOptions) -> None:
        self.phases, self.options = phases, options
        self.stack = contextlib.ExitStack()
        self.context = contextvars.copy_context()
        """Where the client is entered and left (Dask's client sets a context variable,
        which must be reset in the context that set it, whichever thread started it)."""
        self._client = None
        self._starting: threading.Thread | None = None
        self._failed: BaseException | None = None
        self._sigint = None
        self.workers: dict = {}
        self.pin: Pin | None = None
        """The arithmetic every worker computes with (set once the pipeline is read)."""
        self.warm_up = KernelWarmUp()
        self._warm_lock = threading.Lock()

    @property
    def embedded(self) -> bool:
        """Whether the run starts its own LocalCluster."""
        return self.options.scheduler is None and self.options.cluster is None

    def start(self, todo: list | None = None) -> None:
        """Start the embedded cluster in a thread of its own (nothing otherwise), and warm
        the kernels of ``todo``'s cells (groups with split indices) as soon as the
        cluster is up. Ctrl-C is ignored until it is up, as it is while any local cluster
        starts (see :func:`dolb.execution.cluster._local`): its worker processes inherit
        that, and only the client stops on Ctrl-C."""
        if todo:
            self.warm(warm_up_samples(todo))
        if not self.embedded or self._client is not None or self._starting is not None:  # or started already
            return
        if threading.current_thread() is threading.main_thread():
            self._sigint = signal.signal(signal.SIGINT, signal.SIG_IGN)
        self._starting = threading.Thread(target=self.context.run, args=(self._connect,), name="dolb-cluster-start",
                                          daemon=True)
        self._starting.start()

    def _connect(self) -> None:
        try:
            environment = self.pin.environment if self.pin is not None and self.pin.supported() else None
            where = self.options
            client = self.stack.enter_context(connect(where.workers, where.scheduler, where.cluster, where.dashboard,
                                                      arithmetic=environment))
            self.workers = pin_workers(client, self.pin)
            register_on_workers(client, SharedCompilation())
            with self._warm_lock:
                self._client = client
                self.warm_up.submit(client)  # what the client gave while the cluster started
        except BaseException as exc:  # raised by client() in the main thread
            self._failed = exc

    def _started(self) -> None:
        """Wait for a start under way; then Ctrl-C stops the run again."""
        if self._starting is not None:
            self._starting.join()
            self._starting = None
        if self._sigint is not None:
            signal.signal(signal.SIGINT, self._sigint)
            self._sigint = None

    def client(self):
        if self._client is None or self._starting is not None:
            with self.phases("cluster"):
                self._started()
                if self._client is None and self._failed is None:
                    self.context.run(self._connect)
                if self._failed is not None:
                    raise self._failed
        return self._client

    def warm(self, samples: Samples) -> None:
        """Warm the kernels of ``samples`` on the cluster (:mod:`dolb.execution.warm_up`):
        at once if it is up, else as soon as it is (a start under way is not waited for)."""
        with self._warm_lock:
            self.warm_up.add(samples)
            if self._client is not None:
                self.warm_up.submit(self._client)

    def warm_built(self, pipeline) -> Callable[[str, dict], None]:
        """What :func:`~dolb.execution.datasets.open_datasets` calls as a dataset's build
        ends: warm the kernels of ``pipeline``'s cells on that dataset."""
        return lambda name, parts: self.warm(dataset_samples(pipeline, name, parts))

    def warmed(self) -> None:
        """Wait for the kernels given to :meth:`warm` to be warm."""
        self.warm_up.wait()

    def close(self) -> None:
        """Close the cluster (once its start, if under way, is over)."""
        self._started()
        self.context.run(self.stack.close)
