"""The peers of ``dolb bench stream``: Vowpal Wabbit from its cache file and river, each
run in this process for one pass over the same rows, in the same order, when installed.

Neither has dolb's exact learners, so each dolb learner is paired with the nearest
configuration (no bias term, since dolb's learners have none):

========== ================================================== =========================================
dolb       Vowpal Wabbit                                      river
========== ================================================== =========================================
perceptron ``--sgd --loss_function hinge``                    ``linear_model.Perceptron``
pa         ``--sgd --loss_function hinge``                    ``linear_model.PAClassifier(C, mode=1)``
sgd        ``--sgd --loss_function hinge --l2 α -l η_0``      ``LogisticRegression`` hinge, SGD η_0/√t, L2
adagrad    ``--adaptive --loss_function hinge -l η``          ``LogisticRegression`` hinge, AdaGrad η
ftrl       ``--ftrl --ftrl_alpha α --ftrl_beta β --l1 λ1``    ``LogisticRegression`` log loss, FTRLProximal
========== ================================================== =========================================

Vowpal Wabbit reads its binary cache (written once, untimed, from the rows in VW's text
format); its time is a pass over the cache. river learns from one dict per row, made
once, untimed.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from dolb.learners.peers.vw import vw_line, vw_rows
from dolb.losses import misclassified


def vw_options(name: str, params: dict) -> str:
    """Vowpal Wabbit's options for dolb learner ``name`` with ``params``.

    >>> vw_options("ftrl", {"alpha": 0.1, "beta": 1.0, "l1": 1e-4})
    '--ftrl --ftrl_alpha 0.1 --ftrl_beta 1.0 --l1 0.0001 --loss_function logistic'
    """
    if name == "ftrl":
        return (f"--ftrl --ftrl_alpha {params.get('alpha', 0.1)} --ftrl_beta {params.get('beta', 1.0)} "
                f"--l1 {params.get('l1', 0.0)} --loss_function logistic")
    if name == "adagrad":
        return f"--adaptive --loss_function hinge -l {params.get('eta', 0.1)}"
    if name == "sgd":
        return f"--sgd --loss_function hinge --l2 {params.get('alpha', 1e-4)} -l {params.get('eta0', 0.1)}"
    return "--sgd --loss_function hinge"


def vw_lines(X, y=None) -> list[str]:
    """Rows of CSR ``X`` in Vowpal Wabbit's text format (label omitted when ``y`` is None)."""
    labels = [None] * X.shape[0] if y is None else y
    return [vw_line(columns, values, label) for (columns, values), label in zip(vw_rows(X), labels)]


class VowpalWabbit:
    """One-pass Vowpal Wabbit runs from a cache of the training rows in ``folder``."""

    def __init__(self, folder: Path, X, y, bits: int = 18) -> None:
        from vowpalwabbit import Workspace

        self.Workspace = Workspace
        text, self.cache = folder / "train.vw", folder / "train.vw.cache"
        text.write_text("\n".join(vw_lines(X, y)) + "\n")
        self.base = f"--quiet --noconstant -b {bits}"
        writer = Workspace(f"-d {text} -c -k --cache_file {self.cache} {self.base}")
        writer.run_parser()
        writer.finish()
        self._model = None

    def run(self, name: str, params: dict) -> float:
        """CPU seconds of one pass over the cache; the model is kept for :meth:`accuracy`."""
        if self._model is not None:
            self._model.finish()
        start = time.process_time()
        self._model = self.Workspace(f"--cache_file {self.cache} {self.base} {vw_options(name, params)}")
        self._model.run_parser()
        return time.process_time() - start

    def accuracy(self, X_test, y_test) -> float:
        """Test accuracy of the last model run (:func:`~dolb.losses.misclassified`: a
        score of 0 predicts -1)."""
        scores = np.array([self._model.predict(line) for line in vw_lines(X_test)])
        return float(1.0 - misclassified(scores, y_test).mean())


def river_model(name: str, params: dict):
    """The river model paired with dolb learner ``name``."""
    from river import linear_model, optim

    if name == "perceptron":
        return linear_model.Perceptron()
    if name == "pa":
        return linear_model.PAClassifier(C=params.get("C", 1.0), mode=1)
    hinge = optim.losses.Hinge(threshold=1.0)
    if name == "sgd":
        eta = optim.schedulers.InverseScaling(params.get("eta0", 0.1), power=0.5)
        return linear_model.LogisticRegression(optimizer=optim.SGD(eta), loss=hinge, l2=params.get("alpha", 1e-4),
                                               intercept_lr=0.0)
    if name == "adagrad":
        return linear_model.LogisticRegression(optimizer=optim.AdaGrad(params.get("eta", 0.1)), loss=hinge,
                                               intercept_lr=0.0)
    ftrl = optim.FTRLProximal(alpha=params.get("alpha", 0.1), beta=params.get("beta", 1.0),
                              l1=params.get("l1", 0.0), l2=params.get("l2", 0.0))
    return linear_model.LogisticRegression(optimizer=ftrl, intercept_lr=0.0)


def river_rows(X) -> list[dict]:
    """Rows of CSR ``X`` as river's feature dicts."""
    return [dict(zip(X.indices[X.indptr[i]:X.indptr[i + 1]].tolist(), X.data[X.indptr[i]:X.indptr[i + 1]].tolist()))
            for i in range(X.shape[0])]


class River:
    """One-pass river runs over the training rows, made into dicts once."""

    def __init__(self, X, y) -> None:
        self.rows = river_rows(X)
        self.labels = [bool(label > 0) for label in y]
        self._model = None

    def run(self, name: str, params: dict) -> float:
        """CPU seconds of one pass; the model is kept for :meth:`accuracy`."""
        start = time.process_time()
        model = river_model(name, params)
        for x, label in zip(self.rows, self.labels):
            model.learn_one(x, label)
        self._model = model
        return time.process_time() - start

    def accuracy(self, X_test, y_test) -> float:
        """Test accuracy of the last model run."""
        predicted = np.array([self._model.predict_one(x) for x in river_rows(X_test)], dtype=bool)
        return float(np.mean(predicted == (y_test > 0)))
