"""Peers (river, Vowpal Wabbit, scikit-learn) as registered learners: each wrapper's
test-then-train scores equal its library used directly on the same stream; the
Perceptrons make dolb's ``perceptron``'s mistakes where the algorithms coincide; a
missing library is one line and exit 2; an a9a pipeline on a 2-worker LocalCluster puts
``perceptron`` and the peers in one table."""

import pickle
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import expit

from dolb.cli import main
from dolb.errors import ConfigError
from dolb.learners import learner_class, registered_learners
from dolb.learners.peers.peer import PeerLearner
from tests.conftest import SHARED_DATA, requires_shared_data

PEERS = sorted(name for name, cls in registered_learners().items() if issubclass(cls, PeerLearner))


def needs(package):
    return pytest.importorskip(package, reason=f"{package} is not installed: pip install 'dolb[peers]'")


def stream(n=300, d=8, seed=0, regression=False):
    """Sparse rows of norm ≤ 1 (some all zero), noisy labels of a linear rule (or values)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.5)
    X /= np.maximum(np.linalg.norm(X, axis=1), 1.0)[:, None]
    X[rng.random(n) < 0.03] = 0.0
    score = X @ rng.normal(size=d)
    if regression:
        return X, score + 0.1 * rng.normal(size=n)
    y = np.where(score > 0, 1.0, -1.0)
    y[rng.random(n) < 0.1] *= -1.0
    return X, y


def features(x):
    """One row's non-zeros as a {column: value} dict, written out plainly."""
    return {int(j): float(x[j]) for j in range(len(x)) if x[j] != 0.0}


# --- each wrapper against its library used directly -------------------------------------------


RIVER = [
    ("river_perceptron", {}, lambda lm, optim: lm.Perceptron()),
    ("river_logistic", {"optimizer": "adagrad", "learning_rate": 0.3, "l2": 0.01},
     lambda lm, optim: lm.LogisticRegression(optimizer=optim.AdaGrad(0.3), l2=0.01)),
    ("river_logistic", {"learning_rate": 0.2, "intercept_lr": 0.0},
     lambda lm, optim: lm.LogisticRegression(optimizer=optim.SGD(0.2), intercept_lr=0.0)),
    ("river_pa", {"mode": 2, "C": 0.5}, lambda lm, optim: lm.PAClassifier(C=0.5, mode=2)),
    ("river_linear_regression", {"learning_rate": 0.05},
     lambda lm, optim: lm.LinearRegression(optimizer=optim.SGD(0.05))),
]


@pytest.mark.parametrize(("name", "params", "direct"), RIVER, ids=[f"{r[0]}-{i}" for i, r in enumerate(RIVER)])
def test_river_wrappers_are_river(name, params, direct):
    """Scores before each update: river's predict_proba_one (the sigmoid of the score) or
    predict_one (regression); then the same weights, on dense and CSR blocks alike."""
    needs("river")
    from river import linear_model, optim

    regression = learner_class(name).task == "regression"
    X, y = stream(regression=regression)
    model = direct(linear_model, optim)
    expected = []
    for x, target in zip(X, y):
        if regression:
            expected.append(model.predict_one(features(x)))
        else:
            expected.append(model.predict_proba_one(features(x))[True])
        model.learn_one(features(x), target if regression else bool(target > 0))
    for block in (X, sp.csr_matrix(X)):
        learner = learner_class(name)(X.shape[1], **params)
        scores = np.concatenate([learner.learn(block[a:b], y[a:b]) for a, b in [(0, 120), (120, len(y))]])
        np.testing.assert_allclose(scores if regression else expit(scores), expected, rtol=0, atol=1e-12)
        assert dict(learner.model.weights) == pytest.approx(dict(model.weights), rel=1e-12)
        assert learner.model.intercept == pytest.approx(model.intercept, rel=1e-12)
        final = X @ np.array([model.weights.get(j, 0.0) for j in range(X.shape[1])]) + model.intercept
        np.testing.assert_allclose(learner.predict(block), final, rtol=1e-12, atol=1e-12)


VW_CASES = [
    ({"loss": "hinge"}, "--loss_function hinge"),
    ({"loss": "logistic", "learning_rate": 0.3, "power_t": 0.3}, "--loss_function logistic -l 0.3 --power_t 0.3"),
    ({"loss": "squared", "sgd": True, "bias": False, "l2": 1e-4}, "--loss_function squared --sgd -l 0.5 --noconstant --l2 0.0001"),  # --sgd alone: -l 10
]


