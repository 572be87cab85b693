"""The kernel learners against independent references: LASVM against LIBSVM (through
scikit-learn's SVC) on real data, the kernel Perceptron and NORMA against NumPy
transcriptions of their rules, the kernels against scikit-learn's, the row cache; dense
and CSR input give identical learners; bad parameters and labels are refused."""

import pickle
from functools import cache

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.svm import SVC

from dolb.errors import ConfigError, DataError
from dolb.learners import learner_class
from dolb.learners.kernel.cache import HITS, MISSES, RowCache, claim, fill_column, lookup, move_slot
from dolb.learners.kernel.kernels import SupportRows, add_row, kernel_row, kernel_spec, remove_slot, squared_norm
from dolb.learners.kernel.lasvm import LASVM
from dolb.losses import zero_one_loss
from tests.conftest import SHARED_DATA, requires_shared_data

KERNEL_LEARNERS = ("kernel_perceptron", "kernel_sgd", "lasvm")


@cache
def mnist(n_train=1500, n_test=2000):
    """Digit 3 vs the rest, pixels / 255, the first rows of each part."""
    from dolb.data.sources.mnist import read_mnist

    parts = read_mnist(SHARED_DATA / "mnist", [3], [d for d in range(10) if d != 3])
    (X, y), (Xt, yt) = parts["train"], parts["test"]
    return X[:n_train].astype(np.float64), y[:n_train], Xt[:n_test].astype(np.float64), yt[:n_test]


@cache
def a9a(n_train=1500, n_test=2000):
    """UCI Adult, CSR, binary features."""
    X, y = load_svmlight_file(str(SHARED_DATA / "libsvm" / "a9a"), n_features=123)
    Xt, yt = load_svmlight_file(str(SHARED_DATA / "libsvm" / "a9a.t"), n_features=123)
    return X[:n_train], y[:n_train].astype(np.float64), Xt[:n_test], yt[:n_test].astype(np.float64)


def sklearn_kernel(config, X, Z):
    if config["kernel"] == "rbf":
        return pairwise_kernels(X, Z, metric="rbf", gamma=config["gamma"])
    if config["kernel"] == "poly":
        return pairwise_kernels(X, Z, metric="poly", gamma=1.0, degree=config["degree"], coef0=config["coef0"])
    return pairwise_kernels(X, Z, metric="linear")


def svc_for(config, C):
    kernel = {"kernel": "rbf", "gamma": config["gamma"]} if config["kernel"] == "rbf" else {
        "kernel": "poly", "gamma": 1.0, "degree": config["degree"], "coef0": config["coef0"]}
    return SVC(C=C, tol=1e-4, cache_size=100, **kernel)


def dual_objective(config, sv, alpha):
    """Σ α_s y_s − ½ αᵀKα (α signed: y_s α_s = |α_s|)."""
    K = sklearn_kernel(config, sv, sv)
    return float(np.abs(alpha).sum() - 0.5 * alpha @ K @ alpha)


CASES = {
    "mnist-rbf": (mnist, {"kernel": "rbf", "gamma": 0.03}, 1.0),
    "mnist-poly": (mnist, {"kernel": "poly", "degree": 2, "coef0": 1.0}, 1.0),
    "a9a-rbf": (a9a, {"kernel": "rbf", "gamma": 0.05}, 1.0),
    "a9a-poly": (a9a, {"kernel": "poly", "degree": 2, "coef0": 1.0}, 0.1),
}


