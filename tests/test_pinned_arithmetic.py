"""Pinned arithmetic: workers of two CPU types in one cluster (emulated by OpenBLAS's
kernel choice and Numba's target CPU) store the same bits as one machine type when the
pipeline pins the arithmetic (the default), and `dolb reproduce` and `dolb compare`
explain the difference when it does not."""

import os
import re
import textwrap

import numpy as np
import pandas as pd
import pytest
from distributed import Client

from dolb.cli import main
from dolb.execution.arithmetic import PINS, Pin, environment
from dolb.experiment.schema import ARITHMETIC
from dolb.results.agreement import agreement
from dolb.results.compare import Comparison
from dolb.results.history import machines, read_records
from dolb.results.store import ResultStore
from tests.conftest import SMALL_IRMA, assert_same, dask_processes, dask_worker

THIS_CPU = {"NUMBA_CPU_NAME": None, "NUMBA_CPU_FEATURES": None}
"""A worker of this machine: OpenBLAS's kernel as the environment says, Numba compiling
for the host (the test session's own target, set in ``conftest.py``, removed)."""
OTHER_CPU = {"OPENBLAS_CORETYPE": "Prescott", "NUMBA_CPU_NAME": "generic"}
"""A worker of an older CPU: OpenBLAS's SSE3 kernels (which it reports as Katmai),
Numba compiling for a generic x86-64."""


def test_the_pipeline_names_every_pin():
    assert set(ARITHMETIC) == set(PINS) | {"native"}


def test_a_pin_holds_for_its_kernel_and_target_only():
    pin = PINS["x86-64-v3"]
    haswell = {"blas": [{"library": "openblas", "kernel": "Haswell"}], "numba_cpu": "x86-64-v3"}
    assert pin.holds(haswell)
    assert not pin.holds(haswell | {"numba_cpu": "znver5"})
    assert not pin.holds(haswell | {"blas": [{"library": "openblas", "kernel": "Katmai"}]})
    assert not pin.holds(haswell | {"blas": [{"library": "mkl", "kernel": "Haswell"}]})
    assert pin.environment == {"OPENBLAS_CORETYPE": "Haswell", "NUMBA_CPU_NAME": "x86-64-v3", "NUMBA_CPU_FEATURES": ""}
    assert not Pin("x86-64-v9", "Future", ("no_such_flag",)).supported()


def test_the_pinned_environment_lasts_as_long_as_the_cluster(monkeypatch):
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Zen")
    monkeypatch.delenv("NUMBA_CPU_NAME", raising=False)
    with environment(PINS["x86-64-v3"].environment):
        assert (os.environ["OPENBLAS_CORETYPE"], os.environ["NUMBA_CPU_NAME"]) == ("Haswell", "x86-64-v3")
    assert os.environ["OPENBLAS_CORETYPE"] == "Zen" and "NUMBA_CPU_NAME" not in os.environ


def test_a_difference_beyond_the_tolerance_is_a_regression_when_one_is_given():
    learners, one = np.array(["rls", "irma"]), np.array([1.0, 2.0])
    found = agreement(learners, one, np.array([1.0, 2.0 * (1 + 1e-5)]))
    assert (found.verdict, found.learners) == ("beyond", ("irma",))
    assert found.describe().startswith("1 of 2 values differ beyond --rtol 1e-06 (relative difference up to 1e-05")
    assert agreement(learners, one, one).describe() == "all 2 values bit-identical"
    assert agreement(learners, one, np.array([1.0, np.nan])).verdict == "beyond"
    unchanged = pd.DataFrame({"verdict": ["unchanged"]})
    assert Comparison(unchanged, pd.DataFrame({"slower": [False]}), agreement=found, rtol=1e-6).regressed
    assert not Comparison(unchanged, pd.DataFrame({"slower": [False]}), agreement=found).regressed  # only described


@pytest.mark.e2e
@pytest.mark.skipif(not PINS["x86-64-v3"].supported(), reason="needs an x86-64 CPU with AVX2 and FMA")
def test_two_cpu_types_store_the_bits_of_one_when_pinned(tmp_path, capsys):
    pinned, native = tmp_path / "pinned.toml", tmp_path / "native.toml"
    cells = textwrap.dedent(SMALL_IRMA).split("[[reports]]")[0]  # no report to draw at every run
    pinned.write_text(cells)
    native.write_text(cells + '\n[execution]\narithmetic = "native"\n')
    assert main(["-q", "run", str(pinned), "--out", str(tmp_path / "home-pinned"), "--workers", "1"]) == 0

    with dask_processes(tmp_path, machines=(THIS_CPU,)) as scheduler_file:
        where = ["--scheduler", str(scheduler_file)]
        with Client(scheduler_file=str(scheduler_file)) as client:
            client.wait_for_workers(1, timeout=60)
        assert main(["-q", "run", str(native), "--out", str(tmp_path / "home-native"), *where]) == 0  # this machine
        with dask_worker(scheduler_file, machine=OTHER_CPU), Client(scheduler_file=str(scheduler_file)) as client:
            client.wait_for_workers(2, timeout=60)

            # unpinned, the values depend on the CPU each cell ran on; reproduce and compare say so
            mixed = str(tmp_path / "mixed-native")
            capsys.readouterr()
            assert main(["-q", "reproduce", str(tmp_path / "home-native"), "--out", mixed, *where]) == 1
            printed = capsys.readouterr().out
            assert re.search(r"NOT reproduced: [\d,]+ of 1,008 values differ", printed)
            noise = re.search(r"differ within floating-point noise \(relative difference up to (\S+), ([\d,]+) ulps?; "
                              r"learners: ([a-z_, ]+)\); likely cause, the machines differ \(recorded: 1 worker on "
                              r"(.*); now: (.*)\)", printed)
            assert noise, printed
            assert 0 < float(noise[1]) < 1e-6 and set(noise[3].split(", ")) <= {"irma", "batch_ls", "rls"}
            assert "Numba generic" in noise[5] and "Katmai" in noise[5] and "Katmai" not in noise[4]
            assert "Numba x86-64-v3" not in noise[4]  # the host's name
            # a deterministic metric that changed is a nightly alarm (exit 1), explained
            assert main(["compare", mixed, str(tmp_path / "home-native"), "--out", str(tmp_path / "compare")]) == 1
            printed = capsys.readouterr().out
            assert "values differ within floating-point noise" in printed and "Numba generic" in printed

            # pinned (the default), both workers are restarted with the pin: the same bits
            again = tmp_path / "mixed-pinned"
            assert main(["-q", "reproduce", str(tmp_path / "home-pinned"), "--out", str(again), *where]) == 0
            assert "all 1,008 values bit-identical" in capsys.readouterr().out
    assert_same(again, tmp_path / "home-pinned")
    (record,) = read_records(ResultStore(again))
    assert re.fullmatch(r"2 workers on [^;]*, openblas \S+ Haswell x1(, openblas \S+ Haswell x1)?, Numba x86-64-v3, "
                        r"NumPy \w+", machines(record))
