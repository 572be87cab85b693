"""The benchmarks of dolb, one module per job; ``dolb bench MODE`` runs one
(:mod:`dolb.bench.modes`: the modes, their options and the records each writes;
``dolb bench --list``).

- :mod:`dolb.bench.throughput`: ``dolb bench [throughput]``, the learners' speed bare and
  with their conversions, from memory and from a Zarr store, and cutoff averaging's
  memory;
- :mod:`dolb.bench.stream`: ``dolb bench stream``, a study's cell on RCV1 and a9a against
  the bare loops and the peers; :mod:`benchmarks.engine.reader`: ``dolb bench reader``, the
  stream reader alone;
- :mod:`dolb.bench.kernel`: ``dolb bench kernel``, LASVM on MNIST;
- :mod:`dolb.bench.omr`: ``dolb bench omr``, online manifold regularisation's cost per
  step;
- :mod:`dolb.bench.bare`, :mod:`dolb.bench.peers`: the hand-written Numba loops and
  the peers (Vowpal Wabbit, river) the others compare with;
- :mod:`dolb.bench.ab`: two source trees measured alternately (``dolb bench ab``,
  ``dolb compare --confirm``); :mod:`benchmarks.gate.gate_trial` and
  :mod:`benchmarks.gate.gate_noise`: the nightly gate's nights on this machine and its noise
  model, simulated (``dolb bench gate-trial``, ``gate-noise``);
- :mod:`benchmarks.engine.scale` with :mod:`benchmarks.engine.scale_runs` and
  :mod:`benchmarks.engine.scale_text`: ``dolb bench scale``, the sweep engine's cost per cell
  on 1 and 2 workers, :mod:`benchmarks.engine.scale_marginal` the client's marginal cost per
  cell (a workload against twice its cells); :mod:`benchmarks.engine.contention`: ``dolb bench contention``, how much
  two processes on two cores slow each other;
- :mod:`benchmarks.engine.simulated` with :mod:`benchmarks.engine.simulate` and
  :mod:`benchmarks.engine.simulate_record`: ``dolb bench simulated``, a real scheduler and
  workers of 8–256 slots running cells of :mod:`benchmarks.engine.sleep`'s learner, which only
  sleep; :mod:`benchmarks.engine.cost_model` predicts a sweep's efficiency from the engine's
  measured costs;
- :mod:`benchmarks.engine.cold_start`: ``dolb bench cold-start``, a first run with an empty
  Numba cache; :mod:`benchmarks.engine.store`: ``dolb bench store``, the readers of a million
  cells' result folder; :mod:`benchmarks.engine.tuning_timeline`: ``dolb bench
  tuning-timeline``, a halving with one slow split;
- :mod:`benchmarks.engine.worker_overhead`: ``dolb bench worker-overhead``, a worker's CPU per cell
  and per task beyond the learner's own work, in one process;
- :mod:`dolb.bench.records`: one JSON record per run of a bench (``--record DIR``);
- :mod:`docs.pages`: the documentation's performance pages, rendered from the
  records.
"""
