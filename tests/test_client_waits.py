"""The client waits for its tasks' outcomes without looking again and again: its CPU a
second of a long sweep is not a cost of each cell."""

import threading

import dask
from distributed import Client, Event, LocalCluster, as_completed

from dolb.execution.compute import arrivals
from dolb.execution.quiet import QUIET


class CountingCondition(threading.Condition):
    """A condition that counts the waits on it."""

    waits = 0

    def wait(self, timeout=None):
        self.waits += 1
        return super().wait(timeout)


def _held(name: str, value: int) -> int:
    Event(name).wait()
    return value


def test_the_client_waits_once_an_outcome_not_ten_times_a_second():
    """Two tasks held until an event is set 1.5 s later: both outcomes are taken, and the
    client waited about once for them (once per arrival, and once every 10 s at most as
    a safety net), not 10 times a second as Dask's own loop looks (15 waits or more)."""
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        futures = [client.submit(_held, "go", value, pure=False) for value in (1, 2)]
        queue = as_completed(futures, with_results=True)
        queue.thread_condition = counting = CountingCondition()
        timer = threading.Timer(1.5, Event("go", client=client).set)
        timer.start()
        try:
            taken = sorted(result for done in arrivals(queue) for _, result in done)
        finally:
            timer.join()
        assert taken == [1, 2]
        assert 1 <= counting.waits <= 4


def test_a_quiet_client_asks_for_the_workers_identities_every_10_s_not_every_2_s():
    """Dask's client asks the scheduler for every worker's identity every 2 s by default
    (a round trip of its CPU, a message that grows with the workers); with dolb's quiet
    settings every 10 s."""
    with LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster:
        with Client(cluster) as client:
            assert client._periodic_callbacks["scheduler-info"].callback_time == 2_000
        with dask.config.set(QUIET), Client(cluster) as client:
            assert client._periodic_callbacks["scheduler-info"].callback_time == 10_000
