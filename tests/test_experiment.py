"""Seeding, splits, checkpoints, cell batching and the result store."""

from pathlib import Path

import numpy as np
import pytest

from dolb.data.splits import split_rows
from dolb.errors import ConfigError
from dolb.evaluation.checkpoints import resolve_checkpoints
from dolb.evaluation.metrics import METRICS
from dolb.execution.batches import Batcher
from dolb.experiment.cells import cell_id
from dolb.losses import RUNNING_LOSS, hinge_loss, running_zero_one_loss, zero_one_loss
from dolb.results.store import ResultStore
from dolb.seeding import seed_for, stable_key


def test_seeds_depend_only_on_coordinates():
    a = seed_for(3, "rcv1", 2).generate_state(4)
    assert np.array_equal(a, seed_for(3, "rcv1", 2).generate_state(4))
    assert not np.array_equal(a, seed_for(3, "rcv1", 3).generate_state(4))
    assert not np.array_equal(a, seed_for(4, "rcv1", 2).generate_state(4))
    # a fixed value: the key must not change between processes, machines or releases
    assert stable_key(["rcv1", 2]) == 564864138


def test_holdout_split_partitions_rows_and_is_seeded():
    seed = np.random.SeedSequence(5)
    train, test = split_rows("holdout", 0, 100, seed, test_fraction=0.2, order="random")
    assert len(test) == 20 and len(train) == 80
    assert sorted(np.concatenate([train, test]).tolist()) == list(range(100))
    again, _ = split_rows("holdout", 0, 100, np.random.SeedSequence(5), test_fraction=0.2, order="random")
    assert np.array_equal(train, again)
    stored, _ = split_rows("holdout", 0, 100, np.random.SeedSequence(5), test_fraction=0.2, order="stored")
    assert np.array_equal(stored, np.sort(train))


def test_sequences_and_given_splits():
    train, test = split_rows("sequences", 1, 10, np.random.SeedSequence(0), count=3)
    assert train.tolist() == [3, 4, 5] and test is None
    with pytest.raises(ConfigError, match="do not fit"):
        split_rows("sequences", 0, 10, np.random.SeedSequence(0), count=3, length=4)
    train, _ = split_rows("given", 0, 6, np.random.SeedSequence(0), order="random")
    assert sorted(train.tolist()) == list(range(6)) and train.tolist() != list(range(6))


def test_checkpoints():
    assert resolve_checkpoints("all", 4).tolist() == [1, 2, 3, 4]
    assert resolve_checkpoints(["log", 3], 100).tolist() == [1, 10, 100]
    log = resolve_checkpoints(["log", 20], 150)
    assert log[-1] == 150 and np.all(np.diff(log) > 0)


def test_zero_one_loss_is_numpys_formula_and_refuses_unequal_lengths():
    """The compiled pass against the NumPy expression it replaced, with zeros, NaNs and
    infinities among the scores."""
    rng = np.random.default_rng(0)
    scores, y = rng.normal(size=1000), rng.choice([-1.0, 1.0], size=1000)
    scores[::7], scores[::11], scores[::13], scores[::17] = 0.0, np.nan, np.inf, -np.inf
    np.testing.assert_array_equal(zero_one_loss(scores, y), (~(y * scores > 0.0)).astype(np.float64))
    assert zero_one_loss([1.0, -1.0], [1, 1]).tolist() == [0.0, 1.0]  # lists and integer labels
    with pytest.raises(ValueError, match=r"\(3,\) scores for \(2,\) targets"):
        zero_one_loss(np.zeros(3), np.ones(2))


