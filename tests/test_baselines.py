"""The baselines (dolb/learners/baselines.py) give their closed forms on streams built by
hand; the batch references (dolb/learners/batch_reference.py) are scikit-learn fit
directly on the same rows; all follow the learner protocol; and a pipeline runs them
beside the Perceptron on a slice of a9a, with the values they must have."""

import io
import itertools

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.svm import LinearSVC

from dolb.errors import ConfigError
from dolb.experiment.pipeline import load_pipeline
from dolb.learners import learner_class
from dolb.learners.perceptron import Perceptron
from dolb.testing import RULES, check_learner
from tests.conftest import requires_shared_data
from tests.studies import SHARED_DATA

LABELS = np.array([1.0, 1.0, -1.0, 1.0, -1.0, -1.0, -1.0])
BASELINES = ["majority", "running_mean", "no_change", "no_change_regression", "batch_reference", "batch_ridge"]


def learner(name, n_features=1, **params):
    return learner_class(name)(n_features, **params)


def test_majority_s_closed_form():
    """Labels + + − + − − −: before each, (+, −) seen = (0,0) (1,0) (2,0) (2,1) (3,1)
    (3,2) (3,3), so the predictions are + + + + + + + (ties to +1), four mistakes; the
    hypothesis after t labels predicts + for t ≤ 6 and − after all 7 (3 +, 4 −)."""
    majority = learner("majority")
    X = np.zeros((7, 1))
    assert majority.learn(X[:3], LABELS[:3]).tolist() == [1.0] * 3
    assert majority.predict(X[:2]).tolist() == [1.0, 1.0]
    assert majority.learn(X[3:], LABELS[3:]).tolist() == [1.0] * 4
    assert majority.outputs()["last"].predict(X[:3]).tolist() == [-1.0] * 3
    counting = learner("majority")
    assert counting.learn_running(X, LABELS)[-1] == 4.0  # the online mistakes
    shown = []
    fresh = learner("majority")
    for t in range(7):
        fresh.learn(X[t:t + 1], LABELS[t:t + 1])
        shown.append(fresh.predict(X[:1])[0])
    assert shown == [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, -1.0]


def test_no_change_s_closed_form():
    """Predictions +1 (first), then the previous label: + + + − + − −; its mistakes are
    the label changes (+→−, −→+, +→−: 3), the first label being +."""
    no_change = learner("no_change")
    X = np.zeros((7, 1))
    predictions = no_change.learn(X, LABELS)
    assert predictions.tolist() == [1.0, 1.0, 1.0, -1.0, 1.0, -1.0, -1.0]
    assert learner("no_change").learn_running(X, LABELS)[-1] == np.count_nonzero(np.diff(LABELS)) == 3
    assert no_change.outputs()["last"].predict(X[:2]).tolist() == [-1.0, -1.0]
    assert learner("no_change").learn(X[:2], -LABELS[:2]).tolist() == [1.0, -1.0]  # first −: one more mistake


def test_the_regression_baselines_closed_forms():
    y = np.array([3.0, 1.0, 2.0, 6.0])
    X = np.zeros((4, 1))
    mean = learner("running_mean")
    assert mean.learn(X[:1], y[:1]).tolist() == [0.0]
    assert mean.learn(X[1:], y[1:]).tolist() == [3.0, 2.0, 2.0]
    assert mean.outputs()["last"].predict(X[:2]).tolist() == [3.0, 3.0]
    last = learner("no_change_regression")
    assert last.learn(X, y).tolist() == [0.0, 3.0, 1.0, 2.0]
    assert last.predict(X[:1]).tolist() == [6.0]


def test_unlabelled_rows_count_for_nothing():
    """Rows 3 and 4 unlabelled: the labels seen are + + · · − − −, so no-change predicts
    + + + + + − − and majority (2 +, then 2 −: a tie at the last row) + everywhere."""
    X = np.zeros((7, 1))
    labelled = np.array([True, True, False, False, True, True, True])
    targets = np.where(labelled, LABELS, np.nan)
    assert learner("no_change").learn(X, targets, labelled).tolist() == [1.0] * 5 + [-1.0, -1.0]
    assert learner("majority").learn(X, targets, labelled).tolist() == [1.0] * 7


@pytest.fixture(scope="module")
def a9a_rows():
    if not (SHARED_DATA / "libsvm" / "a9a").exists():
        pytest.skip(f"real data not found at {SHARED_DATA / 'libsvm' / 'a9a'}")
    X, y = load_svmlight_file(io.BytesIO(first_lines(SHARED_DATA / "libsvm" / "a9a", 600)), n_features=123)
    X = sp.csr_matrix((X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)), shape=X.shape)
    return X, y.astype(np.float64)  # int32 indices: scikit-learn's LinearSVC refuses others


def first_lines(path, n):
    with open(path, "rb") as file:
        return b"".join(itertools.islice(file, n))


