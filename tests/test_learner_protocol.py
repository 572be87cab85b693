"""The protocol every registered learner follows, beyond ``dolb.testing.check_learner``'s
rules (tests/test_check_learner.py): the registry carries what bench needs, a broken CSR
block is refused naming its row, diagnostics are recorded as metrics; the linear
learners' named step parameters, their driver's sources, and conversions that never
import learners."""

import ast
import pickle
import re
from pathlib import Path

import numba
import numpy as np
import pytest
import scipy.sparse as sp

import dolb.conversions
from dolb.bench import throughput as bench
from dolb.conversions.protocol import Fed
from dolb.errors import ConfigError, DataError
from dolb.evaluation import run_cell as run_cell_module
from dolb.execution.sweep import plan_groups
from dolb.experiment.pipeline import load_pipeline
from dolb.learners import (
    LEARNERS,
    OnlineLearner,
    learner_class,
    registered_learners,
    sgd,
)
from dolb.learners.linear import choice_codes, driver
from dolb.learners.linear.driver import FED, _sources
from dolb.learners.sgd import INVERSE, SQRT


def make(name, d, n):
    cls = learner_class(name)
    if cls.unavailable():  # a peer whose optional library is not installed
        pytest.skip(cls.unavailable())
    return cls(d, n_train=n, conversions=cls.conversions_supported, **cls.test_params)


HOSTILE_CSR = {  # (data, indices, indptr) of 3 rows × 4 columns, the bad row, what is said of it
    "column past the end": ([1.0, 2.0, 3.0], [0, 1, 4], [0, 1, 2, 3], 2, " has column index 4, outside 0..3"),
    "negative column": ([1.0, 2.0, 3.0], [0, -1, 2], [0, 1, 2, 3], 1, " has column index -1, outside 0..3"),
    "pointers decrease": ([1.0, 2.0, 3.0], [0, 1, 2], [0, 2, 1, 3], 1, ": its row pointers decrease"),
    "pointers past values": ([1.0, 2.0], [0, 1], [0, 1, 3, 3], 1, ": its row pointers decrease or run past"),
    "out of order, then pointers past values": ([1.0, 2.0, 3.0], [0, 2, 1], [0, 1, 3, 5], 2,
                                                ": its row pointers decrease or run past"),
}
"""SciPy refuses the last case when the matrix is made, not when its arrays are changed after."""


@pytest.mark.parametrize("case", HOSTILE_CSR)
@pytest.mark.parametrize("name", list(registered_learners(task="binary")))
def test_a_broken_csr_block_is_refused_naming_its_row(name, case):
    """SciPy does not check a CSR matrix made from arrays; compiled code reading it would
    read and write outside its arrays. Every learner refuses it; rows are numbered on
    from the rows learned before. Bad row pointers are refused before any row is
    learned; a column index by a learner that checks them as it reads them (the linear
    ones) after the rows before it, by the others before any."""
    data, indices, indptr, row, said = HOSTILE_CSR[case]
    X = sp.csr_matrix((np.array(data), np.array(indices), np.array([0, 0, 0, len(data)])), shape=(3, 4))
    X.indptr = np.array(indptr)
    learner = make(name, 4, 10)
    learner.learn(np.full((1, 4), 0.5), np.ones(1))
    with pytest.raises(DataError, match=re.escape(f"learner '{name}': row {row + 1}{said}")):
        learner.learn(X, np.ones(3))
    learned = row if learner.checks_columns and "column" in case else 0
    assert learner.n_seen == 1 + learned


def test_a_broken_csr_block_is_refused_with_unlabelled_rows_too():
    """Runs of labelled rows are slices of the block, and SciPy's slicing drops column
    indices outside the matrix: the block is checked whole before."""
    X = sp.csr_matrix((np.ones(3), np.array([0, 1, 4]), np.array([0, 1, 2, 3])), shape=(3, 4))
    with pytest.raises(DataError, match=re.escape("learner 'perceptron': row 2 has column index 4, outside 0..3")):
        make("perceptron", 4, 10).learn(X, np.ones(3), np.array([True, False, True]))


@pytest.mark.parametrize("name", list(registered_learners(task="binary")))
def test_a_csr_block_with_fewer_values_than_column_indices_is_refused(name):
    """Its last row would read past the values."""
    X = sp.csr_matrix(np.ones((3, 4)))
    X.data = X.data[:10]
    with pytest.raises(DataError, match=re.escape(f"learner '{name}': row 2: its row pointers decrease or run past")):
        make(name, 4, 10).learn(X, np.ones(3))


def test_labelled_must_be_one_boolean_per_row():
    learner = learner_class("perceptron")(2)
    with pytest.raises(ValueError, match="labelled must be 3 booleans"):
        learner.learn(np.ones((3, 2)), np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="labelled must be 3 booleans"):
        learner.learn(np.ones((3, 2)), np.ones(3), np.ones(2, bool))


class SemiSupervised(OnlineLearner):
    """Not registered: records what the base hands to a semi-supervised learner."""

    name = "semi_supervised_probe"
    task = "binary"
    semi_supervised = True

    def _learn(self, X, y, labelled):
        self.given = labelled.copy()
        return np.zeros(y.shape[0])

    def _predict(self, X):
        return np.zeros(X.shape[0])


def test_a_semi_supervised_learner_gets_every_row_and_the_flags():
    learner = SemiSupervised(2)
    learner.learn(np.ones((3, 2)), np.ones(3))
    assert learner.given.tolist() == [True, True, True]
    learner.learn(np.ones((3, 2)), np.array([1.0, np.nan, 1.0]), np.array([True, False, True]))
    assert learner.given.tolist() == [True, False, True] and learner.n_seen == 6


