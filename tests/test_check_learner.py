"""``dolb.testing.check_learner``: every registered learner follows the protocol, and a
learner that breaks one of its rules is told which, by name."""

import numpy as np
import pytest
import scipy.sparse as sp

from dolb.errors import ConfigError
from dolb.learners import LEARNERS, OnlineLearner, Param
from dolb.learners.peers.sklearn_models import SklearnLearner
from dolb.testing import RULES, LearnerCheckError, check_learner


@pytest.mark.parametrize("name", LEARNERS.names())
def test_every_registered_learner_follows_the_protocol(name):
    """dolb's own learners and any installed plugin's. scikit-learn's peers step once a
    Python call per row (a few milliseconds): they get a short stream."""
    cls = LEARNERS[name]
    if cls.unavailable():  # a peer whose optional library is not installed
        pytest.skip(cls.unavailable())
    if issubclass(cls, SklearnLearner):
        rules = [rule for rule in RULES if rule != "dense and CSR agree"]
        check_learner(cls, checks=rules, n_rows=40)
        if cls.task == "binary":  # see below
            check_learner(cls, {**cls.test_params, "fit_intercept": False}, checks=["dense and CSR agree"], n_rows=40)
    else:
        check_learner(cls)


def test_scikit_learns_peers_learn_an_intercept_otherwise_from_sparse_rows():
    """scikit-learn's SGD scales the intercept's steps by 0.01 on sparse rows (its
    ``SPARSE_INTERCEPT_DECAY``): its peers follow the rule without an intercept only."""
    cls = LEARNERS["sklearn_perceptron"]
    if cls.unavailable():
        pytest.skip(cls.unavailable())
    with pytest.raises(LearnerCheckError, match="rule 'dense and CSR agree' broken"):
        check_learner(cls, checks=["dense and CSR agree"], n_rows=40)


def row(X, i) -> np.ndarray:
    return X[i].toarray().ravel() if sp.issparse(X) else X[i]


class Tiny(OnlineLearner):
    """A Perceptron in NumPy that follows every rule."""

    name = "tiny"
    task = "binary"
    params = {"rate": Param(1.0, above=0.0, doc="step"), "passes": Param(1, int, low=1, high=3, doc="unused")}
    test_params = {"rate": 0.5}

    def __init__(self, n_features, n_train=None, conversions=("last",), **params):
        super().__init__(n_features, n_train, conversions, **params)
        self.w = np.zeros(self.n_features)

    def _learn(self, X, y):
        out = np.empty(y.shape[0])
        for i in range(y.shape[0]):
            x = row(X, i)
            out[i] = x @ self.w
            self.update(x, y[i], out[i])
        return out

    def update(self, x, y, score):
        if y * score <= 0:
            self.w += self.config["rate"] * y * x

    def _predict(self, X):
        return np.asarray(X @ self.w, dtype=np.float64).ravel()

    def state_nbytes(self):
        return self.w.nbytes


class Misdeclared(Tiny):
    name, task = "misdeclared", "classification"


class Lax(Tiny):
    name = "lax"

    @classmethod
    def check_params(cls, params):
        return {"rate": 0.5, "passes": 1, **params}


class Empty(Tiny):
    name = "empty"

    def _learn(self, X, y):
        return list(super()._learn(X, y))


class Noisy(Tiny):
    """Draws from NumPy's global random state."""

    name = "noisy"

    def update(self, x, y, score):
        self.w += 1e-3 * np.random.standard_normal(self.w.shape) * x


class Eager(Tiny):
    """Updates, then predicts."""

    name = "eager"

    def _learn(self, X, y):
        out = np.empty(y.shape[0])
        for i in range(y.shape[0]):
            x = row(X, i)
            self.update(x, y[i], x @ self.w)
            out[i] = x @ self.w
        return out


class Forgetful(Tiny):
    """Loses its weights when pickled."""

    name = "forgetful"

    def __getstate__(self):
        return {**self.__dict__, "w": np.zeros_like(self.w)}


class Curious(Tiny):
    """Moves when asked for its diagnostics."""

    name = "curious"

    def diagnostics(self):
        self.w *= 1.0 + 1e-9
        return {}


class SparseBlind(Tiny):
    """Misses the last column of a CSR row."""

    name = "sparse_blind"

    def _learn(self, X, y):
        if sp.issparse(X):
            X = X.toarray()
            X[:, -1] = 0.0
        return super()._learn(X, y)


