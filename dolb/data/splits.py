"""Train/test splits and training orders of a dataset.

A split is decided by its scheme, its index and a seed sequence; nothing else. See
:class:`dolb.experiment.pipeline.SplitSpec` for the schemes.
"""

from __future__ import annotations

import numpy as np

from dolb.errors import ConfigError


def sequence_length(n_rows: int, count: int, length: int | None) -> int:
    """Rows per split of the ``sequences`` scheme; ConfigError if they do not fit."""
    length = n_rows // count if length is None else length
    if length < 1 or length * count > n_rows:
        raise ConfigError(
            f"{count} sequences of {length} rows do not fit in a training part of {n_rows} rows"
        )
    return length


def split_rows(
    scheme: str,
    index: int,
    n_rows: int,
    seed: np.random.SeedSequence,
    *,
    length: int | None = None,
    count: int = 1,
    test_fraction: float = 0.2,
    order: str = "stored",
) -> tuple[np.ndarray, np.ndarray | None]:
    """Training rows (in training order) and test rows of one split.

    Parameters
    ----------
    scheme : {"sequences", "holdout", "given"}
    index : int
        Which split.
    n_rows : int
        Rows of the training part.
    seed : numpy.random.SeedSequence
        Seed of this split (see :func:`dolb.seeding.seed_for`).

    Returns
    -------
    train_rows : ndarray of int64
    test_rows : ndarray of int64 or None
        Rows of the training part held out for testing, or ``None`` when the test set
        is the dataset's own test part.

    Examples
    --------
    >>> import numpy as np
    >>> train, test = split_rows("sequences", 2, 10, np.random.SeedSequence(0), length=3, count=3)
    >>> train.tolist(), test
    ([6, 7, 8], None)
    """
    rng = np.random.default_rng(seed)
    if scheme == "sequences":
        length = sequence_length(n_rows, count, length)
        train = np.arange(index * length, (index + 1) * length, dtype=np.int64)
        test = None
    elif scheme == "holdout":
        n_test = int(round(test_fraction * n_rows))
        if n_test < 1 or n_test >= n_rows:
            raise ConfigError(f"a test fraction of {test_fraction} leaves no train or no test rows of {n_rows}")
        permutation = rng.permutation(n_rows)
        test = np.sort(permutation[:n_test])
        train = permutation[n_test:]
        if order == "stored":
            train = np.sort(train)
    elif scheme == "given":
        train = np.arange(n_rows, dtype=np.int64)
        test = None
    else:
        raise ConfigError(f"unknown split scheme {scheme!r}")
    if order == "random" and scheme != "holdout":
        train = rng.permutation(train)
    return train.astype(np.int64), test


def labelled_rows(n_rows: int, rate: float, first: int, seed: np.random.SeedSequence) -> np.ndarray:
    """Which of a stream's ``n_rows`` training examples reveal their label: each with
    probability ``rate`` (independent uniform draws of ``seed``), the first ``first``
    always. The learner sees the flags; evaluation always sees the truth.

    >>> labelled_rows(8, 0.5, 2, np.random.SeedSequence(1)).tolist()
    [True, True, True, False, True, True, False, True]
    """
    labelled = np.random.default_rng(seed).random(n_rows) < rate
    labelled[:first] = True
    return labelled
