"""The result store's promises: a committed part that is gone is named by every reader
(with the cells it took away) until a run computes them again, and the plain readers
(pandas, pyarrow.dataset, DuckDB, dask.dataframe) see the columns of every run of a
folder, and of several folders, as docs/guide/result-store.md documents them (its
union recipe is run as written)."""

from pathlib import Path

import duckdb
import pandas as pd
import pyarrow.dataset as ds
import pytest

from dolb.cli import main
from dolb.errors import DataError
from dolb.results.cell_rows import CellRows
from dolb.results.store import ResultStore, result_schema
from dolb.results.tables import read_results


def store_run(store: ResultStore, learner: str, params: dict, cells: list[str], run_id: str = "run",
              commit: bool = True) -> str:
    """Store ``cells`` of ``learner`` (each one row, its parameters set to 1) as one part,
    as a run does: the folder's schema extended first, the part committed after; return
    the part's name."""
    schema = result_schema({name: type(value) for name, value in params.items()})
    store.extend_schema(schema)
    rows = CellRows(schema, run_id, "w")
    coordinates = {"experiment": "e", "dataset": "d", "task": "binary", "learner": learner, "params": "", "complexity": ""}
    for index, cell in enumerate(cells):
        result = {"checkpoints": [10], "metrics": {"last": {"test_error": [index / 10]}}}
        rows.add_ok(cell, coordinates | {"split": index} | {f"param_{k}": v for k, v in params.items()}, result)
    name = store.write_part(rows.table())
    if commit:
        store.commit({name: cells}, run_id)
    return name


def ids(part: int) -> list[str]:
    return [f"cell-{part:02d}-{split}" for split in range(5)]


@pytest.fixture(params=["path", "url"])
def folder(request, tmp_path):
    """A result folder of 160 cells in 32 committed parts, as a path or a file:// URL."""
    root = str(tmp_path / "out") if request.param == "path" else f"file://{tmp_path}/out"
    store = ResultStore(root)
    for part in range(32):
        store_run(store, "pa", {"C": 1.0}, ids(part))
    return root


def test_a_deleted_part_is_named_by_every_reader_until_its_cells_are_stored_again(folder, tmp_path, capsys):
    store = ResultStore(folder)
    assert len(read_results(folder)) == 160
    gone = store.parts()[7]
    Path(gone).unlink()
    name = Path(gone).name
    message = (f"{folder}: incomplete: 1 committed result part missing ({name}); 5 cells stored nowhere else: "
               "cell-07-0, cell-07-1, cell-07-2 and 2 more (`dolb run` again computes them)")
    with pytest.raises(DataError) as raised:
        read_results(folder)
    assert str(raised.value) == message
    compare = [["compare", folder, folder]] if "://" not in folder else []  # it takes paths only
    for command in [["report", folder], ["export", folder], *compare]:
        assert main(command) == 2
        assert capsys.readouterr().err == f"dolb: error: {message}\n"
    assert main(["status", folder]) == 1
    assert capsys.readouterr().out.splitlines() == ["155 cells stored, 0 failed", message]

    store_run(store, "pa", {"C": 1.0}, ids(7), run_id="again")  # what `dolb run` does next
    assert len(read_results(folder)) == 160
    assert main(["status", folder]) == 0


def test_parts_gone_are_counted_and_cells_listed_once(tmp_path):
    store = ResultStore(tmp_path)
    names = [store_run(store, "pa", {"C": 1.0}, ids(part)) for part in range(3)]
    store_run(store, "pa", {"C": 1.0}, ids(0)[:2], run_id="twice")  # two of part 0's cells are stored twice
    for name in names[:2]:
        (tmp_path / "results" / name).unlink()
    with pytest.raises(DataError, match=r"incomplete: 2 committed result parts missing \(part-\S+ and 1 more\); "
                                         r"8 cells stored nowhere else: cell-00-2, cell-00-3, cell-00-4 and 5 more"):
        read_results(tmp_path)


