"""The output hypothesis of a linear conversion: a frozen weight vector."""

from __future__ import annotations

import numpy as np


class LinearPredictor:
    """``predict(X) = X @ w`` (decision values) for a private, read-only copy ``weights``
    of w; dense or CSR ``X``. Picklable."""

    def __init__(self, w: np.ndarray) -> None:
        self.weights = np.array(w, dtype=np.float64, copy=True)
        self.weights.setflags(write=False)

    def __call__(self, X) -> np.ndarray:
        from dolb.learners.base import as_block  # here: dolb.learners imports us

        return np.asarray(as_block(X, self.weights.shape[0]) @ self.weights, dtype=np.float64).reshape(-1)

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.weights.setflags(write=False)


def linear_hypothesis(w: np.ndarray, info: dict[str, float] | None = None):
    """A :class:`~dolb.learners.base.Hypothesis` predicting with ``LinearPredictor(w)``;
    ``hypothesis.predict.weights`` is its copy of w."""
    from dolb.learners.base import Hypothesis

    return Hypothesis(LinearPredictor(w), dict(info or {}))


class OwnedByLearner:
    """Base of the conversion states: a weak reference to the learner that feeds them
    (no reference cycle, so a learner's arrays are freed as soon as it is dropped);
    :meth:`bind` restores it after unpickling."""

    def bind(self, learner) -> None:
        import weakref

        self._owner = weakref.ref(learner)

    @property
    def learner(self):
        return self._owner()

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_owner", None)
        return state
