"""Reading LIBSVM/svmlight text files (plain, ``.gz`` or ``.bz2``) as binary problems.

Files are parsed by :func:`sklearn.datasets.load_svmlight_file` with their indices
kept as written; this module then decides, for all the files of a data set together,
whether indices start at 0 or 1, gives every part the same width, checks the indices
against a given width and maps the two labels to -1/+1. Every fault is a
:class:`~dolb.errors.DataError` naming the file and, where known, the line or row.
Registered as the importer ``"svmlight"`` in :data:`~dolb.data.sources.importers.IMPORTERS`.
"""

from __future__ import annotations

import bz2
import gzip
import io
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from dolb.data.params import Choice, FilePath, GenParam
from dolb.data.sources.cache import file_identity
from dolb.data.sources.importers import IMPORTERS, Importer
from dolb.data.sources.source import Parts
from dolb.errors import ConfigError, DataError

_BLOCK_LINES = 4096  # lines handed to the parser at once when looking for a bad line


def read_svmlight(
    files: dict[str, Path],
    n_features: int | None = None,
    zero_based: bool | str = "auto",
    positive: float | None = None,
) -> dict[str, tuple[sp.csr_matrix, np.ndarray]]:
    """Parts ``{part: (X, y)}`` of svmlight files, with a common width and labels -1/+1.

    Parameters
    ----------
    files : dict of str to Path
        File of each part, the training part (which fixes the labels) first.
    n_features : int, optional
        Width of X; by default the largest feature index over all files.
    zero_based : bool or "auto"
        Whether indices start at 0; "auto": at 1 unless some file holds index 0.
    positive : float, optional
        The label mapped to +1 (default: the larger of the two).

    Examples
    --------
    >>> _ = (tmp / "toy.svm").write_text("2 1:0.5\\n-1 3:1\\n")
    >>> X, y = read_svmlight({"train": tmp / "toy.svm"})["train"]
    >>> X.shape, y.tolist()
    ((2, 3), [1.0, -1.0])
    """
    raw = {part: _load(path) for part, path in files.items()}
    shift = _index_shift(files, raw, zero_based)
    width = n_features or max((X.indices.max() + 1 - shift for X, _ in raw.values() if X.nnz), default=1)
    labels = _label_pair(files, raw, positive)
    return {
        part: (_rebase(files[part], X, shift, width), _binary(y, labels))
        for part, (X, y) in raw.items()
    }


def _load(path: Path) -> tuple[sp.csr_matrix, np.ndarray]:
    """X (indices as written) and y of one file, or DataError naming the file and the
    line (unparsable text) or row (a NaN or infinite label)."""
    from sklearn.datasets import load_svmlight_file

    try:
        X, y = load_svmlight_file(str(path), zero_based=True)
    except (ValueError, OverflowError) as exc:
        line = _first_bad_line(path)
        where = f", line {line}" if line is not None else ""
        reason = "a feature index above 2147483647" if isinstance(exc, OverflowError) else exc
        raise DataError(f"svmlight file {path}{where}: malformed ({reason})") from None
    except (OSError, EOFError) as exc:
        raise DataError(f"svmlight file {path}: cannot read it ({exc}); is it truncated?") from exc
    if X.shape[0] == 0:
        raise DataError(f"svmlight file {path} holds no examples")
    if X.nnz == 0:
        raise DataError(f"svmlight file {path}: {X.shape[0]} labels and no feature value on any line "
                        "(a file of labels only?)")
    bad = ~np.isfinite(y)
    if bad.any():
        row = int(np.argmax(bad))
        raise DataError(f"svmlight file {path}, row {row}: label {y[row]} is not a finite number")
    return X, y


def _first_bad_line(path: Path) -> int | None:
    """Number (from 1) of the first line the parser rejects on its own, if any."""
    opener = {".gz": gzip.open, ".bz2": bz2.open}.get(path.suffix, open)
    try:
        with opener(path, "rb") as stream:
            lines = stream.read().splitlines(keepends=True)
    except (OSError, EOFError):
        return None
    for start in range(0, len(lines), _BLOCK_LINES):
        block = lines[start : start + _BLOCK_LINES]
        if not _parses(b"".join(block)):
            return next((start + i + 1 for i, line in enumerate(block) if not _parses(line)), None)
    return None


def _parses(text: bytes) -> bool:
    """Whether the svmlight parser accepts ``text``."""
    from sklearn.datasets import load_svmlight_file

    try:
        load_svmlight_file(io.BytesIO(text), zero_based=True)
    except (ValueError, OverflowError):
        return False
    return True


