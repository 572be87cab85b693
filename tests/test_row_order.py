"""Tables do not depend on the order rows were stored in: a float sum depends on the order
of its terms, so the readers return the rows in the order of what they measure
(:data:`dolb.results.query.ROW_ORDER`), and two result folders holding the same rows (parts
written in another order, cells named by other ids) give the same tables to the bit."""

from pandas.testing import assert_frame_equal, assert_series_equal

from dolb.results import query
from dolb.results.cell_rows import CellRows
from dolb.results.store import ResultStore, result_schema
from dolb.results.tables import aggregate, read_results
from dolb.studies.cutoff_averaging import mean_at

VALUES = {"d1": [0.1, 0.2, 0.3], "d2": [0.7, 0.1, 0.6]}
"""Test errors per dataset and split: summed in reverse, 0.1 + 0.2 + 0.3 is not 0.3 + 0.2 + 0.1."""


def store_folder(folder, ids, reverse_parts: bool = False) -> str:
    """A result folder holding :data:`VALUES` (one part per dataset; the cell of
    ``dataset`` and split ``i`` named ``ids[dataset][i]``)."""
    store, schema = ResultStore(folder), result_schema({})
    store.extend_schema(schema)
    datasets = list(VALUES)[::-1] if reverse_parts else list(VALUES)
    for dataset in datasets:
        rows = CellRows(schema, "run", "w")
        for split, value in enumerate(VALUES[dataset]):
            coordinates = {"experiment": "fig2", "dataset": dataset, "task": "binary", "learner": "perceptron",
                           "params": "", "complexity": "", "split": split}
            rows.add_ok(ids[dataset][split], coordinates,
                        {"checkpoints": [5000], "metrics": {"last": {"test_error": [value]}}})
        name = store.write_part(rows.table())
        store.commit({name: ids[dataset]}, "run")
    return str(folder)


def test_the_same_rows_stored_in_another_order_give_the_same_tables_to_the_bit(tmp_path):
    ids = {dataset: [f"{dataset}-{split}" for split in range(3)] for dataset in VALUES}
    other_ids = {dataset: names[::-1] for dataset, names in ids.items()}  # as a new version of the ids might
    first = store_folder(tmp_path / "first", ids)
    second = store_folder(tmp_path / "second", other_ids, reverse_parts=True)
    a, b = read_results(first, tidy=True), read_results(second, tidy=True)
    assert_frame_equal(aggregate(a), aggregate(b), check_exact=True)
    assert_series_equal(mean_at(a, "fig2", "test_error"), mean_at(b, "fig2", "test_error"), check_exact=True)
    assert_frame_equal(query.summary(ResultStore(first)), query.summary(ResultStore(second)), check_exact=True)
