"""What did a run's arithmetic: the CPU, the BLAS (library, version, kernel, threads)
and Numba's target CPU of every worker, recorded and shown by `dolb status` and the
run page."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from dolb.cli import main
from dolb.execution.environment import cpu_model, numpy_simd
from dolb.results.history import machines


def test_each_kind_of_worker_is_named_once():
    haswell = {"cpu": "AMD EPYC", "blas": [{"library": "openblas", "version": "0.3.31", "kernel": "Haswell",
                                            "threads": 1}], "numba_cpu": "znver5", "numpy_simd": "X86_V3"}
    prescott = haswell | {"blas": [haswell["blas"][0] | {"kernel": "Prescott"}], "numba_cpu": "generic"}
    record = {"workers": {"a": {"arithmetic": haswell}, "b": {"arithmetic": prescott}, "c": {"arithmetic": haswell}}}
    assert machines(record) == ("2 workers on AMD EPYC, openblas 0.3.31 Haswell x1, Numba znver5, NumPy X86_V3; "
                                "1 worker on AMD EPYC, openblas 0.3.31 Prescott x1, Numba generic, NumPy X86_V3")
    assert machines({"run_id": "r"}) == "machines not recorded"  # a run that did not finish


def test_a_run_records_and_shows_its_workers_arithmetic(small_run, tmp_path, capsys):
    """The session's run of the small IRMA pipeline on one worker (a copy of its folder)."""
    out = shutil.copytree(small_run, tmp_path / "out")
    (record,) = [json.loads(path.read_text()) for path in (out / "runs").glob("*.json")]
    (worker,) = record["workers"].values()
    found = worker["arithmetic"]
    assert found["cpu"] == cpu_model() and found["numba_cpu"] == "x86-64-v3"  # pinned by default
    assert found["numpy_simd"] == numpy_simd() and machines(record).endswith(f", NumPy {numpy_simd()}")
    assert found["blas"] and all(blas["threads"] == 1 and blas["kernel"] == "Haswell" for blas in found["blas"])
    capsys.readouterr()
    assert main(["status", str(out)]) == 0
    shown = machines(record)
    assert shown.startswith(f"1 worker on {cpu_model()}, ") and f"  {shown}\n" in capsys.readouterr().out
    assert f"<dt>machines</dt><dd>{shown}</dd>" in (out / "report" / "index.html").read_text()


def test_a_reproduction_names_the_machines_that_differ():
    from dolb.execution.reproduce import Reproduction

    def outcome(recorded, now):
        return Reproduction("r1", 10, 8, 0, 0, 1e-9, machines=(recorded, now)).describe().splitlines()

    assert outcome("1 worker on A", "1 worker on B") == [
        "run r1 NOT reproduced: 2 of 10 values differ (largest difference 1e-09), 0 missing, 0 new",
        "same versions as recorded", "machines that differ: recorded 1 worker on A; now 1 worker on B"]
    assert outcome("1 worker on A", "1 worker on A")[-1] == "same versions as recorded"


def test_more_or_fewer_workers_of_the_same_kinds_are_the_same_machines():
    from dolb.results.history import same_machines

    haswell = {"cpu": "AMD EPYC", "blas": [], "numba_cpu": "x86-64-v3", "numpy_simd": "X86_V3"}
    two = {"workers": {"a": {"arithmetic": haswell}, "b": {"arithmetic": haswell}}}
    assert same_machines(two, {"workers": {"c": {"arithmetic": haswell}}})
    assert not same_machines(two, {"workers": {"c": {"arithmetic": haswell | {"numba_cpu": "generic"}}}})
    assert same_machines(two, {"run_id": "r"})  # a run that did not finish lists no workers


def test_the_commit_recorded_is_dolbs_own_checkouts_only(tmp_path, monkeypatch):
    """A run from dolb's checkout records its commit; from another git checkout (the
    user's own project) or outside one, none: that commit is not dolb's code."""
    from dolb.execution.environment import git_commit

    root = Path(__file__).resolve().parents[1]
    if shutil.which("git") is None or not (root / ".git").exists():
        pytest.skip("not a git checkout")
    monkeypatch.chdir(root)
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    assert git_commit() == head
    other = tmp_path / "project"
    other.mkdir()
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    subprocess.run(["git", "-C", str(other), "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q",
                    "--allow-empty", "-m", "x"], check=True)
    monkeypatch.chdir(other)
    assert git_commit() is None
    monkeypatch.chdir(tmp_path)
    assert git_commit() is None


def test_a_process_lists_the_same_blas_before_and_after_scipy_computed():
    """SciPy's wheels carry an OpenBLAS of their own, loaded with scipy.linalg: a worker
    that has solved a system is the same machine as one that has not."""
    import sys

    script = ("import numpy, scipy\n"
              "from dolb.execution.environment import arithmetic, blas_threads\n"
              "before = arithmetic(), blas_threads()\n"
              "import scipy.linalg\n"
              "scipy.linalg.solve(numpy.eye(3), numpy.ones(3))\n"
              "print(before == (arithmetic(), blas_threads()), len(before[0]['blas']))\n")
    shown = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split()
    assert shown[0] == "True" and int(shown[1]) >= 1, shown