@requires_shared_data("mnist")
@requires_shared_data("libsvm", "a9a")
@pytest.mark.parametrize("case", sorted(CASES))
def test_lasvm_run_to_convergence_is_libsvm(case):
    """LASVM's passes until no example is in a τ-violating pair, then FINISH, reach
    LIBSVM's dual objective within 0.1 % and its test predictions on ≥ 99.5 % of the
    points; the single pass's gap is printed."""
    data, params, C = CASES[case]
    X, y, Xt, yt = data()
    machine = LASVM(X.shape[1], C=C, **params)
    config = machine.config
    svc = svc_for(config, C).fit(X, y)
    coef = svc.dual_coef_.toarray() if sp.issparse(svc.dual_coef_) else svc.dual_coef_
    libsvm = dual_objective(config, svc.support_vectors_, coef[0])
    machine.learn(X, y)
    one_pass = dual_objective(config, machine.support_vectors(), machine.coefficients())
    ids = np.arange(len(y))
    for _ in range(20):
        if machine.process_rows(X, y, ids) == 0:
            break
    machine.finish()
    assert machine.delta <= config["tau"]
    converged = dual_objective(config, machine.support_vectors(), machine.coefficients())
    print(f"{case}: LIBSVM dual {libsvm:.6g} ({len(svc.support_)} SVs); LASVM one pass {one_pass:.6g} "
          f"(gap {(libsvm - one_pass) / libsvm:.2%}), converged {converged:.6g} ({machine.n_sv} SVs)")
    assert abs(converged - libsvm) <= 1e-3 * abs(libsvm)
    agree = np.mean(np.sign(machine.predict(Xt)) == np.sign(svc.decision_function(Xt)))
    assert agree >= 0.995


# --- the kernel Perceptron and NORMA against their rules in NumPy ---------------------------


def small_stream(n=150, d=6, seed=3, density=0.7):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < density)
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * X[:, 2] > 0, 1.0, -1.0)
    y[rng.random(n) < 0.1] *= -1.0
    return X, y


def numpy_kernel(config, x, Z):
    if config["kernel"] == "rbf":
        return np.exp(-config["gamma"] * ((Z - x) ** 2).sum(axis=1))
    if config["kernel"] == "poly":
        return (Z @ x + config["coef0"]) ** config["degree"]
    return Z @ x


def reference_run(name, config, X, y):
    """The learner's rule transcribed in NumPy, terms in insertion order: (predictions,
    support vectors, coefficients, b)."""
    rows, alpha, b, pred = np.zeros((0, X.shape[1])), np.zeros(0), 0.0, []
    for t in range(len(y)):
        f = float(alpha @ numpy_kernel(config, X[t], rows)) + b
        pred.append(f)
        if name == "kernel_perceptron":
            if y[t] * f <= 0:
                rows, alpha = np.vstack([rows, X[t]]), np.append(alpha, y[t])
        else:
            eta = config["eta"] / np.sqrt(t + 1) if config["schedule"] == "sqrt" else config["eta"]
            alpha = alpha * (1.0 - eta * config["lam"])
            if y[t] * f < 1.0:
                rows, alpha = np.vstack([rows, X[t]]), np.append(alpha, eta * y[t])
                b += eta * y[t] if config["offset"] else 0.0
            keep = np.abs(alpha) >= config["tol"]
            rows, alpha = rows[keep], alpha[keep]
        if 0 < config["budget"] < len(alpha):
            rows, alpha = rows[-config["budget"]:], alpha[-config["budget"]:]
    return np.array(pred), rows, alpha, b


RULES = [
    ("kernel_perceptron", {}),
    ("kernel_perceptron", {"budget": 12, "kernel": "poly", "degree": 2}),
    ("kernel_sgd", {"lam": 0.05, "eta": 1.0}),
    ("kernel_sgd", {"lam": 0.1, "eta": 0.5, "schedule": "constant", "tol": 0.02, "offset": True, "gamma": 0.3}),
    ("kernel_sgd", {"lam": 0.01, "eta": 0.8, "budget": 10, "offset": True, "kernel": "linear"}),
]