def test_a_cells_running_loss_is_the_sum_it_replaced_bit_for_bit():
    """The compiled running 0-1 loss against ``total + np.cumsum`` of the per-example
    losses (what a cell computed before), from a running total carried over, with
    zeros, NaNs and infinities among the scores; the squared loss keeps that formula."""
    rng = np.random.default_rng(1)
    scores, y = rng.normal(size=5000), rng.choice([-1.0, 1.0], size=5000)
    scores[::7], scores[::11], scores[::13] = 0.0, np.nan, np.inf
    for total in (0.0, 3.0, 2.0**52):
        expected = total + np.cumsum(zero_one_loss(scores, y))
        np.testing.assert_array_equal(running_zero_one_loss(scores, y, total), expected)
    assert running_zero_one_loss(np.zeros(0), np.zeros(0), 4.0).shape == (0,)
    with pytest.raises(ValueError, match=r"running_zero_one_loss: \(3,\) scores for \(2,\) targets"):
        running_zero_one_loss(np.zeros(3), np.ones(2))
    predictions, targets = rng.normal(size=100), rng.normal(size=100)
    np.testing.assert_array_equal(RUNNING_LOSS["regression"](predictions, targets, 0.1),
                                  0.1 + np.cumsum((predictions - targets) ** 2))


def test_metrics_values():
    scores, y = np.array([0.5, -2.0, 0.0]), np.array([1.0, 1.0, -1.0])
    assert zero_one_loss(scores, y).tolist() == [0.0, 1.0, 1.0]
    assert hinge_loss(scores, y).tolist() == [0.5, 3.0, 1.0]
    assert METRICS["test_hinge"].compute(scores, y) == pytest.approx(1.5)
    assert METRICS["online_loss"].compute(6.0, 4) == 1.5


def test_batches_respect_example_budget():
    from types import SimpleNamespace as G

    long, short = G(n_train=100), G(n_train=50)
    todo = [(long, np.arange(30)), (G(n_train=5_000), np.arange(1)), (short, np.arange(100))]
    batches = list(Batcher(todo, max_examples=400))
    cells = [(group.n_train, index) for batch in batches for group, indices in batch for index in indices]
    # every cell is in exactly one batch, in order
    assert cells == [(group.n_train, index) for group, indices in todo for index in indices]
    # a batch holds at most max_examples, or one cell larger than that alone
    examples = [sum(group.n_train * len(indices) for group, indices in batch) for batch in batches]
    assert all(size <= 400 or len(batch) == 1 for size, batch in zip(examples, batches))
    assert [[(g.n_train, i.tolist()) for g, i in b] for b in batches[7:10]] == [
        [(100, [28, 29])], [(5_000, [0])], [(50, [0, 1, 2, 3, 4, 5, 6, 7])]]
    # a batch spans groups
    spanning = list(Batcher([(long, np.arange(30)), (short, np.arange(100))], max_examples=400))[7]
    assert [(g.n_train, i.tolist()) for g, i in spanning] == [(100, [28, 29]), (50, [0, 1, 2, 3])]
    # guided: at most 1/(16 workers) of the sweep, then 1/(2 workers) of what is left,
    # never below 1/(256 workers) of the whole; sizes never grow, so the sweep ends small
    cells = [(G(n_train=20), np.arange(100_000))]
    one = [sum(len(i) for _, i in b) for b in Batcher(cells, 10**9, n_workers=1)]
    assert one == [6_250] * 15 + [3_125, 1_562, 781, 391, 390, 1]  # 1 worker: 16 batches, a tail
    two = [sum(len(i) for _, i in b) for b in Batcher(cells, 10**9, n_workers=2)]
    assert sum(two) == 100_000 and two[:31] == [3_125] * 29 + [2_343, 1_758]
    assert two == sorted(two, reverse=True)
    assert two[-4:] == [195, 195, 195, 120]  # the finest: 2,000,000 // 512 examples


