"""Online manifold regularisation (Goldberg, Li & Zhu, ECML PKDD 2008): the exact and
buffered learners against plain NumPy transcriptions of their update equations, the
kernel matching pursuit projection, the random-projection tree's clusters and splits,
unlabelled targets, dense and CSR input, bad parameters."""

import numpy as np
import pytest
import scipy.sparse as sp

from dolb.errors import ConfigError, DataError
from dolb.learners import learner_class
from dolb.learners.kernel.kernels import LABEL
from dolb.learners.manifold.graph import PROJECTION_RCOND, project_out

SETTINGS = {"gamma": 2.0, "sigma": 0.4, "lam1": 0.05, "lam2": 0.3, "eta": 0.8, "label_rate": 0.25}


def two_moons(n=60, seed=0, rate=0.25):
    """2-D points on two arcs (±1) with a little noise; a ``rate`` of them labelled."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    angle = rng.uniform(0.0, np.pi, n)
    X = np.column_stack([np.cos(angle) - (y < 0), y * np.sin(angle) - 0.3 * (y < 0)]) / 2.0
    X += 0.05 * rng.normal(size=X.shape)
    labelled = rng.random(n) < rate
    labelled[0] = True
    return X, y, labelled


def gram(A, B, width):
    """exp(−width ‖a − b‖²) for every pair of rows."""
    return np.exp(-width * ((A[:, None, :] - B[None, :, :]) ** 2).sum(axis=2))


def transcription(X, y, labelled, gamma, sigma, lam1, lam2, eta, label_rate, buffer=None, probe=None):
    """The paper's updates, plainly: α_i ← (1 − η_tλ₁)α_i − 2η_tλ₂ s (f_t(x_i) − f_t(x_t)) w_it,
    α_t = 2η_tλ₂ s Σ_i (f_t(x_i) − f_t(x_t)) w_it − η_t (T/l) δ(y_t) c'(f_t(x_t), y_t),
    s = (t − 1)/n over the n held representers; with a buffer, the oldest representer is
    then dropped and the others fitted by least squares in the RKHS (the averaged
    hypothesis's coefficients ᾱ, the mean of the α used on the rounds, alike). Also the
    instantaneous risk J_t(f_t) = (T/l) δ(y_t) hinge + (λ₁/2)‖f_t‖² + λ₂ s Σ_i (f_t(x_i)
    − f_t(x_t))² w_it of every round. Returns the predictions, the representers' rows,
    α, ᾱ, the risks and f_t at the ``probe`` points for every t."""
    points, alpha, mean, predictions, risks, at_probe = np.zeros((0, X.shape[1])), np.zeros(0), np.zeros(0), [], [], []
    for t in range(1, X.shape[0] + 1):
        x = X[t - 1]
        K = gram(points, points, gamma)
        k = gram(points, x[None], gamma)[:, 0]
        w = gram(points, x[None], 0.5 / sigma**2)[:, 0]
        f_x, f_points = alpha @ k, K @ alpha
        predictions.append(f_x)
        if probe is not None:
            at_probe.append(gram(probe, points, gamma) @ alpha)
        step = eta / np.sqrt(t)
        scale = (t - 1) / len(points) if len(points) else 0.0
        hinge = max(0.0, 1 - y[t - 1] * f_x) / label_rate if labelled[t - 1] else 0.0
        risks.append(hinge + lam1 / 2 * alpha @ K @ alpha + lam2 * scale * np.sum((f_points - f_x) ** 2 * w))
        mean = np.append(mean + (alpha - mean) / t, 0.0)
        hinge_slope = -y[t - 1] if labelled[t - 1] and y[t - 1] * f_x < 1 else 0.0
        new = 2 * step * lam2 * scale * np.sum((f_points - f_x) * w) - step / label_rate * hinge_slope
        alpha = np.append((1 - step * lam1) * alpha - 2 * step * lam2 * scale * (f_points - f_x) * w, new)
        points = np.vstack([points, x])
        if buffer is not None and len(points) > buffer:
            full = gram(points, points, gamma)
            alpha = np.linalg.lstsq(full[1:, 1:], full[1:] @ alpha, rcond=PROJECTION_RCOND)[0]
            mean = np.linalg.lstsq(full[1:, 1:], full[1:] @ mean, rcond=PROJECTION_RCOND)[0]
            points = points[1:]
    return np.array(predictions), points, alpha, mean, np.array(risks), at_probe


def run(name, X, y, labelled, **params):
    learner = learner_class(name)(X.shape[1], conversions=("last", "average"), **SETTINGS, **params)
    return learner.learn(X, np.where(labelled, y, np.nan), labelled), learner


@pytest.mark.parametrize("name", ["online_mr", "online_mr_buffer"])
def test_the_learner_is_the_transcription_of_the_updates(name):
    """60 points, a quarter labelled; the buffer holds 15 of them (the exact learner all)."""
    X, y, labelled = two_moons()
    buffer = 15 if name == "online_mr_buffer" else None
    probe = np.random.default_rng(1).uniform(-1.0, 1.0, (50, 2))
    expected, points, alpha, mean, risks, _ = transcription(X, y, labelled, **SETTINGS, buffer=buffer)
    predictions, learner = run(name, X, y, labelled, **({"buffer": buffer} if buffer else {}))
    np.testing.assert_allclose(predictions, expected, rtol=0, atol=1e-10)
    np.testing.assert_allclose(learner.predict(probe), gram(probe, points, SETTINGS["gamma"]) @ alpha,
                               rtol=0, atol=1e-10)
    outputs = learner.outputs()
    np.testing.assert_allclose(outputs["average"].predict(probe), gram(probe, points, SETTINGS["gamma"]) @ mean,
                               rtol=0, atol=1e-10)
    assert learner.diagnostics()["online_risk"] == pytest.approx(risks.mean(), rel=1e-12)
    if buffer is None:  # slot order is arrival order
        np.testing.assert_allclose(learner.coefficients(), alpha, rtol=0, atol=1e-10)
        np.testing.assert_array_equal(learner.support_vectors().toarray(), X)
    assert np.abs(alpha).max() > 0.1 and learner.n_sv == len(points)


def test_the_exact_average_is_the_mean_of_the_hypotheses_used():
    """f̄ = (1/T) Σ_t f_t, checked as functions: the mean of every round's f_t at probe
    points (f_1 = 0 included), whatever the coefficients; a snapshot later learning
    does not move."""
    X, y, labelled = two_moons(n=40, seed=2)
    probe = np.random.default_rng(4).uniform(-1.0, 1.0, (30, 2))
    *_, at_probe = transcription(X, y, labelled, **SETTINGS, probe=probe)
    _, learner = run("online_mr", X, y, labelled)
    average = learner.outputs()["average"]
    expected = np.mean(at_probe, axis=0)
    np.testing.assert_allclose(average.predict(probe), expected, rtol=0, atol=1e-10)
    assert np.abs(expected - learner.predict(probe)).max() > 1e-3  # not the last hypothesis
    learner.learn(X[:5], y[:5], np.ones(5, bool))
    np.testing.assert_allclose(average.predict(probe), expected, rtol=0, atol=1e-10)


@pytest.mark.parametrize(("name", "params"), [("online_mr_buffer", {"buffer": 10}),
                                              ("online_mr_rptree", {"max_clusters": 6, "leaf_size": 4})])
def test_the_average_is_a_snapshot(name, params):
    """Later rounds replace representers and move means: f̄ taken before does not move."""
    X, y, labelled = two_moons(n=40, seed=8)
    _, learner = run(name, X[:20], y[:20], labelled[:20], **params)
    probe = np.random.default_rng(5).uniform(-1.0, 1.0, (20, 2))
    average = learner.outputs()["average"]
    before = average.predict(probe)
    learner.learn(X[20:], np.where(labelled[20:], y[20:], np.nan), labelled[20:])
    np.testing.assert_array_equal(average.predict(probe), before)
    assert np.abs(learner.outputs()["average"].predict(probe) - before).max() > 1e-6


def test_a_buffer_as_long_as_the_stream_is_the_exact_learner():
    X, y, labelled = two_moons(seed=3)
    exact_predictions, exact = run("online_mr", X, y, labelled)
    predictions, buffered = run("online_mr_buffer", X, y, labelled, buffer=len(y))
    np.testing.assert_allclose(predictions, exact_predictions, rtol=0, atol=1e-10)
    np.testing.assert_allclose(buffered.coefficients(), exact.coefficients(), rtol=0, atol=1e-10)


def test_the_projection_leaves_a_residual_orthogonal_to_the_kept_representers():
    """⟨f_before − f_after, K(x_k, ·)⟩ = f_before(x_k) − f_after(x_k) = 0 for every kept x_k,
    up to the directions the solve leaves out (singular values of the kept Gram matrix
    below PROJECTION_RCOND = 1e-8 of the largest; these 39 points have some)."""
    X, y, labelled = two_moons(n=40, seed=5)
    _, learner = run("online_mr", X, y, labelled)
    before_points, before_alpha = learner.support_vectors().toarray(), learner.coefficients()
    for dropped in (0, 17, 39):
        store = learner.store
        saved = [a.copy() for a in store.arrays], learner.gram.copy()
        project_out(store.arrays, learner.gram, dropped)
        kept, after_alpha = store.rows(2).toarray(), learner.coefficients()
        assert len(kept) == 39 and not (kept == before_points[dropped]).all(axis=1).any()
        residual = gram(kept, before_points, 2.0) @ before_alpha - gram(kept, kept, 2.0) @ after_alpha
        assert np.abs(residual).max() < 1e-6
        assert np.abs(after_alpha - np.delete(before_alpha, dropped)).max() > 1e-6  # re-fitted, not just cut
        for a, b in zip(store.arrays, saved[0], strict=True):
            a[...] = b
        learner.gram[...] = saved[1]


def test_labelled_representers_stay_in_the_buffer_first():
    X, y, labelled = two_moons(n=40, seed=7)
    labelled[:] = False
    labelled[[0, 2, 5]] = True
    _, learner = run("online_mr_buffer", X, y, labelled, buffer=6, keep_labelled=True)
    ids = set(learner.store.ids[:learner.n_sv].tolist())
    assert {0, 2, 5} <= ids and {37, 38, 39} <= ids and len(ids) == 6
    assert (learner.store.slot_f[:6, LABEL] != 0).sum() == 3
    _, plain = run("online_mr_buffer", X, y, labelled, buffer=6)
    assert sorted(plain.store.ids[:6].tolist()) == list(range(34, 40))


@pytest.mark.parametrize(("name", "params"), [
    ("online_mr", {}), ("online_mr_buffer", {"buffer": 12}), ("online_mr_rptree", {"max_clusters": 8, "leaf_size": 4}),
])
def test_unlabelled_targets_are_never_read_and_csr_is_dense(name, params):
    """NaN, or the wrong label, on the unlabelled rows: the same learner, bit for bit;
    likewise from a CSR copy of the stream, in two blocks."""
    X, y, labelled = two_moons(n=50, seed=2)
    predictions, learner = run(name, X, y, labelled, **params)
    other = learner_class(name)(2, **SETTINGS, **params)
    flipped = np.where(labelled, y, -y)
    Xs = sp.csr_matrix(X)
    again = np.concatenate([other.learn(Xs[:20], flipped[:20], labelled[:20]),
                            other.learn(Xs[20:], flipped[20:], labelled[20:])])
    np.testing.assert_array_equal(predictions, again)
    np.testing.assert_array_equal(learner.coefficients(), other.coefficients())
    assert learner.diagnostics() == other.diagnostics()


@pytest.mark.parametrize("name", ["online_mr", "online_mr_buffer", "online_mr_rptree"])
@pytest.mark.parametrize(("param", "value", "message"), [
    ("lam1", 0.0, "'lam1': must be above 0.0, got 0.0"),
    ("lam2", -1.0, "'lam2': must be above 0.0, got -1.0"),
    ("sigma", 0.0, "'sigma': must be above 0.0, got 0.0"),
    ("label_rate", 1.5, "'label_rate': 1.5 is above the maximum 1.0"),
    ("eta", 100.0, "eta * lam1 must be below 1"),
])
def test_bad_parameters_are_one_line(name, param, value, message):
    with pytest.raises(ConfigError, match=message.replace("*", r"\*")) as caught:
        learner_class(name)(2, **{param: value})
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(("name", "param", "value", "minimum"), [
    ("online_mr_buffer", "buffer", 0, 1), ("online_mr_buffer", "buffer", -3, 1),
    ("online_mr_rptree", "max_clusters", 0, 1), ("online_mr_rptree", "leaf_size", 1, 2),
])
def test_sizes_must_be_positive(name, param, value, minimum):
    with pytest.raises(ConfigError, match=f"'{param}': {value} is below the minimum {minimum}") as caught:
        learner_class(name)(2, **{param: value})
    assert "\n" not in str(caught.value)


def descent(tree, x):
    """The nodes a dense point passes through, root to leaf (plain NumPy)."""
    path, node = [0], 0
    while tree.nodes[node, 0] >= 0:
        v = tree.directions[tree.nodes[node, 1]]
        node = tree.nodes[node, 0] + (0 if x @ v <= tree.thresholds[node] else 1)
        path.append(node)
    return path


def test_the_tree_leaves_partition_the_points_and_split_at_the_median():
    """Each cluster's count and mean are those of the points routed to its leaf; an inner
    node's threshold is the median of the projections of the first leaf_size points that
    reached it (those its leaf held when it split), on its direction."""
    X, y, labelled = two_moons(n=200, seed=9)
    _, learner = run("online_mr_rptree", X, y, labelled, max_clusters=16, leaf_size=8)
    tree = learner.tree
    assert learner.n_clusters == 16 and tree.counts.sum() == 200
    paths = [descent(tree, x) for x in X]
    leaves = np.array([tree.nodes[path[-1], 2] for path in paths])
    assert (leaves == [tree.leaf_of(x) for x in X]).all()
    for c in range(16):
        assert tree.counts[c] == (leaves == c).sum() > 0
        np.testing.assert_allclose(tree.means[c], X[leaves == c].mean(axis=0), rtol=0, atol=1e-12)
    inner = [node for node in range(tree.meta[0]) if tree.nodes[node, 0] >= 0]
    assert len(inner) == 15
    for node in inner:
        first = X[[i for i, path in enumerate(paths) if node in path][:8]]
        v = tree.directions[tree.nodes[node, 1]]
        assert np.linalg.norm(v) == pytest.approx(1.0)
        assert tree.thresholds[node] == pytest.approx(np.median(first @ v), abs=1e-12)
        assert (first @ v <= tree.thresholds[node]).sum() == 4
    np.testing.assert_allclose(learner.predict(X[:20]), np.exp(-2.0 * (
        (X[:20, None, :] - learner.centres()[None]) ** 2).sum(axis=2)) @ learner.coefficients(), atol=1e-12)


def test_labels_must_be_plus_or_minus_one_where_labelled():
    learner = learner_class("online_mr")(2)
    with pytest.raises(DataError, match="labels must be -1 or \\+1, row 1 has 0.5"):
        learner.learn(np.ones((3, 2)), np.array([1.0, 0.5, np.nan]), np.array([True, True, False]))


def test_the_expected_edge_is_the_mean_edge_over_the_clusters_gaussian():
    """expected_edge against a Monte Carlo average of exp(−‖z − x‖²/2σ²) over z drawn
    from N(μ, diag(v)) of a cluster's points (the tree keeps μ and Σ (x − μ)² per feature)."""
    from dolb.learners.manifold.clustered import expected_edge
    from dolb.learners.manifold.rptree import RPTree, join

    rng = np.random.default_rng(3)
    points = rng.normal([0.3, -0.2, 0.5], [0.2, 0.05, 0.4], size=(30, 3))
    tree = RPTree(3, 1, 2, 0)  # one cluster: never splits
    for point in points:
        join(tree.arrays, 0, point)
    np.testing.assert_allclose(tree.means[0], points.mean(axis=0), atol=1e-12)
    np.testing.assert_allclose(tree.spread[0], ((points - points.mean(axis=0)) ** 2).sum(axis=0), atol=1e-12)
    x, sigma = np.array([0.1, 0.0, 0.9]), 0.3
    draws = rng.normal(points.mean(axis=0), points.std(axis=0), size=(400_000, 3))
    monte_carlo = np.exp(-((draws - x) ** 2).sum(axis=1) / (2 * sigma**2)).mean()
    assert expected_edge(tree.arrays, 0, x, sigma**2) == pytest.approx(monte_carlo, rel=3e-3)
    at_mean = np.exp(-((points.mean(axis=0) - x) ** 2).sum() / (2 * sigma**2))
    assert abs(expected_edge(tree.arrays, 0, x, sigma**2) - at_mean) > 0.05 * at_mean  # not the simple form


@pytest.mark.parametrize("edge_weight", ["mean", "expected"])
def test_two_clusters_are_the_transcription_of_the_updates(edge_weight):
    """max_clusters=2, leaf_size=4: one cluster until the 4th point splits it at the
    root's threshold (its direction and threshold read from the learner, tested above),
    then two. f = Σ β_i K(μ_i, ·), μ_i the mean of cluster i's points, edges weighing
    n_i·w; x_t's coefficient joins its cluster; the split shares β by counts."""
    X, y, labelled = two_moons(n=40, seed=6)
    predictions, learner = run("online_mr_rptree", X, y, labelled, max_clusters=2, leaf_size=4,
                               edge_weight=edge_weight)
    c, tree = SETTINGS, learner.tree
    side = (X @ tree.directions[0] > tree.thresholds[0]).astype(int)
    beta, mean_beta, expected, risks = np.zeros(2), np.zeros(2), [], []
    members = [[], []]
    for t in range(1, 41):
        x = X[t - 1]
        n = np.array([len(m) for m in members], float)
        means = np.array([X[m].mean(axis=0) if m else np.zeros(2) for m in members])
        k = gram(means, x[None], c["gamma"])[:, 0]
        f = beta @ k
        expected.append(f)
        step = c["eta"] / np.sqrt(t)
        f_means, w = gram(means, means, c["gamma"]) @ beta, n * gram(means, x[None], 0.5 / c["sigma"] ** 2)[:, 0]
        if edge_weight == "expected":  # E over N(μ_i, diag(v_i)), v_i the members' variance
            width2 = c["sigma"] ** 2 + np.array([X[m].var(axis=0) if m else np.zeros(2) for m in members])
            w = n * np.prod(np.sqrt(c["sigma"] ** 2 / width2), axis=1) * np.exp(
                -((means - x) ** 2 / (2 * width2)).sum(axis=1))
        edges = (f_means - f) * w
        risks.append((max(0.0, 1 - y[t - 1] * f) / c["label_rate"] if labelled[t - 1] else 0.0)
                     + c["lam1"] / 2 * beta @ f_means + c["lam2"] * np.sum((f_means - f) ** 2 * w))
        mean_beta += (beta - mean_beta) / t
        hinge = y[t - 1] if labelled[t - 1] and y[t - 1] * f < 1 else 0.0
        beta = (1 - step * c["lam1"]) * beta - 2 * step * c["lam2"] * edges
        cluster = side[t - 1] if t > 4 else 0
        beta[cluster] += 2 * step * c["lam2"] * edges.sum() + step / c["label_rate"] * hinge
        members[cluster].append(t - 1)
        if t == 4:
            members = [[i for i in range(4) if side[i] == s] for s in (0, 1)]
            shares = np.array([len(members[0]), len(members[1])]) / 4
            beta, mean_beta = beta[0] * shares, mean_beta[0] * shares
    np.testing.assert_allclose(predictions, expected, rtol=0, atol=1e-10)
    assert learner.diagnostics()["online_risk"] == pytest.approx(np.mean(risks), rel=1e-12)
    probe = np.random.default_rng(1).uniform(-1.0, 1.0, (20, 2))
    centres = np.array([X[m].mean(axis=0) for m in members])
    np.testing.assert_allclose(learner.outputs()["average"].predict(probe),
                               gram(probe, centres, c["gamma"]) @ mean_beta, rtol=0, atol=1e-10)
    np.testing.assert_allclose(learner.coefficients(), beta, rtol=0, atol=1e-10)
    np.testing.assert_allclose(learner.centres(), [X[m].mean(axis=0) for m in members], rtol=0, atol=1e-12)
    assert min(len(m) for m in members) > 5
