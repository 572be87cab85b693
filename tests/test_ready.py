"""The batch source of a tuning: cells ready by rank, batches cut from what is ready, the
timings kept across everything it cuts, and more cells ready after it had none."""

from types import SimpleNamespace

import numpy as np

from dolb.execution.ready import ReadyCells


def sizes(batch) -> list[tuple[int, list[int]]]:
    return [(group.n_train, indices.tolist()) for group, indices in batch]


def test_lower_ranks_first_and_a_source_ready_again_after_it_had_none():
    ready = ReadyCells(max_examples=10**6, n_workers=100)  # 1/200 of the ready work: a cell a batch
    late, early = SimpleNamespace(n_train=10), SimpleNamespace(n_train=10)
    ready.add((1, 0), late, np.array([3]))
    ready.add((0, 5), early, np.array([1, 2]))
    assert [sizes(batch) for batch in ready] == [[(10, [1])], [(10, [2])], [(10, [3])]]
    assert next(ready, None) is None
    ready.add((1, 0), late, np.array([4]))  # a rung decided: its next one is ready
    assert sizes(next(ready)) == [(10, [4])] and ready.cut == 4


def test_timings_reach_every_later_batch():
    """Once cells have been timed (1 ms each), a batch holds at least 0.25 s of them,
    whichever rung they belong to: no task of a lone cell at a later rung (40 workers:
    the scheduler's floor, workers / 200 s, is the lower one)."""
    ready = ReadyCells(max_examples=10**6, n_workers=40)
    rung_0, rung_1 = SimpleNamespace(n_train=10), SimpleNamespace(n_train=20)
    ready.add((1,), rung_0, np.arange(400))
    assert len(next(ready)) == 1 and len(ready.heap) == 1
    ready.took({10: (10, 0.01)})
    assert sum(len(indices) for _, indices in next(ready)) == 250
    ready.add((0,), rung_1, np.arange(300))  # priced as the nearest size timed: 1 ms
    assert sizes(next(ready)) == [(20, list(range(250)))]
