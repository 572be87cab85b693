"""Vowpal Wabbit as a dolb learner (in-process ``vowpalwabbit.Workspace``, the optional
extra ``peers``).

Each row becomes a VW text example, ``"<label> | <column>:<value> ..."`` over its non-zeros
(dense and CSR blocks give the same text; a feature's name is its column number, which VW
hashes into ``2**bits`` weights). The workspace learns it once (one pass, no cache file),
and the prediction VW made before its update is the row's score. A checkpoint scores
the test rows with ``predict``, which does not learn.

Examples
--------
>>> import numpy as np
>>> vw_line([0, 2], [0.5, 2.0], -1.0)
'-1 | 0:0.5 2:2.0'
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from typing import Any

import numpy as np
import scipy.sparse as sp

from dolb.learners.base import Param, register
from dolb.learners.peers.peer import PeerLearner


def vw_line(columns: list[int], values: list[float], label: float | None = None) -> str:
    """A VW text example over the given non-zeros; no label: one to predict only."""
    features = " ".join(f"{j}:{v!r}" for j, v in zip(columns, values))
    head = "" if label is None else f"{label:g} "
    return f"{head}| {features}"


def vw_rows(X) -> Iterator[tuple[list[int], list[float]]]:
    """The (columns, values) of the non-zeros of each row of a dense array or CSR matrix."""
    X = X if sp.issparse(X) else sp.csr_matrix(X)
    indptr, indices, data = X.indptr.tolist(), X.indices.tolist(), X.data.tolist()
    for start, stop in zip(indptr[:-1], indptr[1:]):
        yield indices[start:stop], data[start:stop]


@register
class VW(PeerLearner):
    """Vowpal Wabbit (Langford et al., https://vowpalwabbit.org): online gradient descent on
    the hinge, logistic or squared loss, by default with VW's adaptive, normalised and
    importance-invariant update (Karampatziakis & Langford, "Online importance weight
    aware updates", UAI 2011; Ross, Mineiro & Langford, "Normalized online learning",
    UAI 2013), or plain SGD (``sgd = true``); learning rate η_t = ``learning_rate`` ·
    (t₀ / (t₀ + t))^``power_t`` as VW's ``-l`` and ``--power_t``; one pass.

    A score is VW's raw prediction, a 32-bit float (VW keeps its weights in float32).

    Examples
    --------
    >>> learner = VW(2, loss="hinge")
    >>> learner.learn(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([1.0, -1.0])).tolist()
    [0.0, 0.3535533845424652]
    >>> learner.arguments()
    '--quiet --loss_function hinge -l 0.5 --power_t 0.5 --l2 0.0 -b 18'
    """

    name = "vw"
    task = "binary"
    package = "vowpalwabbit"
    params = {
        "loss": Param("logistic", str, choices=("hinge", "logistic", "squared"), doc="VW's --loss_function"),
        "learning_rate": Param(0.5, above=0.0, doc="VW's -l, always passed (VW alone takes 10 with --sgd)"),
        "power_t": Param(0.5, low=0.0, high=1.0, doc="VW's --power_t, the decay exponent of the learning rate"),
        "l2": Param(0.0, low=0.0, doc="VW's --l2 penalty"),
        "sgd": Param(False, bool, doc="plain SGD (VW's --sgd) instead of the adaptive, normalised, invariant update"),
        "bias": Param(True, bool, doc="VW's constant feature; false: --noconstant"),
        "bits": Param(18, int, low=1, high=30, doc="VW's -b: 2**bits hashed weights"),
    }
    test_params = {"loss": "hinge"}

    def arguments(self) -> str:
        """The VW command-line arguments of the workspace."""
        c = self.config
        arguments = [f"--quiet --loss_function {c['loss']} -l {c['learning_rate']!r} --power_t {c['power_t']!r}",
                     f"--l2 {c['l2']!r} -b {c['bits']}"]
        arguments += ["--sgd"] * c["sgd"] + ["--noconstant"] * (not c["bias"])
        return " ".join(arguments)

    def _model(self) -> Any:
        from vowpalwabbit import Workspace

        return Workspace(self.arguments() + " --save_resume")

    def _rows(self, X) -> Iterator[Any]:
        return vw_rows(X)

    def _step(self, row: tuple[list[int], list[float]], target: float) -> float:
        example = self.model.example(vw_line(*row, target))
        self.model.learn(example)
        score = example.get_simplelabel_prediction()  # made before the update
        self.model.finish_example(example)
        return score

    def _predict(self, X) -> np.ndarray:
        return np.array([self.model.predict(vw_line(*row)) for row in vw_rows(X)], dtype=np.float64)

    def __getstate__(self) -> dict[str, Any]:
        """A picklable copy (a cell's saved state): the workspace's model file, which keeps
        the update's state too (``--save_resume``)."""
        state = self.__dict__.copy()
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "model.vw")
            self.model.save(path)
            with open(path, "rb") as handle:
                state["model"] = handle.read()
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        from vowpalwabbit import Workspace

        self.__dict__.update(state)
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "model.vw")
            with open(path, "wb") as handle:
                handle.write(state["model"])
            self.model = Workspace(f"{self.arguments()} --save_resume -i {path}")
