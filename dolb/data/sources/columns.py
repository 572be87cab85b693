"""What the importers of one's own files share: the options of the label and of the
storage, and a part made of a feature matrix and a label column.

The importers ``csv``, ``parquet`` and ``feather`` (:mod:`dolb.data.sources.tables`),
``npy`` and ``npz`` (:mod:`dolb.data.sources.arrays`) read a file with pyarrow or NumPy
into a feature matrix and a label column, then :func:`part` checks both (every value a
finite number, naming the file, the row or line and the column of the first that is
not), maps the labels (:func:`dolb.data.labels.mapped_labels`) and stores X dense or
CSR (``sparse = true``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from dolb.data.labels import LABEL_MAPS, mapped_labels
from dolb.data.params import Choice, Param, Value
from dolb.errors import ConfigError, DataError

LABEL_PARAMS: dict[str, Param] = {
    "positive": Value(None, "the label mapped to +1, every other to -1 (default: labels kept as numbers)"),
    "label_map": Choice(None, LABEL_MAPS, 'a rule for the labels: "0/1" maps 0 to -1 and 1 to +1'),
    "sparse": Choice(False, (False, True), "store X as CSR (its zeros left out) instead of dense"),
}
"""The parameters every importer of one's own files takes, after its own."""

Where = Callable[[int | None], str]
"""``at(row)``: where row ``row`` (from 0) of the part is in its file, such as
``"mydata.csv, line 3"``; ``at(None)``: the file itself."""


def one_rule(owner: str, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` unless both ``positive`` and ``label_map`` are given (ConfigError)."""
    if params["positive"] is not None and params["label_map"] is not None:
        raise ConfigError(f"{owner}: give positive or label_map, not both")
    return params


def part(X: np.ndarray, labels: np.ndarray, columns: list[str], at: Where, params: dict[str, Any],
         owner: str) -> tuple[Any, np.ndarray]:
    """``(X, y)`` of one part: X dense (dtype kept) or CSR, y float64.

    Parameters
    ----------
    X : numpy.ndarray, shape (n, d)
        Features as read, numeric.
    labels : numpy.ndarray, shape (n,)
        The label column as read (numbers or text).
    columns : list of str
        How messages name each column of X (``"column 'x2'"``).
    at : callable
        Where a row is in the file (see :data:`Where`).
    params : dict
        The importer's checked parameters (those of :data:`LABEL_PARAMS` among them).
    owner : str
        The importer, for messages (``"importer 'csv'"``).

    Examples
    --------
    >>> X, y = part(np.eye(2), np.array([0, 1]), ["column 'a'", "column 'b'"], str,
    ...             {"positive": None, "label_map": "0/1", "sparse": True}, "importer 'csv'")
    >>> X.nnz, y.tolist()
    (2, [-1.0, 1.0])
    """
    if len(labels) == 0:
        raise DataError(f"{at(None)} holds no examples")
    if X.shape[1] == 0:
        raise DataError(f"{at(None)} holds no feature column besides the labels")
    check_finite(X, columns, at)
    if labels.dtype.kind in "fc":
        bad = ~np.isfinite(labels)
        if bad.any():
            row = int(np.argmax(bad))
            raise DataError(f"{at(row)}: label {labels[row]} is not a finite number")
    y = mapped_labels(labels, params["positive"], params["label_map"], at, owner)
    return (sp.csr_matrix(X) if params["sparse"] else X), y


def check_finite(X: np.ndarray, columns: list[str], at: Where) -> None:
    """DataError naming the row and column of the first NaN or infinite feature."""
    if X.dtype.kind != "f":
        return
    bad = ~np.isfinite(X)
    if bad.any():
        row, column = (int(i) for i in np.argwhere(bad)[0])
        raise DataError(f"{at(row)}, {columns[column]}: {X[row, column]} is not a finite number")