def test_batches_hold_min_seconds_of_work_once_timed():
    from types import SimpleNamespace as G

    cells = [(G(n_train=20), np.arange(100_000))]
    untimed = [sum(len(i) for _, i in b) for b in Batcher(cells, 10**9, n_workers=2)]
    batches = Batcher(cells, 10**9, n_workers=2, min_seconds=0.25)
    first = next(batches)
    assert batches.cell_seconds(20) == 0.0  # no pace known yet: the guided sizes
    batches.took({20: (len(first[0][1]), 0.78125)})  # 3,125 cells: 0.25 s is 1,000 of them
    assert batches.cell_seconds(20) == 0.00025
    sizes = [sum(len(i) for _, i in b) for b in batches]
    assert sum(sizes) + 3_125 == 100_000
    assert sizes == sorted(sizes, reverse=True) and min(sizes[:-1]) >= 1_000
    assert len(sizes) + 1 < len(untimed)  # fewer tasks: the tail stops at 1,000 cells
    assert sizes[:28] == untimed[1:29]  # the guided sizes above the floor are unchanged
    # the floor never exceeds max_examples, and a slow pace leaves the guided sizes
    capped = Batcher(cells, max_examples=10_000, n_workers=2, min_seconds=0.25)
    capped.took({20: (3_125, 0.001)})
    assert [sum(len(i) for _, i in b) for b in capped][:-1] == [500] * 199
    slow = Batcher(cells, 10**9, n_workers=2, min_seconds=0.25)
    slow.took({20: (1, 100.0)})
    assert [sum(len(i) for _, i in b) for b in slow] == untimed


def test_batches_hold_more_work_on_a_large_cluster():
    """The scheduler is sent about SCHEDULER_TASKS_PER_SECOND tasks a second at most:
    on 400 workers no timed batch holds less than 2 s of work (0.25 s on 2)."""
    from types import SimpleNamespace as G

    from dolb.execution.batches import SCHEDULER_TASKS_PER_SECOND

    for n_workers, n_cells, floor in ((2, 100_000, 0.25), (400, 1_000_000, 400 / SCHEDULER_TASKS_PER_SECOND)):
        cells = [(G(n_train=20), np.arange(n_cells))]  # 1 ms a cell: 1,000 s of work is 2.5 s a worker on 400
        batches = Batcher(cells, 10**9, n_workers=n_workers)
        next(batches)
        batches.took({20: (1_000, 1.0)})  # 1 ms a cell
        sizes = [sum(len(i) for _, i in b) for b in batches]
        assert min(sizes[:-1]) == round(floor * 1_000)


def test_by_default_tasks_do_not_grow_with_the_cells():
    """The linear zoo's shape (99 groups of 3 splits, cells of 40,000 examples and 30 ms)
    on 1 worker: without a cap the batches are sized by their work alone, and twice the
    splits make 1 more task (18 -> 19), not twice the tasks (60 -> 119 under a cap of
    200,000 examples, 5 cells a task): the client's round trip per task is not a cost per
    cell. And a pipeline that does not set ``batch_examples`` sets no cap."""
    from types import SimpleNamespace as G

    from dolb.experiment.pipeline import load_pipeline

    def sizes(splits, cap):
        batches = Batcher([(G(n_train=40_000), np.arange(splits)) for _ in range(99)], cap, n_workers=1)
        first = sum(len(i) for _, i in next(batches))
        batches.took({40_000: (first, first * 0.03)})
        return [first] + [sum(len(i) for _, i in batch) for batch in batches]

    assert sizes(3, None) == [18] * 15 + [13, 8, 6] and len(sizes(6, None)) == 19
    assert sizes(3, 200_000)[:-1] == [5] * 59 and len(sizes(6, 200_000)) == 119
    assert load_pipeline(Path(__file__).parents[1] / "pipelines" / "linear_zoo.toml").batch_examples is None


def test_no_floor_leaves_a_worker_without_a_task():
    """A sweep of 100 s on 400 workers: the scheduler's floor (2 s a batch) would cut 50
    batches and leave 350 workers idle; the floor is the sweep's work a worker, 0.25 s
    (250 cells of 1 ms), so every worker gets at least one batch."""
    from types import SimpleNamespace as G

    batches = Batcher([(G(n_train=20), np.arange(100_000))], 10**9, n_workers=400)
    first = [next(batches) for _ in range(400)]  # the first wave: one batch a worker, by guess
    assert {sum(len(i) for _, i in b) for b in first} == {15}  # 1/(16 × 400) of the sweep
    batches.took({20: (15, 0.015)})  # 1 ms a cell
    sizes = [sum(len(i) for _, i in b) for b in batches]
    assert sum(sizes) == 100_000 - 400 * 15
    assert max(sizes) == 250 and len(first) + len(sizes) >= 400


