"""The polynomial regression learners of the IRMA study against direct solutions."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.integrate import quad

from dolb.errors import ConfigError
from dolb.learners import learner_class, registered_learners
from dolb.learners.basis import PolynomialBasis, PolynomialLearner

REGRESSION_LEARNERS = tuple(
    name for name, cls in registered_learners(task="regression").items() if issubclass(cls, PolynomialLearner)
)
"""Every polynomial regression learner (the tests below use their common parameters)."""


def study_data(n, seed=0):
    """x ~ U[0, 3], y = x·exp(−x²) + U[−0.05, 0.05] noise, x as an (n, 1) block."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 3.0, n)
    return x[:, None], x * np.exp(-(x**2)) + rng.uniform(-0.05, 0.05, n)


def make(name, **params):
    return learner_class(name)(1, **params)


# --- bases -------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["monomial", "legendre"])
def test_gram_matches_numerical_integration(kind):
    basis = PolynomialBasis(5, kind, domain=(-0.5, 2.0))

    def entry(i, j):
        integrand = lambda x: np.prod(basis.transform(np.array([x]))[0, [i, j]])  # noqa: E731
        return quad(integrand, -0.5, 2.0, epsabs=1e-13, epsrel=1e-12)[0]

    expected = np.array([[entry(i, j) for j in range(6)] for i in range(6)])
    np.testing.assert_allclose(basis.gram(), expected, rtol=1e-10, atol=1e-12)


def test_legendre_gram_is_diagonal():
    gram = PolynomialBasis(6, "legendre", domain=(0.0, 3.0)).gram()
    np.testing.assert_array_equal(gram, np.diag(3.0 / (2 * np.arange(7) + 1)))


def test_monomial_gram_entries():
    gram = PolynomialBasis(2, "monomial", domain=(1.0, 2.0)).gram()
    np.testing.assert_allclose(gram[0], [1.0, 3 / 2, 7 / 3])
    np.testing.assert_allclose(gram[2, 2], 31 / 5)


def test_transform_values():
    np.testing.assert_array_equal(
        PolynomialBasis(3, "monomial").transform(np.array([2.0, -1.0])),
        [[1, 2, 4, 8], [1, -1, 1, -1]],
    )
    # x = 1.5 on [0, 2] is u = 0.5: P = 1, u, (3u² − 1)/2, (5u³ − 3u)/2.
    phi = PolynomialBasis(3, "legendre", domain=(0.0, 2.0)).transform(np.array([1.5]))
    np.testing.assert_allclose(phi, [[1.0, 0.5, -0.125, -0.4375]], rtol=1e-15)
    assert phi.flags.c_contiguous and phi.dtype == np.float64


# --- IRMA --------------------------------------------------------------------------------


