"""The output hypothesis of a linear conversion: a frozen weight vector."""

from __future__ import annotations

import numpy as np


def linear_hypothesis(w: np.ndarray, info: dict[str, float] | None = None):
    """A :class:`~dolb.learners.base.Hypothesis` predicting ``X @ w`` (decision values)
    with a private copy of ``w``; ``predict.weights`` is that copy."""
    from dolb.learners.base import Hypothesis, as_block  # here: dolb.learners imports us

    w = np.array(w, dtype=np.float64, copy=True)
    w.setflags(write=False)

    def predict(X) -> np.ndarray:
        return np.asarray(as_block(X, w.shape[0]) @ w, dtype=np.float64).reshape(-1)

    predict.weights = w
    return Hypothesis(predict, dict(info or {}))
