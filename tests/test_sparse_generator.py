"""The "sparse_text" generator: determinism, shape, sparsity, Zipf skew, tf-idf rows,
labels from a sparse linear truth with the asked-for noise, and speed."""

import time

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.svm import LinearSVC

from dolb.data import generate, materialize
from dolb.errors import ConfigError

SMALL = {"n_rows": 20_000, "n_features": 10_000, "nnz_per_row": 40}


def train(params, seed=0):
    """(X, y, provenance) of the training part."""
    return generate("sparse_text", params, seed)["train"]


def top_share(X, fraction=0.01):
    """Share of the non-zeros held by the most frequent ``fraction`` of the features."""
    counts = np.sort(np.bincount(X.indices, minlength=X.shape[1]))[::-1]
    return counts[: max(1, int(fraction * X.shape[1]))].sum() / counts.sum()


def test_same_seed_is_bit_identical_and_other_seeds_differ():
    first = generate("sparse_text", {**SMALL, "n_test": 500}, 3)
    again = generate("sparse_text", {**SMALL, "n_test": 500}, np.random.SeedSequence(3))
    for part in ("train", "test"):
        (X, y, _), (X2, y2, _) = first[part], again[part]
        for a, b in ((X.data, X2.data), (X.indices, X2.indices), (X.indptr, X2.indptr), (y, y2)):
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
    X3, y3, _ = train(SMALL, seed=4)
    assert not np.array_equal(first["train"][1], y3)
    assert X3.nnz != first["train"][0].nnz or not np.array_equal(X3.indices, first["train"][0].indices)


def test_shape_parts_and_canonical_csr():
    parts = generate("sparse_text", {**SMALL, "n_test": 700}, 0)
    assert sorted(parts) == ["test", "train"]
    X, y, about = parts["train"]
    assert sp.isspmatrix_csr(X) and X.shape == (20_000, 10_000) and y.shape == (20_000,)
    assert parts["test"][0].shape == (700, 10_000)
    assert X.has_canonical_format and X.dtype == np.float64 and X.data.min() > 0
    assert set(np.unique(y)) == {-1.0, 1.0}
    assert about["params"] == {**SMALL, "nnz_per_row": 40.0, "zipf": 1.1, "label_noise": 0.05, "n_test": 700}
    assert sorted(generate("sparse_text", SMALL, 0)) == ["train"]


def test_row_counts_vary_around_the_mean():
    X, _, _ = train(SMALL)
    counts = np.diff(X.indptr)
    assert abs(counts.mean() - 40) < 0.02 * 40
    assert counts.min() >= 1 and 4.0 < counts.std() < 10.0  # Poisson(40): std 6.3
    sparse_rows, _, _ = train({**SMALL, "nnz_per_row": 1.0})
    assert np.diff(sparse_rows.indptr).min() == 1


def test_rows_have_unit_norm_and_tf_idf_weights():
    X, _, _ = train(SMALL)
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    np.testing.assert_allclose(norms, 1.0, rtol=1e-12)
    common, rare = X[:, :10], X[:, -5000:]  # feature 0 is the most frequent word
    assert common.data.mean() < 0.5 * rare.data.mean()  # idf weighs rare words up


def test_column_frequencies_follow_a_skewed_law():
    X, _, _ = train(SMALL)
    df = np.bincount(X.indices, minlength=X.shape[1])
    assert top_share(X) > 0.3
    assert df[:10].min() > 10 * np.median(df)
    assert top_share(train({**SMALL, "zipf": 0.0})[0]) < 0.03  # uniform words: about 1 %


def test_labels_are_balanced_and_noise_flips_the_asked_share():
    clean_X, clean, _ = train({**SMALL, "label_noise": 0.0})
    noisy_X, noisy, _ = train({**SMALL, "label_noise": 0.1})
    assert (clean_X != noisy_X).nnz == 0  # same rows: noise only flips labels
    assert abs((clean > 0).mean() - 0.5) < 0.001  # median threshold
    flipped = (clean != noisy).mean()
    assert abs(flipped - 0.1) < 4 * np.sqrt(0.1 * 0.9 / len(clean))


def test_clean_labels_are_linear_in_the_features():
    X, y, _ = train({"n_rows": 10_000, "n_features": 1000, "nnz_per_row": 30, "label_noise": 0.0})
    shuffled = np.random.default_rng(0).permutation(y)

    def held_out_accuracy(labels):
        model = LinearSVC(C=10.0, max_iter=20_000).fit(X[:7500], labels[:7500])
        return model.score(X[7500:], labels[7500:])

    assert held_out_accuracy(y) > 0.85
    assert held_out_accuracy(shuffled) < 0.6


def test_test_part_comes_from_the_same_distribution_and_leaves_train_alone():
    parts = generate("sparse_text", {**SMALL, "n_test": 5000}, 1)
    X, y, _ = parts["train"]
    X_test, y_test, _ = parts["test"]
    assert abs(np.diff(X_test.indptr).mean() - 40) < 0.03 * 40
    assert abs((y_test > 0).mean() - 0.5) < 0.03
    assert abs(top_share(X_test) - top_share(X)) < 0.02
    alone, y_alone, _ = train(SMALL, seed=1)
    assert (alone != X).nnz == 0 and np.array_equal(y_alone, y)


def test_materialized_store_holds_the_generated_rows(tmp_path):
    params = {"n_rows": 2000, "n_features": 500, "nnz_per_row": 12, "n_test": 300}
    sets = materialize("sparse_text", params, 5, tmp_path)
    parts = generate("sparse_text", params, 5)
    for name, ds in sets.items():
        X, y = ds.read(slice(None))
        assert ds.sparse and (parts[name][0] != X).nnz == 0
        np.testing.assert_array_equal(y, parts[name][1])


@pytest.mark.parametrize(
    "params, message",
    [
        ({"label_noise": 1.5}, "'label_noise': 1.5 is above the maximum 1.0"),
        ({"nnz_per_row": 0.5}, "'nnz_per_row': 0.5 is below the minimum 1.0"),
        ({"n_test": -1}, "'n_test': -1 is below the minimum 0"),
        ({"n_features": 1}, "'n_features': 1 is below the minimum 2"),
        ({"zipf": "1.1"}, "'zipf': expected a number"),
        ({"rows": 3}, "unknown parameter 'rows'"),
    ],
)
def test_bad_params(params, message):
    with pytest.raises(ConfigError, match="generator 'sparse_text'") as info:
        generate("sparse_text", params, 0)
    assert message in str(info.value)


def test_full_default_size_is_fast():
    start = time.perf_counter()
    X, y, _ = train({})
    seconds = time.perf_counter() - start
    print(f"\nsparse_text default (100,000 x 50,000, {X.nnz:,} non-zeros): {seconds:.2f} s")
    assert X.shape == (100_000, 50_000) and abs(X.nnz / 100_000 - 80) < 0.8