@pytest.mark.parametrize("model", ["logistic", "linear_svc"])
def test_batch_reference_is_scikit_learn_fit_on_the_prefix(a9a_rows, model):
    X, y = a9a_rows
    reference = learner("batch_reference", 123, model=model, C=0.5)
    online = np.concatenate([reference.learn(X[:250], y[:250]), reference.learn(X[250:].toarray(), y[250:])])
    estimator = (LogisticRegression(C=0.5, solver="lbfgs", tol=1e-4, max_iter=1000, random_state=0)
                 if model == "logistic" else LinearSVC(C=0.5, dual="auto", tol=1e-4, max_iter=1000, random_state=0))
    direct = estimator.fit(X, y)
    assert np.array_equal(reference.outputs()["last"].predict(X), direct.decision_function(X))
    # online: example t + 1 is predicted by the fit on the first 2^k ≤ t rows
    at_256 = LogisticRegression(C=0.5, max_iter=1000, random_state=0) if model == "logistic" else \
        LinearSVC(C=0.5, max_iter=1000, random_state=0)
    at_256.fit(X[:256], y[:256])
    np.testing.assert_allclose(online[256:512], at_256.decision_function(X[256:512]), rtol=1e-12, atol=1e-12)
    assert online[0] == 0.0 and online[1] == y[0]  # nothing seen, then one label: its constant


def test_batch_ridge_is_scikit_learn_ridge_on_the_prefix():
    rng = np.random.default_rng(3)
    X, y = rng.random((300, 4)), rng.normal(size=300)
    ridge = learner("batch_ridge", 4, alpha=0.3)
    ridge.learn(X[:100], y[:100])
    direct = Ridge(alpha=0.3, solver="cholesky").fit(X[:100], y[:100])
    assert np.array_equal(ridge.outputs()["last"].predict(X), direct.predict(X))
    online = ridge.learn(X[100:], y[100:])
    at_128 = Ridge(alpha=0.3, solver="cholesky").fit(X[:128], y[:128])
    np.testing.assert_allclose(online[28:156], at_128.predict(X[128:256]), rtol=1e-12, atol=1e-12)


def test_fit_last_fits_only_at_the_end_of_the_stream(a9a_rows):
    X, y = a9a_rows
    last = learner("batch_reference", 123, n_train=600, fit="last")
    last.learn(X[:300], y[:300])
    assert last.outputs() == {}  # no test values before the end
    last.learn(X[300:], y[300:])
    direct = LogisticRegression(max_iter=1000, random_state=0).fit(X, y)
    assert np.array_equal(last.outputs()["last"].predict(X), direct.decision_function(X))


@pytest.mark.parametrize("name", BASELINES)
def test_each_follows_the_learner_protocol(name):
    check_learner(learner_class(name))


def test_the_other_settings_follow_it_too():
    check_learner(learner_class("batch_reference"), {"model": "linear_svc", "fit_intercept": False})
    # fit = "last" shows nothing before its n_train rows: the rule feeding a learner its
    # labelled rows alone (fewer than n_train) cannot compare its outputs
    check_learner(learner_class("batch_reference"), {"fit": "last"},
                  checks=[r for r in RULES if r != "unlabelled targets never read"])


PIPELINE = """
[pipeline]
name = "baselines"
seed = 5

[datasets.a9a]
importer = "svmlight"
params = {{ path = "{train}", test_path = "{test}", n_features = 123 }}

[experiments.e]
dataset = "a9a"
task = "binary"
split = {{ scheme = "given" }}
checkpoints = [100, 800]
metrics = ["test_error", "online_loss"]
learners = [{learners}]
"""


def test_a_bad_parameter_fails_the_pipeline_on_one_line(tmp_path):
    for entry, message in [
        ('{ learner = "batch_reference", params = { model = "ridge" } }', "'ridge' is not one of logistic, linear_svc"),
        ('{ learner = "batch_reference", params = { C = 0.0 } }', "params.C: must be above 0.0"),
        ('{ learner = "batch_reference", params = { fit = "first" } }', "'first' is not one of each, last"),
        ('{ learner = "majority", params = { C = 1.0 } }', "params.C: unknown parameter of learner 'majority'"),
        ('{ learner = "running_mean" }', "regression"),
    ]:
        text = PIPELINE.format(train="a", test="b", learners=entry)
        with pytest.raises(ConfigError, match=message) as raised:
            load_pipeline(tmp_path / "p.toml", text)
        assert "\n" not in str(raised.value)