def test_uncommitted_parts_are_read_in_a_folder_and_not_behind_a_url(tmp_path):
    """In a folder every whole part is read, committed or not (a run killed before it
    committed): nothing to tell gone. Behind a URL a part counts once committed."""
    local = ResultStore(tmp_path / "local")
    store_run(local, "pa", {"C": 1.0}, ids(0))
    store_run(local, "pa", {"C": 1.0}, ids(1), commit=False)
    assert len(read_results(local.root)) == 10

    url = ResultStore(f"file://{tmp_path}/remote")
    store_run(url, "pa", {"C": 1.0}, ids(0), commit=False)
    assert url.parts() == [] and read_results(local.root).shape[0] == 10


def two_pipelines(tmp_path) -> str:
    """A result folder where pipeline one stored perceptron cells (parameter C) and then
    pipeline two SGD cells with a new parameter (eta): parts of two schemas."""
    store = ResultStore(tmp_path / "mixed")
    store_run(store, "pa", {"C": 1.0}, ids(0), run_id="one")
    store_run(store, "sgd", {"C": 1.0, "eta": 0.5}, ids(1), run_id="two")
    return store.path


def check_columns(frame: pd.DataFrame) -> None:
    """Both runs' rows, and ``param_eta`` set on SGD's rows only."""
    frame = frame.dropna(subset=["cell_id"]).sort_values("cell_id")
    assert frame["cell_id"].tolist() == ids(0) + ids(1)
    assert frame["param_eta"].isna().tolist() == [True] * 5 + [False] * 5
    assert frame["param_eta"].dropna().tolist() == [0.5] * 5


def test_plain_readers_see_every_column_of_two_pipelines(tmp_path):
    folder = two_pipelines(tmp_path)
    results = f"{folder}/results"
    check_columns(pd.read_parquet(results))
    check_columns(ds.dataset(results).to_table().to_pandas())
    check_columns(duckdb.sql(f"SELECT * FROM read_parquet('{results}/*.parquet', union_by_name = true)").df())
    check_columns(read_results(folder))
    with pytest.raises(duckdb.InvalidInputException, match="param_eta"):  # loud, never a column dropped
        duckdb.sql(f"SELECT * FROM read_parquet('{results}/*.parquet')").df()


def documented_recipe() -> str:
    """The union recipe of docs/guide/result-store.md: the code block after its marker."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "guide" / "result-store.md").read_text(encoding="utf-8")
    after = page.split("<!-- the union recipe: tests/test_result_store.py runs this block as written -->", 1)[1]
    return after.split("```python\n", 1)[1].split("```", 1)[0]


@pytest.fixture
def synchronous():
    """dask.dataframe computes in this thread."""
    import dask

    with dask.config.set(scheduler="synchronous"):
        yield


def test_dask_reads_two_pipelines_and_two_folders_as_documented(tmp_path, synchronous):
    import dask.dataframe as dd

    # the guide: folders of one pipeline each (every part of the same columns), one at a time
    plain = [ResultStore(tmp_path / name) for name in ("a", "b")]
    for part, store in enumerate(plain):
        store_run(store, "pa", {"C": 1.0}, ids(3 + part))
    together = dd.concat([dd.read_parquet(f"{store.path}/results") for store in plain]).compute()
    assert sorted(together["cell_id"]) == ids(3) + ids(4)

    mixed = two_pipelines(tmp_path)
    other = ResultStore(tmp_path / "other")
    store_run(other, "ksvm", {"gamma": 2}, ids(2), run_id="three")
    folders = [f"{mixed}/results", f"{other.path}/results"]
    # the documented recipe, as written: dask.dataframe reads the parts with the union of their schemas
    recipe = {"folders": [mixed, other.path]}
    exec(documented_recipe(), recipe)
    datasets, both = recipe["datasets"], recipe["frame"].compute()
    assert both["param_gamma"].dropna().tolist() == [2] * 5
    check_columns(both[both["learner"] != "ksvm"])
    # and the other readers of two folders
    union = ds.dataset(datasets).to_table().to_pandas()
    assert sorted(union["cell_id"]) == sorted(both["cell_id"]) == ids(0) + ids(1) + ids(2)
    listed = ", ".join(f"'{folder}/*.parquet'" for folder in folders)
    assert len(duckdb.sql(f"SELECT * FROM read_parquet([{listed}], union_by_name = true)").df()) == 15
    assert len(pd.concat([pd.read_parquet(folder) for folder in folders])) == 15


def test_a_parameter_of_another_type_is_refused_before_anything_is_written(tmp_path):
    store = ResultStore(tmp_path)
    store_run(store, "pa", {"C": 1.0}, ids(0))
    schema = (tmp_path / "results" / "0-schema.parquet").read_bytes()
    with pytest.raises(DataError, match=f"{tmp_path}/results: result parts of incompatible schemas"):
        store.extend_schema(result_schema({"C": str}))
    assert (tmp_path / "results" / "0-schema.parquet").read_bytes() == schema


TINY = """
[pipeline]
name = "tiny"
seed = 3

