"""The test error follows scikit-learn's and LIBSVM's rule: the predicted label is +1 if
the score is > 0, else -1 (a score of exactly 0 predicts the negative class), while the
online mistake that drives the Perceptron's update stays y·f ≤ 0 (ALGORITHMS.md §1).
A changed metric definition gives new cell ids, only to the cells that record it."""

from dataclasses import replace

import numpy as np
import pytest
from sklearn.datasets import load_svmlight_file
from sklearn.linear_model import SGDClassifier

from dolb.evaluation.cell import CellSpec, CellSplit
from dolb.evaluation.metrics import METRICS, metric_versions
from dolb.evaluation.run_cell import run_cell
from dolb.execution.sweep import plan_groups
from dolb.experiment.cells import spec_hash
from dolb.experiment.pipeline import load_pipeline
from dolb.learners import learner_class
from dolb.losses import misclassified, running_zero_one_loss, zero_one_loss
from tests.conftest import SHARED_DATA, requires_shared_data

W8A_TRAIN = 40_000
"""w8a's rows learned, in a seeded random order (the file holds its positives first);
the other 9,749 are tested."""


def test_a_zero_score_predicts_the_negative_class_on_a_test_set():
    """By hand: scores 0 of both labels, a positive and a negative score of each, NaN."""
    scores = np.array([0.0, 0.0, -0.0, 2.0, 2.0, -3.0, -3.0, np.nan, np.nan])
    y = np.array([1.0, -1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0])
    assert misclassified(scores, y).tolist() == [1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0]
    assert METRICS["test_error"].compute(scores, y) == 5 / 9
    assert METRICS["test_error"].compute(np.zeros(4), np.array([-1.0, -1.0, -1.0, 1.0])) == 0.25
    with pytest.raises(ValueError, match=r"misclassified: \(3,\) scores for \(2,\) targets"):
        misclassified(np.zeros(3), np.ones(2))


def test_the_online_mistake_stays_the_perceptrons():
    """Online, a zero score is a mistake whatever the label: the prequential loss and
    the Perceptron's first update (w_0 = 0 scores the first example 0)."""
    y = np.array([-1.0, -1.0, 1.0])
    assert zero_one_loss(np.zeros(3), y).tolist() == [1.0, 1.0, 1.0]
    assert running_zero_one_loss(np.zeros(3), y).tolist() == [1.0, 2.0, 3.0]
    learner = learner_class("perceptron")(2)
    scores = learner.learn(np.array([[1.0, 0.0]]), np.array([-1.0]))
    assert scores.tolist() == [0.0] and learner.weights().tolist() == [-1.0, 0.0]  # a mistake: updated


def test_it_is_the_rule_of_more_than_zero_for_any_score():
    rng = np.random.default_rng(3)
    scores, y = rng.normal(size=2000), rng.choice([-1.0, 1.0], size=2000)
    scores[::5], scores[::7] = 0.0, -0.0
    np.testing.assert_array_equal(misclassified(scores, y), (np.where(scores > 0, 1.0, -1.0) != y).astype(float))
    assert misclassified([0.0, 1.0], [-1, 1]).tolist() == [0.0, 0.0]  # lists and integer labels


@requires_shared_data("libsvm", "w8a")
@pytest.mark.parametrize("name, wrong, old_rule", [("perceptron", 193, 1131), ("pa", 207, 1026)])
def test_w8a_test_error_is_one_minus_sklearns_accuracy_on_the_same_weights(name, wrong, old_rule):
    """A dolb learner's weights after 40,000 of w8a's rows, put into
    ``SGDClassifier(fit_intercept=False)``: dolb's test_error on the other 9,749 rows
    (840 of them featureless, which score exactly 0, 21 of those positive) is 1 -
    scikit-learn's accuracy there; the old rule (y·f <= 0) counted every zero score of
    a negative row as a mistake too."""
    X, y = load_svmlight_file(str(SHARED_DATA / "libsvm" / "w8a"), n_features=300)
    rows = np.random.default_rng(0).permutation(y.shape[0])
    X_test, y_test = X[rows[W8A_TRAIN:]], y[rows[W8A_TRAIN:]]
    featureless = np.diff(X_test.indptr) == 0
    assert (featureless.sum(), (y_test[featureless] > 0).sum()) == (840, 21)
    learner = learner_class(name)(300)
    learner.learn(X[rows[:W8A_TRAIN]], y[rows[:W8A_TRAIN]])
    scores = learner.outputs()["last"].predict(X_test)
    assert (scores[featureless] == 0.0).all()

    sk = SGDClassifier(fit_intercept=False).partial_fit(X[:2], y[:2], classes=np.array([-1.0, 1.0]))
    sk.coef_, sk.intercept_ = learner.weights()[None, :].copy(), np.zeros(1)
    np.testing.assert_array_equal(sk.decision_function(X_test), scores)
    assert int((sk.predict(X_test) != y_test).sum()) == int(misclassified(scores, y_test).sum()) == wrong
    assert METRICS["test_error"].compute(scores, y_test) == pytest.approx(1.0 - sk.score(X_test, y_test), abs=1e-15)
    zero_negatives = int(((scores == 0.0) & (y_test < 0)).sum())
    assert zero_negatives >= 819 and int(zero_one_loss(scores, y_test).sum()) == wrong + zero_negatives == old_rule


