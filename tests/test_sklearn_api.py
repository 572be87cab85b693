"""The scikit-learn estimator around the linear online classifiers."""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.model_selection import cross_val_score
from sklearn.utils.estimator_checks import check_estimator

from dolb.errors import ConfigError
from dolb.learners import learner_class
from dolb.sklearn import OnlineClassifier


def data(n=200, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1)[:, None]
    y = np.where(X @ rng.normal(size=d) > 0, "spam", "ham")
    return X, y


@pytest.mark.parametrize(
    "estimator",
    [
        OnlineClassifier(),
        OnlineClassifier("pa", conversion="cutoff", variant="pa2", C=0.5),
        OnlineClassifier("margin_perceptron", conversion="suffix", n_train=1000, radius=1e6),
        OnlineClassifier("ftrl", conversion="average", l1=0.01),
    ],
    ids=["perceptron", "pa2-cutoff", "margin-suffix", "ftrl-average"],
)
def test_sklearn_estimator_checks(estimator):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(estimator, on_fail=None)
    failed = {r["check_name"]: str(r["exception"]) for r in results if r["status"] == "failed"}
    assert len(results) > 40 and not failed


def test_params_round_trip_and_clone():
    est = OnlineClassifier("sgd", conversion="average", alpha=0.01, loss="logistic")
    assert est.get_params() == {
        "learner": "sgd", "conversion": "average", "n_train": None, "alpha": 0.01, "loss": "logistic"
    }
    twin = clone(est)
    assert twin is not est and twin.get_params() == est.get_params()
    est.set_params(alpha=0.1, eta0=0.2, conversion="cutoff")
    assert est.get_params()["alpha"] == 0.1 and est.get_params()["eta0"] == 0.2
    assert est.conversion == "cutoff" and twin.get_params()["alpha"] == 0.01
    with pytest.raises(ValueError, match="Invalid parameter"):
        OnlineClassifier().set_params(**{"learner__x": 1})


def test_fit_is_one_pass_of_the_learner_with_labels_mapped():
    X, y = data()
    est = OnlineClassifier("pa", conversion="longest_survivor", variant="pa1", C=0.2).fit(X, y)
    np.testing.assert_array_equal(est.classes_, ["ham", "spam"])
    learner = learner_class("pa")(
        X.shape[1], n_train=len(y), conversions=("longest_survivor",), variant="pa1", C=0.2
    )
    learner.learn(X, np.where(y == "spam", 1.0, -1.0))
    w = learner.outputs()["longest_survivor"].predict.weights
    np.testing.assert_array_equal(est.coef_, w[None, :])
    np.testing.assert_allclose(est.decision_function(X), X @ w, rtol=1e-12)
    np.testing.assert_array_equal(est.predict(X), np.where(X @ w > 0, "spam", "ham"))
    assert est.info_ == learner.outputs()["longest_survivor"].info
    assert est.score(X, y) > 0.8


def test_partial_fit_equals_fit_and_needs_classes():
    X, y = data(seed=1)
    whole = OnlineClassifier("perceptron", conversion="cutoff").fit(X, y)
    part = OnlineClassifier("perceptron", conversion="cutoff", n_train=len(y))
    with pytest.raises(ValueError, match="classes must be passed"):
        part.partial_fit(X[:10], y[:10])
    part.partial_fit(X[:70], y[:70], classes=["spam", "ham"])
    part.partial_fit(sp.csr_matrix(X[70:]), y[70:])
    np.testing.assert_allclose(part.coef_, whole.coef_, rtol=1e-12)
    assert part.info_ == pytest.approx(whole.info_, nan_ok=True)  # N_k, L̂_k of survival times never reached: NaN
    with pytest.raises(ValueError, match="not in classes"):
        part.partial_fit(X[:2], np.array(["ham", "eggs"]))
    with pytest.raises(ValueError, match="differ from the first call"):
        part.partial_fit(X[:2], y[:2], classes=["a", "b"])


def test_sparse_and_dense_fit_agree():
    X, y = data(seed=2)
    a = OnlineClassifier("adagrad", conversion="suffix").fit(X, y)
    b = OnlineClassifier("adagrad", conversion="suffix").fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-12)
    np.testing.assert_array_equal(a.predict(sp.csr_matrix(X)), b.predict(X))


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"learner": "nope"}, "unknown learner 'nope'"),
        ({"learner": "irma"}, "is a regression learner"),
        ({"conversion": "median"}, "unknown conversion 'median'"),
        ({"learner": "pa", "C": -1.0}, "must be above 0"),
        ({"learner": "pa", "variant": "pa9"}, "not one of pa, pa1, pa2"),
        ({"learner": "perceptron", "eta0": 2.0}, "unknown parameter 'eta0'"),
    ],
)
def test_bad_parameters_are_value_errors_when_fitting(kwargs, message):
    X, y = data()
    est = OnlineClassifier(**kwargs)  # sklearn convention: nothing is checked before fit
    with pytest.raises(ValueError, match=message) as info:
        est.fit(X, y)
    if kwargs.get("conversion") != "median":
        assert isinstance(info.value.__cause__, ConfigError)


def test_margin_perceptron_horizon():
    X, y = data()
    est = OnlineClassifier("margin_perceptron", radius=1.0).fit(X, y)  # fit: n_train = rows
    assert est.learner_.n_train == len(y)
    with pytest.raises(ValueError, match="needs the horizon"):
        OnlineClassifier("margin_perceptron").partial_fit(X, y, classes=["ham", "spam"])


def test_two_classes_only():
    X, _ = data()
    with pytest.raises(ValueError, match="Only binary classification is supported.*got 3 classes"):
        OnlineClassifier().fit(X[:3], ["a", "b", "c"])
    with pytest.raises(ValueError, match="got 3 classes"):
        OnlineClassifier().partial_fit(X[:3], ["a", "b", "c"], classes=["a", "b", "c"])


def test_pickle_and_cross_validation():
    X, y = data(seed=3)
    est = OnlineClassifier("dual_averaging", conversion="cutoff", eta=0.5).fit(X, y)
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.decision_function(X), est.decision_function(X))
    again.partial_fit(X[:5], y[:5])  # the unpickled learner goes on learning
    scores = cross_val_score(OnlineClassifier("ogd", conversion="average"), X, y, cv=3)
    assert scores.shape == (3,) and scores.min() > 0.7


def test_docstring_example():
    import doctest

    import dolb.sklearn

    result = doctest.testmod(dolb.sklearn)
    assert result.attempted > 0 and result.failed == 0