@pytest.mark.parametrize(("params", "arguments"), VW_CASES, ids=["hinge", "logistic", "squared-sgd"])
def test_vw_wrapper_is_vw(params, arguments, tmp_path):
    """The scores are VW's own progressive predictions (``-p``, written with 6 decimals)
    for hand-written text lines in the same order, and exactly VW's predict-then-learn
    but for predict's clamp (hinge and squared loss) to the range of the labels seen
    before (learn sees the row's own label first); after the stream, the same predictions, exactly."""
    needs("vowpalwabbit")
    from vowpalwabbit import Workspace

    X, y = stream(seed=1)
    lines = ["| " + " ".join(f"{j}:{v}" for j, v in features(x).items()) for x in X]
    workspace = Workspace(f"--quiet {arguments} -p {tmp_path / 'p.txt'}")
    before = []
    for line, target in zip(lines, y):
        before.append(workspace.predict(line))
        workspace.learn(f"{int(target)} {line}")
    final = [workspace.predict(line) for line in lines]
    workspace.finish()
    progressive = np.loadtxt(tmp_path / "p.txt")[1:2 * len(y):2]  # -p: every predict, then learn, in turn
    for block in (X, sp.csr_matrix(X)):
        learner = learner_class("vw")(X.shape[1], **params)
        scores = np.concatenate([learner.learn(block[a:b], y[a:b]) for a, b in [(0, 100), (100, len(y))]])
        np.testing.assert_allclose(scores, progressive, rtol=0, atol=5e-7)
        if params["loss"] != "logistic":  # VW's predict clamps to the labels seen so far (and 0)
            seen = np.concatenate([[0.0], y[:-1]])
            scores = np.clip(scores, np.minimum.accumulate(seen), np.maximum.accumulate(seen))
        np.testing.assert_array_equal(scores, before)
        np.testing.assert_array_equal(learner.predict(block), final)
        assert len(set(np.round(progressive, 6))) > 50  # a stream that moves the weights


def test_a_pickled_vw_learner_goes_on_identically():
    """A cell's saved state: VW's model file with its update state (--save_resume)."""
    needs("vowpalwabbit")
    X, y = stream(seed=2)
    learner = learner_class("vw")(X.shape[1])
    learner.learn(X[:150], y[:150])
    copy = pickle.loads(pickle.dumps(learner))
    np.testing.assert_array_equal(copy.learn(X[150:], y[150:]), learner.learn(X[150:], y[150:]))
    np.testing.assert_array_equal(copy.predict(X), learner.predict(X))


SKLEARN = [
    ("sklearn_sgd", {"loss": "log_loss", "alpha": 1e-3}, "SGDClassifier",
     {"loss": "log_loss", "alpha": 1e-3}),
    ("sklearn_sgd", {"schedule": "invscaling", "eta0": 0.5, "penalty": "l1"}, "SGDClassifier",
     {"learning_rate": "invscaling", "eta0": 0.5, "penalty": "l1"}),
    ("sklearn_perceptron", {"eta0": 0.5}, "Perceptron", {"eta0": 0.5}),
    ("sklearn_pa", {"variant": "pa2", "C": 0.1}, "SGDClassifier",
     {"loss": "hinge", "penalty": None, "learning_rate": "pa2", "eta0": 0.1}),
    ("sklearn_sgd_regressor", {"eta0": 0.1}, "SGDRegressor", {"eta0": 0.1}),
]


@pytest.mark.parametrize(("name", "params", "estimator", "direct"), SKLEARN,
                         ids=[f"{s[0]}-{i}" for i, s in enumerate(SKLEARN)])
