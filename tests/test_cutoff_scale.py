"""The cutoff study at RCV1 scale: the resampling generator, the cutoff conversion's
N_k and L̂_k against a hand-computed case, and RLS's smallest safe Tikhonov."""

import math
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp

from dolb.cli import main
from dolb.conversions import confidence
from dolb.data import generate
from dolb.data.sources.rcv1 import load_npz, pair_view
from dolb.errors import ConfigError
from dolb.learners import learner_class
from dolb.learners.rls import RLS, smallest_tikhonov
from tests.conftest import SHARED_DATA, requires_shared_data

SAMPLE = SHARED_DATA / "rcv1" / "rcv1v2_mulan_dedup.npz"
SMALL = {"path": str(SAMPLE), "pair": ["ECAT", "GCAT"], "n_rows": 2000, "test_fraction": 0.25}
needs_sample = requires_shared_data("rcv1", "rcv1v2_mulan_dedup.npz")


# --- the rcv1_resample generator -------------------------------------------------------


@pytest.fixture(scope="module")
def documents():
    """The pair's real documents (unit norm), as the generator reads them."""
    X, y = pair_view(load_npz(SAMPLE), SMALL["pair"])
    return sp.csr_matrix(X, dtype=np.float64), y


@pytest.fixture(scope="module")
def parts():
    return generate("rcv1_resample", {**SMALL, "dropout": 0.3, "radius": 4.0}, seed=5)


def _sources(rows: sp.csr_matrix, docs: sp.csr_matrix) -> sp.csr_matrix:
    """(row, document) pairs where the row's support lies within the document's and its
    values are the document's there, up to one positive factor."""
    binary = lambda m: (m != 0).astype(np.int64)  # noqa: E731
    shared = (binary(rows) @ binary(docs).T).tocoo()
    inside = shared.data == np.diff(rows.indptr)[shared.row]
    pairs = []
    for r, d in zip(shared.row[inside], shared.col[inside]):
        row, doc = rows[r], docs[d].toarray().ravel()[rows[r].indices]
        ratio = row.data / doc
        if np.allclose(ratio, ratio[0], rtol=1e-9):
            pairs.append((r, d))
    r, d = np.array(pairs).T if pairs else (np.zeros(0, int), np.zeros(0, int))
    return sp.csr_matrix((np.ones(len(r)), (r, d)), shape=(rows.shape[0], docs.shape[0]))


@needs_sample
def test_the_cache_knows_the_sample_by_its_content_not_its_path(tmp_path):
    """A copy of the sample in another folder opens the same cache entry; an edited
    sample does not."""
    from dolb.data.sources.generators import materialize

    (tmp_path / "elsewhere").mkdir()
    copy = tmp_path / "elsewhere" / SAMPLE.name
    copy.write_bytes(SAMPLE.read_bytes())
    params = {**SMALL, "n_rows": 50}
    first = materialize("rcv1_resample", params, 1, tmp_path / "cache")
    again = materialize("rcv1_resample", {**params, "path": str(copy)}, 1, tmp_path / "cache", build=False)
    assert again is not None and again["train"].path == first["train"].path
    copy.write_bytes(SAMPLE.read_bytes() + b"\0")  # another file under the same name
    assert materialize("rcv1_resample", {**params, "path": str(copy)}, 1, tmp_path / "cache", build=False) is None


@needs_sample
def test_training_rows_are_documents_with_tokens_dropped_and_test_rows_are_held_out(parts, documents):
    docs, labels = documents
    X, y, _ = parts["train"]
    X_test, y_test, _ = parts["test"]
    assert X.shape == (2000, docs.shape[1]) and X_test.shape[0] == round(0.25 * docs.shape[0])
    origin = _sources(X, docs)
    assert np.all(np.diff(origin.indptr) >= 1)  # every row comes from some document...
    first = origin.indices[origin.indptr[:-1]]
    np.testing.assert_array_equal(y, labels[first])  # ...and carries its label
    kept = np.diff(X.indptr) / np.diff(docs.indptr)[first]
    assert 0.65 < kept.mean() < 0.75  # 30 % dropout
    test_docs = _sources(X_test, docs)
    assert np.all(np.diff(test_docs.indptr) == 1)  # each test row is one whole document
    test_ids = test_docs.indices
    np.testing.assert_array_equal(np.diff(X_test.indptr), np.diff(docs.indptr)[test_ids])
    np.testing.assert_array_equal(y_test, labels[test_ids])
    assert len(set(test_ids)) == X_test.shape[0]
    assert not set(origin.indices) & set(test_ids)  # never drawn for training
    assert len(set(first)) > 1500  # resampled from a pool of ~4,000, with replacement


