"""Online model selection: the switch test against hand-computed values and SciPy's
Welch t-test, and the OMS driver on scripted machines whose mistakes are known."""

import math
from typing import ClassVar

import numpy as np
import pytest
from scipy import stats

from dolb.errors import ConfigError
from dolb.learners.base import OnlineLearner, Param
from dolb.selection.oms import CV_STARTS, oms_learner
from dolb.selection.welch import LossTally, should_switch, welch_p_value

# --------------------------------------------------------------------------- the test


def test_the_hand_computed_case():
    """40 examples, 12 and 4 mistakes: Var = 40·0.3·0.7/39 and 40·0.1·0.9/39,
    t = 0.2 / sqrt(0.307692/40) = 2.28035, ν = 39·0.307692² / (0.215385² + 0.092308²)
    = 67.2414, p = P(T_67.24 ≥ 2.28035) = 0.012881."""
    tally = LossTally(n=40, wrong=(12, 4))
    assert tally.variance(0) == pytest.approx(0.2153846154, abs=1e-10)
    assert tally.variance(1) == pytest.approx(0.0923076923, abs=1e-10)
    p = welch_p_value(tally.mean(0), tally.variance(0), tally.mean(1), tally.variance(1), tally.n)
    assert p == pytest.approx(0.0128814689, abs=1e-9)
    assert should_switch(tally, level=0.1) and not should_switch(tally, level=0.01)


@pytest.mark.parametrize("seed", range(6))
def test_the_p_value_is_scipys_welch_test(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 300))
    first = (rng.random(n) < rng.uniform(0.1, 0.6)).astype(int)
    second = (rng.random(n) < rng.uniform(0.05, 0.4)).astype(int)
    tally = LossTally()
    for a, b in zip(first, second):
        tally.add(int(a), int(b))
    if first.var() + second.var() == 0:
        pytest.skip("both sequences constant")
    reference = stats.ttest_ind(first, second, equal_var=False, alternative="greater")
    ours = welch_p_value(tally.mean(0), tally.variance(0), tally.mean(1), tally.variance(1), tally.n)
    assert ours == pytest.approx(reference.pvalue, rel=1e-9)


@pytest.mark.parametrize("n, wrong, switch", [
    (30, (30, 0), True),     # zero variance: switch iff Err₂ < Err₁
    (30, (0, 0), False),
    (30, (30, 30), False),
    (30, (0, 30), False),    # Err₂ > Err₁: never
    (29, (29, 0), False),    # below the minimum N: no test
    (100, (50, 50), False),  # equal errors: t = 0, p = 1/2
])
def test_the_rules_that_make_the_test_total(n, wrong, switch):
    assert should_switch(LossTally(n=n, wrong=wrong), level=0.1, min_n=30) is switch


# --------------------------------------------------------------------------- the driver

N_EXAMPLES = 400
LABELS = np.where(np.random.default_rng(0).random(N_EXAMPLES) < 0.5, -1.0, 1.0)
FEATURES = np.column_stack([np.arange(N_EXAMPLES, dtype=float), np.ones(N_EXAMPLES)])


class Scripted(OnlineLearner):
    """A machine whose mistakes are scripted by its level: it errs on example i (its
    first feature) when ``WRONG[level][i]``. Records what it learned and warm starts."""

    name = "scripted"
    task = "binary"
    params: ClassVar = {"level": Param(1, int, low=1), "gamma": Param(1.0, float, above=0.0)}
    complexity_param = "level"
    WRONG: ClassVar[dict] = {}
    warm_starts: ClassVar[list] = []

    def _predict(self, X):
        index = X[:, 0].astype(int)
        wrong = self.WRONG.get(self.config["level"], np.zeros(N_EXAMPLES, bool))[index]
        return np.where(wrong, -LABELS[index], LABELS[index])

    def _learn(self, X, y):
        return self._predict(X)

    @classmethod
    def warm_started(cls, other, **params):
        cls.warm_starts.append((other.config["level"], params["level"]))
        return cls(other.n_features, **params)


OMS = oms_learner(Scripted)


@pytest.fixture
def script():
    Scripted.WRONG = {}
    Scripted.warm_starts = []
    return Scripted.WRONG


