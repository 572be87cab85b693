"""The benchmarks' tests run with the tests' private data cache (``data_cache``, for the
session), as dolb's own do."""

from tests.conftest import data_cache  # noqa: F401  (fixture)