@needs_sample
def test_norms_fixed_or_uniform(parts):
    for part in ("train", "test"):
        norms = sp.linalg.norm(parts[part][0], axis=1)
        np.testing.assert_allclose(norms, 4.0, rtol=1e-13)
    uniform = generate("rcv1_resample", {**SMALL, "radius": 9.0, "norms": "uniform"}, seed=1)
    for part in ("train", "test"):
        norms = sp.linalg.norm(uniform[part][0], axis=1)
        assert norms.min() >= 1.0 and norms.max() <= 9.0
        # uniform on [1, 9]: mean 5, standard deviation 8 / sqrt(12)
        assert abs(norms.mean() - 5.0) < 5 * 2.31 / math.sqrt(len(norms))
    unit = generate("rcv1_resample", SMALL, seed=1)["train"][0]
    np.testing.assert_allclose(sp.linalg.norm(unit, axis=1), 1.0, rtol=1e-13)


@needs_sample
def test_same_seed_same_stream_other_seed_other_stream(parts):
    again = generate("rcv1_resample", {**SMALL, "dropout": 0.3, "radius": 4.0}, seed=5)
    for part in ("train", "test"):
        for a, b in zip(parts[part][:2], again[part][:2]):
            assert (a != b).nnz == 0 if sp.issparse(a) else np.array_equal(a, b)
    other = generate("rcv1_resample", {**SMALL, "dropout": 0.3, "radius": 4.0}, seed=6)["train"][0]
    assert (other != parts["train"][0]).nnz > 0


@pytest.mark.parametrize("params, message", [
    ({"radius": 0.5}, "parameter 'radius': 0.5 is below the minimum 1.0"),
    ({"dropout": 1.0}, "parameter 'dropout': 1.0 is above the maximum 0.99"),
    ({"norms": "uniform"}, "parameter 'radius': norms = 'uniform' needs a radius above 1"),
    ({"pair": ["CCAT", "CCAT"]}, "parameter 'pair': ['CCAT', 'CCAT'] lists a value twice"),
    ({"n_rows": 0}, "parameter 'n_rows': 0 is below the minimum 1"),
])
def test_bad_parameters_one_line(params, message):
    with pytest.raises(ConfigError) as caught:
        generate("rcv1_resample", {**SMALL, **params}, seed=0)
    assert str(caught.value) == f"generator 'rcv1_resample', {message}"


@needs_sample
def test_a_test_fraction_leaving_no_document_is_one_line():
    with pytest.raises(ConfigError, match=r"^generator 'rcv1_resample', parameter 'test_fraction': 1e-05 of \d+ "
                                          r"documents leaves no test or no training document$"):
        generate("rcv1_resample", {**SMALL, "test_fraction": 1e-5}, seed=0)


# --- the cutoff's N_k and L̂_k ------------------------------------------------------------

# A scripted Perceptron run on x = 1: w = 0 errs on (1, +1) and becomes 1; three correct
# rounds; (1, -1) is an error (w = 0), then again (w·x = 0 counts as a mistake, w = -1);
# two correct rounds. Survival times r = 1, 4, 1 and 2 (the live one); losses on rounds
# 1, 5, 6, used by hypotheses of ages 1, 4, 1.
SCRIPT_Y = np.array([1.0, 1, 1, 1, -1, -1, -1, -1])
N_BY_HAND = [8, 3 + 1, 2, 1]  # N_k = Σ_h (r(h) − k)_+, k = 0..3
LOSS_BY_HAND = [3 / 8, 1 / 4, 1 / 2, 1 / 1]  # losses on rounds where the hypothesis was older than k


@pytest.mark.parametrize("sparse", [False, True], ids=["buckets", "log"])
def test_cutoff_reports_n_k_and_loss_k_of_a_hand_computed_run(sparse):
    learner = learner_class("perceptron")(1, n_train=8, conversions=("cutoff",))
    X = np.ones((8, 1))
    learner.learn(sp.csr_matrix(X) if sparse else X, SCRIPT_Y)
    info = learner.outputs()["cutoff"].info
    a = confidence(8)
    by_hand = [loss + 2 * math.sqrt(loss * a / n) + 8 * a / n for n, loss in zip(N_BY_HAND, LOSS_BY_HAND)]
    k = int(np.argmin(by_hand))
    assert info["cutoff_k"] == k and info["cutoff_bound"] == pytest.approx(by_hand[k], rel=1e-12)
    assert info["cutoff_n"] == N_BY_HAND[k] and info["cutoff_loss"] == pytest.approx(LOSS_BY_HAND[k], rel=1e-12)
    assert info["cutoff_max_r"] == 4
    for j, (n, loss) in enumerate(zip(N_BY_HAND, LOSS_BY_HAND)):
        if f"cutoff_n_k{j}" in info:
            assert info[f"cutoff_n_k{j}"] == n and info[f"cutoff_loss_k{j}"] == pytest.approx(loss, rel=1e-12)
    assert [info[f"cutoff_n_k{j}"] for j in (0, 1, 2)] == N_BY_HAND[:3]
    assert math.isnan(info["cutoff_n_k5"]) and math.isnan(info["cutoff_loss_k5"])  # no hypothesis that old


