"""Long cells survive preemption: a cell saves its state every `state_every` seconds and,
run again after it was stopped (in this process, or by killing its worker for real),
resumes from the state and stores results identical to an uninterrupted run."""

import json
import signal
import textwrap
import threading
import time

import numpy as np
import pytest

from dolb.evaluation import run_cell as run_cell_module
from dolb.evaluation import saved_states
from dolb.evaluation.run_cell import run_cell
from dolb.execution.sweep import plan_groups, run_sweep
from dolb.experiment.pipeline import load_pipeline
from dolb.learners import learner_class
from dolb.options import RunOptions
from dolb.results.history import read_records
from dolb.results.query import rows
from dolb.results.states import CellStates
from dolb.results.store import ResultStore
from tests.conftest import assert_same, stored_values
from tests.test_faults import worker_processes

# One cell of 60,000 sparse rows: five blocks of 13,102 rows (2**20 values each, see
# run_cell.block_rows), a test evaluation at log-spaced checkpoints, every conversion
# (each keeps state of its own).
LONG = """
[pipeline]
name = "long"
seed = 3

[datasets.text]
generator = "sparse_text"
params = {{ n_rows = 60000, n_features = 5000, n_test = 2000 }}

[experiments.long]
dataset = "text"
task = "binary"
split = {{ scheme = "given", count = 1 }}
checkpoints = {{ log = 12 }}
metrics = ["test_error", "cumulative_loss"]
conversions = ["last", "average", "longest_survivor", "suffix", "cutoff"]
learners = [{{ learner = "perceptron" }}]

[execution]
state_every = {every}
"""


@pytest.fixture
def long_pipeline(tmp_path):
    def write(every: float) -> str:
        path = tmp_path / f"long-{every}.toml"
        path.write_text(textwrap.dedent(LONG.format(every=every)))
        return path

    return write


class Preempted(Exception):
    pass


@pytest.mark.parametrize("where", ["path", "url"])
def test_a_stopped_cell_resumes_from_its_state_with_identical_results(long_pipeline, tmp_path, monkeypatch, where):
    """In a local folder and behind an fsspec URL (no atomic rename there: each state
    has a unique name, and a pointer written after it names the last one)."""
    pipeline = load_pipeline(long_pipeline(1e-9))  # save after every block
    (group,) = plan_groups(pipeline)
    cell = group.cell(0)
    whole = run_cell(cell)  # no state folder: runs straight through
    assert whole["timing"]["resumed_from"] == 0

    folder = tmp_path / "out"
    states = CellStates(ResultStore(folder if where == "path" else f"file://{folder}"))
    saved = []
    save = saved_states.save_state

    def save_then_stop(keeper, cell_id, state):
        size = save(keeper, cell_id, state)
        saved.append(state["seen"])
        if len(saved) == 3:
            raise Preempted  # stopped right after its third save, as a preempted job is
        return size

    monkeypatch.setattr(saved_states, "save_state", save_then_stop)
    with pytest.raises(Preempted):
        run_cell(cell, states)
    block = run_cell_module.block_rows(learner_class(cell.spec.learner), run_cell_module._dataset(cell.train_path))
    assert saved == [block, 2 * block, 3 * block]  # states are saved after whole blocks
    (kept,) = (folder / "state").glob(f"{cell.id}-*.pkl")  # the states it replaced are removed
    assert json.loads((folder / "state" / f"{cell.id}.json").read_text()) == {"state": kept.name}
    (folder / "state" / f"{cell.id}-0-torn.pkl").write_bytes(b"half a pickle")  # a save preempted midway
    monkeypatch.setattr(saved_states, "save_state", save)

    resumed = run_cell(cell, states)
    assert resumed["timing"]["resumed_from"] == 3 * block
    assert resumed["checkpoints"] == whole["checkpoints"]
    for conversion, metrics in whole["metrics"].items():
        for metric, values in metrics.items():
            got = np.asarray(resumed["metrics"][conversion][metric])
            assert np.array_equal(got.view(np.int64), np.asarray(values).view(np.int64)), (conversion, metric)
    assert not list((folder / "state").iterdir())  # removed once the cell is done, the torn save too



def test_a_linear_cell_is_the_same_in_blocks_of_values_or_of_rows(long_pipeline, monkeypatch):
    """A linear learner's cell streams blocks of about ``block_values`` values (13,102
    rows here); in blocks of BLOCK_SIZE rows every value is the same, bit for bit."""
    from dolb.learners.linear import LinearLearner

    (group,) = plan_groups(load_pipeline(long_pipeline(3600)))
    cell = group.cell(0)
    train = run_cell_module._dataset(cell.train_path)
    assert run_cell_module.block_rows(learner_class("perceptron"), train) == 13_102
    by_values = run_cell(cell)
    monkeypatch.setattr(LinearLearner, "block_values", None)
    assert run_cell_module.block_rows(learner_class("perceptron"), train) == run_cell_module.BLOCK_SIZE
    by_rows = run_cell(cell)
    assert by_rows["checkpoints"] == by_values["checkpoints"]
    for conversion, metrics in by_values["metrics"].items():
        for metric, values in metrics.items():
            got = np.asarray(by_rows["metrics"][conversion][metric])
            assert np.array_equal(got.view(np.int64), np.asarray(values).view(np.int64)), (conversion, metric)

def test_an_unreadable_pointer_means_no_state(tmp_path):
    states = CellStates(ResultStore(f"file://{tmp_path}"))
    assert states.load("c1") is None
    states.save("c1", b"one")
    states.save("c1", b"two")
    assert states.load("c1") == b"two" and len(list((tmp_path / "state").glob("c1-*.pkl"))) == 1
    (tmp_path / "state" / "c1.json").write_text('{"sta')  # torn: the cell starts over
    assert states.load("c1") is None


@pytest.mark.e2e
def test_a_long_cell_whose_worker_is_killed_resumes_on_a_new_one(long_pipeline, tmp_path):
    """For real: the worker running the cell is killed with SIGKILL after the cell saved
    its state; Dask runs the task again and the cell resumes from the state. The result
    folder is an fsspec URL (a state is named by a pointer written after it)."""
    out = f"file://{tmp_path}/killed"
    state = tmp_path / "killed" / "state"
    killed, done = [], threading.Event()

    def kill_when_saved():
        while not done.is_set() and not list(state.glob("*.json")):
            time.sleep(0.001)
        for victim in [] if done.is_set() else worker_processes():  # the nanny starts a new one
            victim.send_signal(signal.SIGKILL)
            killed.append(victim.pid)

    watcher = threading.Thread(target=kill_when_saved, daemon=True)
    watcher.start()
    summary = run_sweep(long_pipeline(1e-9), out, RunOptions(workers=1, progress=False))
    done.set()
    watcher.join()
    assert killed, "the cell ended before its worker could be killed"
    assert summary.n_failed == 0 and summary.n_computed == 1
    assert (rows(ResultStore(out))["resumed_from"] > 0).all()
    run_sweep(long_pipeline(1e-9), tmp_path / "calm", RunOptions(workers=1, progress=False))
    assert (rows(ResultStore(tmp_path / "calm"))["resumed_from"] == 0).all()
    (record,) = read_records(ResultStore(tmp_path / "calm"))
    assert record["state_saves"]["state_saves"] == 4  # after each of its five blocks but the last
    assert 0 < record["state_saves"]["state_largest"] < record["state_saves"]["state_bytes"]
    assert not CellStates(ResultStore(out)).files()  # the killed save's files too
    assert_same(out, tmp_path / "calm")
    assert len(stored_values(out)) > 100
