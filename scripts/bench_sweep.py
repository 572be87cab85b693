"""Measure a sweep of 10,000 small cells: wall time, per-cell overhead and the client's
peak memory (the client keeps a bounded number of tasks in flight).

    python scripts/bench_sweep.py [--workers 2] [--out /tmp/dolb-bench-sweep]
"""

import argparse
import shutil
import tempfile
import threading
import time
from pathlib import Path

import psutil

from dolb.execution.sweep import run_sweep

PIPELINE = """
[pipeline]
name = "sweep-10k"
seed = 1

[datasets.irma]
generator = "irma"
params = { n_sequences = 1000, length = 150 }

[experiments.grid]
dataset = "irma"
task = "regression"
split = { scheme = "sequences", count = 1000 }
checkpoints = [150]
metrics = ["test_mse", "online_loss"]
learners = [
  { learner = "irma", complexity = [4, 6], params = { basis = "legendre", domain_high = 3.0, stiffness = [0.05, 0.1, 0.2, 0.4, 0.8] } },
]
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    out = Path(args.out or tempfile.mkdtemp(prefix="dolb-bench-sweep-"))
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    pipeline = out / "sweep.toml"
    pipeline.write_text(PIPELINE)

    client = psutil.Process()
    peak = [client.memory_info().rss]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak.append(client.memory_info().rss)
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started = time.perf_counter()
    summary = run_sweep(pipeline, out / "run", workers=args.workers, progress=False)
    seconds = time.perf_counter() - started
    done.set()
    sampler.join()
    print(f"cells: {summary.n_cells} computed {summary.n_computed} failed {summary.n_failed}")
    print(f"wall time: {seconds:.1f} s, {seconds / summary.n_cells * 1e3:.2f} ms per cell end to end "
          f"({seconds / summary.n_cells * 1e3 * args.workers:.2f} worker-ms per cell on {args.workers} workers)")
    print(f"client peak RSS: {max(peak) / 2**20:.0f} MiB (at start {peak[0] / 2**20:.0f} MiB)")
    started = time.perf_counter()
    again = run_sweep(pipeline, out / "run", workers=args.workers, progress=False)
    print(f"resume with everything stored: {time.perf_counter() - started:.1f} s ({again.n_cached} cached)")


if __name__ == "__main__":
    main()
