"""What mutual TLS costs the embedded cluster: one pipeline swept with and without it,
alternating, several times; prints the compute and total seconds of each and the
median ratio.

    python scripts/bench_tls.py pipelines/irma.toml --repeat 5

Without TLS means plain TCP on 127.0.0.1 (``Security()`` instead of
``Security.temporary()``), which dolb itself never uses.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from distributed.security import Security

from dolb.execution import cluster
from dolb.execution.sweep import run_sweep
from dolb.options import RunOptions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pipeline")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    with_tls = cluster.Security.temporary
    seconds = {"tls": [], "plain": []}
    with tempfile.TemporaryDirectory() as scratch:
        for i in range(args.repeat):
            for mode in ("tls", "plain"):
                cluster.Security.temporary = with_tls if mode == "tls" else Security
                options = RunOptions(workers=args.workers, progress=False)
                summary = run_sweep(args.pipeline, Path(scratch, f"{mode}{i}"), options)
                seconds[mode].append((summary.timings["compute"], summary.seconds))
                print(f"{mode:5s} compute {summary.timings['compute']:6.2f} s, total {summary.seconds:6.2f} s",
                      flush=True)
    for k, what in enumerate(("compute", "total")):
        tls = statistics.median(s[k] for s in seconds["tls"])
        plain = statistics.median(s[k] for s in seconds["plain"])
        print(f"median {what}: tls {tls:.2f} s, plain {plain:.2f} s, ratio {tls / plain:.2f}")


if __name__ == "__main__":
    main()