def _index_shift(files: dict[str, Path], raw: dict, zero_based: bool | str) -> int:
    """1 if the files' indices start at 1, else 0; DataError on an index 0 in a file
    said to start at 1."""
    if zero_based is True:
        return 0
    zeros = {part: X for part, (X, _) in raw.items() if X.nnz and X.indices.min() == 0}
    if zero_based == "auto":
        return 0 if zeros else 1
    if zeros:
        part, X = next(iter(zeros.items()))
        raise DataError(
            f"svmlight file {files[part]}, row {_row_of(X, int(np.argmax(X.indices == 0)))}: "
            "feature index 0, but zero_based = false (indices start at 1)"
        )
    return 1


def _rebase(path: Path, X: sp.csr_matrix, shift: int, width: int) -> sp.csr_matrix:
    """X with indices from 0, ``width`` columns and no explicit zeros; DataError naming
    the first row with an index beyond ``width`` (only a given ``n_features`` can cause it)."""
    indices = X.indices - shift if shift else X.indices
    outside = indices >= width
    if outside.any():
        position = int(np.argmax(outside))
        raise DataError(
            f"svmlight file {path}, row {_row_of(X, position)}: feature index "
            f"{int(X.indices[position])} is beyond n_features = {width}"
            f" (indices start at {shift})"
        )
    rebased = sp.csr_matrix((X.data, indices, X.indptr), shape=(X.shape[0], width))
    rebased.eliminate_zeros()  # "13:0.0" in a file is no feature at all
    return rebased


def _row_of(X: sp.csr_matrix, position: int) -> int:
    """Row (from 0) holding stored element ``position``."""
    return int(np.searchsorted(X.indptr, position, side="right")) - 1


def _label_pair(files: dict[str, Path], raw: dict, positive: float | None) -> tuple[float, float]:
    """The (negative, positive) labels: the training file's two distinct labels, which
    every other file must stick to."""
    parts = list(raw)
    labels = np.unique(raw[parts[0]][1])
    if len(labels) != 2:
        raise DataError(
            f"svmlight file {files[parts[0]]}: a binary problem needs exactly two distinct labels, "
            f"found {len(labels)}: {_label_list(labels)}"
        )
    for part in parts[1:]:
        extra = np.setdiff1d(raw[part][1], labels)
        if len(extra):
            raise DataError(
                f"svmlight file {files[part]}: labels {_label_list(extra)} are not among the "
                f"training labels {_label_list(labels)}"
            )
    if positive is None:
        return float(labels[0]), float(labels[1])
    if positive not in labels:
        raise ConfigError(
            f"importer 'svmlight', parameter 'positive': {positive!r} is not a label of "
            f"{files[parts[0]]} (labels: {_label_list(labels)})"
        )
    return float(labels[labels != positive][0]), float(positive)


def _label_list(labels: np.ndarray, shown: int = 10) -> str:
    """Up to ``shown`` labels, comma-separated: ``-1, 1``."""
    text = ", ".join(f"{value:g}" for value in labels[:shown])
    return text + (f", ... ({len(labels)} in all)" if len(labels) > shown else "")


def _binary(y: np.ndarray, labels: tuple[float, float]) -> np.ndarray:
    """-1.0 where ``y`` is the negative label, +1.0 where it is the positive one."""
    return np.where(y == labels[1], 1.0, -1.0)


# --------------------------------------------------------------------------- the importer


def _svmlight_files(params: dict[str, Any]) -> dict[str, Path]:
    """The file of each part, training first."""
    files = {"train": Path(params["path"])}
    if params["test_path"] is not None:
        files["test"] = Path(params["test_path"])
    return files


def _read_svmlight(params: dict[str, Any]) -> Parts:
    """Both parts of an svmlight data set."""
    return read_svmlight(
        _svmlight_files(params), params["n_features"], params["zero_based"], params["positive"]
    )


SVMLIGHT = Importer(
    name="svmlight",
    read=_read_svmlight,
    sources=lambda params: [file_identity(path) for path in _svmlight_files(params).values()],
    params={
        "path": FilePath(doc="the training file (plain, .gz or .bz2)"),
        "test_path": FilePath(None, "the test file (optional)"),
        "n_features": GenParam(None, int, 1, "width of X (default: the largest index over both files)"),
        "zero_based": Choice("auto", ("auto", True, False), "whether feature indices start at 0"),
        "positive": GenParam(None, float, -float("inf"), "the label mapped to +1 (default: the larger)"),
    },
    parts=("train", "test"),
    reference="LIBSVM/svmlight text format, read by sklearn.datasets.load_svmlight_file",
    suffixes=(".svm", ".libsvm", ".svmlight"),
)
IMPORTERS.add(SVMLIGHT.name, SVMLIGHT)