class Peeking(Tiny):
    """Semi-supervised, but steps on every target, unlabelled or not."""

    name = "peeking"
    semi_supervised = True

    def _learn(self, X, y, labelled):
        return super()._learn(X, y)


class Uncounted(Tiny):
    name = "uncounted"

    def learn_running(self, X, y, labelled=None, total=0.0):
        return np.cumsum(self.learn(X, y, labelled) * y < 0) + total


class Half(Tiny):
    """Says it feeds averaging, offers the last hypothesis only."""

    name = "half"
    conversions_supported = ("last", "average")


class Sized(Tiny):
    name = "sized"

    def state_nbytes(self):
        return -1


BROKEN = {
    Misdeclared: ("declaration", "Misdeclared must set name and task"),
    Lax: ("parameter checks", "parameter 'rate' (float) took '1.0' without a ConfigError"),
    Empty: ("one finite prediction per row", "learn returned a list, not an array"),
    Noisy: ("determinism", "two learners built alike predict the same stream otherwise"),
    Eager: ("prediction before update", "row 0: learn's prediction is not predict's before learning the row"),
    Forgetful: ("state round-trip", "a learner pickled mid-stream predicts the rest of the stream otherwise"),
    Curious: ("predict leaves the state", "predict after outputs(), diagnostics() and state_nbytes()"),
    SparseBlind: ("dense and CSR agree", "the stream as CSR is predicted otherwise than as dense arrays"),
    Peeking: ("unlabelled targets never read", "dense: other targets on the unlabelled rows change the predictions"),
    Uncounted: ("running loss", "learn_running is not the running loss of learn's predictions"),
    Half: ("outputs", "outputs() gives ['last'], the attached conversions are ['average', 'last']"),
    Sized: ("diagnostics and state size", "before learning: state_nbytes() gives -1, not an int of at least 0"),
}


def test_a_learner_that_follows_every_rule_passes():
    check_learner(Tiny)
    check_learner(Tiny, {"rate": 2.0}, checks=["determinism"], n_rows=100, seed=3)


@pytest.mark.parametrize("cls", BROKEN, ids=lambda cls: cls.name or cls.__name__)
def test_a_broken_learner_is_told_the_rule_it_breaks(cls):
    """Every rule has its learner that breaks it, and only it (the rules before pass)."""
    rule, said = BROKEN[cls]
    with pytest.raises(LearnerCheckError) as caught:
        check_learner(cls)
    assert str(caught.value).startswith(f"learner {cls.name!r}: rule {rule!r} broken: ")
    assert said in str(caught.value)
    assert (caught.value.learner, caught.value.rule) == (cls.name, rule)
    assert isinstance(caught.value, AssertionError)


def test_every_rule_has_a_learner_that_breaks_it():
    assert [rule for rule, _ in BROKEN.values()] == list(RULES)


def test_a_learner_that_raises_breaks_the_rule_it_was_checked_for():
    class Unpicklable(Tiny):  # a class made in a function cannot be pickled
        name = "unpicklable"

    with pytest.raises(LearnerCheckError, match=r"^learner 'unpicklable': rule 'state round-trip' broken: "
                                                r"(AttributeError|PicklingError): .*\(at .*\.py:\d+\)"):
        check_learner(Unpicklable, checks=["state round-trip"])


def test_the_rules_the_parameters_and_the_learner_must_be_fit_to_check(monkeypatch):
    with pytest.raises(ValueError, match="no rule 'determinsm' \\(rules: declaration, "):
        check_learner(Tiny, checks=["determinsm"])
    with pytest.raises(ValueError, match="n_rows must be at least 20, got 10"):
        check_learner(Tiny, n_rows=10)
    with pytest.raises(LearnerCheckError, match="rule 'declaration' broken: ConfigError: learner 'tiny', parameter "
                                                "'rate': must be above 0.0, got -1.0"):
        check_learner(Tiny, {"rate": -1.0})
    monkeypatch.setattr(Tiny, "unavailable", classmethod(lambda cls: "learner 'tiny' needs the package 'x'"))
    with pytest.raises(ConfigError, match="^learner 'tiny' needs the package 'x'$"):
        check_learner(Tiny)