def test_unit_rows_never_let_a_margin_perceptron_hypothesis_survive():
    # ‖w‖ ≤ 1 and ‖x‖ = 1 give y⟨w, x⟩ ≤ 1: a positive hinge loss on every round but the
    # exact w = y·x, so every hypothesis is used once and only k = 0 exists
    rng = np.random.default_rng(0)
    X = rng.standard_normal((500, 5))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    learner = learner_class("margin_perceptron")(5, n_train=500, conversions=("cutoff",), radius=1.0)
    learner.learn(X, y)
    info = learner.outputs()["cutoff"].info
    assert info["cutoff_max_r"] == 1 and info["cutoff_k"] == 0 and info["cutoff_n_k0"] == 500
    assert math.isnan(info["cutoff_n_k1"])
    scaled = learner_class("margin_perceptron")(5, n_train=500, conversions=("cutoff",), radius=10.0)
    scaled.learn(10 * X, y)  # the same rows at norm 10: margins of 1 are reachable
    assert scaled.outputs()["cutoff"].info["cutoff_max_r"] > 1


# --- RLS: the smallest safe Tikhonov -----------------------------------------------------


def _ridge(Phi, y, tikhonov):
    """argmin ‖Φθ − y‖² + tikhonov·‖θ‖², by a least-squares solve of the stacked system."""
    k = Phi.shape[1]
    stacked = np.vstack([Phi, math.sqrt(tikhonov) * np.eye(k)])
    return np.linalg.lstsq(stacked, np.concatenate([y, np.zeros(k)]), rcond=None)[0]


def _fit_error(basis, order, tikhonov, check=True):
    """Relative distance between RLS's fit and the batch ridge fit on a grid of [0, 3]."""
    rng = np.random.default_rng(order)
    x = rng.uniform(0.0, 3.0, 300)
    y = x * np.exp(-x * x) + rng.uniform(-0.05, 0.05, 300)
    params = {"order": order, "basis": basis, "domain_high": 3.0}
    learner = RLS(1, **params, tikhonov=tikhonov if check else 1.0)
    if not check:  # bypass the refusal to show what it protects from
        learner.S = np.eye(learner.basis.size) / tikhonov
    learner.learn(x[:, None], y)
    grid = learner.basis.transform(np.linspace(0.0, 3.0, 500))
    reference = grid @ _ridge(learner.basis.transform(x), y, tikhonov)
    return np.linalg.norm(grid @ learner.theta - reference) / np.linalg.norm(reference)


@pytest.mark.parametrize("basis, order", [("legendre", 4), ("legendre", 10), ("monomial", 4), ("monomial", 8)])
def test_rls_agrees_with_batch_ridge_at_its_smallest_tikhonov(basis, order):
    from dolb.learners.basis import PolynomialBasis

    floor = smallest_tikhonov(PolynomialBasis(order, basis, (0.0, 3.0)))
    assert _fit_error(basis, order, floor) < 1e-6
    assert _fit_error(basis, order, floor * 1e-6, check=False) > 1e-4  # far below, the recursion fails


def test_a_tikhonov_below_the_floor_is_refused_before_anything_runs(tmp_path, capsys):
    path = tmp_path / "tiny.toml"
    path.write_text(textwrap.dedent("""
        [pipeline]
        name = "tiny"
        seed = 1
        [datasets.irma]
        generator = "irma"
        params = { n_sequences = 2, length = 20 }
        [experiments.e]
        dataset = "irma"
        task = "regression"
        split = { scheme = "sequences", count = 2 }
        metrics = ["test_mse"]
        learners = [{ learner = "rls", complexity = 4, params = { basis = "legendre", domain_high = 3.0, tikhonov = 1e-12 } }]
    """))
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "params.tikhonov: 1e-12 is below 1e-10, the smallest value RLS" in err, err
    assert not out.exists()
