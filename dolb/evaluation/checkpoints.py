"""Training sizes at which a cell records its metrics."""

from __future__ import annotations

import numpy as np


def resolve_checkpoints(spec, n_train: int) -> np.ndarray:
    """Turn a checkpoint spec into sorted, unique training sizes in ``1..n_train``.

    ``spec`` is a list of sizes, ``["log", k]`` (about ``k`` log-spaced sizes ending
    at ``n_train``) or ``"all"`` (every size).

    Examples
    --------
    >>> resolve_checkpoints(["log", 4], 1000).tolist()
    [1, 10, 100, 1000]
    >>> resolve_checkpoints([10, 80], 150).tolist()
    [10, 80]
    """
    if spec == "all":
        return np.arange(1, n_train + 1, dtype=np.int64)
    if spec[0] == "log":
        sizes = np.unique(np.round(np.logspace(0.0, np.log10(n_train), int(spec[1]))).astype(np.int64))
        return sizes[(sizes >= 1) & (sizes <= n_train)]
    return np.asarray([s for s in spec if s <= n_train], dtype=np.int64)
