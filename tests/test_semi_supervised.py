"""Semi-supervised streams: an experiment's ``label_rate`` reveals a seeded subset of the
labels; a supervised learner learns from those only, evaluation sees every label."""

import textwrap

import numpy as np
import pytest

from dolb.cli import main
from dolb.data import open_dataset
from dolb.data.splits import labelled_rows, split_rows
from dolb.evaluation.cell import CellLabels
from dolb.evaluation.run_cell import run_cell
from dolb.execution.sweep import plan_groups
from dolb.experiment.pipeline import load_pipeline
from dolb.learners import learner_class
from dolb.seeding import seed_for

PIPELINE = """\
[pipeline]
name = "semi"
seed = 3

[datasets.text]
generator = "sparse_text"
params = {{ n_rows = 400, n_test = 100, n_features = 300 }}

[experiments.e]
dataset = "text"
task = "binary"
split = {{ scheme = "given", count = 2, order = "random" }}
checkpoints = [100, 400]
metrics = ["test_error", "online_loss"]
learners = [{{ learner = "perceptron" }}]
{labels}
"""


def write(tmp_path, labels: str):
    path = tmp_path / "semi.toml"
    path.write_text(textwrap.dedent(PIPELINE.format(labels=labels)))
    return path


def test_a_supervised_learner_learns_the_revealed_labels_only(tmp_path):
    (group,) = plan_groups(load_pipeline(write(tmp_path, "label_rate = 0.25\nlabelled_first = 5")))
    assert group.template.labels == CellLabels(0.25, 5)
    cell = group.cell(1)
    result = run_cell(cell)
    # the same by hand: the split's order, its labelled flags, the Perceptron on those rows
    train, test = open_dataset(cell.train_path), open_dataset(cell.test_path)
    X, y = train.read(np.arange(train.n_rows))
    rows, _ = split_rows("given", 1, train.n_rows, seed_for(3, "split", "text", 1), order="random")
    flags = labelled_rows(len(rows), 0.25, 5, seed_for(3, "labels", "text", 1))
    assert flags[:5].all() and 0.15 < flags.mean() < 0.35
    learner = learner_class("perceptron")(X.shape[1])
    predictions = learner.learn(X[rows], np.where(flags, y[rows], np.nan), flags)
    X_test, y_test = test.read(np.arange(test.n_rows))
    error = np.mean(np.where(learner.predict(X_test) > 0, 1.0, -1.0) != y_test)  # a zero score predicts -1
    assert result["metrics"]["last"]["test_error"][-1] == error
    # the online loss counts every example, labelled or not (evaluation sees the truth)
    assert result["metrics"]["online"]["online_loss"][-1] == pytest.approx(np.mean(y[rows] * predictions <= 0))


def test_a_semi_supervised_learner_is_told_the_streams_label_rate(tmp_path):
    """T/l: an OMR learner's ``label_rate`` is the experiment's unless the pipeline sets it."""
    path = write(tmp_path, "label_rate = 0.25")
    text = path.read_text().replace('learners = [{ learner = "perceptron" }]', (
        'learners = [{ learner = "online_mr_buffer" }, '
        '{ learner = "online_mr_rptree", params = { label_rate = 0.5 } }, { learner = "perceptron" }]'))
    path.write_text(text)
    told, kept, supervised = plan_groups(load_pipeline(path))
    assert told.template.params["label_rate"] == 0.25
    assert kept.template.params["label_rate"] == 0.5
    assert "label_rate" not in supervised.template.params


def test_fully_labelled_experiments_keep_their_cell_ids(tmp_path):
    (plain,) = plan_groups(load_pipeline(write(tmp_path, "")))
    (explicit,) = plan_groups(load_pipeline(write(tmp_path, "label_rate = 1.0")))
    assert plain.template.labels is None and plain.key == explicit.key


@pytest.mark.parametrize("labels, message", [
    ("label_rate = 0.0", "experiments.e.label_rate: the fraction of labelled examples must lie in (0, 1], got 0.0"),
    ("label_rate = 1.5", "experiments.e.label_rate: the fraction of labelled examples must lie in (0, 1], got 1.5"),
    ("label_rate = nan", "experiments.e.label_rate: the fraction of labelled examples must lie in (0, 1], got nan"),
    ("labelled_first = -1", "experiments.e.labelled_first: must not be negative, got -1"),
    ("label_rate = 1e-9", "experiments.e.label_rate: split 0 of dataset 'text' would reveal no label in its first "
                          "400 examples (raise label_rate or set labelled_first)"),
])
def test_bad_label_settings_are_one_line(labels, message, tmp_path, capsys):
    path = write(tmp_path, labels)
    out = tmp_path / "out"
    assert main(["-q", "run", str(path), "--out", str(out), "--workers", "1"]) == 2
    assert capsys.readouterr().err == f"dolb: error: {path}: {message}\n"
    assert not out.exists()


def test_the_flags_are_reproducible_and_seeded_per_split():
    one = labelled_rows(1000, 0.1, 0, seed_for(3, "labels", "text", 0))
    assert (one == labelled_rows(1000, 0.1, 0, seed_for(3, "labels", "text", 0))).all()
    assert (one != labelled_rows(1000, 0.1, 0, seed_for(3, "labels", "text", 1))).any()


def test_batch_manifold_regularisation_solves_its_risk():
    """batch_mr's OSQP solution has the risk of SciPy's SLSQP on the same quadratic
    program (a tiny two-cluster problem), and no hidden label changes it."""
    from scipy.optimize import minimize
    from sklearn.metrics.pairwise import rbf_kernel

    from dolb.learners.batch_mr import manifold_risk

    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0, 0.3, (12, 2)), rng.normal(1.5, 0.3, (12, 2))])
    y = np.r_[np.ones(12), -np.ones(12)]
    labelled = np.zeros(24, bool)
    labelled[[0, 1, 12, 13]] = True
    learner = learner_class("batch_mr")(2, gamma=1.0, sigma=0.5, lam1=0.01, lam2=0.1)
    learner.learn(X, np.where(labelled, y, np.nan), labelled)
    K, W = rbf_kernel(X, gamma=1.0), rbf_kernel(X, gamma=1.0 / (2 * 0.5**2))
    ours = manifold_risk(learner.alpha, K, W, y, labelled, 0.01, 0.1)

    rows = np.flatnonzero(labelled)

    def qp_objective(z):  # z = (alpha, xi): the same program, solved by SciPy
        alpha, xi = z[:24], z[24:]
        return manifold_risk(alpha, K, W, y, np.zeros(24, bool) | labelled, 0.01, 0.1) - np.maximum(
            0, 1 - y[rows] * (K @ alpha)[rows]).sum() / 4 + xi.sum() / 4

    constraints = [{"type": "ineq", "fun": lambda z: y[rows] * (K @ z[:24])[rows] + z[24:] - 1.0},
                   {"type": "ineq", "fun": lambda z: z[24:]}]
    reference = minimize(qp_objective, np.zeros(28), constraints=constraints, method="SLSQP",
                         options={"ftol": 1e-12, "maxiter": 1000})
    theirs = manifold_risk(reference.x[:24], K, W, y, labelled, 0.01, 0.1)
    assert reference.success and ours == pytest.approx(theirs, abs=1e-6) and ours <= theirs + 1e-7
    assert learner.diagnostics() == {"batch_risk": pytest.approx(ours, rel=1e-12)}
    assert (np.sign(learner.predict(X)) == y).mean() == 1.0  # the graph carries the labels
