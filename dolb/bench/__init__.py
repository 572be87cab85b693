"""The benchmarks a user of dolb runs, one module per job; ``dolb bench MODE`` runs one
(:mod:`dolb.bench.modes`: the modes, their options and the records each writes;
``dolb bench --list``).

- :mod:`dolb.bench.throughput`: ``dolb bench [throughput]``, the learners' speed bare and
  with their conversions, from memory and from a Zarr store, and cutoff averaging's
  memory (what the nightly gate runs);
- :mod:`dolb.bench.stream`: ``dolb bench stream``, a study's cell on RCV1 and a9a against
  the bare loops and the peers;
- :mod:`dolb.bench.kernel`: ``dolb bench kernel``, LASVM on MNIST;
- :mod:`dolb.bench.omr`: ``dolb bench omr``, online manifold regularisation's cost per
  step;
- :mod:`dolb.bench.bare`, :mod:`dolb.bench.peers`: the hand-written Numba loops and
  the peers (Vowpal Wabbit, river) the others compare with;
- :mod:`dolb.bench.ab`: two source trees measured alternately (``dolb bench ab``,
  ``dolb compare --confirm``);
- :mod:`dolb.bench.records`: one JSON record per run of a bench (``--record DIR``).

The project's measurements of itself (the sweep engine's scaling, a simulated cluster,
the readers, the nightly gate's trials) are not here: they are the repository's
``benchmarks/`` project, run from a checkout as ``python -m benchmarks MODE``.
"""
