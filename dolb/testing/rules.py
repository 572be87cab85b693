"""The rules :func:`dolb.testing.check_learner` checks, one function each, by name
(:data:`CHECKS`), and the streams they run on (:func:`learner_stream`).

Each check takes a :class:`Subject` (the class, its parameters, the stream) and raises
``AssertionError`` saying what differed; ``check_learner`` names the rule and the
learner around it.
"""

from __future__ import annotations

import itertools
import numbers
import pickle
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from dolb.errors import ConfigError
from dolb.learners.base import Hypothesis, OnlineLearner, Param, declaration_problem
from dolb.losses import RUNNING_LOSS

CLOSE = {"rtol": 1e-9, "atol": 1e-12}
"""How near ``learn``'s prediction of a row and ``predict``'s must be."""


def learner_stream(task: str, n: int = 160, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A small stream ``(X, y)`` for the generic tests: for ``"binary"``, ten features,
    rows of norm at most 1 (about 40 % zeros), targets −1/+1 of a linear rule with 10 %
    flipped; for ``"regression"``, one input in [0, 1] and a noisy sine of it.

    Examples
    --------
    >>> X, y = learner_stream("binary", n=5)
    >>> X.shape, sorted(set(y.tolist())), bool(np.linalg.norm(X, axis=1).max() <= 1.0)
    ((5, 10), [-1.0, 1.0], True)
    >>> learner_stream("regression", n=3)[0].shape
    (3, 1)
    """
    rng = np.random.default_rng(seed)
    if task == "regression":
        x = rng.uniform(0.0, 1.0, (n, 1))
        return x, np.sin(3.0 * x[:, 0]) + 0.1 * rng.normal(size=n)
    X = rng.normal(size=(n, 10)) * (rng.random((n, 10)) < 0.6)
    X /= np.maximum(np.linalg.norm(X, axis=1), 1e-12)[:, None]
    y = np.where(X @ rng.normal(size=10) > 0, 1.0, -1.0)
    y[rng.random(n) < 0.1] *= -1.0
    return X, y


@dataclass
class Subject:
    """A learner class under check: how it is built and what it is fed."""

    cls: type[OnlineLearner]
    params: dict[str, Any]
    n: int
    seed: int
    sparse_tolerance: float | None
    X: np.ndarray = field(init=False)
    y: np.ndarray = field(init=False)
    cut: int = field(init=False)
    """Where the stream is cut into its two blocks."""
    learner: OnlineLearner | None = field(init=False, default=None)
    """The learner of :meth:`reference`, once made."""
    _reference: tuple | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.X, self.y = learner_stream(self.cls.task, self.n, self.seed)
        self.cut = self.n * 7 // 16

    @property
    def binary(self) -> bool:
        return self.cls.task == "binary"

    def make(self) -> OnlineLearner:
        """A fresh learner, every conversion it supports attached."""
        return self.cls(self.X.shape[1], n_train=self.n, conversions=self.cls.conversions_supported, **self.params)

    def blocks(self) -> list[slice]:
        """The two blocks the stream is fed in."""
        return [slice(0, self.cut), slice(self.cut, self.n)]

    def fed(self, learner: OnlineLearner, X=None) -> np.ndarray:
        """``learner`` fed the stream (its rows as ``X`` if given: CSR) in its two blocks;
        its predictions."""
        X = self.X if X is None else X
        return np.concatenate([learner.learn(X[b], self.y[b]) for b in self.blocks()])

    def reference(self) -> tuple[np.ndarray, tuple]:
        """A fresh learner's predictions of the stream fed in its two blocks, and what it
        shows after (:func:`seen`); computed once (the learner is kept as ``learner``)."""
        if self._reference is None:
            self.learner = self.make()
            self._reference = self.fed(self.learner), seen(self.learner, self.X)
        return self._reference


def same(got, want, what: str) -> None:
    """AssertionError unless ``got`` and ``want`` hold the same bits."""
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want), err_msg=what, strict=True)


def seen(learner: OnlineLearner, X) -> tuple:
    """What a learner shows now, to compare bit for bit: each output's predictions on
    ``X`` and info, and its diagnostics."""
    outputs = {name: (h.predict(X), dict(h.info)) for name, h in learner.outputs().items()}
    return outputs, learner.diagnostics()


def same_shown(got: tuple, want: tuple, what: str) -> None:
    """AssertionError unless two :func:`seen` show the same bits."""
    (outputs, diagnostics), (expected, expected_diagnostics) = got, want
    assert outputs.keys() == expected.keys(), f"{what}: outputs {sorted(outputs)} != {sorted(expected)}"
    for name, (scores, info) in outputs.items():
        same(scores, expected[name][0], f"{what}: output {name!r} predicts otherwise")
        assert info == expected[name][1], f"{what}: output {name!r} info {info} != {expected[name][1]}"
    assert diagnostics == expected_diagnostics, f"{what}: diagnostics {diagnostics} != {expected_diagnostics}"


def declaration(s: Subject) -> None:
    problem = declaration_problem(s.cls)
    assert problem is None, problem
    assert isinstance(s.cls.semi_supervised, bool), "semi_supervised must be true or false"
    s.cls.check_params(s.params)
    if s.cls.bench_params is not None:
        s.cls.check_params(s.cls.bench_params)


def bad_values(param: Param) -> list[Any]:
    """Values the declaration of ``param`` forbids."""
    if param.kind is bool:
        return ["yes", 1]
    if param.kind is str:
        return [1.5] + ([f"not {' or '.join(param.choices)}"] if param.choices else [])
    bad = ["1.0", None, True]
    step = 1 if param.kind is int else 0.5
    if param.kind is int:
        bad.append(1.5)
    if param.low is not None:
        bad.append(param.low - step)
    if param.high is not None:
        bad.append(param.high + step)
    if param.above is not None:
        bad.append(param.kind(param.above))
    return bad


def parameter_checks(s: Subject) -> None:
    for name, param in s.cls.params.items():
        for value in bad_values(param):
            try:
                s.cls.check_params({**s.params, name: value})
            except ConfigError:
                continue
            raise AssertionError(f"parameter {name!r} ({param.kind.__name__}) took {value!r} without a ConfigError")


def one_prediction_per_row(s: Subject) -> None:
    learner = s.make()
    for block in s.blocks():
        predictions = learner.learn(s.X[block], s.y[block])
        rows = block.stop - block.start
        assert isinstance(predictions, np.ndarray), f"learn returned a {type(predictions).__name__}, not an array"
        assert predictions.dtype == np.float64 and predictions.shape == (rows,), (
            f"learn returned {predictions.dtype} {predictions.shape} for a block of {rows} rows, not float64 ({rows},)")
        assert np.isfinite(predictions).all(), f"learn returned {np.sum(~np.isfinite(predictions))} values not finite"
        assert learner.n_seen == block.stop, f"n_seen is {learner.n_seen} after {block.stop} rows"


def prediction_before_update(s: Subject) -> None:
    if s.cls.refits_per_block:  # the fit before a block predicts the whole block
        cuts = [0, s.cut, s.n]
    else:
        cuts = sorted({0, 1, s.cut // 2, s.cut, s.n - 1, s.n})
    learner, predictions = s.make(), []
    for a, b in itertools.pairwise(cuts):
        before = learner.predict(s.X[a:a + 1])
        predictions.append(learner.learn(s.X[a:b], s.y[a:b]))
        np.testing.assert_allclose(predictions[-1][:1], before, **CLOSE,
                                   err_msg=f"row {a}: learn's prediction is not predict's before learning the row")
    if s.cls.refits_per_block:
        return
    reference, _ = s.reference()  # cut elsewhere: rows inside a block are predicted before their update too
    for a in cuts[:-1]:
        np.testing.assert_allclose(reference[a], np.concatenate(predictions)[a], **CLOSE,
                                   err_msg=f"row {a}: learn's prediction inside a block is not predict's before it")


def determinism(s: Subject) -> None:
    learner = s.make()
    reference, shown = s.reference()
    same(s.fed(learner), reference, "two learners built alike predict the same stream otherwise")
    same_shown(seen(learner, s.X), shown, "two learners built alike, after the same stream")


def state_round_trip(s: Subject) -> None:
    first, second = s.blocks()
    stopped = s.make()
    before = stopped.learn(s.X[first], s.y[first])
    resumed = pickle.loads(pickle.dumps(stopped, protocol=pickle.HIGHEST_PROTOCOL))
    assert resumed.n_seen == stopped.n_seen, f"n_seen {resumed.n_seen} after loading, {stopped.n_seen} before"
    reference, (outputs, _) = s.reference()
    same(np.concatenate([before, resumed.learn(s.X[second], s.y[second])]), reference,
         "a learner pickled mid-stream predicts the rest of the stream otherwise")
    # diagnostics count work done (kernel evaluations), which a cache emptied by pickling redoes
    same_shown((seen(resumed, s.X)[0], {}), (outputs, {}), "a learner pickled mid-stream, at the end")


def predict_leaves_the_state(s: Subject) -> None:
    first, second = s.blocks()
    asked = s.make()
    before = asked.learn(s.X[first], s.y[first])
    once = asked.predict(s.X)
    if s.binary:
        asked.predict(sp.csr_matrix(s.X))
    same(asked.predict(s.X), once, "predict twice on the same rows")
    seen(asked, s.X)
    asked.state_nbytes()
    same(asked.predict(s.X), once, "predict after outputs(), diagnostics() and state_nbytes()")
    reference, shown = s.reference()
    same(np.concatenate([before, asked.learn(s.X[second], s.y[second])]), reference,
         "a learner asked to predict (and for its outputs) between two blocks learns the second otherwise")
    same_shown(seen(asked, s.X), shown, "a learner asked to predict between two blocks, at the end")


def dense_and_csr_agree(s: Subject) -> None:
    if not s.binary:  # dolb's regression learners take dense blocks of one input
        return
    sparse = s.make()
    got, shown = s.fed(sparse, sp.csr_matrix(s.X)), seen(sparse, s.X)
    want, expected = s.reference()
    if s.sparse_tolerance is None:
        same(got, want, "the stream as CSR is predicted otherwise than as dense arrays")
        same_shown(shown, expected, "after the stream as CSR and as dense arrays")
        return
    close = {"rtol": s.sparse_tolerance, "atol": s.sparse_tolerance / 1000}
    np.testing.assert_allclose(got, want, **close, err_msg="the stream as CSR is predicted otherwise than as dense")
    for name, (scores, _) in shown[0].items():
        np.testing.assert_allclose(scores, expected[0][name][0], **close,
                                   err_msg=f"output {name!r} after the stream as CSR and as dense arrays")


def unlabelled_targets_never_read(s: Subject) -> None:
    labelled = np.random.default_rng(s.seed + 2).random(s.n) < 0.3
    labelled[:3] = False
    corrupted = np.where(labelled, s.y, np.nan)
    for X in [s.X] + ([sp.csr_matrix(s.X)] if s.binary else []):
        what = "CSR" if sp.issparse(X) else "dense"
        learner = s.make()
        predictions = np.concatenate([learner.learn(X[b], corrupted[b], labelled[b]) for b in s.blocks()])
        assert np.isfinite(predictions).all(), f"{what}: predictions turned NaN: an unlabelled target was read"
        assert learner.n_seen == s.n, f"{what}: n_seen is {learner.n_seen} after {s.n} rows"
        alone = s.make()
        if s.cls.semi_supervised:  # the same blocks: a batch learner refits once a block
            flipped = np.where(labelled, s.y, -s.y)
            again = np.concatenate([alone.learn(X[b], flipped[b], labelled[b]) for b in s.blocks()])
            same(predictions, again, f"{what}: other targets on the unlabelled rows change the predictions")
        else:
            same(predictions[labelled], alone.learn(X[labelled], s.y[labelled]),
                 f"{what}: a supervised learner is not the one fed its labelled rows alone")
        same_shown(seen(learner, s.X), seen(alone, s.X), f"{what}: after the stream with unlabelled rows")
        if s.cls.refits_per_block:
            continue
        i = s.n // 2 + int(np.argmin(labelled[s.n // 2:]))  # an unlabelled row, predicted with what came before
        probe = s.make()
        probe.learn(X[:i], corrupted[:i], labelled[:i])
        np.testing.assert_allclose(predictions[i], probe.predict(X[i:i + 1])[0], **CLOSE,
                                   err_msg=f"{what}: unlabelled row {i} is not predicted by the hypothesis before it")


def running_loss(s: Subject) -> None:
    counting, reference = s.make(), s.reference()[0]
    total = 2.5
    for block in s.blocks():
        running = counting.learn_running(s.X[block], s.y[block], total=total)
        want = RUNNING_LOSS[s.cls.task](reference[block], s.y[block], total)
        same(running, want, "learn_running is not the running loss of learn's predictions")
        total = running[-1]


def outputs(s: Subject) -> None:
    s.reference()
    learner = s.learner
    found = learner.outputs()
    assert isinstance(found, dict) and sorted(found) == sorted(learner.conversions), (
        f"outputs() gives {sorted(found) if isinstance(found, dict) else type(found).__name__}, "
        f"the attached conversions are {sorted(learner.conversions)}")
    for name, hypothesis in found.items():
        assert isinstance(hypothesis, Hypothesis), f"output {name!r} is a {type(hypothesis).__name__}, not a Hypothesis"
        for X in [s.X] + ([sp.csr_matrix(s.X)] if s.binary else []):
            scores = hypothesis.predict(X)
            assert isinstance(scores, np.ndarray) and scores.dtype == np.float64 and scores.shape == (s.n,), (
                f"output {name!r} predicts {type(scores).__name__} {getattr(scores, 'shape', '')} for {s.n} rows")
            assert np.isfinite(scores).all(), f"output {name!r} predicts values not finite"
        assert all(isinstance(v, numbers.Real) for v in hypothesis.info.values()), (
            f"output {name!r} info holds what is no number: {hypothesis.info}")


def diagnostics_and_state_size(s: Subject) -> None:
    learner = s.make()
    for when in ("before learning", "after the stream"):
        diagnostics = learner.diagnostics()
        assert isinstance(diagnostics, dict) and all(
            isinstance(k, str) and isinstance(v, float) for k, v in diagnostics.items()), (
            f"{when}: diagnostics() gives {diagnostics!r}, not names to floats")
        size = learner.state_nbytes()
        assert isinstance(size, numbers.Integral) and not isinstance(size, bool) and size >= 0, (
            f"{when}: state_nbytes() gives {size!r}, not an int of at least 0")
        s.fed(learner)


CHECKS: dict[str, Callable[[Subject], None]] = {
    "declaration": declaration,
    "parameter checks": parameter_checks,
    "one finite prediction per row": one_prediction_per_row,
    "determinism": determinism,
    "prediction before update": prediction_before_update,
    "state round-trip": state_round_trip,
    "predict leaves the state": predict_leaves_the_state,
    "dense and CSR agree": dense_and_csr_agree,
    "unlabelled targets never read": unlabelled_targets_never_read,
    "running loss": running_loss,
    "outputs": outputs,
    "diagnostics and state size": diagnostics_and_state_size,
}
"""Every rule's check, by name, in the order :func:`~dolb.testing.check_learner` runs them."""
