"""The benchmarks of dolb, one module per job.

- :mod:`dolb.bench.throughput`: ``dolb bench``, the learners' speed bare and with their
  conversions, from memory and from a Zarr store, and cutoff averaging's memory;
- :mod:`dolb.bench.stream`: ``dolb bench --stream``, a study's cell on RCV1 and a9a
  against the bare loops and the peers;
- :mod:`dolb.bench.kernel`: ``dolb bench --kernel``, LASVM on MNIST;
- :mod:`dolb.bench.omr`: ``dolb bench --omr``, online manifold regularisation's cost
  per step;
- :mod:`dolb.bench.bare`, :mod:`dolb.bench.peers`: the hand-written Numba loops and
  the peers (Vowpal Wabbit, river) the others compare with;
- :mod:`dolb.bench.ab`: two source trees measured alternately (``dolb compare
  --confirm``);
- :mod:`dolb.bench.scale_runs`, :mod:`dolb.bench.scale_text`: ``scripts/bench_scale.py``,
  the sweep engine's cost per cell on 1 and 2 workers; :mod:`dolb.bench.scale_marginal`:
  the client's marginal cost per cell (a workload against twice its cells);
- :mod:`dolb.bench.simulate`, :mod:`dolb.bench.simulate_record`: ``scripts/bench_scale.py
  --simulate``, a real scheduler and workers of 8–256 slots running cells of
  :mod:`dolb.bench.sleep`'s learner, which only sleep; :mod:`dolb.bench.cost_model`
  predicts a sweep's efficiency from the engine's measured costs;
- :mod:`dolb.bench.records`: one JSON record per run of a bench (``--record DIR``);
- :mod:`dolb.bench.pages`: the documentation's performance pages, rendered from the
  records.
"""
