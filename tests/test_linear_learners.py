"""The linear online classifiers: against scikit-learn where the algorithms coincide,
against direct dense implementations of the papers' formulas otherwise, and their
handling of bad input."""

import doctest
import importlib
import math
import warnings

import numba
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import Perceptron as SkPerceptron
from sklearn.linear_model import SGDClassifier

from dolb.conversions import CONVERSIONS
from dolb.errors import ConfigError, DataError
from dolb.learners import learner_class, registered_learners
from dolb.learners.linear import NORM2, PHI, ROUNDS, SCALE, LinearLearner
from dolb.losses import running_zero_one_loss

LINEAR = tuple(name for name, cls in registered_learners().items() if issubclass(cls, LinearLearner))
MODULES = sorted({cls.__module__ for cls in registered_learners().values()})


def stream(n=300, d=15, density=0.5, noise=0.1, seed=0):
    """Rows of norm in [1/1.5, 1], labels of a linear rule with label noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < density)
    X /= np.maximum(np.linalg.norm(X, axis=1), 1e-12)[:, None] * rng.uniform(1.0, 1.5, n)[:, None]
    y = np.where(X @ rng.normal(size=d) > 0, 1.0, -1.0)
    flip = rng.random(n) < noise
    y[flip] = -y[flip]
    return X, y


def run(name, X, y, n_train=None, **params):
    learner = learner_class(name)(X.shape[1], n_train=n_train or X.shape[0], **params)
    return learner.learn(sp.csr_matrix(X), y), learner


def sklearn_online(est, X, y):
    """Predictions made before each update and the final weights of an sklearn linear
    model fed one example at a time with partial_fit (one pass, the given order)."""
    predictions = np.empty(X.shape[0])
    Xs = sp.csr_matrix(X)
    for t in range(X.shape[0]):
        predictions[t] = est.decision_function(Xs[t])[0] if t else 0.0
        est.partial_fit(Xs[t], y[t:t + 1], classes=np.array([-1.0, 1.0]))
    return predictions, est.coef_.ravel().copy()


def test_registry():
    for name, cls in registered_learners().items():
        assert cls.__doc__ and "Examples" in cls.__doc__, name
        if name in LINEAR:
            assert cls.task == "binary" and cls.conversions_supported == CONVERSIONS


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples(module):
    missing = [cls.unavailable() for cls in registered_learners().values() if cls.__module__ == module]
    if any(missing):  # a peer whose optional library is not installed
        pytest.skip(next(filter(None, missing)))
    mod = importlib.import_module(module)
    result = doctest.testmod(mod, extraglobs={"np": np}, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


# --- against scikit-learn -------------------------------------------------------------


def test_perceptron_matches_sklearn():
    """Same algorithm: w += y x when y<w,x> <= 0, eta0 = 1, no intercept, one pass."""
    X, y = stream(seed=1)
    ours, learner = run("perceptron", X, y)
    theirs, coef = sklearn_online(
        SkPerceptron(fit_intercept=False, shuffle=False, max_iter=1, tol=None, eta0=1.0), X, y
    )
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(learner.weights(), coef, rtol=1e-12, atol=1e-15)
    assert learner.weights().any()


@pytest.mark.parametrize("variant,C", [("pa1", 0.3), ("pa2", 0.3), ("pa", 1e300)])
def test_passive_aggressive_matches_sklearn(variant, C):
    """PA-I / PA-II are SGDClassifier(learning_rate="pa1"/"pa2", eta0=C, penalty=None),
    the replacement of the deprecated PassiveAggressiveClassifier; plain PA is PA-I with
    C = ∞ (here 1e300). Both use the hinge loss at threshold 1 (no update at margin 1)."""
    X, y = stream(seed=2)
    ours, learner = run("pa", X, y, variant=variant, C=1.0 if variant == "pa" else C)
    est = SGDClassifier(
        loss="hinge", penalty=None, learning_rate="pa2" if variant == "pa2" else "pa1",
        eta0=C, fit_intercept=False, shuffle=False,
    )
    theirs, coef = sklearn_online(est, X, y)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(learner.weights(), coef, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("loss,sk_loss", [("hinge", "hinge"), ("logistic", "log_loss")])
def test_sgd_sqrt_schedule_matches_sklearn(loss, sk_loss):
    """eta_t = eta0/sqrt(t) is sklearn's "invscaling" with power_t = 0.5; the update
    w <- (1 - eta alpha) w - eta l'(p) x is the same. Where they differ: sklearn's hinge
    subgradient is -y also at margin exactly 1 (never hit on continuous data), its
    logistic derivative uses exp(-z) for z > 18 (relative difference ~1e-8 on those
    terms) and it folds its scale at 1e-9 (we fold at 1e-3): equal to 1e-7."""
    X, y = stream(seed=3)
    ours, learner = run("sgd", X, y, loss=loss, alpha=0.01, eta0=0.5, schedule="sqrt")
    est = SGDClassifier(
        loss=sk_loss, penalty="l2", alpha=0.01, learning_rate="invscaling", eta0=0.5, power_t=0.5,
        fit_intercept=False, shuffle=False,
    )
    theirs, coef = sklearn_online(est, X, y)
    np.testing.assert_allclose(ours, theirs, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(learner.weights(), coef, rtol=1e-7, atol=1e-10)


def test_sgd_inverse_schedule_matches_sklearn_optimal_at_alpha_1():
    """sklearn's "optimal" rate is 1/(alpha (t0 + t - 1)) with a heuristic t0; t0 = 1,
    i.e. our 1/(alpha t), exactly when alpha = 1. Round 1 shrinks w_0 = 0 by 0."""
    X, y = stream(seed=4)
    ours, learner = run("sgd", X, y, loss="hinge", alpha=1.0, schedule="inverse")
    est = SGDClassifier(loss="hinge", penalty="l2", alpha=1.0, learning_rate="optimal",
                        fit_intercept=False, shuffle=False)
    theirs, coef = sklearn_online(est, X, y)
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(learner.weights(), coef, rtol=1e-9, atol=1e-12)


def test_sgd_average_conversion_is_sklearn_averaged_sgd():
    """sklearn's average=True averages the iterates after each update, w_1..w_t; our
    `average` averages the hypotheses used for prediction, w_0..w_{t-1} with w_0 = 0.
    So ours after n examples = (n-1)/n * sklearn's after n-1 examples."""
    X, y = stream(seed=5)
    n = X.shape[0]
    learner = learner_class("sgd")(X.shape[1], n_train=n, conversions=("last", "average"),
                                   loss="hinge", alpha=0.01, eta0=0.5)
    learner.learn(X, y)
    est = SGDClassifier(loss="hinge", penalty="l2", alpha=0.01, learning_rate="invscaling", eta0=0.5,
                        power_t=0.5, fit_intercept=False, shuffle=False, average=True)
    est.partial_fit(X[: n - 1], y[: n - 1], classes=np.array([-1.0, 1.0]))
    np.testing.assert_allclose(learner.outputs()["average"].predict.weights,
                               (n - 1) / n * est.coef_.ravel(), rtol=1e-9, atol=1e-12)


