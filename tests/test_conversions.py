"""Every online-to-batch conversion against a brute-force version that stores every
hypothesis, on small streams, dense and sparse, for every linear learner."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from dolb.conversions import CONVERSIONS, confidence, risk_bound
from dolb.conversions.cutoff import cutoff_hypothesis
from dolb.errors import ConfigError
from dolb.learners import learner_class, registered_learners

LEARNERS = {name: cls.test_params for name, cls in registered_learners(supports=CONVERSIONS).items()}
"""Every learner that supports every conversion, with its test settings."""


def stream(n=240, d=12, density=0.4, noise=0.08, seed=0):
    """Rows of norm ≤ 1 (some exactly 0), labels of a sparse linear rule with noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < density)
    X /= np.maximum(np.linalg.norm(X, axis=1), 1e-12)[:, None] * rng.uniform(1.0, 1.5, n)[:, None]
    X[rng.random(n) < 0.02] = 0.0
    w = rng.normal(size=d) * (rng.random(d) < 0.5)
    y = np.where(X @ w > 0, 1.0, -1.0)
    flip = rng.random(n) < noise
    y[flip] = -y[flip]
    return X, y


def make(name, d, n, conversions=CONVERSIONS, **extra):
    n = extra.pop("n_train", n)
    return learner_class(name)(d, n_train=n, conversions=conversions, **{**LEARNERS[name], **extra})


class BruteForce:
    """Runs the learner one example at a time and keeps H_{t-1} of every round, its
    age and its loss; every conversion straight from the definitions."""

    def __init__(self, name, X, y, **extra):
        n, d = X.shape
        learner = make(name, d, n, ("last",), **extra)
        self.C = learner.loss_bound
        hinge = learner.bound_loss == "hinge"
        H = [learner.weights()]
        for t in range(n):
            learner.learn(X[t:t + 1], y[t:t + 1])
            H.append(learner.weights())
        self.H = np.array(H)  # H[t] is used on round t+1; H[n] is the current one
        self.m = n
        scores = np.einsum("td,td->t", self.H[:n], X)
        self.loss = np.maximum(0.0, 1.0 - y * scores) if hinge else (y * scores <= 0).astype(float)
        age = np.zeros(n + 1, np.int64)  # age[t]: rounds H[t] has been used by round t+1
        for t in range(n + 1):
            age[t] = 1 if t == 0 or not np.array_equal(self.H[t], self.H[t - 1]) else age[t - 1] + 1
        self.age = age[:n]
        same_as_last = n > 0 and np.array_equal(self.H[n], self.H[n - 1])
        self.live_r = int(self.age[-1]) if same_as_last else 0

    def last(self):
        return self.H[self.m]

    def average(self):
        return self.H[: self.m].mean(axis=0)

    def survivors(self):
        """(r, w) of every distinct hypothesis in order, the live one last."""
        out = []
        for t in range(self.m):
            if t + 1 == self.m or self.age[t + 1] == 1:
                out.append((int(self.age[t]), self.H[t]))
        if self.live_r == 0:
            out.append((0, self.H[self.m]))
        return out

    def longest_survivor(self):
        best = max(range(len(self.survivors())), key=lambda i: (self.survivors()[i][0], i))
        return self.survivors()[best][1], self.survivors()[best][0]

    def a(self):
        return confidence(self.m)

    def cutoff(self, k):
        use = self.age > k
        n = int(use.sum())
        return self.H[: self.m][use].sum(axis=0) / n, risk_bound(self.loss[use].sum(), n, self.C, self.a())

    def cutoff_bounds(self):
        return np.array([self.cutoff(k)[1] for k in range(int(self.age.max()))])

    def suffix(self, s):
        bound = risk_bound(self.loss[self.m - s:].sum(), s, self.C, self.a())
        return self.H[self.m - s: self.m].mean(axis=0), bound

    def suffix_bounds(self):
        return np.array([self.suffix(s)[1] for s in range(1, self.m + 1)])


TOL = dict(rtol=1e-9, atol=1e-12)