@pytest.mark.parametrize(("name", "params"), RULES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(RULES)])
def test_learner_follows_its_rule(name, params):
    X, y = small_stream()
    learner = learner_class(name)(X.shape[1], **params)
    pred = np.concatenate([learner.learn(X[:70], y[:70]), learner.learn(X[70:], y[70:])])
    ref_pred, ref_rows, ref_alpha, ref_b = reference_run(name, learner.config, X, y)
    np.testing.assert_allclose(pred, ref_pred, rtol=0, atol=1e-10)
    assert learner.n_sv == len(ref_alpha) and (learner.config["budget"] == 0 or learner.n_sv <= learner.config["budget"])
    mine = np.column_stack([learner.support_vectors().toarray(), learner.coefficients()])
    theirs = np.column_stack([ref_rows, ref_alpha])
    np.testing.assert_allclose(mine[np.lexsort(mine.T)], theirs[np.lexsort(theirs.T)], rtol=0, atol=1e-10)
    np.testing.assert_allclose(learner.bias, ref_b, rtol=0, atol=1e-10)
    probe = np.random.default_rng(9).normal(size=(20, X.shape[1]))
    expected = [ref_alpha @ numpy_kernel(learner.config, x, ref_rows) + ref_b for x in probe]
    np.testing.assert_allclose(learner.predict(probe), expected, rtol=0, atol=1e-10)


# --- kernels and the row cache -------------------------------------------------------------


