"""The project measuring itself, beside its records: ``python -m benchmarks MODE``
(:mod:`benchmarks.modes`) from the repository's root. It imports dolb; dolb never
imports it, and it is no part of dolb's wheel.

- :mod:`benchmarks.engine`: the sweep engine's scaling, a simulated cluster and its cost
  model, a worker's overhead, contention between processes, a cold start, the result
  store's and the stream reader's speed, an object store, a halving's timeline;
- :mod:`benchmarks.gate`: the nightly gate's nights on this machine and its noise model;
- :mod:`benchmarks.tuning`: tuning's searches against each other
  (``python -m benchmarks.tuning.tuning_bench``), beside its records.

Why each exists and what it found: ``docs/design/benchmarks.md``.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
"""The repository: the dolb the benchmarks measure and run in their child processes."""
