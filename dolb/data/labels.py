"""Labels: a file's label column mapped to the targets a store holds, and the check
that a binary task's targets are -1/+1.

An importer of one's own files (:mod:`dolb.data.sources.columns`) keeps numeric labels
as they are (regression) or maps them with a rule: ``positive = <label>`` (that label
+1, every other -1) or ``label_map = "0/1"`` (0 to -1, 1 to +1, anything else refused).
A binary experiment checks its datasets' targets with :func:`check_binary` before any
cell runs, and the cells themselves once more on their test sets.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dolb.errors import ConfigError, DataError

LABEL_MAPS = ("0/1",)
"""The rules ``label_map`` names: ``"0/1"`` maps 0 to -1 and 1 to +1."""
HOW_TO_MAP = 'map them with the importer\'s label_map = "0/1" or positive = <label> (that label +1, the rest -1)'
"""What a message about labels that are not -1/+1 tells the user to do."""
HOW_TO_MAP_ARRAYS = "give y as -1/+1, e.g. np.where(y == 1, 1.0, -1.0)"
"""The same, for a dataset given as arrays to the Python API."""


def shown_labels(labels: np.ndarray, shown: int = 5) -> str:
    """Up to ``shown`` labels, comma-separated: ``0, 1, 2``.

    Examples
    --------
    >>> shown_labels(np.array([0.0, 1.0])), shown_labels(np.array(["a", "b"])), shown_labels(np.arange(9.0))
    ('0, 1', "'a', 'b'", '0, 1, 2, 3, 4, ... (9 in all)')
    """
    text = ", ".join(f"{v:g}" if isinstance(v, float) else repr(v) for v in labels[:shown].tolist())
    return text + (f", ... ({len(labels)} in all)" if len(labels) > shown else "")


def binary_fault(y: np.ndarray) -> str | None:
    """What keeps ``y`` from being the targets of a binary task (None: they are -1/+1).

    Examples
    --------
    >>> binary_fault(np.array([1.0, -1.0])) is None
    True
    >>> binary_fault(np.array([1.0, 0.0, 1.0]))
    'row 1 (from 0) has label 0, a binary task needs labels -1/+1'
    >>> binary_fault(np.array([0.0, 1.0, 2.0]))
    'its labels are 0, 1, 2, a binary task needs two, -1/+1'
    """
    y = np.asarray(y)
    if y.ndim != 1:
        return f"it has {y.shape[1]} targets a row, a binary task needs one label a row"
    bad = np.abs(y.astype(np.float64)) != 1.0
    if not bad.any():
        return None
    distinct = np.unique(y)
    if len(distinct) > 2:
        return f"its labels are {shown_labels(distinct)}, a binary task needs two, -1/+1"
    row = int(np.argmax(bad))
    return f"row {row} (from 0) has label {y[row]:g}, a binary task needs labels -1/+1"


def check_binary(y: np.ndarray, where: str, how_to_map: str = HOW_TO_MAP) -> None:
    """DataError ``<where>: <fault>; <how_to_map>`` unless ``y`` is -1/+1.

    Examples
    --------
    >>> try:
    ...     check_binary(np.array([0.0, 1.0]), "dataset 'mine'")
    ... except DataError as exc:
    ...     print(str(exc).replace("; ", "\\n"))
    dataset 'mine': row 0 (from 0) has label 0, a binary task needs labels -1/+1
    map them with the importer's label_map = "0/1" or positive = <label> (that label +1, the rest -1)
    """
    fault = binary_fault(y)
    if fault is not None:
        raise DataError(f"{where}: {fault}; {how_to_map}")


def mapped_labels(
    values: np.ndarray, positive: Any, label_map: str | None, at: Callable[[int], str], owner: str
) -> np.ndarray:
    """Targets (float64) of the label column ``values`` under a rule: ``positive`` (+1,
    the rest -1), ``label_map`` (``"0/1"``), or neither (numbers kept). ``at(row)`` says
    where a row is in the file (``"file.csv, line 3"``), for DataError; ``owner`` names
    the importer, for ConfigError.

    Examples
    --------
    >>> at = lambda row: f"f.csv, line {row + 2}"
    >>> mapped_labels(np.array(["spam", "ham"]), "spam", None, at, "importer 'csv'").tolist()
    [1.0, -1.0]
    >>> mapped_labels(np.array([0, 1]), None, "0/1", at, "importer 'csv'").tolist()
    [-1.0, 1.0]
    >>> mapped_labels(np.array([0, 2]), None, "0/1", at, "importer 'csv'")
    Traceback (most recent call last):
    ...
    dolb.errors.DataError: f.csv, line 3: label 2 is neither 0 nor 1 (label_map = "0/1")
    """
    values = np.asarray(values)
    text = values.dtype.kind in "OUS"
    if positive is not None:
        if isinstance(positive, str) != text:
            kind = "text" if text else "numbers"
            raise ConfigError(f"{owner}, parameter 'positive': {positive!r} is not a label of {at(None)} "
                              f"(its labels are {kind}: {shown_labels(np.unique(values))})")
        hits = values == positive
        if not hits.any():
            raise ConfigError(f"{owner}, parameter 'positive': {positive!r} is not a label of {at(None)} "
                              f"(labels: {shown_labels(np.unique(values))})")
        return np.where(hits, 1.0, -1.0)
    if text:
        first = str(values[0])
        raise DataError(f"{at(0)}: label {first!r} is text; give positive = {first!r} "
                        "(that label +1, the rest -1), or numbers")
    y = values.astype(np.float64)
    if label_map is None:
        return y
    bad = (y != 0.0) & (y != 1.0)
    if bad.any():
        row = int(np.argmax(bad))
        raise DataError(f'{at(row)}: label {y[row]:g} is neither 0 nor 1 (label_map = "0/1")')
    return np.where(y == 1.0, 1.0, -1.0)
