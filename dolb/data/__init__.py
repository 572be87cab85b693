"""Datasets: the Zarr store, block streams, splits, and the sources they come from.

Subpackages and modules, lowest first:

- :mod:`dolb.data.store`: the Zarr dataset format; writing, opening, reading and
  verifying datasets.
- :mod:`dolb.data.stream`: rows of a dataset block by block, read ahead in a thread.
- :mod:`dolb.data.splits`: seeded train/test splits and training orders.
- :mod:`dolb.data.params`: declared parameters of generators and importers.
- :mod:`dolb.data.sources`: seeded generators and importers (two registries), and the
  on-disk cache of what they make.

Nothing here imports the experiment, evaluation, execution or results layers.

Examples
--------
>>> from dolb.data import materialize, stream_blocks
>>> train = materialize("irma", {"n_sequences": 10}, seed=0, directory=tmp)["train"]
>>> sum(len(y) for X, y in stream_blocks(train, block_size=500))
1500
"""

from dolb.data.sources import GENERATORS, IMPORTERS, generate, import_dataset, materialize
from dolb.data.store import ChunkCache, Dataset, open_dataset, write_dataset
from dolb.data.stream import stream_blocks

__all__ = [
    "GENERATORS",
    "IMPORTERS",
    "ChunkCache",
    "Dataset",
    "generate",
    "import_dataset",
    "materialize",
    "open_dataset",
    "stream_blocks",
    "write_dataset",
]