# --- against the papers' formulas, written densely -------------------------------------


def dloss(kind, y, p):
    return (-y if y * p < 1 else 0.0) if kind == "hinge" else -y / (1.0 + math.exp(y * p))


def reference(name, X, y, n_train, **c):
    """Dense, scale-free, one-example-at-a-time implementations."""
    n, d = X.shape
    w = np.zeros(d)
    preds = np.empty(n)
    G = np.zeros(d)
    z = np.zeros(d)
    q = np.zeros(d)  # FTRL's n
    theta = np.zeros(d)
    for t in range(n):
        x, yt = X[t], y[t]
        p = preds[t] = w @ x
        if name == "margin_perceptron":
            if 1 - yt * p > 0:
                w = w + yt * x / (math.sqrt(n_train) * c["radius"])
                w = w / max(1.0, np.linalg.norm(w))
        elif name == "ogd":
            if yt * p < 1:
                w = w + c["eta0"] / math.sqrt(t + 1) * yt * x
                w = w / max(1.0, np.linalg.norm(w) / c["radius"])
        elif name == "dual_averaging":
            if yt * p < 1:
                theta = theta + yt * x
                w = c["eta"] * theta / max(1.0, c["eta"] * np.linalg.norm(theta) / c["radius"])
        elif name == "adagrad":
            g = dloss(c["loss"], yt, p) * x
            on = g != 0
            G[on] += g[on] ** 2
            w[on] -= c["eta"] * g[on] / (c["eps"] + np.sqrt(G[on]))
        elif name == "ftrl":
            # McMahan et al. 2013, Algorithm 1 (w computed from z, n for every coordinate)
            g = dloss(c["loss"], yt, p) * x
            sigma = (np.sqrt(q + g**2) - np.sqrt(q)) / c["alpha"]
            z = z + g - sigma * w
            q = q + g**2
            w = np.where(np.abs(z) <= c["l1"], 0.0,
                         -(z - np.sign(z) * c["l1"]) / ((c["beta"] + np.sqrt(q)) / c["alpha"] + c["l2"]))
    return preds, w