@pytest.mark.parametrize("name", LEARNERS.names())
def test_registry_entries_carry_bench_settings(name):
    """The test settings are checked with the rest of the protocol (tests/test_check_learner.py)."""
    cls = learner_class(name)
    if cls.bench_params is not None:
        cls.check_params(cls.bench_params)
        assert bench.LEARNERS[name] == cls.bench_params
    else:
        assert name not in bench.LEARNERS


def test_registry_filters():
    binary = registered_learners(task="binary")
    assert binary and all(cls.task == "binary" for cls in binary.values())
    every = registered_learners(supports=dolb.conversions.CONVERSIONS)
    assert set(every) <= set(binary) and "perceptron" in every and "rls" not in every


def counting(cls):
    """``cls`` reporting the examples it has seen as a diagnostic."""
    return type(cls.__name__, (cls,), {"diagnostics": lambda self: {"examples_so_far": float(self.n_seen)}})


def test_diagnostics_are_recorded_at_every_checkpoint(small_pipeline, monkeypatch):
    """Without test metrics the cell is still cut at each checkpoint for them."""
    monkeypatch.setattr(run_cell_module, "learner_class", lambda name: counting(learner_class(name)))
    groups = plan_groups(load_pipeline(small_pipeline))
    cell = next(g.cell(0) for g in groups if g.cell(0).spec.metrics == ("cumulative_loss",))
    result = run_cell_module.run_cell(cell)
    assert result["metrics"]["online"]["examples_so_far"] == [float(n) for n in result["checkpoints"]]
    assert len(result["checkpoints"]) > 10


def test_a_pipeline_checks_each_configuration_once_and_its_cells_never(small_pipeline, checks):
    """The pipeline's check is the only one a configuration's parameters get: its cells,
    and a worker's warm-up, take them as checked."""
    pipeline = load_pipeline(small_pipeline)
    per_entry = [len(entry.configurations) for e in pipeline.experiments.values() for entry in e.learners]
    assert per_entry == [2, 2, 1, 1] and checks == ["irma", "irma", "batch_ls", "batch_ls", "rls", "irma"]
    groups = plan_groups(pipeline)
    run_cell_module.warm_up(groups[0].cell(0))
    results = [run_cell_module.run_cell(group.cell(0)) for group in groups]
    assert len(results) == 6 and all(result["checkpoints"] for result in results)
    assert len(checks) == 6


def test_a_learner_made_by_hand_checks_its_parameters():
    sgd = learner_class("sgd")
    with pytest.raises(ConfigError, match="learner 'sgd', parameter 'alpha'"):
        sgd(3, alpha=-1.0)
    with pytest.raises(ConfigError, match="unknown parameter 'alpah'"):
        sgd(3, alpah=0.5)
    assert sgd(3, alpha=1).config == sgd.check_params({"alpha": 1.0}) != sgd.check_params({})
    assert isinstance(sgd(3, alpha=1).config["alpha"], float)  # converted to its kind


def test_a_cell_s_learner_still_says_it_cannot_run_where_it_runs(monkeypatch):
    """Checked parameters skip the check, not the question of a package missing on the
    machine the learner runs on (a worker may lack one)."""
    sgd = learner_class("sgd")
    full = sgd.check_params({})
    monkeypatch.setattr(sgd, "unavailable", classmethod(lambda cls: "learner 'sgd' needs the package 'x'"))
    with pytest.raises(ConfigError, match="^learner 'sgd' needs the package 'x'$"):
        sgd(3, checked=True, **full)


@pytest.mark.parametrize("name", LEARNERS.names())
def test_every_learner_takes_checked_parameters_as_they_are(name, monkeypatch):
    """``checked=True`` reaches the base class through every learner's constructor."""
    cls = learner_class(name)
    if cls.unavailable():
        pytest.skip(cls.unavailable())
    full = cls.check_params(cls.test_params)
    monkeypatch.setattr(cls, "check_params", classmethod(lambda *_: pytest.fail("checked again")))
    learner = cls(2 if cls.task == "binary" else 1, n_train=20, conversions=cls.conversions_supported, checked=True,
                  **full)
    assert learner.config == full


# --- the linear learners' step parameters and driver --------------------------------------


def test_step_parameters_are_named():
    learner = learner_class("sgd")(3, alpha=0.5, schedule="inverse")
    assert learner.P.alpha == 0.5 and learner.P.schedule == INVERSE != SQRT
    assert learner.P._fields == ("loss", "alpha", "eta0", "schedule")
    assert learner_class("margin_perceptron")(3, n_train=16).P.sqrt_m == 4.0
    assert pickle.loads(pickle.dumps(learner.P)) == learner.P
    with pytest.raises(TypeError, match="name every one of the choices"):
        choice_codes(("a", "b"), "a")


def test_the_driver_hash_covers_every_source_it_inlines():
    sources = set(_sources(sgd.__file__))
    for part in FED:
        for hook in part.hooks.values():
            assert Path(hook.py_func.__code__.co_filename) in sources
    package = Path(dolb.conversions.__file__).parent
    assert set(package.glob("*.py")) <= sources
    assert {"representation.py", "driver.py", "sgd.py"} <= {p.name for p in sources}


def test_conversions_never_import_learners():
    for path in Path(dolb.conversions.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            names += [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not any(n.startswith("dolb.learners") for n in names), path.name


def test_a_hook_must_take_its_events_values(monkeypatch):
    @numba.njit(inline="always")
    def on_round(st, s, age):
        pass

    class Wrong(Fed):
        hooks = {"round": on_round}

    monkeypatch.setattr(driver, "FED", (*driver.FED, Wrong))
    with pytest.raises(TypeError, match=r"Wrong: its round hook takes \('s', 'age'\)"):
        driver._driver_source(quiet=False)