@requires_shared_data("libsvm", "a9a.t")
def test_a_pipeline_runs_them_beside_the_perceptron_on_a9a(tmp_path):
    """800 training rows of a9a and 400 of its test file, in stored order: each value is
    the one its closed form (majority), scikit-learn (batch_reference) or dolb's
    Perceptron run directly give."""
    from dolb.execution.sweep import run_sweep
    from dolb.options import RunOptions
    from dolb.results.query import rows
    from dolb.results.store import ResultStore

    (tmp_path / "train.svm").write_bytes(first_lines(SHARED_DATA / "libsvm" / "a9a", 800))
    (tmp_path / "test.svm").write_bytes(first_lines(SHARED_DATA / "libsvm" / "a9a.t", 400))
    learners = ('{ learner = "majority" }, { learner = "perceptron" }, '
                '{ learner = "batch_reference", params = { fit = ["each", "last"] } }')
    (tmp_path / "p.toml").write_text(PIPELINE.format(train="train.svm", test="test.svm", learners=learners))
    summary = run_sweep(tmp_path / "p.toml", tmp_path / "out", RunOptions(workers=1, progress=False))
    assert (summary.n_computed, summary.n_failed) == (4, 0)
    found = rows(ResultStore(tmp_path / "out"))
    value = {(r.learner, r.param_fit if isinstance(r.param_fit, str) else "", r.metric, r.n_train): r.value
             for r in found.itertuples()}

    X, y = load_svmlight_file(str(tmp_path / "train.svm"), n_features=123)
    X_test, y_test = load_svmlight_file(str(tmp_path / "test.svm"), n_features=123)
    for n in (100, 800):
        positives = np.cumsum(y[:n] > 0)
        label = 1.0 if positives[-1] >= n - positives[-1] else -1.0
        assert value["majority", "", "test_error", n] == np.mean(y_test != label)
        before = np.concatenate(([0], positives[:-1]))
        guesses = np.where(before >= np.arange(n) - before, 1.0, -1.0)
        assert value["majority", "", "online_loss", n] == pytest.approx(np.mean(guesses != y[:n]), abs=1e-15)
        fitted = LogisticRegression(max_iter=1000, random_state=0).fit(X[:n], y[:n])
        error = np.mean(np.where(fitted.decision_function(X_test) > 0, 1.0, -1.0) != y_test)
        assert value["batch_reference", "each", "test_error", n] == pytest.approx(error, abs=1e-15)
    assert value["batch_reference", "last", "test_error", 800] == value["batch_reference", "each", "test_error", 800]
    assert ("batch_reference", "last", "test_error", 100) not in value  # fit only at the end
    perceptron = Perceptron(123)
    perceptron.learn(X, y)
    error = np.mean(np.where(perceptron.predict(X_test) > 0, 1.0, -1.0) != y_test)
    assert value["perceptron", "", "test_error", 800] == pytest.approx(error, abs=1e-15)
    assert value["majority", "", "test_error", 800] > value["batch_reference", "each", "test_error", 800]


def summary_of(errors):
    """The summary of one split's test error per (dataset, learner) of ``errors``."""
    from dolb.results.tables import TIDY_COLUMNS, aggregate

    rows = [dict(experiment="e", dataset=dataset, task="binary", learner=learner, params="", complexity="",
                 split=0, conversion="last", n_train=100, metric="test_error", value=value, cell_id="c")
            for dataset, by_learner in errors.items() for learner, value in by_learner.items()]
    return aggregate(pd.DataFrame(rows)[TIDY_COLUMNS])


def test_tables_show_the_references_after_the_learners_and_rank_only_the_learners():
    from dolb.results.tables import comparison_table, ranking_table

    errors = {"a": {"majority": 0.05, "pa": 0.2, "perceptron": 0.1, "sgd": 0.3},
              "b": {"majority": 0.05, "pa": 0.1, "perceptron": 0.3, "sgd": 0.2}}
    table = ranking_table(summary_of(errors), "e", "test_error", None)
    assert table["learner"].tolist() == ["pa", "perceptron", "sgd", "majority"]  # mean ranks 1.5, 2, 2.5, none
    assert table["mean rank"].tolist()[:3] == [1.5, 2.0, 2.5] and np.isnan(table["mean rank"].iloc[3])
    assert table["mean on a"].tolist() == [0.2, 0.1, 0.3, 0.05]
    shown = comparison_table(summary_of(errors), "e", "test_error", None, ("mean",))
    assert shown["learner"].tolist() == ["pa", "perceptron", "sgd", "majority"] * 2
    without = {d: {k: v for k, v in e.items() if k != "majority"} for d, e in errors.items()}
    assert ranking_table(summary_of(without), "e", "test_error", None).equals(table.iloc[:3])


def test_a_ranking_report_s_friedman_test_leaves_the_references_out(tmp_path):
    from types import SimpleNamespace

    from dolb.results.kinds import _ranking, _ranking_figure

    errors = {d: {"majority": 0.01, "pa": 0.2 + i / 100, "perceptron": 0.1 + i / 50, "sgd": 0.3}
              for i, d in enumerate("abcd")}
    report = SimpleNamespace(experiment="e", metric="test_error", at=None, posthoc="nemenyi", title="t")
    table = _ranking(report, summary_of(errors), None)
    said = _ranking_figure(report, summary_of(errors), table, tmp_path / "cd.png", None)
    assert said[0].startswith("Friedman test over 4 datasets, 3 configurations")
    assert table["configuration"].tolist()[-1] == "majority"
