"""Datasets: the Zarr store, block streams and seeded synthetic generators.

Examples
--------
>>> from dolb.data import materialize, stream_blocks
>>> train = materialize("irma", {"n_sequences": 10}, seed=0, directory="cache")["train"]
>>> for X, y in stream_blocks(train, block_size=500):
...     pass
"""

from dolb.data.generators import GENERATORS, generate, materialize
from dolb.data.store import Dataset, open_dataset
from dolb.data.stream import stream_blocks
from dolb.data.writing import write_dataset

__all__ = ["GENERATORS", "Dataset", "generate", "materialize", "open_dataset", "stream_blocks", "write_dataset"]
