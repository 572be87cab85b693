"""The plugin's own tests: dolb's generic learner checks, and one update worked by hand."""

import numpy as np
import scipy.sparse as sp
from mylearner.arow import DiagonalArow

from dolb.testing import check_learner


def test_diagonal_arow_follows_the_learner_protocol():
    check_learner(DiagonalArow)  # with its test_params, r = 0.5
    check_learner(DiagonalArow, {"r": 10.0}, checks=["dense and CSR agree"])


def test_one_update_by_hand():
    """x = (1, 2), y = 1, r = 1: m = 0, v = 5, β = 1/6, α = 1/6; w = Σx/6, Σ = 1 − (Σx)²/6."""
    learner = DiagonalArow(2, r=1.0)
    X = sp.csr_matrix([[1.0, 2.0]])
    assert learner.learn(X, np.array([1.0])).tolist() == [0.0]
    np.testing.assert_allclose(learner.mean, [1 / 6, 2 / 6])
    np.testing.assert_allclose(learner.confidence, [5 / 6, 2 / 6])
