"""``python -m benchmarks results-store``: what a result folder on an object store costs a
run's compute phase, against the same run with its folder on local disk.

Usage::

    python -m benchmarks results-store                              # pipelines/irma.toml, 2 workers
    python -m benchmarks results-store --repeats 3 --record benchmarks/records

Each repeat runs ``python3 -m dolb run PIPELINE --out OUT --workers N --no-progress``
twice in processes of their own, on the same embedded cluster size and the same data
cache (built beforehand by an untimed run), once with ``OUT`` a new local folder and
once a new folder in a bucket of moto's S3 server (started on loopback), the order
alternating from repeat to repeat. The figures are the run records' compute phases and
the S3 server's CPU seconds during each S3 run: on a machine of few cores the server
competes with the workers for them, which a real object store on its own hosts does not.
The bench fails (exit status 1) when the two folders hold different values.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import psutil

from benchmarks import ROOT
from benchmarks.engine.cold_start import dolb_run, values
from benchmarks.engine.object_store import s3_server
from dolb.bench.records import derived, measurement, new_record, write_record
from dolb.errors import ConfigError


def run(pipeline: Path, out: str, workers: int, cache: Path) -> dict:
    """One ``dolb run`` into ``out`` with the data cache ``cache``; its run record."""
    return dolb_run(pipeline, out, workers, {"DOLB_DATA_CACHE": str(cache)})


def cpu_seconds(process: psutil.Process) -> float:
    """The CPU seconds ``process`` and its children have used so far."""
    times = process.cpu_times()
    return times.user + times.system + times.children_user + times.children_system


class CpuSamples:
    """The CPU seconds of a process, sampled every ``every`` seconds in a thread while
    the context lasts: ``(time, cpu seconds)`` pairs."""

    def __init__(self, process: psutil.Process, every: float = 0.05) -> None:
        self.process, self.every, self.samples = process, every, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while True:
            self.samples.append((time.monotonic(), cpu_seconds(self.process)))
            if self._stop.wait(self.every):
                self.samples.append((time.monotonic(), cpu_seconds(self.process)))
                return

    def __enter__(self) -> CpuSamples:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def used(self) -> float:
        """The CPU seconds used while sampled."""
        return self.samples[-1][1] - self.samples[0][1]

    def busiest(self, window: float) -> float:
        """The most cores the process kept busy over any ``window`` seconds sampled (over
        all of it, when shorter)."""
        best, start = 0.0, 0
        for end, (at, cpu) in enumerate(self.samples):
            while start < end and at - self.samples[start + 1][0] >= window:
                start += 1
            span = at - self.samples[start][0]
            if span >= min(window, self.samples[-1][0] - self.samples[0][0]) and span > 0:
                best = max(best, (cpu - self.samples[start][1]) / span)
        return best


def measure(pipeline: Path, workers: int, repeats: int, work: Path) -> dict[str, list[float]]:
    """The compute phases (and wall seconds) of ``repeats`` local and S3 runs, and in
    each S3 run the server's CPU seconds and the most cores it kept busy over a window
    as long as that run's compute phase (its busiest moment, which is the compute
    phase's writes when they are what loads it); ValueError when the two folders of a
    repeat hold different values."""
    import s3fs

    cache = work / "data"
    run(pipeline, str(work / "untimed"), workers, cache)  # the datasets built and the kernels compiled
    found: dict[str, list[float]] = {"local": [], "s3": [], "server": [], "server busiest": [], "s3 wall": [],
                                     "local wall": []}
    with s3_server() as (_, server):
        bucket = f"bench-{uuid.uuid4().hex[:8]}"
        s3fs.S3FileSystem().mkdir(bucket)
        process = psutil.Process(server.pid)
        for repeat in range(repeats):
            outs = {"local": str(work / f"local-{repeat}"), "s3": f"s3://{bucket}/run-{repeat}"}
            for where in (("local", "s3") if repeat % 2 == 0 else ("s3", "local")):
                with CpuSamples(process) as server_cpu:
                    record = run(pipeline, outs[where], workers, cache)
                if where == "s3":
                    found["server"].append(server_cpu.used())
                    found["server busiest"].append(server_cpu.busiest(record["timings"]["compute"]))
                found[where].append(record["timings"]["compute"])
                found[f"{where} wall"].append(record["seconds"])
                print(f"{where}: compute {record['timings']['compute']:.2f} s, run {record['seconds']:.1f} s",
                      flush=True)
            if not values(outs["local"]).equals(values(outs["s3"])):
                raise ValueError(f"repeat {repeat}: the local and the S3 folder hold different values")
    return found


def figures(found: dict[str, list[float]], cores: int) -> list[dict]:
    """The derived figures: compute on S3 / local (medians); the server's CPU as the
    cores it kept busy in its busiest window of the compute phase's length (median), as
    a share of this machine's ``cores``; and the ratio those cores alone would explain
    on a machine whose cores the workers fill (``cores / (cores - server cores)``)."""
    ratio = statistics.median(found["s3"]) / statistics.median(found["local"])
    server_cores = statistics.median(found["server busiest"])
    return [derived({"figure": "s3 / local compute"}, "ratio", ratio),
            derived({"figure": "server cores"}, "cores", server_cores),
            derived({"figure": "server share of the cores"}, "ratio", server_cores / cores),
            derived({"figure": "ratio the server CPU explains"}, "ratio", cores / max(cores - server_cores, 1e-9))]


def as_text(found: dict[str, list[float]], derived_figures: list[dict]) -> str:
    """The figures as lines for a person."""
    by_name = {figure["labels"]["figure"]: figure["value"] for figure in derived_figures}
    return (f"compute phase: local {statistics.median(found['local']):.2f} s, S3 {statistics.median(found['s3']):.2f} s"
            f" (x{by_name['s3 / local compute']:.3f}); the S3 server kept {by_name['server cores']:.2f} cores busy "
            f"({by_name['server share of the cores']:.0%} of this machine's), which alone explains "
            f"x{by_name['ratio the server CPU explains']:.3f}")


def main(args) -> int:
    """``python -m benchmarks results-store``: the runs of the module docstring; with
    ``args.record`` a record of them. Exit status 1 when the two folders differ."""
    pipeline = next((path.resolve() for path in (Path(args.pipeline), ROOT / args.pipeline) if path.is_file()), None)
    if pipeline is None:
        raise ConfigError(f"--pipeline {args.pipeline}: no such file")
    with tempfile.TemporaryDirectory(prefix="dolb-results-store-") as work:
        try:
            found = measure(pipeline, args.workers, args.repeats, Path(work))
        except ValueError as exc:
            print(f"benchmarks: {exc}", file=sys.stderr)
            return 1
    cores = psutil.cpu_count() or 1
    derived_figures = figures(found, cores)
    print(as_text(found, derived_figures))
    labels = {"pipeline": args.pipeline, "workers": str(args.workers), "cores": str(cores)}
    measurements = [measurement(labels | {"figure": name}, "cores" if name == "server busiest" else "s", repeats)
                    for name, repeats in found.items()]
    if args.record:
        record = new_record("results-store", measurements, derived_figures, command=args.command_line)
        print(f"record: {write_record(args.record, record)}")
    return 0

