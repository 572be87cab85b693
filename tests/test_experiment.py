"""Seeding, splits, checkpoints, cell batching and the result store."""

import json

import numpy as np
import pytest

from dolb.data.splits import split_rows
from dolb.errors import ConfigError
from dolb.evaluation.checkpoints import resolve_checkpoints
from dolb.evaluation.metrics import METRICS, hinge_loss, zero_one_loss
from dolb.experiment.cells import batch_cells, cell_id
from dolb.experiment.seeding import seed_for, stable_key
from dolb.results.store import ResultStore


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


def test_metrics_values():
    scores, y = np.array([0.5, -2.0, 0.0]), np.array([1.0, 1.0, -1.0])
    assert zero_one_loss(scores, y).tolist() == [0.0, 1.0, 1.0]
    assert hinge_loss(scores, y).tolist() == [0.5, 3.0, 1.0]
    assert METRICS["test_hinge"].compute(scores, y) == pytest.approx(1.5)
    assert METRICS["online_loss"].compute(6.0, 4) == 1.5


def test_batches_respect_example_budget():
    from types import SimpleNamespace

    cells = [SimpleNamespace(n_train=n) for n in (100, 100, 500, 100, 100)]
    batches = batch_cells(cells, max_examples=300)
    assert [[c.n_train for c in b] for b in batches] == [[100, 100], [500], [100, 100]]
    # at least n_batches_min batches when the cells allow it
    assert len(batch_cells([SimpleNamespace(n_train=1)] * 8, 10**6, n_batches_min=4)) == 4


def test_cell_id_is_canonical():
    assert cell_id({"a": 1, "b": [1, 2]}) == cell_id({"b": [1, 2], "a": 1})
    assert cell_id({"a": 1}) != cell_id({"a": 1.5})


def test_result_store_atomic_and_failed_records(tmp_path):
    store = ResultStore(tmp_path)
    store.write({"id": "c1", "status": "failed", "error": "boom"})
    assert store.has_failed("c1") and not store.has("c1")
    store.write({"id": "c1", "status": "ok", "metrics": {"m": [0.1]}})
    assert store.has("c1") and not store.has_failed("c1")
    assert list(store.ids()) == ["c1"]
    assert json.loads((tmp_path / "cells" / "c1.json").read_text())["metrics"] == {"m": [0.1]}
    assert [p.name for p in (tmp_path / "cells").iterdir()] == ["c1.json"]  # no temporary left


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
    from dolb.results.tables import ranking_table

    rows = []
    for dataset, errors in {"a": (0.1, 0.2, 0.3), "b": (0.3, 0.1, 0.2)}.items():
        for learner, error in zip(("p", "q", "r"), errors):
            rows.append(dict(dataset=dataset, learner=learner, split=0, conversion="last", value=error))
    table = ranking_table(_frame(rows), "e", "test_error", None)
    assert table["learner"].tolist() == ["q", "p", "r"]  # mean ranks 1.5, 2, 2.5
    assert table["mean rank"].tolist() == [1.5, 2.0, 2.5]
    assert table["mean on a"].tolist() == [0.2, 0.1, 0.3]


def test_comparison_table_keeps_datasets_apart():
    from dolb.results.tables import comparison_table

    rows = [dict(dataset=d, split=s, conversion="last", value=v)
            for d, values in {"a": (0.1, 0.3), "b": (0.5, 0.7)}.items() for s, v in enumerate(values)]
    table = comparison_table(_frame(rows), "e", "test_error", None, ("mean", "count"))
    assert table["dataset"].tolist() == ["a", "b"]
    assert table["mean @ 100"].tolist() == pytest.approx([0.2, 0.6])
    assert table["count @ 100"].tolist() == [2, 2]
    single = comparison_table(_frame(rows[:2]), "e", "test_error", None, ("mean",))
    assert "dataset" not in single.columns and single["mean @ 100"].tolist() == pytest.approx([0.2])
