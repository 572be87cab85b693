"""The bare loops of ``dolb bench stream`` learn what the registered learners learn, so
that the benchmark compares like with like."""

import numpy as np
import pytest
import scipy.sparse as sp

from dolb.bench.bare import LOOPS, bare_pass
from dolb.bench.peers import vw_lines
from dolb.learners import learner_class

CASES = [
    ("perceptron", {}),
    ("pa", {"variant": "pa1", "C": 0.05}),
    ("sgd", {"loss": "hinge", "alpha": 1e-3, "eta0": 0.5}),
    ("sgd", {"loss": "logistic", "alpha": 0.5, "eta0": 1.0}),  # folds the scale into v
    ("adagrad", {"eta": 0.5}),
    ("adagrad", {"loss": "logistic", "eta": 0.2, "eps": 1e-3}),
    ("ftrl", {"alpha": 0.5, "beta": 1.0, "l1": 0.05, "l2": 0.1}),
    ("ftrl", {"loss": "hinge", "alpha": 0.2}),
]


def stream(seed=0, n=400, d=30):
    """Sparse rows (some with an explicit zero value) labelled by a noisy hyperplane."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.2, random_state=rng, format="csr")
    X.data[::17] = 0.0  # stored zeros: absent for every learner
    w = rng.standard_normal(d)
    y = np.where(X @ w + 0.1 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


@pytest.mark.parametrize(("name", "params"), CASES)
def test_bare_loop_learns_the_learners_weights(name, params):
    X, y = stream()
    learner = learner_class(name)(X.shape[1], n_train=X.shape[0], **params)
    for a in range(0, X.shape[0], 64):
        learner.learn(X[a : a + 64], y[a : a + 64])
    expected = learner.weights()
    assert np.count_nonzero(expected) > 5
    # equal to the last bit but for FTRL, which the driver applies as v + (w_new - v)
    np.testing.assert_allclose(bare_pass(name, params, X, y), expected, rtol=1e-13, atol=1e-15)


def test_every_bare_loop_is_tested():
    assert {name for name, _ in CASES} == set(LOOPS)


def test_vw_lines_are_vw_text():
    X = sp.csr_matrix(np.array([[0.0, 1.5], [2.0, 0.0]]))
    assert vw_lines(X, np.array([1.0, -1.0])) == ["1 | 1:1.5", "-1 | 0:2.0"]


@pytest.mark.parametrize(("args", "message"), [
    (["--only", "lasvm"], "--only: 'lasvm' has no bare loop to compare with"),
    (["--rcv1", "no/such.npz"], "--rcv1 no/such.npz: no such file"),
])
def test_bench_stream_refuses_bad_arguments_in_one_line(capsys, args, message):
    from dolb.cli import main

    assert main(["bench", "stream", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_bench_stream_times_the_cold_passes_and_the_peers_in_rounds_of_their_own(monkeypatch):
    """dolb's warm variants interleave with each other, then its cold ones, then the
    peers: a cold pass or a peer's leaves the caches cold for whatever comes next."""
    import dolb.bench.stream as bench_stream

    order = []

    class Peer:
        last_seconds = 1.0

        def __init__(self, name):
            self.name = name

        def run(self, learner, params):
            order.append(self.name)

        def accuracy(self, X_test, y_test):
            return 0.5

    def variants(problem, name, peers):
        own = {key: (lambda key=key: order.append(key) or np.zeros(2)) for key in ("bare", "memory", "zarr cold")}
        return {**own, **{key: (lambda peer=peer: peer.run(name, {})) for key, peer in peers.items()}}

    class Problem:
        label = "toy"
        X = X_test = np.zeros((4, 2))
        y_test = np.ones(4)

        def accuracy(self, w):
            return 1.0

    monkeypatch.setattr(bench_stream, "variants", variants)
    peers = {"vw": Peer("vw"), "river": Peer("river")}
    rows = bench_stream.measure(Problem(), ["perceptron"], peers, repeat=3)
    warm_up = ["bare", "memory", "zarr cold", "vw", "river"]
    assert order == warm_up + ["bare", "memory"] * 3 + ["zarr cold"] * 3 + ["vw", "river"] * 3
    assert [len(row["samples"]) for row in rows] == [3, 3, 3, 3, 3]
    assert [row["rounds"] for row in rows] == ["warm", "warm", "cold", "peers", "peers"]


def test_bench_stream_pairs_the_ratio_of_variants_timed_in_the_same_rounds():
    """Load that doubles from round to round slows bare and memory alike: their ratio,
    paired by round, is exactly 0.9; against a peer timed in other rounds it is the
    ratio of the medians, with the spread of both samples in its interval."""
    from dolb.bench.stream import floors

    load = 2.0 ** np.arange(7)
    rows = [{"data": "toy", "learner": "perceptron", "variant": variant, "samples": list(rate / load),
             "rounds": rounds} for variant, rate, rounds in (
                 ("bare", 100.0, "warm"), ("memory", 90.0, "warm"), ("zarr warm", 300.0, "warm"),
                 ("vw", 100.0, "peers"))]
    judged = {j["ratio"]: j for j in floors(rows)}
    paired = judged["memory / bare"]
    assert (paired["value"], paired["low"], paired["high"], paired["holds"]) == (pytest.approx(0.9),) * 3 + (True,)
    apart = judged["zarr warm / vw"]
    assert apart["value"] == pytest.approx(3.0)
    assert apart["low"] < 1.0 < 3.0 < apart["high"]
    assert not apart["holds"]
