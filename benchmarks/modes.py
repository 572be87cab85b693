"""The modes of ``python -m benchmarks``: the project measuring itself (the sweep
engine's scaling, a simulated cluster, the worker's overhead, the readers, the nightly
gate's trials), each mode a :class:`dolb.bench.modes.Mode` as ``dolb bench``'s are, with
the records it writes into ``benchmarks/records/<kind>/`` (``--record DIR``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dolb.bench.modes import SHARED_DATA, Mode
from dolb.cli_arguments import non_negative, positive_float, positive_int


def _object_store(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quick", action="store_true", help="30,000 rows instead of 300,000, for a quick look")
    parser.add_argument("--repeat", type=positive_int, default=3, help="interleaved rounds of every source (default 3)")


def _worker_overhead(parser: argparse.ArgumentParser) -> None:
    # the bench's module is not imported here: it imports the learners, which every dolb
    # command would then pay for when it builds its parser
    parser.add_argument("--learners", help="comma-separated (default: every learner of the bench, sleep and "
                        "perceptron)")
    parser.add_argument("--cells", type=positive_int, default=256, help="cells of each task size (default 256)")
    parser.add_argument("--rows", type=positive_int, default=64, help="training rows of a cell (default 64)")
    parser.add_argument("--sizes", help="cells a task, comma-separated (default 1,16,256)")
    parser.add_argument("--repeats", type=positive_int, default=3, help="repeats of each measurement (default 3)")
    parser.add_argument("--dask", action="store_true", help="also through one Dask worker process")


def _reader(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rows-dense", type=positive_int, default=200_000, help="rows of the dense store (default "
                        "200000)")
    parser.add_argument("--rows-sparse", type=positive_int, default=100_000, help="rows of the sparse store "
                        "(default 100000)")
    parser.add_argument("--block-size", type=positive_int, default=4096, help="rows a block (default 4096)")
    parser.add_argument("--dtype", choices=("float64", "float32"), default="float64", help="the stored values")


def _cold_start(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pipeline", default="pipelines/irma.toml", help="the study run (default pipelines/irma.toml, "
                        "relative to the source tree)")
    parser.add_argument("--workers", type=positive_int, default=2, help="workers of each run (default 2)")
    parser.add_argument("--repeats", type=positive_int, default=1, help="cold and warm runs (default 1)")
    parser.add_argument("--fresh-data", action="store_true", help="the cold run builds the datasets too (into a new "
                        "empty data cache), as on a fresh machine")


def _results_store(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pipeline", default="pipelines/irma.toml", help="the study run (default pipelines/irma.toml, "
                        "relative to the source tree)")
    parser.add_argument("--workers", type=positive_int, default=2, help="workers of each run (default 2)")
    parser.add_argument("--repeats", type=positive_int, default=3, help="local and S3 runs, alternating (default 3)")


def _store(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cells", type=positive_int, default=1_000_000, help="cells of the folder (default 1000000)")
    parser.add_argument("--parts", type=positive_int, default=2_000, help="parts the folder is written in (default "
                        "2000)")
    parser.add_argument("--work", help="where the folder goes (default: a temporary folder, removed)")


def _tuning_timeline(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workers", type=positive_int, default=4, help="worker threads (default 4)")
    parser.add_argument("--fast", type=non_negative, default=0.1, help="seconds a cell of a fast split is held "
                        "(the slow split's ten times as long; default 0.1)")
    parser.add_argument("--width", type=positive_int, default=72, help="characters of the timeline (default 72)")


def _work_and_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--work", type=Path, help="work folder (default: a new temporary folder)")
    parser.add_argument("--json", type=Path, help="save every figure to this JSON file")


def _scale(parser: argparse.ArgumentParser) -> None:
    _work_and_json(parser)
    parser.add_argument("--repeats", type=positive_int, default=3, help="runs per worker count (default 3)")
    parser.add_argument("--cells", type=positive_int, default=100_000, help="cells of the tiny workload (default "
                        "100000)")
    parser.add_argument("--only", help="comma-separated workloads (default: tiny,irma,cutoff_rcv1,linear_zoo; "
                        "'million' here is --million)")
    parser.add_argument("--million", action="store_true", help="also run the million workload")
    parser.add_argument("--million-cells", type=positive_int, default=1_000_000,
                        help="cells of the million workload (default 1000000; smaller for a quick check)")
    parser.add_argument("--splits", default="", metavar="NAME=K,...",
                        help="run these studies with K splits per experiment instead of their own "
                             "(e.g. cutoff_rcv1=50,linear_zoo=5: at least 30 s of cell compute)")
    parser.add_argument("--data", type=Path, help="the real datasets cutoff_rcv1 and linear_zoo read (default: "
                        "shared/data beside the repository)")


def _simulated(parser: argparse.ArgumentParser) -> None:
    _work_and_json(parser)
    parser.add_argument("--slots", default="8,16,32,64", help="slot counts (default 8,16,32,64)")
    parser.add_argument("--processes", type=positive_int, default=8, help="worker processes at most (default 8)")
    parser.add_argument("--sim-cells", type=positive_int, help="cells of each sweep (default: 25 a slot, at least "
                        "400)")
    parser.add_argument("--start-method", choices=("spawn", "forkserver"), default="spawn",
                        help="how worker processes start (forkserver: forked from one that imported dolb)")
    parser.add_argument("--seconds", default="0.5-1", help="the cells' times: LOW-HIGH, a comma-separated list, or "
                        "a result folder (default 0.5-1)")
    parser.add_argument("--rederive", type=Path, metavar="RECORD", help="run nothing: derive this record's costs "
                        "and predictions again, with the latest scale record in --record")


def _contention(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seconds", type=positive_float, default=8.0, help="timed seconds of each run (default 8)")
    parser.add_argument("--workloads", default="arithmetic,stream", help="comma-separated: arithmetic (registers "
                        "only), stream (an AdaGrad pass over the RCV1 sample from a Zarr store); default both")
    parser.add_argument("--rcv1", default=f"{SHARED_DATA}/rcv1/rcv1v2_mulan_dedup.npz", help="the RCV1 sample")


def _gate_trial(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("out", help="folder of the nights (night-NN/bench.json) and trial.json")
    parser.add_argument("--nights", type=positive_int, default=5, help="nights, the reference night included "
                        "(default 5)")
    parser.add_argument("--busy", default="1,0,1,0,0", help="a busy core each night (1) or not (0), repeated "
                        "(default 1,0,1,0,0)")
    parser.add_argument("--inject", metavar="LEARNER", help="a 0.8x slowdown of LEARNER after the reference night")
    parser.add_argument("--learners", default="perceptron,pa,sgd,dual_averaging",
                        help="comma-separated learners benched each night (default perceptron,pa,sgd,dual_averaging)")
    parser.add_argument("--rounds", type=positive_int, default=7, help="rounds of each A/B (default 7)")


def _gate_noise(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--nights", type=positive_int, default=200, help="nights simulated (default 200)")
    parser.add_argument("--learners", type=positive_int, default=8, help="learners benchmarked (default 8)")
    for name, default, what in (("night", 0.07, "the log shift of a whole night"),
                                ("learner", 0.02, "a learner's own shift in a night"),
                                ("repeat", 0.07, "a repeat's log speed in a night"),
                                ("ab", 0.14, "one side's log speed in an A/B round")):
        parser.add_argument(f"--{name}-sd", type=non_negative, default=default,
                            help=f"sd of {what} (default {default})")
    parser.add_argument("--seed", type=int, default=0, help="seed of the nights with identical code; the next one's "
                        "with a slower learner (default 0)")


MODES: dict[str, Mode] = {
    "object-store": Mode("a sparse store streamed from moto's S3 server (started on loopback) against local disk, "
                         "in stored, random and windowed order, with and without a node chunk cache",
                         ("object-store", "object-store-quick"), _object_store, "benchmarks.engine.object_store:main"),
    "reader": Mode("rows per second the stream reader delivers from a dense and a sparse Zarr store, in stored and "
                   "in permuted order, learning nothing", ("reader",), _reader, "benchmarks.engine.reader:main"),
    "scale": Mode("how the sweep engine scales: dolb run of each workload on 1 and 2 workers, the client's and the "
                  "workers' time per cell, start-up, speed-up, Amdahl's predictions", ("scale",), _scale,
                  "benchmarks.engine.scale:main"),
    "simulated": Mode("a simulated cluster of 8-64 slots running cells that only sleep: the engine's costs, its "
                      "efficiency against the cost model's", ("simulated",), _simulated,
                      "benchmarks.engine.simulated:main"),
    "worker-overhead": Mode("a worker's CPU per cell and per task beyond the learner's own work, in one process "
                            "(and through one Dask worker with --dask)", ("worker-overhead",), _worker_overhead,
                            "benchmarks.engine.worker_overhead:main"),
    "contention": Mode("how much two processes on two cores slow each other, without Dask: registers only, and a "
                       "Zarr-streamed pass", ("contention",), _contention, "benchmarks.engine.contention:main"),
    "cold-start": Mode("a first dolb run on a fresh machine (an empty Numba cache) against the same run with the cache "
                       "it left: the cluster and compute phases", ("cold-start",), _cold_start,
                       "benchmarks.engine.cold_start:main"),
    "results-store": Mode("a study's compute phase with its result folder in moto's S3 server (started on loopback) "
                          "against local disk, same cluster; the server's own CPU", ("results-store",),
                          _results_store, "benchmarks.engine.results_store:main"),
    "store": Mode("a result folder of a million cells: dolb status, compact, report and read_results timed before "
                  "and after compaction", ("store",), _store, "benchmarks.engine.store:main"),
    "tuning-timeline": Mode("when each split's rungs of a halving ran, one split's cells ten times slower than the "
                            "others'", ("tuning-timeline",), _tuning_timeline,
                            "benchmarks.engine.tuning_timeline:main"),
    "gate-trial": Mode("nights of the nightly gate on this machine: identical code under a changing load, or one "
                       "learner slowed; the alarms and the spreads gate-noise takes", ("gate-trial",), _gate_trial,
                       "benchmarks.gate.gate_trial:main"),
    "gate-noise": Mode("the nightly gate's false alarms and detections in simulated nights of a given noise",
                       ("gate-noise",), _gate_noise, "benchmarks.gate.gate_noise:main"),
}
"""Every mode of ``python -m benchmarks``, by name."""