def test_sklearn_wrappers_are_sklearn(name, params, estimator, direct):
    """The estimator fed one row at a time (score, then partial_fit), dense rows and CSR
    rows (on which scikit-learn damps the intercept's steps ×0.01, another stream),
    gives the same scores and weights. One partial_fit over the whole stream gives the
    same weights (shuffle=False: the same per-example updates in the same order), to
    1e-12, except with the L1 penalty, whose cumulative truncation restarts each call."""
    import sklearn.linear_model

    regression = learner_class(name).task == "regression"
    X, y = stream(n=100, seed=3, regression=regression)
    make = getattr(sklearn.linear_model, estimator)
    extra = {} if regression else {"classes": np.array([-1.0, 1.0])}
    for rows in (X, sp.csr_matrix(X)):
        model = make(shuffle=False, random_state=0, **direct)
        expected = np.zeros(len(y))
        for t in range(len(y)):
            if t:
                expected[t] = (model.predict if regression else model.decision_function)(rows[t:t + 1])[0]
            model.partial_fit(rows[t:t + 1], y[t:t + 1], **extra)
        learner = learner_class(name)(X.shape[1], **params)
        scores = np.concatenate([learner.learn(rows[a:b], y[a:b]) for a, b in [(0, 40), (40, len(y))]])
        np.testing.assert_array_equal(scores, expected)
        np.testing.assert_array_equal(learner.model.coef_, model.coef_)
        block = make(shuffle=False, random_state=0, **direct).partial_fit(rows, y, **extra)
        same = np.allclose(block.coef_, model.coef_, rtol=1e-12, atol=1e-12)
        assert same == (direct.get("penalty") != "l1")
        if same:
            np.testing.assert_allclose(block.intercept_, model.intercept_, rtol=1e-12, atol=1e-12)


# --- where a peer's Perceptron is dolb's --------------------------------------------------------


def separable(n=250, d=6, seed=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.7)
    w = rng.normal(size=d)
    keep = np.abs(X @ w) > 0.3  # a margin
    return X[keep], np.where(X[keep] @ w > 0, 1.0, -1.0)


