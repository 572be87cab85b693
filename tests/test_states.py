"""What a long cell's saved state holds and what it costs: the learner and its
conversions' logs up to the rows learned (no room for the rows still to come), files of
stopped saves removed, the saves counted in the run record."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp

from dolb.conversions import CONVERSIONS
from dolb.evaluation import saved_states
from dolb.execution.sweep import _tidy_states, plan_groups
from dolb.execution.tasks import Destination, run_batch
from dolb.experiment.cells import cell_id
from dolb.experiment.pipeline import load_pipeline
from dolb.learners import learner_class
from dolb.results.history import write_record
from dolb.results.states import CellStates
from dolb.results.store import ResultStore, result_schema
from tests.test_preemption import long_pipeline  # noqa: F401  (the fixture)

D = 40


def examples(n: int, dense: bool):
    """``n`` rows of a noisy linear problem (the Perceptron keeps erring: its log grows)."""
    rng = np.random.default_rng(5)
    X = sp.random(n, D, density=0.2, random_state=rng, format="csr")
    y = np.where(X @ rng.standard_normal(D) > 0, 1.0, -1.0) * np.where(rng.random(n) < 0.1, -1.0, 1.0)
    return (X.toarray() if dense else X), y


def perceptron(n_train: int):
    return learner_class("perceptron")(D, n_train=n_train, conversions=CONVERSIONS)


@pytest.mark.parametrize("dense", [False, True])
def test_a_saved_learner_holds_what_it_learned_not_room_for_the_rows_to_come(dense):
    """The update log is sized for the whole horizon as it streams (no copy at every
    doubling); a state holds only the part in use, whatever the horizon."""
    X, y = examples(1000, dense)
    near, far = perceptron(1000), perceptron(1_000_000)
    for learner in near, far:
        learner.learn_running(X, y)
    assert far.history.lidx.shape[0] > 1000 * 8  # room for the rows to come, as it streams
    assert abs(len(pickle.dumps(far)) - len(pickle.dumps(near))) <= 16  # the horizon's digits


@pytest.mark.parametrize("dense", [False, True])
def test_a_learner_saved_midway_resumes_as_if_never_stopped(dense):
    X, y = examples(3000, dense)
    mistakes = np.flatnonzero(np.diff(perceptron(3000).learn_running(X, y), prepend=0.0))
    k = int(mistakes[mistakes < 1700][-1]) + 1  # stopped right after a mistake: the last round's loss counts
    whole, stopped = perceptron(3000), perceptron(3000)
    first = whole.learn_running(X[:k], y[:k])
    assert np.array_equal(stopped.learn_running(X[:k], y[:k]), first)
    resumed = pickle.loads(pickle.dumps(stopped))
    assert np.array_equal(resumed.learn_running(X[k:], y[k:], total=first[-1]),
                          whole.learn_running(X[k:], y[k:], total=first[-1]))
    got, want = resumed.outputs(), whole.outputs()
    assert list(got) == list(CONVERSIONS)
    for name, hypothesis in want.items():
        assert np.array_equal(got[name].predict.weights, hypothesis.predict.weights), name
        assert got[name].info == hypothesis.info, name


def test_a_save_replaces_its_state_and_the_end_of_a_run_removes_what_stopped_saves_left(tmp_path):
    states = CellStates(ResultStore(tmp_path))
    states.save("c1", b"one")
    one = set(states.files())
    (tmp_path / "state" / "c1-0-torn.pkl").write_bytes(b"half a pickle")  # stopped before its pointer
    (tmp_path / "state" / ".c1.json.0a1b.tmp").write_text('{"sta')  # stopped while writing the pointer
    states.save("c1", b"two")
    assert states.load("c1") == b"two"
    assert not one - {"c1.json"} & set(states.files())  # the state it replaced, by name; nothing else listed
    assert len(states.files()) == 4

    for cell in ("c2", "c3"):
        states.save(cell, cell.encode())
        (tmp_path / "state" / f"{cell}-0-torn.pkl").write_bytes(b"half")
    assert states.keep_only({"c1", "c2"}) == 6  # c3's state, pointer and torn save; the torn saves of c1, c2
    assert (states.load("c1"), states.load("c2"), states.load("c3")) == (b"two", b"c2", None)
    assert len(states.files()) == 4
    states.drop("c1")
    assert all(not name.startswith("c1") for name in states.files())


def test_a_run_ends_keeping_only_the_states_of_cells_of_its_pipelines(tmp_path):
    """Cells of the last plan of each pipeline run in the folder keep their states (a
    failed cell run again resumes); states of cells no plan has any more go."""
    store = ResultStore(tmp_path)
    old, new, other = "a" * 64, "b" * 64, "c" * 64
    write_record(store, {"run_id": "r1", "pipeline": "p", "groups": [[old, 1]]})
    write_record(store, {"run_id": "r2", "pipeline": "q", "groups": [[other, 1]]})
    write_record(store, {"run_id": "r3", "pipeline": "p", "groups": [[new, 2]]})  # p changed
    states = CellStates(store)
    for cell in (cell_id(old, 0), cell_id(new, 1), cell_id(other, 0)):
        states.save(cell, b"state")
    _tidy_states(store)
    assert {name.split("-")[0].split(".")[0] for name in states.files()} == {cell_id(new, 1), cell_id(other, 0)}


def test_a_task_counts_the_states_its_cells_saved(long_pipeline, tmp_path, monkeypatch):  # noqa: F811
    (group,) = plan_groups(load_pipeline(long_pipeline(1e-9)))  # a save after every block but the last
    sizes = []
    save = saved_states.save_state
    monkeypatch.setattr(saved_states, "save_state", lambda *args: sizes.append(save(*args)) or sizes[-1])
    destination = Destination(result_schema({}), "r1", str(tmp_path), keep_states=True)
    outcome = run_batch([(group, np.array([0]))], destination)
    assert len(sizes) == 4  # five blocks
    saves = outcome.state_saves
    assert (saves["state_saves"], saves["state_bytes"], saves["state_largest"]) == (4, sum(sizes), max(sizes))
    assert saves["state_seconds"] > 0
    assert not CellStates(ResultStore(tmp_path)).files()
