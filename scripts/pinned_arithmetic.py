"""What pinned arithmetic changes on this machine: the results of every shipped study at
test size, and the speed.

``python3 scripts/pinned_arithmetic.py studies OUT [NAME ...]`` runs each study (or the
named ones: irma, nightly, linear_zoo, peers_a9a, rcv1, oms, omr) (the shipped IRMA,
nightly, linear zoo and peers pipelines as they are, and the reduced RCV1, OMS and online
manifold regularisation studies of ``tests/studies.py``; all but IRMA need
../shared/data) twice on 2 workers, with
``[execution] arithmetic = "native"`` (each worker its CPU's kernel and Numba target, as
dolb computed before pinning) and pinned (the default, x86-64-v3), and prints per study
whether the stored values are bit-identical (timing metrics such as ``learn_seconds`` left
out), how they differ otherwise
(:mod:`dolb.results.agreement`), and the compute phase's seconds of each run.

``python3 scripts/pinned_arithmetic.py bench ROUNDS`` runs ``dolb bench --quick`` (the
sparse linear learners' Numba kernels) ROUNDS times in each arithmetic, alternating
(pinned: ``NUMBA_CPU_NAME=x86-64-v3``, ``NUMBA_CPU_FEATURES=""``,
``OPENBLAS_CORETYPE=Haswell``; native: this process's environment without the Numba
variables), after one discarded round of each (Numba compiles for a new target once), and
prints the median examples/s of each learner and source side by side.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dolb.execution.arithmetic import PINS  # noqa: E402

PINNED = PINS["x86-64-v3"].environment


def _native(text: str) -> str:
    """A pipeline's text with ``arithmetic = "native"`` in its ``[execution]`` table."""
    if "[execution]" in text:
        return text.replace("[execution]", '[execution]\narithmetic = "native"', 1)
    return text + '\n[execution]\narithmetic = "native"\n'


SHIPPED = ("irma", "nightly", "linear_zoo", "peers_a9a")
"""Shipped pipelines run as they are (their relative paths resolve against pipelines/)."""


def _studies() -> dict[str, tuple[Path | None, str]]:
    """Each study's pipeline file (None: a test-size text of ``tests/studies.py``) and text."""
    from tests import studies

    found = {name: (ROOT / "pipelines" / f"{name}.toml", (ROOT / "pipelines" / f"{name}.toml").read_text())
             for name in SHIPPED}
    if studies.RCV1.exists():
        found["rcv1"] = (None, studies.rcv1_pipeline())
    if (studies.SHARED_DATA / "mnist").exists():
        found["oms"] = (None, studies.oms_pipeline())
        if (studies.SHARED_DATA / "face").exists():
            found["omr"] = (None, studies.omr_pipeline())
    return found


def studies(out: Path, names: list[str]) -> None:
    import numpy as np

    from dolb.evaluation.metrics import METRICS
    from dolb.execution.sweep import run_sweep
    from dolb.options import RunOptions
    from dolb.results.agreement import agreement
    from dolb.results.history import read_records
    from dolb.results.store import ResultStore
    from tests.conftest import stored_values

    for name, (shipped, text) in _studies().items():
        if names and name not in names:
            continue
        seconds = {}
        for mode, pipeline_text in (("native", _native(text)), ("pinned", text)):
            path = shipped or out / f"{name}-{mode}.toml"
            if shipped is None:
                path.write_text(pipeline_text)
            run_sweep(path, out / f"{name}-{mode}", RunOptions(workers=2, progress=False), pipeline_text=pipeline_text)
            (record,) = read_records(ResultStore(out / f"{name}-{mode}"))
            seconds[mode] = record["timings"].get("compute", 0.0)
        native, pinned = (stored_values(out / f"{name}-{mode}") for mode in ("native", "pinned"))
        timing = [metric for metric, spec in METRICS.items() if spec.source == "timing"]
        native, pinned = (frame[~frame["metric"].isin(timing)] for frame in (native, pinned))
        assert (native["cell_id"].to_numpy() == pinned["cell_id"].to_numpy()).all()
        found = agreement(native["learner"].to_numpy(), native["value"].to_numpy(np.float64),
                          pinned["value"].to_numpy(np.float64))
        print(f"{name}: {found.describe()}; compute {seconds['native']:.1f} s native, {seconds['pinned']:.1f} s pinned",
              flush=True)


def _bench(environment: dict[str, str]) -> dict[tuple, float]:
    run = subprocess.run([sys.executable, "-m", "dolb", "bench", "--quick", "--json", "--repeat", "1"],
                         capture_output=True, text=True, env=environment, check=True)
    return {(m["learner"], m["source"], m["conversions"]): m["examples_per_s"]
            for m in json.loads(run.stdout) if m.get("kind") == "throughput"}


def bench(rounds: int) -> None:
    base = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_CPU")} | {"PYTHONPATH": str(ROOT)}
    modes = {"native": base, "pinned": base | PINNED}
    found: dict[str, list[dict]] = {mode: [] for mode in modes}
    for round_ in range(rounds + 1):
        for mode, environment in modes.items():
            measured = _bench(environment)
            if round_:  # the first round of each compiles
                found[mode].append(measured)
    print(f"{'learner':<20} {'source':<7} {'conv.':<5} {'native ex/s':>12} {'pinned ex/s':>12} {'pinned/native':>13}")
    ratios = []
    for key in sorted(found["native"][0]):
        native = statistics.median(r[key] for r in found["native"])
        pinned = statistics.median(r[key] for r in found["pinned"])
        ratios.append(pinned / native)
        print(f"{key[0]:<20} {key[1]:<7} {key[2]:<5} {native:>12,.0f} {pinned:>12,.0f} {pinned / native:>13.3f}")
    print(f"median pinned/native over {len(ratios)} measurements: {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["studies"]:
        folder = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(tempfile.mkdtemp())
        folder.mkdir(parents=True, exist_ok=True)
        studies(folder, sys.argv[3:])
    elif sys.argv[1:2] == ["bench"]:
        bench(int(sys.argv[2]) if len(sys.argv) > 2 else 5)
    else:
        sys.exit(__doc__)