def test_irma_equals_dense_solve_of_each_step():
    X, y = study_data(80, seed=1)
    order, stiffness, growth = 3, 0.1, 1.05
    learner = make(
        "irma", order=order, domain_high=3.0, stiffness=stiffness, stiffness_growth=growth
    )
    predictions = learner.learn(X, y)

    basis = PolynomialBasis(order, "monomial", domain=(0.0, 3.0))
    A, Phi = basis.gram(), basis.transform(X[:, 0])
    theta, lam, expected = np.zeros(order + 1), stiffness, []
    for phi, target in zip(Phi, y):
        expected.append(phi @ theta)
        theta = np.linalg.solve(A + np.outer(phi, phi) / lam, A @ theta + phi * target / lam)
        lam *= growth
    np.testing.assert_allclose(predictions, expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(learner.theta, theta, rtol=1e-9)
    assert learner.stiffness == pytest.approx(stiffness * growth**80)


def test_irma_is_basis_invariant():
    X, y = study_data(150, seed=2)
    monomial = make("irma", order=4, basis="monomial", domain_high=3.0)
    legendre = make("irma", order=4, basis="legendre", domain_high=3.0)
    np.testing.assert_allclose(monomial.learn(X, y), legendre.learn(X, y), rtol=1e-8, atol=1e-10)
    grid = np.linspace(0.0, 3.0, 7)[:, None]
    np.testing.assert_allclose(monomial.predict(grid), legendre.predict(grid), rtol=1e-8)


# --- RLS ---------------------------------------------------------------------------------


def test_rls_without_forgetting_is_least_squares():
    X, y = study_data(100, seed=3)
    learner = make("rls", order=4, basis="legendre", domain_high=3.0, forgetting=1.0, tikhonov=1e-8)
    predictions = learner.learn(X, y)
    Phi = learner.basis.transform(X[:, 0])
    for t in (20, 50, 100):
        theta = np.linalg.lstsq(Phi[: t - 1], y[: t - 1])[0]
        np.testing.assert_allclose(predictions[t - 1], Phi[t - 1] @ theta, rtol=1e-6)
    np.testing.assert_allclose(learner.theta, np.linalg.lstsq(Phi, y)[0], rtol=1e-6)


def test_rls_with_forgetting_is_weighted_ridge():
    X, y = study_data(60, seed=4)
    g, tikhonov = 0.9, 0.05
    learner = make("rls", order=4, domain_high=3.0, forgetting=g, tikhonov=tikhonov)
    predictions = learner.learn(X, y)
    Phi = learner.basis.transform(X[:, 0])
    for t in range(1, 61):
        w = g ** np.arange(t - 1, -1, -1.0)
        lhs = tikhonov * g**t * np.eye(5) + (Phi[:t] * w[:, None]).T @ Phi[:t]
        theta = np.linalg.solve(lhs, (Phi[:t] * w[:, None]).T @ y[:t])
        if t < 60:
            np.testing.assert_allclose(predictions[t], Phi[t] @ theta, rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(learner.theta, theta, rtol=1e-7)
    np.testing.assert_allclose(learner.S, learner.S.T, rtol=0, atol=0)


# --- NGD ---------------------------------------------------------------------------------


def test_ngd_first_two_steps_by_hand():
    learner = make("ngd", order=1, eta=0.5, tikhonov=0.1, domain_high=3.0)
    predictions = learner.learn(np.array([[2.0], [1.0]]), np.array([1.0, 0.0]))
    # Step 1: φ = (1, 2), prediction 0, θ = 0.5·1·(1, 2)/5 = (0.1, 0.2).
    # Step 2: φ = (1, 1), prediction 0.3, θ = 0.95·(0.1, 0.2) + 0.5·(−0.3)·(1, 1)/2.
    np.testing.assert_allclose(predictions, [0.0, 0.3], rtol=1e-15)
    np.testing.assert_allclose(learner.theta, [0.02, 0.115], rtol=1e-14)


def test_ngd_with_unit_step_fits_the_latest_example():
    X, y = study_data(10, seed=5)
    learner = make("ngd", order=5, eta=1.0, tikhonov=0.0, domain_high=3.0)
    for t in range(10):
        learner.learn(X[t : t + 1], y[t : t + 1])
        np.testing.assert_allclose(learner.predict(X[t : t + 1]), [y[t]], rtol=1e-12, atol=1e-14)


# --- batch least squares -----------------------------------------------------------------


@pytest.mark.parametrize("order", [4, 6, 10])
def test_batch_ls_equals_lstsq_on_all_previous_examples(order):
    X, y = study_data(150, seed=6)
    learner = make("batch_ls", order=order, domain_high=3.0)
    predictions = learner.learn(X, y)
    Phi = learner.basis.transform(X[:, 0])
    expected = [0.0] + [Phi[t] @ np.linalg.lstsq(Phi[:t], y[:t])[0] for t in range(1, 150)]
    # At order 10 the fits on few points are ill-conditioned: both this learner and
    # lstsq are within 2e-7 (relative) of a 50-digit solution there, not closer.
    np.testing.assert_allclose(predictions, expected, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(learner.theta, np.linalg.lstsq(Phi, y)[0], rtol=1e-6, atol=1e-9)


def test_batch_ls_with_repeated_inputs_is_minimum_norm():
    # Only three distinct x: rank 3 < 5 parameters however many examples arrive.
    x = np.tile([0.5, 1.0, 2.0], 4)
    y = np.tile([1.0, -1.0, 2.0], 4) + np.linspace(0.0, 0.1, 12)
    learner = make("batch_ls", order=4, domain_high=3.0)
    predictions = learner.learn(x[:, None], y)
    Phi = learner.basis.transform(x)
    expected = [0.0] + [Phi[t] @ np.linalg.lstsq(Phi[:t], y[:t])[0] for t in range(1, 12)]
    np.testing.assert_allclose(predictions, expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(learner.theta, np.linalg.lstsq(Phi, y)[0], rtol=1e-9)



def test_batch_ls_minimum_norm_solve_is_lstsq_bit_for_bit():
    # The rank-deficient solve of the learner's kernel calls LAPACK's dgelsd itself (a
    # kernel without Numba's general lstsq compiles in a fraction of the time); on the
    # triangular systems it meets (rows no example has reached are zero) it gives
    # lstsq's solution exactly, as the study's stored results require.
    from dolb.learners.batch_ls import _full_rank, _min_norm

    rng = np.random.default_rng(5)
    for _ in range(300):
        n = int(rng.integers(2, 12))
        R = np.triu(rng.normal(size=(n, n)))
        R[int(rng.integers(0, n)):] = 0.0
        z = rng.normal(size=n)
        rcond = np.finfo(np.float64).eps * n * int(rng.integers(1, 5))
        assert np.array_equal(_min_norm(R, z, rcond), np.linalg.lstsq(R, z, rcond=rcond)[0])
        diagonal = np.abs(np.diag(R))
        assert _full_rank(R, rcond) == (diagonal.min() > rcond * diagonal.max())
    assert not _full_rank(np.diag([1.0, np.nan]), 1e-15)
    with pytest.raises(np.linalg.LinAlgError, match="infs or NaNs"):
        _min_norm(np.array([[1.0, np.nan], [0.0, 0.0]]), np.ones(2), 1e-15)

# --- all learners ------------------------------------------------------------------------


@pytest.mark.parametrize("name", REGRESSION_LEARNERS)
@pytest.mark.parametrize("basis", ["monomial", "legendre"])
def test_block_size_does_not_matter(name, basis):
    X, y = study_data(150, seed=7)
    params = dict(order=6, basis=basis, domain_high=3.0)
    whole = make(name, **params)
    whole_predictions = whole.learn(X, y)
    pieces = make(name, **params)
    bounds = [0, 1, 2, 9, 40, 41, 150]
    piece_predictions = np.concatenate(
        [pieces.learn(X[a:b], y[a:b]) for a, b in zip(bounds, bounds[1:])]
    )
    np.testing.assert_array_equal(piece_predictions, whole_predictions)
    np.testing.assert_array_equal(pieces.theta, whole.theta)
    assert pieces.n_seen == whole.n_seen == 150


@pytest.mark.parametrize("name", REGRESSION_LEARNERS)
def test_registered_as_regression_with_order_as_complexity(name):
    cls = learner_class(name)
    assert cls.name == name and cls.task == "regression" and cls.complexity_param == "order"
    learner = cls(1)
    assert learner.config["order"] == 4 and learner.config["basis"] == "monomial"
    assert (learner.config["domain_low"], learner.config["domain_high"]) == (0.0, 1.0)
    np.testing.assert_array_equal(learner.predict(np.array([[0.3], [0.7]])), [0.0, 0.0])


@pytest.mark.parametrize("name", REGRESSION_LEARNERS)
@pytest.mark.parametrize(
    "params, message",
    [
        ({"step": 1.0}, "unknown parameter 'step'"),
        ({"order": -1}, "below the minimum"),
        ({"order": 2.5}, "whole number"),
        ({"order": "4"}, "expected a number"),
        ({"domain_high": "3"}, "expected a number"),
        ({"basis": "chebyshev"}, "not one of"),
        ({"domain_low": 1.0, "domain_high": 1.0}, "must exceed"),
        ({"domain_low": 2.0, "domain_high": 1.0}, "must exceed"),
    ],
)
def test_bad_common_parameters(name, params, message):
    with pytest.raises(ConfigError, match=message):
        make(name, **params)


@pytest.mark.parametrize(
    "name, params, message",
    [
        ("rls", {"forgetting": 0.0}, "must be above 0"),
        ("rls", {"forgetting": 1.5}, "above the maximum"),
        ("rls", {"tikhonov": 0.0}, "must be above 0"),
        ("rls", {"forgetting": "0.9"}, "expected a number"),
        ("irma", {"stiffness": 0.0}, "must be above 0"),
        ("irma", {"stiffness_growth": -1.0}, "must be above 0"),
        ("ngd", {"eta": 0.0}, "must be above 0"),
        ("ngd", {"eta": 2.5}, "above the maximum"),
        ("ngd", {"tikhonov": -0.1}, "below the minimum"),
        ("ngd", {"eta": 1.0, "tikhonov": 2.0}, "at most 1"),
    ],
)
def test_bad_learner_parameters(name, params, message):
    with pytest.raises(ConfigError, match=message):
        make(name, **params)


@pytest.mark.parametrize("name", REGRESSION_LEARNERS)
def test_only_dense_single_feature_blocks(name):
    with pytest.raises(ConfigError, match="one input"):
        learner_class(name)(2)
    learner = make(name)
    with pytest.raises(ValueError, match="dense"):
        learner.learn(sp.csr_matrix(np.ones((3, 1))), np.ones(3))
    with pytest.raises(ValueError, match="features"):
        learner.learn(np.ones((3, 2)), np.ones(3))