def test_peer_perceptrons_make_dolbs_mistakes():
    """dolb's perceptron has no intercept. scikit-learn's Perceptron without one (eta0=1) is
    the same algorithm: the same mistakes and scores, to rounding (its dot products are
    BLAS's, summed in an order that depends on the CPU: equal to the bit on one machine,
    an ulp or two apart on one with AVX-512). river's learns an intercept at rate 1, which is a
    weight on a constant feature: dolb's perceptron on [X, 1] makes its mistakes, with its
    scores. Both: a mistake is y·score ≤ 0, so a zero score (the first row) is one."""
    X, y = separable()
    dolb_scores = learner_class("perceptron")(X.shape[1]).learn(X, y)
    sk = learner_class("sklearn_perceptron")(X.shape[1], fit_intercept=False).learn(X, y)
    np.testing.assert_allclose(sk, dolb_scores, rtol=1e-12, atol=1e-12)
    mistakes = y * dolb_scores <= 0
    np.testing.assert_array_equal(y * sk <= 0, mistakes)
    assert 5 < mistakes.sum() < len(y) // 4  # it learns, with mistakes to compare
    needs("river")
    augmented = np.hstack([X, np.ones((len(y), 1))])
    with_bias = learner_class("perceptron")(X.shape[1] + 1).learn(augmented, y)
    river = learner_class("river_perceptron")(X.shape[1]).learn(X, y)
    np.testing.assert_allclose(river, with_bias, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(y * river <= 0, y * with_bias <= 0)
    assert (y * river <= 0).sum() != mistakes.sum()  # the intercept is another algorithm


# --- parameters and missing libraries -----------------------------------------------------------


@pytest.mark.parametrize(("name", "params", "message"), [
    ("vw", {"loss": "hinged"}, "learner 'vw', parameter 'loss': 'hinged' is not one of hinge, logistic, squared"),
    ("vw", {"bits": 31}, "learner 'vw', parameter 'bits': 31 is above the maximum 30"),
    ("river_pa", {"mode": 1.5}, "learner 'river_pa', parameter 'mode': expected a whole number, got 1.5"),
    ("river_logistic", {"learning_rate": 0.0}, "learner 'river_logistic', parameter 'learning_rate': must be above 0.0, got 0.0"),
    ("sklearn_sgd", {"penalty": "l3"}, "learner 'sklearn_sgd', parameter 'penalty': 'l3' is not one of l2, l1, none"),
    ("sklearn_perceptron", {"fit_intercept": 1}, "learner 'sklearn_perceptron', parameter 'fit_intercept': expected true or false, got 1"),
])
def test_bad_parameters_are_one_line(name, params, message):
    with pytest.raises(ConfigError) as error:
        learner_class(name)(3, **params)
    assert str(error.value) == message


@pytest.mark.parametrize(("package", "learner"), [("river", "river_pa"), ("vowpalwabbit", "vw")])
def test_a_missing_library_is_named_with_its_install_command(package, learner, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, package, None)  # import fails, find_spec finds nothing
    message = f"learner {learner!r} needs the package {package!r}, which is not installed: pip install 'dolb[peers]'"
    assert learner_class(learner).unavailable() == message
    with pytest.raises(ConfigError, match="pip install 'dolb\\[peers\\]'"):
        learner_class(learner)(3)
    pipeline = tmp_path / "p.toml"
    pipeline.write_text(PIPELINE.format(a9a=tmp_path / "absent", learners=f'{{ learner = "{learner}" }}'))
    capsys.readouterr()
    out = tmp_path / "out"
    assert main(["run", str(pipeline), "--out", str(out)]) == 2
    assert capsys.readouterr().err == f"dolb: error: {pipeline}: experiments.peers.learners[0]: {message}\n"
    assert not out.exists()


# --- end to end, real data ----------------------------------------------------------------------

PIPELINE = """
[pipeline]
name = "peers-a9a"
seed = 3

[datasets.a9a]
importer = "svmlight"
params = {{ path = "{a9a}" }}

[experiments.peers]
dataset = "a9a"
task = "binary"
split = {{ scheme = "holdout", count = 2, test_fraction = 0.2, order = "random" }}
checkpoints = [300, 1500]
metrics = ["test_error", "online_loss"]
learners = [{learners}]

[[reports]]
kind = "table"
experiment = "peers"
metric = "test_error"
at = [1500]
"""


@pytest.mark.e2e
@requires_shared_data("libsvm", "a9a")
def test_perceptron_and_peers_in_one_table_on_a9a(tmp_path):
    """Two holdout splits of a9a, random order, on 2 worker processes: dolb's perceptron,
    river's PA and VW side by side in the report's table, their parameters in typed
    columns; river's PA-I test error is river's own on the split's rows (read with
    scikit-learn's svmlight reader, fed to PAClassifier directly)."""
    needs("river")
    needs("vowpalwabbit")
    from river import linear_model
    from sklearn.datasets import load_svmlight_file

    from dolb.data.splits import split_rows
    from dolb.execution.sweep import run_sweep
    from dolb.options import RunOptions
    from dolb.results.tables import read_results
    from dolb.seeding import seed_for

    path = SHARED_DATA / "libsvm" / "a9a"
    pipeline = tmp_path / "peers.toml"
    learners = '{ learner = "perceptron" }, { learner = "river_pa", params = { C = [0.1, 1.0] } }, ' \
               '{ learner = "vw", params = { loss = "hinge" } }'
    pipeline.write_text(PIPELINE.format(a9a=path, learners=learners))
    summary = run_sweep(pipeline, tmp_path / "out", RunOptions(workers=2, progress=False))
    assert (summary.n_cells, summary.n_failed) == (8, 0)
    frame = read_results(tmp_path / "out")
    error = frame[(frame.metric == "test_error") & (frame.n_train == 1500)]
    assert set(error.learner) == {"perceptron", "river_pa", "vw"} and len(error) == 8
    assert error["param_C"].dtype == np.float64 and set(error["param_C"].dropna()) == {0.1, 1.0}
    assert error["param_mode"].dropna().tolist() == [1] * 4 and error["param_loss"].dropna().tolist() == ["hinge"] * 2
    assert (error.value > 0.1).all() and (error.value < 0.35).all()  # a9a: about 15-25% at 1500

    X, y = load_svmlight_file(str(path), n_features=123)
    train, test = split_rows("holdout", 1, X.shape[0], seed_for(3, "split", "a9a", 1), test_fraction=0.2,
                             order="random")
    model = linear_model.PAClassifier(C=0.1, mode=1)
    for i in train[:1500]:
        model.learn_one(features(X[i].toarray().ravel()), bool(y[i] > 0))
    scores = np.array([model.predict_proba_one(features(X[i].toarray().ravel()))[True] - 0.5 for i in test])
    river = error[(error.learner == "river_pa") & (error.param_C == 0.1) & (error.split == 1)].value
    assert river.tolist() == [np.mean(np.where(scores > 0, 1.0, -1.0) != y[test])]

    table = (tmp_path / "out" / "report" / "01-peers-test_error-table.md").read_text()
    assert all(f"| {name} " in table for name in ("perceptron", "river_pa", "vw"))
