"""dolb: a distributed benchmark for online machine learning.

Datasets stored chunked in Zarr stream through compiled sequential online learners;
the independent cells of a study run in parallel on a Dask cluster and their results
are gathered into comparison tables and figures.
"""

from importlib.metadata import PackageNotFoundError, version

from dolb.errors import ConfigError, DataError, DolbError

try:
    __version__ = version("dolb")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"

__all__ = ["ConfigError", "DataError", "DolbError", "__version__"]
