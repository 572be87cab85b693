"""The client's work grows with the groups of a sweep, not with its cells: into a new
result folder it plans every cell without computing any cell's id; into one that holds
results it skips exactly the cells stored (and those failed, unless asked to retry)."""

from types import SimpleNamespace

import numpy as np
import pytest

from dolb.execution import sweep
from dolb.execution.sweep import cells_to_run
from dolb.experiment.cells import cell_id


def _groups():
    return [SimpleNamespace(key="a" * 64, n_splits=4), SimpleNamespace(key="b" * 64, n_splits=0),
            SimpleNamespace(key="c" * 64, n_splits=2)]


def _planned(todo):
    return [(group.key[0], indices.tolist(), indices.dtype) for group, indices in todo]


@pytest.fixture
def no_ids(monkeypatch):
    """Computing a cell's id fails the test."""
    def refuse(*args):
        raise AssertionError("a cell's id was computed")

    monkeypatch.setattr(sweep, "group_ids", refuse)
    monkeypatch.setattr(sweep, "cell_id", refuse)


@pytest.mark.parametrize("failed, retry", [(set(), False), ({"x"}, True)])
def test_a_new_folder_plans_every_cell_without_their_ids(no_ids, failed, retry):
    todo = cells_to_run(_groups(), set(), failed, retry)
    assert _planned(todo) == [("a", [0, 1, 2, 3], np.int64), ("c", [0, 1], np.int64)]


def test_a_folder_with_results_skips_the_cells_stored_and_failed():
    groups = _groups()
    stored, failed = {cell_id("a" * 64, 1)}, {cell_id("a" * 64, 3), cell_id("c" * 64, 0)}
    assert _planned(cells_to_run(groups, stored, failed, False)) == [("a", [0, 2], np.int64), ("c", [1], np.int64)]
    assert _planned(cells_to_run(groups, stored, failed, True)) == [("a", [0, 2, 3], np.int64),
                                                                    ("c", [0, 1], np.int64)]
    assert _planned(cells_to_run(groups, set(), failed, False)) == [("a", [0, 1, 2], np.int64),
                                                                    ("c", [1], np.int64)]


def test_no_failed_cell_counts_none_without_their_ids(no_ids):
    plan = sweep._Plan(None, None, None, _groups(), [], set(), set(), [])
    assert plan.n_failed_before(retry_failed=False) == 0


def test_failed_cells_of_the_pipeline_are_counted():
    failed = {cell_id("a" * 64, 2), cell_id("c" * 64, 1), "of another pipeline"}
    plan = sweep._Plan(None, None, None, _groups(), [], set(), failed, [])
    assert plan.n_failed_before(retry_failed=False) == 2
    assert plan.n_failed_before(retry_failed=True) == 0
