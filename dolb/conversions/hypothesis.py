"""What a learner offers at a checkpoint: an output hypothesis, and the blocks it
predicts on; the output of every linear conversion is a frozen weight vector."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dolb.data.blocks import as_block


@dataclass(frozen=True)
class Hypothesis:
    """An output hypothesis: what a learner (through an online-to-batch conversion)
    offers at a checkpoint.

    Attributes
    ----------
    predict : callable
        ``predict(X) -> ndarray`` of regression values or decision values.
    info : dict
        Numbers the conversion reports with its output (e.g. the chosen cutoff ``k``
        and the value of its risk bound); recorded as metrics named ``<key>``.
    """

    predict: Callable[[Any], np.ndarray]
    info: dict[str, float] = field(default_factory=dict)


class LinearPredictor:
    """``predict(X) = X @ w`` (decision values) for a private, read-only copy ``weights``
    of w; dense or CSR ``X``. Picklable.

    >>> LinearPredictor(np.array([1.0, -1.0]))(np.array([[3.0, 1.0]]))
    array([2.])
    """

    def __init__(self, w: np.ndarray) -> None:
        self.weights = np.array(w, dtype=np.float64, copy=True)
        self.weights.setflags(write=False)

    def __call__(self, X) -> np.ndarray:
        return np.asarray(as_block(X, self.weights.shape[0]) @ self.weights, dtype=np.float64).reshape(-1)

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.weights.setflags(write=False)


def linear_hypothesis(w: np.ndarray, info: dict[str, float] | None = None) -> Hypothesis:
    """A :class:`Hypothesis` predicting with ``LinearPredictor(w)``;
    ``hypothesis.predict.weights`` is its copy of w."""
    return Hypothesis(LinearPredictor(w), dict(info or {}))
