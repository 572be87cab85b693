"""Arrays as datasets: NumPy ``.npy`` and ``.npz`` files (the importers ``npy`` and
``npz``), and arrays in memory stored in the data cache under a hash of their content.

``npy``: a 2-D features file with its labels in another file (``labels_path``) or in one
of its columns (``label``, counted from 0). ``npz``: named arrays of one file
(``features = "X"``, ``label = "y"``). Features keep their dtype (bool, integer or
float); the labels are kept as numbers or mapped to -1/+1
(:mod:`dolb.data.sources.columns`). A NaN or infinite feature is refused, naming the
file, the row and the column (both counted from 0).

Examples
--------
>>> np.save(tmp / "X.npy", np.array([[0.5, 0.0, 1.0], [2.0, 1.0, 0.0]]))
>>> X, y = read_npy(tmp / "X.npy", None, {"label": 2, "positive": None, "label_map": "0/1", "sparse": False})
>>> X.tolist(), y.tolist()
([[0.5, 0.0], [2.0, 1.0]], [1.0, -1.0])
"""

from __future__ import annotations

import hashlib
import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from dolb.data.params import FilePath, GenParam, Text
from dolb.data.sources.cache import file_identity, stored_parts
from dolb.data.sources.columns import LABEL_PARAMS, one_rule, part
from dolb.data.sources.importers import IMPORTERS, Importer
from dolb.data.store.dataset import Dataset
from dolb.errors import ConfigError, DataError

_NUMERIC_KINDS = "biuf"


def _load(path: Path, kind: str):
    """The array (``.npy``) or archive (``.npz``) in ``path``, or DataError."""
    try:
        return np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise DataError(f"{kind} file {path}: no such file") from None
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
        raise DataError(f"{kind} file {path}: cannot read it ({exc})") from None


def _features(X: np.ndarray, name: str) -> np.ndarray:
    """``X`` if it is a 2-D array of numbers; DataError naming it otherwise."""
    if X.ndim != 2:
        raise DataError(f"{name}: the features must be a 2-D array (rows, columns), got shape {X.shape}")
    if X.dtype.kind not in _NUMERIC_KINDS:
        raise DataError(f"{name}: the features must be numbers, got dtype {X.dtype}")
    return X


def _labels(y: np.ndarray, n: int, name: str) -> np.ndarray:
    """``y`` as a 1-D array of ``n`` labels; DataError naming it otherwise."""
    y = y.reshape(-1) if y.ndim == 2 and y.shape[1] == 1 else y
    if y.ndim != 1 or len(y) != n:
        raise DataError(f"{name}: expected {n} labels (one a row of the features), got shape {y.shape}")
    return y


def _where(name: str):
    """``at(row)`` of a file whose rows count from 0."""
    return lambda row: name if row is None else f"{name}, row {row} (from 0)"


def read_npy(path: Path, labels_path: Path | None, params: dict[str, Any]) -> tuple[Any, np.ndarray]:
    """``(X, y)`` of a features file and its labels (a file, or the column ``label``)."""
    name = f"npy file {path}"
    X = _features(_load(path, "npy"), name)
    if labels_path is None:
        column = params["label"]
        if column >= X.shape[1]:
            raise ConfigError(f"importer 'npy', parameter 'label': column {column} is beyond the "
                              f"{X.shape[1]} columns of {path}")
        y, keep = X[:, column], [j for j in range(X.shape[1]) if j != column]
        X = X[:, keep]
    else:
        y, keep = _labels(_load(labels_path, "npy"), X.shape[0], f"npy file {labels_path}"), range(X.shape[1])
        name = f"npy files {path} and {labels_path}"
    return part(X, y, [f"column {j}" for j in keep], _where(name), params, "importer 'npy'")


def read_npz(path: Path, params: dict[str, Any]) -> tuple[Any, np.ndarray]:
    """``(X, y)`` of the arrays ``features`` and ``label`` of an ``.npz`` file."""
    name = f"npz file {path}"
    with _load(path, "npz") as archive:
        arrays = {}
        for role in ("features", "label"):
            if params[role] not in archive.files:
                raise DataError(f"{name}: no {role} array {params[role]!r} (its arrays: "
                                f"{', '.join(repr(a) for a in archive.files)})")
            arrays[role] = archive[params[role]]
    X = _features(arrays["features"], name)
    y = _labels(arrays["label"], X.shape[0], name)
    return part(X, y, [f"column {j}" for j in range(X.shape[1])], _where(name), params, "importer 'npz'")


# --------------------------------------------------------------------------- the importers