def test_batches_are_priced_by_the_cells_of_the_nearest_size():
    """A cell's cost is not proportional to its examples (`linear_zoo`: 25 ms for the
    largest data sets' cells, 37 ms for the smallest). Priced by the examples of the
    first, largest cells, the last batches held 4-5 times the floor of work, and one
    worker ended long after the other; priced by the cells of the nearest size timed,
    the last batches hold at most the floor, and one worker ends at most that long after
    the other (a simulated sweep of three sizes on 2 workers, 8 batches in flight)."""
    from types import SimpleNamespace as G

    todo = [(G(n_train=10_000), np.arange(200)), (G(n_train=1_000), np.arange(200)),
            (G(n_train=100), np.arange(200))]
    seconds = {10_000: 0.02, 1_000: 0.03, 100: 0.03}  # the true cost of a cell, by size
    batches = Batcher(todo, max_examples=10**9, n_workers=2, min_seconds=0.25)
    free = [0.0, 0.0]  # when each worker is next free
    in_flight = []  # (end, batch): 4 per worker, as the client keeps them
    work = []
    for batch in batches:
        work.append(sum(seconds[g.n_train] * len(i) for g, i in batch))
        worker = free.index(min(free))
        free[worker] += work[-1]
        in_flight.append((free[worker], batch))
        if len(in_flight) == 8:  # the first to end tells its pace
            in_flight.sort(key=lambda item: item[0])
            _, done = in_flight.pop(0)
            batches.took({g.n_train: (len(i), seconds[g.n_train] * len(i)) for g, i in done})
    assert batches.left == {10_000: 0, 1_000: 0, 100: 0}  # every cell batched
    assert max(work[-4:]) <= 0.25  # the tail: the floor at the true pace (examples priced it at 1.29 s)
    assert max(free) - sum(work) / 2 <= 0.25  # one worker ends at most the floor after the other


def test_cell_ids_are_canonical_and_distinct():
    from dolb.experiment.cells import spec_hash

    assert spec_hash({"a": 1, "b": [1, 2]}) == spec_hash({"b": [1, 2], "a": 1})
    assert spec_hash({"a": 1}) != spec_hash({"a": 1.5})
    key = spec_hash({"a": 1})
    assert len({cell_id(key, index) for index in range(1000)}) == 1000
    assert cell_id(key, 3) == cell_id(spec_hash({"a": 1}), 3) != cell_id(spec_hash({"a": 2}), 3)


def _rows(store, cells, run_id="r", status="ok", value=0.5, error=None):
    """Write one part holding ``cells`` (ids), one metric row each (or failures)."""
    from dolb.results.cell_rows import CellRows
    from dolb.results.store import result_schema

    rows = CellRows(result_schema({"eta": float}), run_id=run_id, worker="w")
    for cell in cells:
        where = {"experiment": "e", "dataset": "d", "learner": "p", "split": int(cell[1:]), "param_eta": 0.1}
        if status == "ok":
            result = {"checkpoints": [10], "metrics": {"last": {"test_error": [value]}}}
            rows.add_ok(cell, where, result)
        else:
            rows.add_failed(cell, where, error)
    return store.write_part(rows.table())


def test_result_store_parts_are_atomic_and_each_cell_is_read_once(tmp_path):
    from dolb.results.query import failures, rows, stored_cells

    store = ResultStore(tmp_path)
    assert stored_cells(store) == (set(), set()) and not store.exists()
    _rows(store, ["c1", "c2"], status="failed", error="boom")
    _rows(store, ["c1"], value=0.25)  # c1 succeeds on a retry
    _rows(store, ["c1", "c3"], value=0.25, run_id="other")  # a second copy of c1 (two runs)
    assert stored_cells(store) == ({"c1", "c3"}, {"c2"})
    table = rows(store)
    assert table["cell_id"].tolist() == ["c1", "c3"] and table["run_id"].tolist() == ["r", "other"]
    assert table["param_eta"].tolist() == [0.1, 0.1] and table["value"].tolist() == [0.25, 0.25]
    assert failures(store)[["cell_id", "error"]].values.tolist() == [["c2", "boom"]]
    assert not [p for p in (tmp_path / "results").iterdir() if not p.name.startswith("part-")]  # no temporary