def test_a_machine_always_wrong_gives_way_after_min_n(script):
    script[1] = np.ones(N_EXAMPLES, bool)  # level 1 always wrong, 2 and 3 always right
    learner = OMS(2, ladder="step", min_n=30)
    predictions = learner.learn(FEATURES[:100], LABELS[:100])
    assert learner.switches == [30] and learner.level == 2
    assert Scripted.warm_starts == [(2, 3)]  # the new machine 2 starts from the promoted one
    assert np.all(predictions[:30] == -LABELS[:30]) and np.all(predictions[30:] == LABELS[30:100])
    assert learner.diagnostics() | {} == {"oms_level": 2.0, "oms_value": 2.0, "oms_start": 1.0,
                                          "oms_switches": 1.0, "oms_switch_1_n": 30.0}


def first_switch_by_scipy(wrong_1: np.ndarray, wrong_2: np.ndarray, level: float, min_n: int) -> int | None:
    """Number of examples after which OMS switches, scanned with SciPy's t-test."""
    for n in range(min_n, len(wrong_1) + 1):
        a, b = wrong_1[:n].astype(float), wrong_2[:n].astype(float)
        if b.mean() > a.mean():
            continue
        if a.var() + b.var() == 0:
            if b.mean() < a.mean():
                return n
            continue
        if stats.ttest_ind(a, b, equal_var=False, alternative="greater").pvalue < level:
            return n
    return None


@pytest.mark.parametrize("seed", range(3))
def test_switch_points_equal_a_scan_with_scipy(script, seed):
    rng = np.random.default_rng(seed)
    for level, rate in ((1, 0.35), (2, 0.2), (3, 0.12), (4, 0.12)):
        script[level] = rng.random(N_EXAMPLES) < rate
    learner = OMS(2, ladder="step", min_n=30, p_value=0.1)
    for start in range(0, N_EXAMPLES, 64):  # blocks of any size: switches fall where they fall
        learner.learn(FEATURES[start : start + 64], LABELS[start : start + 64])
    expected, offset, level = [], 0, 1
    while True:
        found = first_switch_by_scipy(script[level][offset:], script[level + 1][offset:], 0.1, 30)
        if found is None or level + 2 > 12:
            break
        offset += found
        expected.append(offset)
        level += 1
    assert learner.switches == expected and expected  # at least one switch happens


def test_the_double_ladder_and_its_cross_validated_start(script):
    """The machine at gamma = 0.016 is the only one right on the first examples: the
    cross-validation picks it, and the ladder doubles from there."""

    class ByGamma(Scripted):
        name = "by_gamma"
        complexity_param = "gamma"

        def _predict(self, X):
            index = X[:, 0].astype(int)
            right = math.isclose(self.config["gamma"], 0.016)
            return np.where(right, LABELS[index], -LABELS[index])

    learner = oms_learner(ByGamma)(2, ladder="double", start=0.0, cv_examples=50)
    learner.learn(FEATURES[:60], LABELS[:60])
    assert learner.start == 0.016 and 0.016 in CV_STARTS
    assert learner.value_at(3) == pytest.approx(0.064)


def test_bad_oms_parameters_are_one_line():
    with pytest.raises(ConfigError, match=r"learner 'oms_scripted', parameter 'ladder_param': 'nope' is not a "):
        OMS(2, ladder_param="nope")
    with pytest.raises(ConfigError, match=r"parameter 'max_level': 1 is below the minimum 2"):
        OMS(2, max_level=1)
    with pytest.raises(ConfigError, match=r"parameter 'max_level': a ladder needs two rungs, level_start \+ 1 = 5 > "):
        OMS(2, ladder="step", level_start=4, max_level=4)
    with pytest.raises(ConfigError, match=r"parameter 'level': set by the ladder"):
        OMS(2, ladder="step", level=3)
    with pytest.raises(ConfigError, match=r"parameter 'p_value': must be above 0.0"):
        OMS(2, ladder="step", p_value=0.0)
    with pytest.raises(ConfigError, match=r"^learner 'oms_scripted', parameter 'ladder': 'double' sets start·2\^\(level−1\), "
                                          r"not the whole number 'level' takes; use ladder = \"step\"$"):
        OMS(2, ladder="double")
    assert OMS(2, ladder="double", ladder_param="gamma", start=0.5).value_at(3) == 2.0  # a float climbs by doubling
    with pytest.raises(TypeError, match="OMS selects among binary classifiers"):
        oms_learner(type("Reg", (Scripted,), {"task": "regression"}))


def test_the_registered_oms_learners_examples_run():
    """The docstring of a generated class lives outside any module's namespace, where
    pytest's doctest collection does not look: run it here."""
    import doctest

    from dolb.learners import LEARNERS

    cls = LEARNERS["oms_lasvm"]
    test = doctest.DocTestParser().get_doctest(cls.__doc__, {}, cls.name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.summarize(verbose=False) == (0, 8)
