"""Reading grey images from a NumPy ``.npy`` file as a binary problem: faces against
non-faces.

The file holds one array: images ``(n, height, width)``, flattened row by row into
``height * width`` columns, or rows ``(n, features)`` kept as they are. The first
``n_positive`` rows are faces, labelled +1; the rest are non-faces, labelled -1. The
values are stored as float64, as they are in the file: nothing is rescaled. There is
one part, ``"train"``, which a pipeline splits with the ``holdout`` scheme. The file is
read without unpickling (``allow_pickle=False``); a file dolb cannot read as finite
images or rows is a :class:`~dolb.errors.DataError` naming the file (and the row, for a
bad value), an ``n_positive`` that leaves a class empty a
:class:`~dolb.errors.ConfigError`. Registered as the importer ``"faces"``. The data set
it is for, and each refusal: docs/design/data-store.md.

Examples
--------
>>> from dolb.data import import_dataset
>>> sets = import_dataset("faces", {"path": str(shared / "face" / "lfw_subset.npy")}, tmp)
>>> train = sets["train"]
>>> list(sets), train.n_rows, train.n_features
(['train'], 200, 625)
>>> X, y = train.read(slice(None))
>>> float(X.min()), float(X.max()), int((y > 0).sum())
(0.0, 1.0, 100)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from dolb.data.params import FilePath, GenParam
from dolb.data.sources.cache import file_identity
from dolb.data.sources.importers import IMPORTERS, Importer
from dolb.data.sources.source import Parts
from dolb.errors import ConfigError, DataError

NPY_MAGIC = b"\x93NUMPY"
"""The first bytes of every ``.npy`` file."""
ZIP_MAGIC = b"PK\x03\x04"
"""The first bytes of a zip archive, such as an ``.npz`` file."""


def read_faces(path: Path, n_positive: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """X (n, height * width) float64, the values as stored, and y: +1.0 for the first
    ``n_positive`` rows, -1.0 for the others.

    Examples
    --------
    >>> X, y = read_faces(shared / "face" / "lfw_subset.npy")
    >>> X.shape, X.dtype, y[[0, 99, 100, 199]].tolist()
    ((200, 625), dtype('float64'), [1.0, 1.0, -1.0, -1.0])
    """
    X = load_images(path)
    if not 0 < n_positive < len(X):
        raise ConfigError(
            f"importer 'faces', parameter 'n_positive': {n_positive} leaves no row for the "
            f"{'non-face' if n_positive > 0 else 'face'} class of {path} (it has {len(X)} rows)"
        )
    return X, np.where(np.arange(len(X)) < n_positive, 1.0, -1.0)


def load_images(path: Path) -> np.ndarray:
    """The array of an ``.npy`` file as float64 rows, images flattened, after checking it.

    Examples
    --------
    >>> np.save(tmp / "two.npy", np.arange(8.0).reshape(2, 2, 2))
    >>> load_images(tmp / "two.npy")
    array([[0., 1., 2., 3.],
           [4., 5., 6., 7.]])
    """
    origin = f"faces file {path}"
    array = _load_npy(path, origin)
    if array.dtype.kind not in "iuf":
        raise DataError(f"{origin}: values of type {array.dtype}, expected real numbers (float or integer)")
    if array.ndim not in (2, 3):
        raise DataError(
            f"{origin}: an array of shape {array.shape}, expected images (n, height, width) or rows (n, features)"
        )
    if len(array) < 2:
        rows = f"{len(array)} row" + ("" if len(array) == 1 else "s")
        raise DataError(f"{origin}: {rows}, a face / non-face problem needs at least 2")
    X = np.ascontiguousarray(array.reshape(len(array), -1), dtype=np.float64)
    if X.shape[1] == 0:
        raise DataError(f"{origin}: an array of shape {array.shape} holds no pixel")
    bad = ~np.isfinite(X)
    if bad.any():
        row, column = (int(i) for i in np.argwhere(bad)[0])
        raise DataError(f"{origin}, row {row}: value {X[row, column]} (column {column}) is not a finite number")
    return X


def _load_npy(path: Path, origin: str) -> np.ndarray:
    """The one array of an ``.npy`` file, never unpickled; DataError otherwise."""
    try:
        with open(path, "rb") as stream:
            start = stream.read(len(NPY_MAGIC))
            if start.startswith(ZIP_MAGIC):
                raise DataError(f"{origin}: an .npz archive of arrays, not an .npy array")
            if start != NPY_MAGIC:
                raise DataError(f"{origin}: not an .npy file (it does not start with the .npy magic string)")
            stream.seek(0)
            return np.load(stream, allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DataError(f"{origin}: cannot read it as an .npy array ({reason})") from exc


# --------------------------------------------------------------------------- the importer


def _read_faces(params: dict[str, Any]) -> Parts:
    """The one part, ``"train"``: split it with a pipeline's ``holdout`` scheme."""
    return {"train": read_faces(Path(params["path"]), params["n_positive"])}


FACES = Importer(
    name="faces",
    read=_read_faces,
    sources=lambda params: [file_identity(params["path"])],
    params={
        "path": FilePath(doc="the .npy file: images (n, height, width) or rows (n, features)"),
        "n_positive": GenParam(100, int, 1, "the first n_positive rows are faces (+1), the rest non-faces (-1)"),
    },
    parts=("train",),
    reference=(
        "Labeled Faces in the Wild (Huang, Ramesh, Berg & Learned-Miller, UMass TR 07-49, 2007): "
        "a 200-image face / non-face subset, 25 x 25 grey; the task of Goldberg, Li & Zhu, "
        "Online manifold regularization, ECML PKDD 2008"
    ),
)
IMPORTERS.add(FACES.name, FACES)