def test_summary_in_duckdb_equals_pandas(tmp_path):
    """The store's summary (DuckDB, out of core) and pandas on the same rows agree."""
    import pandas as pd

    from dolb.results.cell_rows import CellRows
    from dolb.results.query import STATISTICS, rows, summary
    from dolb.results.store import result_schema
    from dolb.results.tables import aggregate

    store = ResultStore(tmp_path)
    generator = np.random.default_rng(0)
    table = CellRows(result_schema({}), run_id="r", worker="w")
    for split in range(7):
        for learner in ("p", "q"):
            values = generator.lognormal(size=3).tolist()
            values[1] = float("nan") if split == 2 else values[1]  # NaN counts as missing in both
            table.add_ok(f"{learner}{split}", {"experiment": "e", "dataset": "d", "task": "binary", "learner": learner,
                                               "params": "", "complexity": "", "split": split},
                         {"checkpoints": [10, 20, 30], "metrics": {"last": {"test_error": values}}})
    store.write_part(table.table())
    ours = summary(store)
    theirs = aggregate(rows(store), STATISTICS)
    pd.testing.assert_frame_equal(ours[theirs.columns], theirs, check_exact=False, rtol=1e-12, check_dtype=False)
    assert ours["count"].tolist() == [7, 6, 7, 7, 6, 7]


def test_summaries_and_comparisons_do_not_depend_on_the_order_of_the_parts(tmp_path):
    """Two stores holding the same rows in parts written in other orders (as two runs of
    one pipeline on a cluster do) give the same summary and paired moments to the bit:
    DuckDB sums each group in split order."""
    from dolb.results.cell_rows import CellRows
    from dolb.results.query import paired_moments, summary
    from dolb.results.store import result_schema

    generator = np.random.default_rng(1)
    values = {(learner, split): generator.lognormal(size=3).tolist() for learner in "pq" for split in range(40)}

    def store(order, folder):
        result = ResultStore(tmp_path / folder)
        for chunk in np.array_split(np.array(order, dtype=object), 9):
            rows = CellRows(result_schema({}), run_id="r", worker="w")
            for learner, split in chunk:
                rows.add_ok(f"{learner}{split}", {"experiment": "e", "dataset": "d", "task": "binary",
                                                  "learner": learner, "params": "", "complexity": "", "split": split},
                            {"checkpoints": [10, 20, 30], "metrics": {"last": {"test_error": values[learner, split]}}})
            result.write_part(rows.table())
        return result

    keys = list(values)
    shuffled = [keys[i] for i in generator.permutation(len(keys))]
    first, second = store(keys, "a"), store(shuffled, "b")
    assert summary(first).equals(summary(second))
    assert paired_moments(first, second, ["test_error"])["difference"].tolist() == [0.0] * 6
    assert paired_moments(first, first, ["test_error"]).equals(paired_moments(second, second, ["test_error"]))


def _frame(rows):
    import pandas as pd

    from dolb.results.tables import TIDY_COLUMNS

    base = dict(experiment="e", dataset="d", task="binary", learner="perceptron", params="",
                complexity="", n_train=100, metric="test_error", cell_id="c")
    return pd.DataFrame([base | r for r in rows])[TIDY_COLUMNS]


def test_paired_table_matches_scipy():
    from scipy import stats

    from dolb.results.tables import paired_table

    last = [0.30, 0.25, 0.40, 0.35]
    cutoff = [0.20, 0.22, 0.31, 0.30]
    rows = [dict(split=i, conversion="last", value=v) for i, v in enumerate(last)]
    rows += [dict(split=i, conversion="cutoff", value=v) for i, v in enumerate(cutoff)]
    table = paired_table(_frame(rows), "e", "test_error", None, "conversion", "last")
    assert len(table) == 1
    row = table.iloc[0]
    assert row["conversion"] == "cutoff" and row["n"] == 4
    assert row["mean difference"] == pytest.approx(np.mean(np.subtract(cutoff, last)))
    assert row["p"] == pytest.approx(stats.ttest_rel(cutoff, last).pvalue)


