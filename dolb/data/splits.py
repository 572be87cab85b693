"""Train/test splits and training orders of a dataset.

A split is decided by its scheme, its index and a seed sequence; nothing else. See
:class:`dolb.experiment.pipeline.SplitSpec` for the schemes.
"""

from __future__ import annotations

import numpy as np

from dolb.errors import ConfigError

ORDER_CHUNK_ROWS = 4096
"""Rows of a chunk of the ``windowed`` order: consecutive training rows (half a cell's
block; a cell's 8,192-row block holds two chunks of a window)."""
DEFAULT_WINDOW = 4
"""Chunks of a window of the ``windowed`` order unless ``window`` is given."""


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
    window: int | None = None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Training rows (in training order) and test rows of one split.

    ``order``: ``"stored"`` (increasing row numbers), ``"random"`` (a seeded permutation
    of the training rows; for ``holdout``, the order of the split's own permutation) or
    ``"windowed"`` (a seeded two-level shuffle of the training rows in stored order, see
    :func:`windowed_order`, with ``window`` chunks a window, default ``DEFAULT_WINDOW``).

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
        if order != "random":
            train = np.sort(train)
    elif scheme == "given":
        train = np.arange(n_rows, dtype=np.int64)
        test = None
    else:
        raise ConfigError(f"unknown split scheme {scheme!r}")
    if order == "random" and scheme != "holdout":
        train = rng.permutation(train)
    elif order == "windowed":
        train = windowed_order(train, DEFAULT_WINDOW if window is None else window, rng)
    return train.astype(np.int64), test


def windowed_order(
    rows: np.ndarray, window: int, rng: np.random.Generator, chunk_rows: int = ORDER_CHUNK_ROWS
) -> np.ndarray:
    """``rows`` in a seeded two-level shuffle: chunks in a random order, then rows in a
    random order within each window of ``window`` consecutive chunks of that order.

    ``rows`` is cut into chunks of ``chunk_rows`` consecutive entries (the last may be
    shorter); the chunks are put in a uniformly random order; the result is cut into
    windows of ``window`` consecutive chunks of that order, and each window's rows are
    put in a uniformly random order of their own. Every row comes exactly once. The
    randomness is less than a permutation's: the rows of a window are the rows of its
    ``window`` chunks, so two rows of one chunk are at most ``window * chunk_rows - 1``
    places apart, and a row can only be followed, within a window, by rows of the same
    ``window`` chunks. The gain: a window's rows lie in ``window`` runs of consecutive
    stored rows, so a stream reads the few stored chunks holding them, while a
    permutation's blocks touch every stored chunk. With ``window * chunk_rows`` at least
    the number of rows this is a permutation of them.

    Raises
    ------
    ConfigError
        ``window`` or ``chunk_rows`` is not a positive integer.

    Examples
    --------
    >>> order = windowed_order(np.arange(8), 2, np.random.default_rng(0), chunk_rows=2)
    >>> order.tolist()  # chunks in the order 2, 0 | 1, 3; rows shuffled within each window
    [1, 0, 5, 4, 3, 7, 2, 6]
    """
    for name, value in (("window", window), ("chunk_rows", chunk_rows)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ConfigError(f"windowed order: {name} must be a positive integer, got {value!r}")
    rows = np.asarray(rows)
    chunks = [rows[start : start + chunk_rows] for start in range(0, rows.shape[0], chunk_rows)]
    ordered = [chunks[i] for i in rng.permutation(len(chunks))]
    windows = [np.concatenate(ordered[a : a + window]) for a in range(0, len(ordered), window)]
    return np.concatenate([rng.permutation(w) for w in windows]) if windows else rows.copy()


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


def validation_rows(train: np.ndarray, fraction: float, seed: np.random.SeedSequence) -> tuple[np.ndarray, np.ndarray]:
    """A tuning stream and its validation: a seeded ``fraction`` of a split's training
    rows held out (sorted), the rest in their training order.

    >>> learn, held = validation_rows(np.array([5, 3, 9, 1, 7]), 0.4, np.random.SeedSequence(0))
    >>> len(learn), len(held), sorted(learn.tolist() + held.tolist())
    (3, 2, [1, 3, 5, 7, 9])
    """
    n_held = validation_size(len(train), fraction)
    held = np.zeros(len(train), dtype=bool)
    held[np.random.default_rng(seed).permutation(len(train))[:n_held]] = True
    return train[~held], np.sort(train[held])


def validation_size(n_rows: int, fraction: float) -> int:
    """Rows a ``fraction`` holds out of ``n_rows``; ConfigError if that leaves none on
    either side."""
    n_held = int(round(fraction * n_rows))
    if n_held < 1 or n_held >= n_rows:
        raise ConfigError(f"a holdout of {fraction} leaves no tuning or no validation rows of {n_rows}")
    return n_held