[datasets.irma]
generator = "irma"
params = { n_sequences = 8, length = 20, n_test = 20 }

[experiments.table]
dataset = "irma"
task = "regression"
split = { scheme = "sequences", count = 8 }
checkpoints = [20]
metrics = ["test_mse"]
learners = [{ learner = "rls", complexity = 3, params = { domain_high = 3.0 } }]

[execution]
batch_examples = 40

[[reports]]
kind = "table"
experiment = "table"
metric = "test_mse"
"""


@pytest.mark.e2e
def test_dolb_run_commits_its_parts_and_computes_again_the_cells_of_one_deleted(tmp_path, capsys):
    pipeline, out = tmp_path / "tiny.toml", tmp_path / "out"
    pipeline.write_text(TINY)
    assert main(["run", str(pipeline), "--out", str(out), "--workers", "1", "--no-progress"]) == 0
    committed = ResultStore(out).committed()
    assert sorted(committed) == sorted(p.name for p in (out / "results").glob("part-*.parquet"))
    assert len(committed) > 1
    assert sorted(cell for cells in committed.values() for cell in cells) == sorted(read_results(out)["cell_id"].unique())
    name, cells = next(iter(committed.items()))
    (out / "results" / name).unlink()
    capsys.readouterr()
    assert main(["report", str(out)]) == 2
    assert f"incomplete: 1 committed result part missing ({name}); {len(cells)} cell" in capsys.readouterr().err
    assert main(["run", str(pipeline), "--out", str(out), "--workers", "1", "--no-progress"]) == 0
    assert f"8 cells: {8 - len(cells)} already stored, {len(cells)} computed, 0 failed" in capsys.readouterr().out
    assert main(["report", str(out)]) == 0


def test_small_parts_are_written_uncompressed_and_large_ones_compressed(tmp_path):
    """zstd's cost is per column, whatever the rows: a task's part of a few cells is
    written uncompressed, one of 10,000 rows or more (a compaction's) compressed; both
    read back as written."""
    import pyarrow.parquet as pq

    store = ResultStore(tmp_path)
    for cells, codec in ((3, "UNCOMPRESSED"), (10_000, "ZSTD")):
        rows = CellRows(result_schema({}), "run", "w")
        for cell in range(cells):
            rows.add_ok(f"c{cell}", {"experiment": "e", "split": cell}, {"checkpoints": [10], "metrics":
                                                                            {"last": {"test_error": [cell / 7]}}})
        table = rows.table()
        path = f"{store.results}/{store.write_part(table)}"
        metadata = pq.ParquetFile(path).metadata
        assert {metadata.row_group(0).column(i).compression for i in range(metadata.num_columns)} == {codec}
        assert pq.read_table(path).equals(table)
    assert sorted(p.name for p in Path(store.results).iterdir() if p.name.startswith(".")) == []  # no temporary left


def test_the_client_commits_every_2000_cells_as_well_as_every_5_seconds():
    """A short run killed mid-compute keeps what it computed: parts are committed once
    they hold COMMIT_CELLS cells, however little time has passed."""
    from dolb.execution.gather import COMMIT_CELLS, ClientWriter
    from dolb.execution.tasks import Destination, TaskOutcome

    class Store:
        commits = []

        def commit(self, parts, run_id):
            self.commits.append(sorted(parts))

    writer = ClientWriter(Store(), Destination(result_schema({}), "r1", None))
    for task in range(2 * COMMIT_CELLS // 500 + 1):
        writer.take(TaskOutcome(cells=[f"{task}-{i}" for i in range(500)], part=f"part-{task}"))
    assert Store.commits == [[f"part-{task}" for task in range(4)], [f"part-{task}" for task in range(4, 8)]]
    assert list(writer.uncommitted) == ["part-8"]
