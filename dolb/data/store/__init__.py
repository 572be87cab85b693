"""The Zarr dataset store: the format, writing, opening, reading and verifying datasets.

Modules, lowest first: :mod:`~dolb.data.store.format` (layout, encoding, fingerprint),
:mod:`~dolb.data.store.manifest` (the chunk manifest every read is checked against),
:mod:`~dolb.data.store.decoding` (a chunk decoded, its codec pipeline read once),
:mod:`~dolb.data.store.layout` (codec and chunk size chosen for throughput, recorded),
:mod:`~dolb.data.store.gather` (compiled copies of a block's rows out of decoded chunks),
:mod:`~dolb.data.store.readers` (decoded chunks and row blocks, verified),
:mod:`~dolb.data.store.dataset` (:class:`Dataset`, :func:`open_dataset`, verification),
:mod:`~dolb.data.store.inputs` (checks of the arrays to write) and
:mod:`~dolb.data.store.writing` (:func:`write_dataset`, atomic publication).

Examples
--------
>>> ds = write_dataset(tmp / "new", np.eye(3), np.arange(3.0))
>>> open_dataset(tmp / "new").read(slice(0, 2))[1]
array([0., 1.])
"""

from dolb.data.store.dataset import Dataset, open_dataset
from dolb.data.store.readers import ChunkCache
from dolb.data.store.writing import write_dataset

__all__ = ["ChunkCache", "Dataset", "open_dataset", "write_dataset"]