def as_input(X, sparse):
    return sp.csr_matrix(X) if sparse else X


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_every_conversion_matches_brute_force(name, sparse):
    X, y = stream(seed=3)
    ref = BruteForce(name, X, y)
    learner = make(name, X.shape[1], X.shape[0])
    learner.learn(as_input(X, sparse), y)
    out = learner.outputs()
    assert set(out) == set(CONVERSIONS)
    np.testing.assert_array_equal(out["last"].predict.weights, ref.last())
    np.testing.assert_allclose(out["average"].predict.weights, ref.average(), **TOL)
    w, r = ref.longest_survivor()
    np.testing.assert_allclose(out["longest_survivor"].predict.weights, w, **TOL)
    assert out["longest_survivor"].info == {"survivor_rounds": r}
    # cutoff: every k, and the chosen one is the argmin of the brute-force bound
    bounds = ref.cutoff_bounds()
    cut = learner.conversion("cutoff")
    np.testing.assert_allclose(cut.bounds(), bounds, rtol=1e-12)
    for k in range(bounds.shape[0]):
        w_k, b_k = cutoff_hypothesis(learner, k)
        ref_w, ref_b = ref.cutoff(k)
        np.testing.assert_allclose(w_k, ref_w, **TOL)
        assert b_k == pytest.approx(ref_b, rel=1e-12)
    k = int(np.argmin(bounds))
    info = out["cutoff"].info
    assert {key: info[key] for key in ("cutoff_k", "cutoff_bound")} == pytest.approx(
        {"cutoff_k": k, "cutoff_bound": bounds[k]}, rel=1e-12)
    np.testing.assert_allclose(out["cutoff"].predict.weights, ref.cutoff(k)[0], **TOL)
    # suffix: every s, the chosen one minimises the bound (the longest on ties)
    sb = ref.suffix_bounds()
    suf = learner.conversion("suffix")
    np.testing.assert_allclose(suf.bounds(), sb, rtol=1e-12)
    for s in range(1, ref.m + 1, 7):
        np.testing.assert_allclose(suf.weights(s), ref.suffix(s)[0], **TOL)
    s = len(sb) - int(np.argmin(sb[::-1]))
    assert out["suffix"].info == pytest.approx({"suffix_length": s, "suffix_bound": sb[s - 1]}, rel=1e-12)
    np.testing.assert_allclose(out["suffix"].predict.weights, ref.suffix(s)[0], **TOL)
    # the hypotheses predict X @ w
    np.testing.assert_allclose(out["cutoff"].predict(X), X @ ref.cutoff(k)[0], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("name", ["perceptron", "margin_perceptron", "sgd"])
@pytest.mark.parametrize("alone", ["average", "longest_survivor", "cutoff"])
def test_conversions_without_the_log(name, sparse, alone):
    """Alone, averaging keeps its lazy accumulator, the survivor its sparse difference D,
    and cutoff on dense input its per-r buckets (no update log)."""
    X, y = stream(seed=5)
    ref = BruteForce(name, X, y)
    learner = make(name, X.shape[1], X.shape[0], ("last", alone))
    for a in range(0, X.shape[0], 50):  # checkpoints in between: outputs do not disturb
        learner.learn(as_input(X[a:a + 50], sparse), y[a:a + 50])
        learner.outputs()
    assert (learner.history is None) == (alone != "cutoff" or not sparse)
    out = learner.outputs()[alone]
    if alone == "average":
        np.testing.assert_allclose(out.predict.weights, ref.average(), **TOL)
    elif alone == "longest_survivor":
        w, r = ref.longest_survivor()
        np.testing.assert_allclose(out.predict.weights, w, **TOL)
        assert out.info["survivor_rounds"] == r
    else:
        for k in range(int(ref.age.max())):
            np.testing.assert_allclose(learner.conversion("cutoff").weights(k), ref.cutoff(k)[0], **TOL)
        k = int(np.argmin(ref.cutoff_bounds()))
        assert out.info["cutoff_k"] == k


def test_long_survivors_give_interesting_cutoffs():
    """On a long separable stream the Perceptron's hypotheses survive longer and longer,
    the bound picks a cutoff 0 < k < max r, and H*_k differs from both the average and
    the longest survivor."""
    X, y = stream(n=5000, d=8, density=1.0, noise=0.0, seed=1)
    ref = BruteForce("perceptron", X, y)
    learner = make("perceptron", 8, 5000)
    learner.learn(X, y)
    out = learner.outputs()
    bounds = ref.cutoff_bounds()
    k = int(np.argmin(bounds))
    assert 0 < k < bounds.shape[0] - 1
    assert out["cutoff"].info["cutoff_k"] == k
    w = out["cutoff"].predict.weights
    assert not np.allclose(w, out["average"].predict.weights)
    assert not np.allclose(w, out["longest_survivor"].predict.weights)
    assert ref.live_r == learner.live_age > 0


def test_folding_the_scale_keeps_conversions_exact():
    """With n_train = 1 the margin Perceptron's scale halves at almost every update and
    is folded into v (v ← s·v) every ~330 updates; the log, the averaging accumulator and
    the survivor's D follow the rescaling."""
    X, y = stream(n=1500, d=6, density=0.9, seed=2)
    learner = make("margin_perceptron", 6, 1)
    alone = {c: make("margin_perceptron", 6, 1, ("last", c)) for c in ("average", "longest_survivor")}
    learner.learn(X, y)
    for other in alone.values():
        other.learn(X, y)
    assert learner.F[2] != 1.0  # folded at least once
    ref = BruteForce("margin_perceptron", X, y, n_train=1)
    out = learner.outputs()
    np.testing.assert_allclose(out["average"].predict.weights, ref.average(), **TOL)
    np.testing.assert_allclose(alone["average"].outputs()["average"].predict.weights, ref.average(), **TOL)
    w, r = ref.longest_survivor()
    np.testing.assert_allclose(out["longest_survivor"].predict.weights, w, **TOL)
    alone_w = alone["longest_survivor"].outputs()["longest_survivor"].predict.weights
    np.testing.assert_allclose(alone_w, w, **TOL)
    for s in (1, 10, 700, 1500):
        np.testing.assert_allclose(learner.conversion("suffix").weights(s), ref.suffix(s)[0], **TOL)


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_block_size_invariance(name):
    """One block or many small ones: identical predictions and outputs, bit for bit."""
    X, y = stream(seed=7)
    Xs = sp.csr_matrix(X)
    one = make(name, X.shape[1], X.shape[0])
    p_one = one.learn(Xs, y)
    many = make(name, X.shape[1], X.shape[0])
    cuts = [0, 1, 2, 5, 40, 41, 100, 177, X.shape[0]]
    p_many = np.concatenate([many.learn(Xs[a:b], y[a:b]) for a, b in zip(cuts, cuts[1:])])
    np.testing.assert_array_equal(p_one, p_many)
    a, b = one.outputs(), many.outputs()
    for conv in CONVERSIONS:
        np.testing.assert_array_equal(a[conv].predict.weights, b[conv].predict.weights)
        assert a[conv].info == b[conv].info


@pytest.mark.parametrize("density", [0.4, 0.9], ids=["mostly-zero", "full"])
@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_dense_and_sparse_inputs_agree(name, density):
    """Dense blocks are learned in place with their zeros stored, or (mostly zeros) as
    CSR without them; stored zeros are absent for every learner, so the learner is
    bit-identical. Cutoff averaging builds H*_k from per-r buckets on dense input and
    from the update log on sparse input (different summation orders): equal to rounding."""
    X, y = stream(seed=11, density=density)
    dense = make(name, X.shape[1], X.shape[0])
    sparse = make(name, X.shape[1], X.shape[0])
    # explicit zeros stored in the CSR change nothing
    rows, cols = np.nonzero(X == 0.0)
    rows, cols = np.concatenate([np.nonzero(X)[0], rows[::3]]), np.concatenate([np.nonzero(X)[1], cols[::3]])
    Xs = sp.csr_matrix((X[rows, cols], (rows, cols)), shape=X.shape)
    assert (Xs.data == 0.0).sum() > 50 and Xs.has_canonical_format
    np.testing.assert_array_equal(dense.learn(X, y), sparse.learn(Xs, y))
    a, b = dense.outputs(), sparse.outputs()
    for conv in CONVERSIONS:
        np.testing.assert_allclose(a[conv].predict.weights, b[conv].predict.weights, rtol=1e-12, atol=1e-15)
        assert a[conv].info == pytest.approx(b[conv].info, rel=1e-12, nan_ok=True)
    np.testing.assert_array_equal(a["last"].predict.weights, b["last"].predict.weights)
    # without suffix averaging the dense learner keeps buckets: still the same cutoff
    dense = make(name, X.shape[1], X.shape[0], ("cutoff",))
    dense.learn(X, y)
    assert dense.history is None and dense.conversion("cutoff").buckets
    out = dense.outputs()["cutoff"]
    np.testing.assert_allclose(out.predict.weights, b["cutoff"].predict.weights, rtol=1e-12, atol=1e-15)
    assert out.info == pytest.approx(b["cutoff"].info, rel=1e-12, nan_ok=True)


def test_outputs_before_any_example():
    learner = make("perceptron", 3, 10)
    out = learner.outputs()
    for conv in CONVERSIONS:
        np.testing.assert_array_equal(out[conv].predict.weights, np.zeros(3))
    assert out["longest_survivor"].info == {"survivor_rounds": 0.0}
    assert math.isnan(out["cutoff"].info["cutoff_bound"]) and out["cutoff"].info["cutoff_k"] == 0
    assert out["suffix"].info["suffix_length"] == 0


def test_only_requested_conversions_exist():
    learner = make("perceptron", 3, 10, ("average",))
    learner.learn(np.eye(3), np.ones(3))
    assert set(learner.outputs()) == {"average"}
    assert learner.history is None
    with pytest.raises(ConfigError, match="not built with conversion 'cutoff'"):
        learner.conversion("cutoff")


def test_bound_formula():
    # B = L + 2 sqrt(C L a / N) + 8 C a / N with a = ln((ceil(log2 m) + 1) m / delta)
    a = confidence(100)
    assert a == pytest.approx(math.log(8 * 100 / 0.05))
    assert confidence(1) == pytest.approx(math.log(1 / 0.05))
    assert confidence(64) == pytest.approx(math.log(7 * 64 / 0.05))
    assert risk_bound(5.0, 20, 2.0, a) == pytest.approx(0.25 + 2 * math.sqrt(2 * 0.25 * a / 20) + 16 * a / 20)


def test_cutoff_rejects_k_without_rounds():
    X, y = stream(n=50)
    learner = make("perceptron", X.shape[1], 50)
    learner.learn(X, y)
    K = learner.conversion("cutoff").bounds().shape[0]
    with pytest.raises(ValueError, match="cutoff k"):
        learner.conversion("cutoff").weights(K)
    with pytest.raises(ValueError, match="suffix length"):
        learner.conversion("suffix").weights(51)
