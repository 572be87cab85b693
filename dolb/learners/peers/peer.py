"""What every peer learner shares: the optional package it wraps, and the example-by-example
loop that turns the library's own predict-then-learn into dolb's ``learn``.

A peer wraps another library's online learner. The library is imported when a learner is
built, never when dolb is imported, so the registry (``dolb learners``, the learner pages)
lists every peer whether or not its library is installed; a pipeline naming a peer whose
library is missing is refused when it is checked (:meth:`PeerLearner.unavailable`).

Examples
--------
>>> import numpy as np, scipy.sparse as sp
>>> [dict(r) for r in sparse_rows(sp.csr_matrix(np.array([[0.0, 2.0], [1.5, 0.0]])))]
[{1: 2.0}, {0: 1.5}]
>>> [dict(r) for r in sparse_rows(np.array([[0.0, 2.0], [1.5, 0.0]]))]
[{1: 2.0}, {0: 1.5}]
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from dolb.learners.base import OnlineLearner

INSTALL = "pip install 'dolb[peers]'"
"""The command that installs every peer library."""


def sparse_rows(X) -> Iterator[dict[int, float]]:
    """The non-zeros of each row of a dense array or CSR matrix, as ``{column: value}``
    (the same dicts for both: a peer sees one stream whatever the storage)."""
    if not sp.issparse(X):
        X = sp.csr_matrix(X)
    indptr, indices, data = X.indptr, X.indices.tolist(), X.data.tolist()
    for start, stop in zip(indptr[:-1].tolist(), indptr[1:].tolist()):
        yield dict(zip(indices[start:stop], data[start:stop]))


class PeerLearner(OnlineLearner):
    """Base of the learners that wrap another library's online learner.

    Subclasses declare ``package`` (the import name of the library) and implement
    :meth:`_model` (a fresh model of the library, from ``self.config``), :meth:`_step`
    (the library's prediction for one row, then its update on it) and :meth:`_predict`.
    Rows reach :meth:`_step` one at a time, in the stream's order, as :meth:`_rows`
    makes them (default: the non-zeros as a dict).
    """

    package: ClassVar[str] = ""
    """The import name of the wrapped library (``river``, ``vowpalwabbit``, ``sklearn``)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.wraps is None:  # the distribution is the package's name unless said otherwise
            cls.wraps = cls.package or None

    def __init__(self, n_features: int, n_train: int | None = None, conversions: tuple[str, ...] = ("last",),
                 **params: Any) -> None:
        super().__init__(n_features, n_train=n_train, conversions=conversions, **params)
        self.model = self._model()

    @classmethod
    def unavailable(cls) -> str | None:
        """One line naming the package to install when the library is missing, else None."""
        if importlib.util.find_spec(cls.package) is not None:
            return None
        return f"learner {cls.name!r} needs the package {cls.package!r}, which is not installed: {INSTALL}"

    def _rows(self, X) -> Iterator[Any]:
        return sparse_rows(X)

    def _learn(self, X, y: np.ndarray) -> np.ndarray:
        predictions = np.empty(y.shape[0])
        for i, (row, target) in enumerate(zip(self._rows(X), y.tolist())):
            predictions[i] = self._step(row, target)
        return predictions

    def _model(self) -> Any:
        raise NotImplementedError

    def _step(self, row: Any, target: float) -> float:
        raise NotImplementedError