@pytest.mark.parametrize("kernel", ["rbf", "poly", "linear"])
@pytest.mark.parametrize("dense", [True, False], ids=["dense-store", "csr-store"])
def test_kernel_rows_are_sklearns(kernel, dense):
    X, _ = small_stream(n=30, d=8, density=0.4)
    config = {"kernel": kernel, "gamma": 0.7, "degree": 3, "coef0": 1.5}
    spec = kernel_spec(config)
    store = SupportRows(8, dense=dense, capacity=40)
    store.make_room(0)
    Z = sp.csr_matrix(X[:20])
    for s in range(20):
        idx, val = Z.indices[Z.indptr[s]:Z.indptr[s + 1]], Z.data[Z.indptr[s]:Z.indptr[s + 1]]
        add_row(spec, store.arrays, idx, val, squared_norm(val), s)
    remove_slot(store.arrays, 4)  # the last vector moves into slot 4
    kept = [s for s in range(20) if s != 4]
    kept = kept[:4] + [19] + kept[4:-1]
    expected = sklearn_kernel(config, X[20:], X[kept])
    Q = sp.csr_matrix(X[20:])
    row = np.zeros(40)
    for q in range(10):
        idx, val = Q.indices[Q.indptr[q]:Q.indptr[q + 1]], Q.data[Q.indptr[q]:Q.indptr[q + 1]]
        n = kernel_row(spec, store.arrays, idx, val, squared_norm(val), np.zeros(8), row)
        np.testing.assert_allclose(row[:n], expected[q], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(store.rows(8).toarray(), X[kept])


def test_the_cache_is_bounded_least_recently_used_and_follows_the_slots():
    width = 1000
    cache = RowCache(cache_mb=3 * 4 * width / 2**20, width=width)
    assert cache.lines.shape == (3, width) and cache.nbytes < 3 * 4 * width + 64 * width
    arrays = cache.arrays
    for s in range(3):
        cache.lines[claim(arrays, s)] = s
    assert lookup(arrays, 0) >= 0  # 1 is now the least recently used
    line = claim(arrays, 3)
    assert lookup(arrays, 1) == -1 and cache.owner[line] == 3 and cache.line_of[3] == line
    assert tuple(cache.counts[[HITS, MISSES]]) == (1, 1)
    fill_column(arrays, 3, np.arange(width, dtype=np.float64) * 10.0)
    assert cache.lines[cache.line_of[0], 3] == 0.0 and cache.lines[cache.line_of[2], 3] == 20.0
    move_slot(arrays, 0, 3)  # slot 0 removed, slot 3 moves into it
    assert cache.line_of[0] == line and cache.line_of[3] == -1 and cache.owner[line] == 0
    assert cache.lines[cache.line_of[2], 0] == 20.0
    assert RowCache(cache_mb=1e-9, width=width).lines.shape[0] == 2  # two rows at least
    again = pickle.loads(pickle.dumps(cache))
    assert (again.owner == -1).all() and (again.counts == cache.counts).all()


@requires_shared_data("mnist")
def test_a_small_cache_changes_nothing_but_the_kernel_evaluations():
    X, y, Xt, _ = mnist()
    big, small = LASVM(784, gamma=0.03, cache_mb=50.0), LASVM(784, gamma=0.03, cache_mb=0.05)
    np.testing.assert_array_equal(big.learn(X[:600], y[:600]), small.learn(X[:600], y[:600]))
    np.testing.assert_array_equal(big.coefficients(), small.coefficients())
    assert small.kernel_evals > big.kernel_evals and small.diagnostics()["cache_hit_rate"] < 1.0
    assert small.cache.lines.nbytes <= max(0.05 * 2**20, 2 * 4 * small.store.capacity)
    assert small.state_nbytes() < big.state_nbytes()
    copy = pickle.loads(pickle.dumps(small))  # comes back without cached rows
    np.testing.assert_array_equal(small.learn(X[600:700], y[600:700]), copy.learn(X[600:700], y[600:700]))
    np.testing.assert_array_equal(small.predict(Xt[:50]), copy.predict(Xt[:50]))


# --- dense and CSR input ---------------------------------------------------------------------


@pytest.mark.parametrize("name", KERNEL_LEARNERS)
def test_dense_and_csr_input_give_identical_learners(name):
    X, y = small_stream(n=200, d=12, density=0.3, seed=5)
    cls = learner_class(name)
    params = {**cls.test_params, "gamma": 0.5}
    dense, csr = cls(12, **params), cls(12, **params)
    pd = np.concatenate([dense.learn(X[:90], y[:90]), dense.learn(X[90:], y[90:])])
    ps = np.concatenate([csr.learn(sp.csr_matrix(X[:90]), y[:90]), csr.learn(sp.csr_matrix(X[90:]), y[90:])])
    assert dense.store.dense and not csr.store.dense
    np.testing.assert_array_equal(pd, ps)
    assert dense.n_sv == csr.n_sv > 0
    np.testing.assert_array_equal(dense.coefficients(), csr.coefficients())
    np.testing.assert_array_equal(dense.support_vectors().toarray(), csr.support_vectors().toarray())
    probe = np.random.default_rng(1).normal(size=(30, 12))
    np.testing.assert_array_equal(dense.predict(probe), csr.predict(sp.csr_matrix(probe)))


def test_lasvm_finished_leaves_the_online_machine_and_is_a_conversion():
    X, y = small_stream(n=200, d=12, density=0.3, seed=5)
    machine = LASVM(12, gamma=0.5, C=10.0, conversions=("last", "finished"))
    assert (machine.outputs()["finished"].predict(X) == 0.0).all()  # before any example
    machine.learn(X, y)
    before = (machine.coefficients(), machine.bias, machine.kernel_evals)
    outputs = machine.outputs()
    finished = machine.finished()
    assert finished.delta <= machine.config["tau"] < machine.delta
    np.testing.assert_array_equal(outputs["finished"].predict(X), finished.predict(X))
    np.testing.assert_array_equal(outputs["last"].predict(X), machine.predict(X))
    after = (machine.coefficients(), machine.bias, machine.kernel_evals)
    np.testing.assert_array_equal(before[0], after[0])
    assert before[1:] == after[1:]


def test_a_warm_started_lasvm_starts_from_the_support_vectors():
    X, y = small_stream(n=200, d=12, density=0.3, seed=5)
    low = LASVM(12, gamma=0.25, C=10.0)
    low.learn(X, y)
    high = LASVM.warm_started(low, gamma=0.5)
    assert high.config["gamma"] == 0.5 and high.config["C"] == 10.0 and 0 < high.n_sv <= low.n_sv
    rows = {tuple(r) for r in low.support_vectors().toarray()}
    assert {tuple(r) for r in high.support_vectors().toarray()} <= rows
    assert np.mean(np.sign(high.predict(X)) == y) > 0.8


# --- refused input -------------------------------------------------------------------------


@pytest.mark.parametrize("name", KERNEL_LEARNERS)
@pytest.mark.parametrize(("params", "message"), [
    ({"gamma": 0.0}, "parameter 'gamma': must be above 0.0, got 0.0"),
    ({"degree": 0}, "parameter 'degree': 0 is below the minimum 1"),
    ({"kernel": "sigmoid"}, "parameter 'kernel': 'sigmoid' is not one of rbf, poly, linear"),
])
def test_bad_kernel_parameters_are_one_line(name, params, message):
    with pytest.raises(ConfigError, match=f"^learner '{name}', {message}$"):
        learner_class(name)(3, **params)


def test_bad_learner_parameters_are_one_line():
    with pytest.raises(ConfigError, match=r"^learner 'lasvm', parameter 'cache_mb': must be above 0.0, got 0.0$"):
        LASVM(3, cache_mb=0.0)
    with pytest.raises(ConfigError, match=r"^learner 'kernel_sgd': eta \* lam must be below 1, got 2.0$"):
        learner_class("kernel_sgd")(3, eta=4.0, lam=0.5)


@pytest.mark.parametrize("name", KERNEL_LEARNERS)
def test_labels_other_than_plus_minus_one_are_refused(name):
    learner = learner_class(name)(2)
    learner.learn(np.ones((2, 2)), np.array([1.0, -1.0]))
    with pytest.raises(DataError, match=rf"^learner '{name}': labels must be -1 or \+1, row 3 has 0.0$"):
        learner.learn(np.ones((2, 2)), np.array([1.0, 0.0]))
    with pytest.raises(DataError, match=rf"^learner '{name}': row 2 has a non-finite value$"):
        learner.learn(np.array([[np.nan, 1.0]]), np.array([1.0]))



# --- LASVM before both classes have come ------------------------------------------------------


@pytest.mark.parametrize("label", [1.0, -1.0])
def test_lasvm_that_has_seen_one_class_predicts_it_then_is_libsvm(label):
    """The faces study at T = 50, small: 50 examples, 10 % labelled, every labelled one of
    one class. No pair (i, j) exists and every α is 0: the SVM on one class is w = 0 with
    b the finite end of its one-sided interval, the label, so f predicts that class (the
    test error is the other class's share, where f ≡ 0 erred on every test point). Once an
    example of the other class comes, the finished machine is LIBSVM on the labelled
    examples so far."""
    rng = np.random.default_rng(2)
    X, Xt = rng.normal(size=(50, 4)), rng.normal(size=(40, 4))
    y, yt = np.where(X[:, 0] > 0, 1.0, -1.0), np.where(Xt[:, 0] > 0, 1.0, -1.0)
    labelled = np.zeros(50, bool)
    labelled[np.flatnonzero(y == label)[[2, 7, 11, 16, 20]]] = True
    first = np.flatnonzero(labelled)[0]
    machine = LASVM(4, gamma=0.2, conversions=("last", "finished"))
    predictions = machine.learn(X, y, labelled)
    assert (predictions[: first + 1] == 0.0).all() and (predictions[first + 1:] == label).all()
    assert machine.n_sv == 5 and (machine.coefficients() == 0.0).all() and machine.bias == label
    for hypothesis in machine.outputs().values():
        assert (hypothesis.predict(Xt) == label).all()
    assert zero_one_loss(machine.predict(Xt), yt).mean() == np.mean(yt != label) == pytest.approx(0.5, abs=0.15)

    other = np.flatnonzero(y == -label)[0]
    assert machine.learn(X[other:other + 1], y[other:other + 1])[0] == label  # predicted before it is learned
    seen = np.vstack([X[labelled], X[other]]), np.append(y[labelled], -label)
    svc = svc_for(machine.config, 1.0).fit(*seen)
    np.testing.assert_allclose(machine.finished().predict(Xt), svc.decision_function(Xt), rtol=0, atol=2e-3)