def _npy_files(params: dict[str, Any]) -> dict[str, tuple[Path, Path | None]]:
    """The features and labels files of each part, training first."""
    def path(key: str) -> Path | None:
        return None if params[key] is None else Path(params[key])

    files = {"train": (path("path"), path("labels_path"))}
    if params["test_path"] is not None:
        files["test"] = (path("test_path"), path("test_labels_path"))
    return files


def _npy_settled(owner: str, params: dict[str, Any]) -> dict[str, Any]:
    """The labels in a file or in a column, not both; a test part's labels where the
    training part's are."""
    if (params["labels_path"] is None) == (params["label"] is None):
        raise ConfigError(f"{owner}: give labels_path (a file of labels) or label (the column holding them)")
    if (params["test_labels_path"] is None) != (params["labels_path"] is None or params["test_path"] is None):
        raise ConfigError(f"{owner}: parameter 'test_labels_path' goes with test_path and labels_path, "
                          "and is needed with both")
    return one_rule(owner, params)


NPY = Importer(
    name="npy",
    read=lambda params: {p: read_npy(X, y, params) for p, (X, y) in _npy_files(params).items()},
    sources=lambda params: [file_identity(f) for pair in _npy_files(params).values() for f in pair if f],
    params={
        "path": FilePath(doc="the training features, a 2-D array in a .npy file"),
        "labels_path": FilePath(None, "the training labels, a 1-D array in a .npy file"),
        "label": GenParam(None, int, 0, "instead: the column of the features holding the labels (from 0)"),
        "test_path": FilePath(None, "the test features (optional)"),
        "test_labels_path": FilePath(None, "the test labels, with labels_path"),
        **LABEL_PARAMS,
    },
    parts=("train", "test"),
    reference="NumPy .npy files, read by numpy.load",
    settle=_npy_settled,
    suffixes=(".npy",),
)
IMPORTERS.add(NPY.name, NPY)


def _npz_files(params: dict[str, Any]) -> dict[str, Path]:
    files = {"train": Path(params["path"])}
    if params["test_path"] is not None:
        files["test"] = Path(params["test_path"])
    return files


NPZ = Importer(
    name="npz",
    read=lambda params: {p: read_npz(path, params) for p, path in _npz_files(params).items()},
    sources=lambda params: [file_identity(path) for path in _npz_files(params).values()],
    params={
        "path": FilePath(doc="the training arrays, a .npz file"),
        "test_path": FilePath(None, "the test arrays, a .npz file with the same names (optional)"),
        "features": Text("X", "the name of the features array (2-D)"),
        "label": Text("y", "the name of the labels array (1-D)"),
        **LABEL_PARAMS,
    },
    parts=("train", "test"),
    reference="NumPy .npz files, read by numpy.load",
    settle=one_rule,
    suffixes=(".npz",),
)
IMPORTERS.add(NPZ.name, NPZ)


# --------------------------------------------------------------------------- arrays in memory


def array_digest(values) -> str:
    """sha256 of an array's dtype, shape and bytes (of a sparse matrix's CSR arrays).

    Examples
    --------
    >>> array_digest(np.eye(2)) == array_digest(np.eye(2)) != array_digest(np.eye(2, dtype=np.float32))
    True
    """
    hashed = hashlib.sha256()
    if sp.issparse(values):
        csr = sp.csr_matrix(values)
        arrays = [np.asarray(csr.shape), csr.data, csr.indices, csr.indptr]
    else:
        arrays = [np.asarray(values)]
    for array in arrays:
        hashed.update(f"{array.dtype.str}{array.shape}".encode())
        hashed.update(np.ascontiguousarray(array).data)
    return hashed.hexdigest()


def store_arrays(parts: dict[str, tuple[Any, Any]], directory: str | os.PathLike) -> dict[str, Dataset]:
    """The stores of arrays in memory, ``{part: (X, y)}``, written once into
    ``directory`` (the data cache) under a hash of their content, opened on later calls.

    Examples
    --------
    >>> sets = store_arrays({"train": (np.eye(3), np.array([1.0, -1.0, 1.0]))}, tmp)
    >>> again = store_arrays({"train": (np.eye(3), np.array([1.0, -1.0, 1.0]))}, tmp)
    >>> sets["train"].n_rows, again["train"].path == sets["train"].path
    (3, True)
    """
    identity = {part: [array_digest(X), array_digest(y)] for part, (X, y) in parts.items()}
    about = {"source": "arrays", "sha256": identity}
    return stored_parts(directory, "arrays", {"arrays": identity},
                        lambda: {part: (X, y, {**about, "part": part}) for part, (X, y) in parts.items()})