REFERENCE_CASES = [
    ("margin_perceptron", {"radius": 1.0}),
    ("margin_perceptron", {"radius": 2.5}),
    ("ogd", {"radius": 1.5, "eta0": 0.7}),
    ("ogd", {"radius": 100.0, "eta0": 0.1}),
    ("dual_averaging", {"radius": 1.5, "eta": 0.2}),
    ("dual_averaging", {"radius": 100.0, "eta": 0.05}),
    ("adagrad", {"loss": "hinge", "eta": 0.3, "eps": 1e-8}),
    ("adagrad", {"loss": "logistic", "eta": 0.3, "eps": 0.0}),
    ("ftrl", {"loss": "logistic", "alpha": 0.5, "beta": 1.0, "l1": 0.02, "l2": 0.1}),
    ("ftrl", {"loss": "hinge", "alpha": 0.2, "beta": 0.5, "l1": 0.0, "l2": 0.0}),
]


@pytest.mark.parametrize("name,params", REFERENCE_CASES, ids=lambda v: v if isinstance(v, str) else "")
def test_learner_matches_its_formula(name, params):
    X, y = stream(seed=6)
    ours, learner = run(name, X, y, n_train=250, **params)  # horizon m = 250 < n: goes on
    preds, w = reference(name, X, y, 250, **params)
    np.testing.assert_allclose(ours, preds, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(learner.weights(), w, rtol=1e-9, atol=1e-12)
    assert np.abs(w).sum() > 0.1


def test_margin_perceptron_stays_in_the_unit_ball_and_is_conservative():
    """With ||w|| <= 1 a zero hinge loss needs ||x|| >= 1: examples of norm up to R = 3."""
    X, y = stream(n=400, seed=7, noise=0.0)
    X *= 3.0
    learner = learner_class("margin_perceptron")(X.shape[1], n_train=400, radius=3.0,
                                                 conversions=("longest_survivor",))
    preds = np.concatenate([learner.learn(X[a:a + 1], y[a:a + 1]) for a in range(400)])
    assert np.linalg.norm(learner.weights()) <= 1.0 + 1e-12
    # the hypothesis changes exactly on the rounds with positive hinge loss
    free = 1 - y * preds <= 0
    assert 20 < free.sum() < 380
    r = learner.outputs()["longest_survivor"].info["survivor_rounds"]
    runs = np.diff(np.flatnonzero(np.concatenate([[True], ~free[:-1], [True]])))
    assert r == max(runs.max(), learner.live_age)


def test_ftrl_l1_gives_sparse_weights():
    X, y = stream(n=500, d=40, seed=8)
    _, dense = run("ftrl", X, y, alpha=0.5, l1=0.0)
    _, sparse = run("ftrl", X, y, alpha=0.5, l1=2.0)
    assert (dense.weights() != 0).sum() == 40
    assert (sparse.weights() == 0).sum() >= 10


def test_sgd_folds_its_scale_and_stays_exact():
    """alpha eta0 = 0.9: w shrinks fast, the scale is folded into v again and again."""
    X, y = stream(n=300, seed=9)
    ours, learner = run("sgd", X, y, alpha=0.9, eta0=1.0)
    assert learner.F[PHI] != 1.0
    est = SGDClassifier(loss="hinge", penalty="l2", alpha=0.9, learning_rate="invscaling", eta0=1.0,
                        power_t=0.5, fit_intercept=False, shuffle=False)
    theirs, coef = sklearn_online(est, X, y)
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(learner.weights(), coef, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["ogd", "margin_perceptron", "dual_averaging"])
def test_the_named_slots_hold_what_the_step_contract_says(name):
    """w = F[SCALE]·v, F[NORM2] = ‖v‖² for the learners that project, I[ROUNDS] the rows learned."""
    X, y = stream(n=200, seed=4)
    _, learner = run(name, X, y, **learner_class(name).test_params)
    assert learner.I[ROUNDS] == learner.rounds == 200
    np.testing.assert_array_equal(learner.weights(), learner.F[SCALE] * learner.v)
    np.testing.assert_allclose(learner.F[NORM2], learner.v @ learner.v, rtol=1e-9)
    assert learner.F[NORM2] > 0.0


@pytest.mark.parametrize("name", LINEAR)
def test_predict_is_the_last_hypothesis(name):
    X, y = stream(seed=10)
    _, learner = run(name, X, y)
    w = learner.weights()
    np.testing.assert_allclose(learner.predict(X), X @ w, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(learner.predict(sp.csr_matrix(X)), X @ w, rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(learner.outputs()["last"].predict.weights, w)
    # learning more later goes on from where it stopped
    more = learner.learn(X[:5], y[:5])
    np.testing.assert_allclose(more[0], X[0] @ w, rtol=1e-12, atol=1e-14)
    assert learner.n_seen == X.shape[0] + 5 == learner.rounds


@pytest.mark.parametrize("name", LINEAR)
def test_the_quiet_driver_learns_what_the_full_one_does(name):
    """With the last hypothesis alone nothing is fed and the quiet copy of the driver
    runs; with the average too, the full one. Weights, predictions, rounds and the age of
    the live hypothesis are bit-identical (SGD with alpha·eta0 = 0.9 folds its scale)."""
    X, y = stream(n=400, density=0.3, seed=21)
    params = {"alpha": 0.9, "eta0": 1.0} if name == "sgd" else {}
    found = []
    for conversions in (("last",), ("last", "average")):
        learner = learner_class(name)(X.shape[1], n_train=X.shape[0], conversions=conversions, **params)
        assert learner._quiet is (len(conversions) == 1)
        blocks = [learner.learn(sp.csr_matrix(X[a : a + 64]), y[a : a + 64]) for a in range(0, 400, 64)]
        found.append((np.concatenate(blocks), learner.weights(), learner.rounds, learner.live_age, learner.F.copy()))
    for quiet, full in zip(*found):
        np.testing.assert_array_equal(quiet, full)
    assert found[0][3] < 400  # the hypothesis changed: its age was reset


@pytest.mark.parametrize("conversions", [("last",), CONVERSIONS], ids=["quiet", "full"])
@pytest.mark.parametrize("name", LINEAR)
def test_the_driver_counts_the_mistakes_a_cell_records(name, conversions):
    """``learn_running`` counts the mistakes in the driver's pass: bit for bit
    ``running_zero_one_loss`` of the predictions ``learn`` gives a twin, from a carried
    total, across blocks whose rows go out of order midway (the driver stops there and
    the rest is learned canonical, the count going on from where it stopped), with
    labelled flags (counted from the predictions), and learning the same weights."""
    X, y = stream(n=180, d=8, density=0.6, seed=33)
    blocks = [(sp.csr_matrix(X[:60]), None), (messy_csr(X[60:120], 25), None),
              (sp.csr_matrix(X[120:]), np.arange(60) % 4 != 1)]
    counting, predicting = (learner_class(name)(8, n_train=180, conversions=conversions) for _ in range(2))
    total = expected = 7.0
    for (block, flags), a in zip(blocks, (0, 60, 120)):
        running = counting.learn_running(block, y[a : a + 60], flags, total)
        reference = running_zero_one_loss(predicting.learn(block, y[a : a + 60], flags), y[a : a + 60], expected)
        np.testing.assert_array_equal(running, reference)
        total, expected = running[-1], reference[-1]
    assert 7.0 < total < 7.0 + 180 and counting.n_seen == predicting.n_seen == 180
    np.testing.assert_array_equal(counting.weights(), predicting.weights())


# --- bad input -----------------------------------------------------------------------


@pytest.mark.parametrize("name", LINEAR)
def test_labels_must_be_plus_minus_one(name):
    X, y = stream(n=20)
    learner = learner_class(name)(X.shape[1], n_train=40)
    learner.learn(X[:10], y[:10])
    y = y[10:].copy()
    y[3] = 0.0
    with pytest.raises(DataError, match=r"row 13 has 0\.0"):
        learner.learn(X[10:], y)


def test_wrong_feature_count_and_rows():
    learner = learner_class("perceptron")(4)
    with pytest.raises(ValueError, match="block has 3 features, learner expects 4"):
        learner.learn(np.zeros((2, 3)), np.ones(2))
    with pytest.raises(ValueError, match="block has 3 features"):
        learner.predict(sp.csr_matrix(np.zeros((2, 3))))
    with pytest.raises(ValueError, match="2 rows but 3 targets"):
        learner.learn(np.zeros((2, 4)), np.ones(3))


def messy_csr(X: np.ndarray, first: int) -> sp.csr_matrix:
    """``X`` as CSR whose rows from ``first`` on have their columns shuffled and every
    third value stored as two halves."""
    rng = np.random.default_rng(0)
    indptr, indices, data = [0], [], []
    for i, row in enumerate(X):
        cols = rng.permutation(np.flatnonzero(row)) if i >= first else np.flatnonzero(row)
        for k, j in enumerate(cols):
            parts = [row[j] / 2, row[j] / 2] if k % 3 == 0 and i >= first else [row[j]]
            indices += [j] * len(parts)
            data += parts
        indptr.append(len(indices))
    return sp.csr_matrix((np.array(data), np.array(indices), np.array(indptr)), shape=X.shape)


@pytest.mark.parametrize("first", [0, 30])
@pytest.mark.parametrize("name", ["perceptron", "adagrad", "margin_perceptron"])
def test_unsorted_and_duplicate_csr_entries(name, first):
    """A CSR block with unsorted column indices and duplicate entries (from row
    ``first`` on) means the sum of the duplicates: the same learner as the canonical
    block (bit for bit)."""
    X, y = stream(n=60, d=8, seed=12)
    messy = messy_csr(X, first)
    assert not messy.has_canonical_format and messy.nnz > np.count_nonzero(X)
    clean = sp.csr_matrix(messy.toarray())
    a = learner_class(name)(8, n_train=60)
    b = learner_class(name)(8, n_train=60)
    np.testing.assert_array_equal(a.learn(messy, y), b.learn(clean, y))
    np.testing.assert_array_equal(a.weights(), b.weights())


@pytest.mark.parametrize(("fault", "said"), [("label", r"labels must be -1 or \+1, row 44 has 0\.0"),
                                             ("column", "row 44 has column index 8, outside 0..7")])
def test_a_bad_row_after_rows_out_of_order_is_named(fault, said):
    """The driver stops at the first row out of order (row 30), the rest of the block
    is made canonical and learned on, up to the bad row."""
    X, y = stream(n=60, d=8, seed=12)
    messy = messy_csr(X, 30)
    if fault == "label":
        y = y.copy()
        y[44] = 0.0
    else:
        messy.indices[messy.indptr[44]] = 8
    learner = learner_class("adagrad")(8)
    with pytest.raises(DataError, match=said):
        learner.learn(messy, y)
    reference = learner_class("adagrad")(8)
    reference.learn(X[:44], y[:44])
    assert learner.n_seen == 44
    np.testing.assert_array_equal(learner.weights(), reference.weights())


@pytest.mark.parametrize("dense", [False, True])
def test_non_finite_values_are_data_errors(dense):
    """The driver checks rows as it reads them: the rows before the bad one are learned,
    and the next block's rows are numbered on from them."""
    learner = learner_class("pa")(3)
    X = np.ones((4, 3))
    X[2, 1] = np.nan
    with pytest.raises(DataError, match="row 2 has a non-finite value"):
        learner.learn(X if dense else sp.csr_matrix(X), np.ones(4))
    reference = learner_class("pa")(3)
    reference.learn(np.ones((2, 3)), np.ones(2))
    assert learner.rounds == learner.n_seen == 2
    np.testing.assert_array_equal(learner.weights(), reference.weights())
    X[1, 0] = np.inf
    with pytest.raises(DataError, match="row 3 has a non-finite value"):
        learner.learn(X if dense else sp.csr_matrix(X), np.ones(4))


def test_a_row_checked_first_is_refused_before_any_is_learned():
    learner = learner_class("margin_perceptron")(2, n_train=4, radius=2.0)
    X = np.ones((4, 2))
    X[3, 0] = np.nan
    with pytest.raises(DataError, match="row 3 has a non-finite value"):
        learner.learn(X, np.ones(4))
    assert learner.rounds == learner.n_seen == 0


def test_an_overflowing_score_is_not_a_bad_row():
    """Finite values whose score overflows to inf are learned as before (the driver reads
    the row's values again when the score is not finite)."""
    learner = learner_class("perceptron")(2)
    X = np.full((3, 2), 1e300)
    prediction = learner.learn(X, np.array([1.0, -1.0, 1.0]))
    assert prediction[0] == 0.0 and prediction[1] == np.inf and learner.rounds == 3


def test_margin_perceptron_needs_horizon_and_radius():
    with pytest.raises(ConfigError, match="needs the horizon"):
        learner_class("margin_perceptron")(3)
    learner = learner_class("margin_perceptron")(2, n_train=10, radius=2.0)
    X = np.array([[1.0, 1.0], [2.0, 0.0], [2.0, 0.5]])
    with pytest.raises(DataError, match=r"row 2 has norm 2\.06155 > radius 2\.0"):
        learner.learn(X, np.ones(3))
    learner.learn(X[:2], np.ones(2))  # norm exactly R is fine


def test_unknown_or_repeated_conversion():
    with pytest.raises(ConfigError, match="does not support conversion 'median'"):
        learner_class("perceptron")(3, conversions=("last", "median"))
    with pytest.raises(ConfigError, match="listed twice"):
        learner_class("perceptron")(3, conversions=("last", "last"))


@pytest.mark.parametrize(
    "name,params,message",
    [
        ("pa", {"variant": "pa3"}, "'pa3' is not one of pa, pa1, pa2"),
        ("pa", {"C": 0.0}, "'C': must be above 0"),
        ("pa", {"c": 1.0}, "unknown parameter 'c'"),
        ("sgd", {"loss": "squared"}, "not one of hinge, logistic"),
        ("sgd", {"alpha": 0.5, "eta0": 3.0}, "eta0 \\* alpha must be at most 1"),
        ("sgd", {"schedule": "inverse", "alpha": 0.0}, "'alpha': must be above 0"),
        ("sgd", {"eta0": -1.0}, "must be above 0"),
        ("adagrad", {"eta": 0.0}, "'eta': must be above 0"),
        ("ftrl", {"l1": -0.1}, "below the minimum"),
        ("ftrl", {"alpha": "big"}, "expected a number"),
        ("ogd", {"radius": 0.0}, "'radius': must be above 0"),
        ("dual_averaging", {"eta": float("inf")}, "finite"),
        ("margin_perceptron", {"radius": -1.0}, "must be above 0"),
        ("perceptron", {"eta0": 1.0}, "unknown parameter 'eta0'"),
    ],
)
def test_bad_parameters(name, params, message):
    with pytest.raises(ConfigError, match=message):
        learner_class(name)(3, n_train=10, **params)


def test_no_sklearn_deprecation_noise():
    """The scikit-learn comparison uses SGDClassifier(learning_rate="pa1"), not the
    deprecated PassiveAggressiveClassifier."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SGDClassifier(loss="hinge", penalty=None, learning_rate="pa1", eta0=1.0).partial_fit(
            np.eye(2), np.array([-1.0, 1.0]), classes=np.array([-1.0, 1.0])
        )


@pytest.mark.parametrize("quiet", [False, True])
def test_driver_counts_no_references(quiet):
    """The driver is compiled without reference counting (see dolb.learners.linear.driver):
    its machine code has no NRT_incref / NRT_decref, on no path; its quiet copy neither."""
    driver = learner_class("perceptron").driver(quiet)
    options = {key: value for key, value in driver.targetoptions.items() if key not in ("cache", "nopython")}
    fresh = numba.njit(**options)(driver.py_func)  # compiled here: cached code cannot be inspected
    X = sp.csr_matrix(np.eye(3))
    conversions = ("last",) if quiet else learner_class("perceptron").conversions_supported
    learner = learner_class("perceptron")(3, conversions=conversions)
    assert learner._quiet is quiet
    learner.learn(X, np.ones(3))
    signature = driver.signatures[0]
    fresh.compile(signature)
    code = fresh.inspect_llvm(signature)
    assert "NRT_incref" not in code and "NRT_decref" not in code
