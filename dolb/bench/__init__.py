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
- :mod:`dolb.bench.records`: one JSON record per run of a bench (``--record DIR``);
- :mod:`dolb.bench.pages`: the documentation's performance pages, rendered from the
  records.
"""
