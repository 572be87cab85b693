"""dolb: a distributed benchmark for online machine learning.

Datasets chunked in Zarr stream through compiled online learners; a study's independent
cells run in parallel on Dask, their results gathered into tables and figures. The API:

* :func:`run` runs a pipeline (a file or a mapping) and returns the run's summary;
  :func:`read_results` reads a result folder into a pandas table;
* the registries :data:`LEARNERS`, :data:`GENERATORS`, :data:`IMPORTERS` and
  :data:`METRICS` hold what a pipeline may name (:data:`CONVERSIONS`: the conversion
  names in report order), and :data:`STUDIES` the studies ``dolb study`` runs;
* :class:`OnlineClassifier` is a registered learner as a scikit-learn estimator, and
  :class:`DolbError` (:class:`ConfigError`, :class:`DataError`) what dolb raises for bad input.

Examples
--------
>>> import dolb
>>> "perceptron" in dolb.LEARNERS
True
>>> learner = dolb.LEARNERS["perceptron"](n_features=2)
>>> import numpy as np
>>> learner.learn(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([1.0, -1.0]))
array([0., 0.])
>>> summary = dolb.run("pipelines/irma.toml", "runs/irma")  # doctest: +SKIP
>>> table = dolb.read_results("runs/irma")  # doctest: +SKIP
"""

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version

from dolb.errors import ConfigError, DataError, DolbError

try:
    __version__ = version("dolb")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"

_LAZY = {
    "run": "dolb.api",
    "read_results": "dolb.results.tables",
    "LEARNERS": "dolb.learners",
    "CONVERSIONS": "dolb.conversions",
    "GENERATORS": "dolb.data",
    "IMPORTERS": "dolb.data",
    "METRICS": "dolb.evaluation.metrics",
    "OnlineClassifier": "dolb.sklearn",
    "STUDIES": "dolb.studies",
}
"""Public names and the module each comes from: imported on first use, so that
``import dolb`` (and the ``dolb`` command) does not load Numba, pandas and Dask."""

__all__ = [
    "CONVERSIONS",
    "GENERATORS",
    "IMPORTERS",
    "LEARNERS",
    "METRICS",
    "ConfigError",
    "DataError",
    "DolbError",
    "OnlineClassifier",
    "STUDIES",
    "__version__",
    "read_results",
    "run",
]


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'dolb' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
