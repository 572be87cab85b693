"""The benchmarks of dolb, one module per job; ``dolb bench MODE`` runs one
(:mod:`dolb.bench.modes`: the modes, their options and the records each writes;
``dolb bench --list``).

- :mod:`dolb.bench.throughput`: ``dolb bench [throughput]``, the learners' speed bare and
  with their conversions, from memory and from a Zarr store, and cutoff averaging's
  memory;
- :mod:`dolb.bench.stream`: ``dolb bench stream``, a study's cell on RCV1 and a9a against
  the bare loops and the peers; :mod:`dolb.bench.reader`: ``dolb bench reader``, the
  stream reader alone;
- :mod:`dolb.bench.kernel`: ``dolb bench kernel``, LASVM on MNIST;
- :mod:`dolb.bench.omr`: ``dolb bench omr``, online manifold regularisation's cost per
  step;
- :mod:`dolb.bench.bare`, :mod:`dolb.bench.peers`: the hand-written Numba loops and
  the peers (Vowpal Wabbit, river) the others compare with;
- :mod:`dolb.bench.ab`: two source trees measured alternately (``dolb bench ab``,
  ``dolb compare --confirm``); :mod:`dolb.bench.gate_trial` and
  :mod:`dolb.bench.gate_noise`: the nightly gate's nights on this machine and its noise
  model, simulated (``dolb bench gate-trial``, ``gate-noise``);
- :mod:`dolb.bench.scale` with :mod:`dolb.bench.scale_runs` and
  :mod:`dolb.bench.scale_text`: ``dolb bench scale``, the sweep engine's cost per cell
  on 1 and 2 workers, :mod:`dolb.bench.scale_marginal` the client's marginal cost per
  cell (a workload against twice its cells); :mod:`dolb.bench.contention`: ``dolb bench contention``, how much
  two processes on two cores slow each other;
- :mod:`dolb.bench.simulated` with :mod:`dolb.bench.simulate` and
  :mod:`dolb.bench.simulate_record`: ``dolb bench simulated``, a real scheduler and
  workers of 8–256 slots running cells of :mod:`dolb.bench.sleep`'s learner, which only
  sleep; :mod:`dolb.bench.cost_model` predicts a sweep's efficiency from the engine's
  measured costs;
- :mod:`dolb.bench.cold_start`: ``dolb bench cold-start``, a first run with an empty
  Numba cache; :mod:`dolb.bench.store`: ``dolb bench store``, the readers of a million
  cells' result folder; :mod:`dolb.bench.tuning_timeline`: ``dolb bench
  tuning-timeline``, a halving with one slow split;
- :mod:`dolb.bench.worker_overhead`: ``dolb bench worker-overhead``, a worker's CPU per cell
  and per task beyond the learner's own work, in one process;
- :mod:`dolb.bench.records`: one JSON record per run of a bench (``--record DIR``);
- :mod:`dolb.bench.pages`: the documentation's performance pages, rendered from the
  records.
"""
