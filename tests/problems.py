"""A small tuning problem the tests and the tuning-timeline benchmark share."""

from pathlib import Path

import numpy as np


def _write_svmlight(path: Path, X: np.ndarray, y: np.ndarray) -> None:
    lines = [" ".join([f"{label:+d}"] + [f"{j + 1}:{v:.6g}" for j, v in enumerate(row)]) for row, label in zip(X, y)]
    path.write_text("\n".join(lines) + "\n")


def write_problem(folder: Path) -> None:
    """A linearly separable problem with 10% label noise: 3,000 training and 1,000 test
    examples, as ``train.svm`` and ``test.svm`` in ``folder``."""
    rng = np.random.default_rng(5)
    w = rng.normal(size=8)
    for name, n in (("train", 3000), ("test", 1000)):
        X = rng.normal(size=(n, 8))
        y = np.where(X @ w > 0, 1, -1) * np.where(rng.random(n) < 0.1, -1, 1)
        _write_svmlight(Path(folder) / f"{name}.svm", X, y)
