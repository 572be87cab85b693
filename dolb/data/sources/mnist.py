"""Reading MNIST from its original IDX files as a binary problem (digits vs digits).

An IDX file is a big-endian header (a magic number whose low byte is the number of
dimensions, then one uint32 size per dimension) followed by the uint8 values. MNIST
comes as four of them, gzip-compressed or not; a bad magic number, a short header or
a truncated body is a :class:`~dolb.errors.DataError` naming the file. Registered as
the importer ``"mnist"`` in :data:`~dolb.data.sources.importers.IMPORTERS`.
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from dolb.data.params import Choice, FilePath, GenParam, Members
from dolb.data.sources.cache import file_identity
from dolb.data.sources.importers import IMPORTERS, Importer
from dolb.data.sources.source import Parts
from dolb.errors import ConfigError, DataError

IMAGES_MAGIC = 2051
"""IDX magic number of uint8 images: type 0x08, 3 dimensions."""
LABELS_MAGIC = 2049
"""IDX magic number of uint8 labels: type 0x08, 1 dimension."""
PARTS = {
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}
"""Stems of the image and label files of each part."""
DIGITS = tuple(range(10))


def mnist_files(folder: Path) -> list[Path]:
    """The four IDX files in ``folder`` (``<stem>.gz``, else ``<stem>``), in PARTS order.

    Examples
    --------
    >>> [p.name for p in mnist_files(shared / "mnist")][:2]
    ['train-images-idx3-ubyte.gz', 'train-labels-idx1-ubyte.gz']
    """
    return [_idx_file(folder, stem) for stems in PARTS.values() for stem in stems]


def read_mnist(
    folder: Path, positive: list[int], negative: list[int], scale: bool = True
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Parts ``{"train": (X, y), "test": (X, y)}`` of the rows showing the chosen digits,
    in stored order: X (n, 784) (float32 ``x / 255`` if ``scale``, else uint8 0..255),
    y +1.0 for ``positive`` digits and -1.0 for ``negative`` ones.

    Examples
    --------
    >>> X, y = read_mnist(shared / "mnist", [3], [8])["test"]
    >>> X.shape, int((y > 0).sum())
    ((1984, 784), 1010)
    """
    parts = {}
    for part, (image_stem, label_stem) in PARTS.items():
        images = read_idx(_idx_file(folder, image_stem), IMAGES_MAGIC)
        label_file = _idx_file(folder, label_stem)
        labels = read_idx(label_file, LABELS_MAGIC)
        _check_labels(label_file, labels, len(images))
        keep = np.isin(labels, positive + negative)
        X = images[keep].reshape(int(keep.sum()), -1)
        y = np.where(np.isin(labels[keep], positive), 1.0, -1.0)
        parts[part] = (X / np.float32(255) if scale else X, y)
    return parts


def read_idx(path: Path, magic: int) -> np.ndarray:
    """The uint8 array of an IDX file, after checking its magic number and length.

    Examples
    --------
    >>> read_idx(shared / "mnist" / "t10k-labels-idx1-ubyte.gz", LABELS_MAGIC)[:5]
    array([7, 2, 1, 0, 4], dtype=uint8)
    """
    raw = _read_bytes(path)
    ndim = magic & 0xFF
    header = 4 * (1 + ndim)
    if len(raw) < header:
        raise DataError(f"IDX file {path}: {len(raw)} bytes, shorter than its {header}-byte header")
    found = int(np.frombuffer(raw, ">u4", count=1)[0])
    if found != magic:
        raise DataError(f"IDX file {path}: magic number {found}, expected {magic}")
    shape = tuple(int(size) for size in np.frombuffer(raw, ">u4", count=ndim, offset=4))
    body = np.frombuffer(raw, np.uint8, offset=header)
    if body.size != np.prod(shape):
        raise DataError(
            f"IDX file {path}: header promises {np.prod(shape)} values {shape}, "
            f"found {body.size} (truncated?)"
        )
    return body.reshape(shape)


def _idx_file(folder: Path, stem: str) -> Path:
    """``folder/<stem>.gz`` or else ``folder/<stem>``; DataError if neither exists."""
    for path in (folder / f"{stem}.gz", folder / stem):
        if path.is_file():
            return path
    raise DataError(f"MNIST folder {folder}: neither {stem}.gz nor {stem} is there")


def _read_bytes(path: Path) -> bytes:
    """Content of ``path``, gunzipped if its name ends in ``.gz``."""
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as stream:
                return stream.read()
        return path.read_bytes()
    except (OSError, EOFError, zlib.error) as exc:
        raise DataError(f"IDX file {path}: cannot read it ({exc}); is it truncated?") from exc


def _check_labels(path: Path, labels: np.ndarray, n_images: int) -> None:
    """DataError unless there is one label per image and each is a digit."""
    if len(labels) != n_images:
        raise DataError(f"IDX file {path}: {len(labels)} labels for {n_images} images")
    bad = labels > 9
    if bad.any():
        row = int(np.argmax(bad))
        raise DataError(f"IDX file {path}, row {row}: label {labels[row]} is not a digit")


# --------------------------------------------------------------------------- the importer


def _settle_mnist(owner: str, params: dict[str, Any]) -> dict[str, Any]:
    """``negative`` defaults to every digit not in ``positive``; the two are disjoint."""
    positive = sorted(params["positive"])
    negative = params["negative"]
    if negative is None:
        negative = [digit for digit in DIGITS if digit not in positive]
    both = sorted(set(positive) & set(negative))
    if both:
        raise ConfigError(f"{owner}, parameter 'negative': digit {both[0]} is also in 'positive'")
    if not negative:
        raise ConfigError(f"{owner}, parameter 'positive': leaves no digit for the negative class")
    return {**params, "positive": positive, "negative": sorted(negative)}


def _read_mnist(params: dict[str, Any]) -> Parts:
    """Train and test parts restricted to the chosen digits (and to the first
    ``n_train`` / ``n_test`` rows of each, when given)."""
    parts = read_mnist(Path(params["path"]), params["positive"], params["negative"], params["scale"])
    for part, limit in (("train", params["n_train"]), ("test", params["n_test"])):
        if limit is not None:
            X, y = parts[part]
            parts[part] = (X[:limit], y[:limit])
    return parts


MNIST = Importer(
    name="mnist",
    read=_read_mnist,
    sources=lambda params: [file_identity(path) for path in mnist_files(Path(params["path"]))],
    params={
        "path": FilePath(doc="the folder of the four IDX files"),
        "positive": Members([3], DIGITS, 1, 10, "digits labelled +1"),
        "negative": Members(None, DIGITS, 1, 10, "digits labelled -1 (default: all the others)"),
        "scale": Choice(True, (True, False), "store x / 255 as float32 (else uint8 0..255)"),
        "n_train": GenParam(None, int, 1, "keep the first n_train training rows (default: all)"),
        "n_test": GenParam(None, int, 1, "keep the first n_test test rows (default: all)"),
    },
    parts=("train", "test"),
    settle=_settle_mnist,
    reference="LeCun et al., MNIST handwritten digits, http://yann.lecun.com/exdb/mnist/",
)
IMPORTERS.add(MNIST.name, MNIST)