def test_paired_table_needs_its_baseline():
    from dolb.errors import DataError
    from dolb.results.tables import paired_table

    with pytest.raises(DataError, match="no conversion 'average'"):
        paired_table(_frame([dict(split=0, conversion="last", value=0.1)]), "e", "test_error", None,
                     "conversion", "average")


def test_ranking_table_averages_ranks_over_datasets():
    from dolb.results.tables import aggregate, ranking_table

    rows = []
    for dataset, errors in {"a": (0.1, 0.2, 0.3), "b": (0.3, 0.1, 0.2)}.items():
        for learner, error in zip(("p", "q", "r"), errors):
            rows.append(dict(dataset=dataset, learner=learner, split=0, conversion="last", value=error))
    table = ranking_table(aggregate(_frame(rows)), "e", "test_error", None)
    assert table["learner"].tolist() == ["q", "p", "r"]  # mean ranks 1.5, 2, 2.5
    assert table["mean rank"].tolist() == [1.5, 2.0, 2.5]
    assert table["mean on a"].tolist() == [0.2, 0.1, 0.3]


def test_comparison_table_keeps_datasets_apart():
    from dolb.results.tables import aggregate, comparison_table

    rows = [dict(dataset=d, split=s, conversion="last", value=v)
            for d, values in {"a": (0.1, 0.3), "b": (0.5, 0.7)}.items() for s, v in enumerate(values)]
    table = comparison_table(aggregate(_frame(rows)), "e", "test_error", None, ("mean", "count"))
    assert table["dataset"].tolist() == ["a", "b"]
    assert table["mean @ 100"].tolist() == pytest.approx([0.2, 0.6])
    assert table["count @ 100"].tolist() == [2, 2]
    single = comparison_table(aggregate(_frame(rows[:2])), "e", "test_error", None, ("mean",))
    assert "dataset" not in single.columns and single["mean @ 100"].tolist() == pytest.approx([0.2])


def test_a_damaged_result_part_is_a_clear_error(tmp_path):
    from dolb.errors import DataError
    from dolb.results.query import stored_cells

    store = ResultStore(tmp_path)
    _rows(store, ["c1"])
    part = store.parts()[0]
    with open(part, "r+b") as handle:
        handle.truncate(100)
    with pytest.raises(DataError, match=f"{part}: unreadable result part"):
        stored_cells(store)


def test_phases_count_nested_time_once(monkeypatch):
    """A phase entered inside another pauses it: the cluster started while planning is
    charged to the cluster only (a clock that advances 1 s per reading)."""
    import itertools

    from dolb.execution import phases as module

    clock = itertools.count()
    monkeypatch.setattr(module.time, "perf_counter", lambda: float(next(clock)))
    phases = module.Phases()  # reads 0
    with phases("plan"):  # 1  # noqa: SIM117 (the nesting is what is tested)
        with phases("cluster"):  # 2: plan got 1 s
            pass  # 3: cluster got 1 s
    # 4: plan got 1 s more
    assert phases.seconds["plan"] == 2.0 and phases.seconds["cluster"] == 1.0
    assert sum(phases.seconds.values()) == 3.0  # every second counted once


def test_remembered_seed_keys_are_those_computed():
    """Keys of strings and integers are remembered, never confused with those of equal
    values of other types (True == 1 == 1.0 in Python, not in JSON)."""
    from dolb.identity import digest
    from dolb.seeding import stable_key

    def computed(value):
        return int.from_bytes(bytes.fromhex(digest(value, length=8)), "little")

    for value in (1, True, 1.0, "split", 0, False, 0.0, "rcv1", (1, 2)):
        assert stable_key(value) == stable_key(value) == computed(value)
    assert len({stable_key(1), stable_key(True), stable_key(1.0)}) == 3