PIPELINE = """
[pipeline]
name = "zeros"
seed = 1

[datasets.d]
importer = "svmlight"
params = { path = "train.svm", test_path = "test.svm", n_features = 3 }

[experiments.e]
dataset = "d"
task = "binary"
split = { scheme = "given", count = 1, order = "stored" }
checkpoints = [4]
metrics = ["test_error", "online_loss"]
conversions = ["last", "average"]
learners = [{ learner = "perceptron" }]
"""


def test_a_cell_records_the_test_error_by_the_new_rule_and_its_online_loss_by_the_old(tmp_path):
    """By hand: the Perceptron on 4 rows (mistakes online on rows 1, 2 and 4, each at a
    score of 0) ends at w = (2, 0, 0), its average at (3, -2, 0) / 4. Of the 6 test rows
    two are featureless (one of each label) and one has only the feature no training
    row has: zero scores, right on the negative rows, wrong on the positive one."""
    (tmp_path / "train.svm").write_text("1 1:1\n-1 2:1\n-1 2:1\n1 1:1 2:1\n")
    (tmp_path / "test.svm").write_text("1 1:1\n-1 2:1\n-1\n1\n-1 3:1\n1 1:1 2:2\n")
    (tmp_path / "p.toml").write_text(PIPELINE)
    (group,) = plan_groups(load_pipeline(tmp_path / "p.toml"))
    result = run_cell(group.cell(0))
    # labels +, -, -, +, -, +; last's scores 2, 0, 0, 0, 0, 2 (the old rule: 4 mistakes)
    assert result["metrics"]["last"]["test_error"] == [1 / 6]
    assert result["metrics"]["average"]["test_error"] == [2 / 6]  # 3/4, -1/2, 0, 0, 0, -1/4
    assert result["metrics"]["online"]["online_loss"] == [3 / 4]


def spec(metrics: tuple[str, ...]) -> CellSpec:
    return CellSpec(experiment="e", dataset="d", train_fingerprint="t", test_fingerprint=None, task="binary",
                    split=CellSplit("holdout", None, 0.2, "random"), learner="perceptron", params={},
                    complexity=None, complexity_param=None, checkpoints=(10,), metrics=metrics,
                    conversions=("last",), seed=1, dolb="0.1.0")


def test_only_the_cells_recording_the_test_error_change_their_ids():
    """A cell recording ``test_error`` has its definition's version in its identity
    (no value stored under the old rule is taken for the new one); the others keep
    theirs."""
    assert metric_versions(["test_error", "online_loss", "nonesuch"]) == {"test_error": 2}
    assert metric_versions(["test_hinge", "test_mse", "cumulative_loss"]) == {}
    hinge = spec(("test_hinge", "online_loss"))
    assert "metric_versions" not in hinge.canonical()
    error = spec(("test_error", "online_loss"))
    assert error.canonical()["metric_versions"] == {"test_error": 2}
    without = {k: v for k, v in error.canonical().items() if k != "metric_versions"}
    assert spec_hash(error.canonical()) != spec_hash(without)
    trial = replace(hinge, metrics=("test_error",))  # a tuning trial scored by test_error
    assert trial.canonical()["metric_versions"] == {"test_error": 2}
