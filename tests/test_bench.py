"""`dolb bench`: every measurement is there, the JSON has the documented fields, and the
ratios inside one run hold (no wall-clock limits: the machine may be shared)."""

import json
import math
import re

import pytest

from dolb.bench import as_json, as_text, cutoff_memory, run_bench
from dolb.cli import main
from tests.conftest import SHARED_DATA, requires_shared_data


@pytest.fixture(scope="module")
def quick_bench():
    return run_bench(["perceptron", "pa"], quick=True, repeat=1, zarr=True)


def test_every_learner_input_source_and_conversion_is_measured(quick_bench):
    found, reference, _ = quick_bench
    keys = {(m.learner, m.input, m.source, m.conversions) for m in found}
    assert keys == {
        (learner, kind, source, conversions)
        for learner in ("perceptron", "pa")
        for kind in ("sparse", "dense")
        for source in ("memory", "zarr")
        for conversions in ("last", "all")
    }
    assert all(m.examples_per_s > 0 and m.examples in (10_000, 20_000) for m in found)
    assert all(m.state_mb >= 0 and m.peak_rss_mb > 0 for m in found)
    # ratio inside one run, loose: the target is 0.5x the hand-written loop
    ours = next(m for m in found if (m.learner, m.input, m.source, m.conversions)
                == ("perceptron", "sparse", "memory", "last"))
    assert ours.examples_per_s > 0.2 * reference["reference_perceptron_sparse_memory"]


def test_json_and_text(quick_bench):
    rows = as_json(*quick_bench)
    throughput = [r for r in rows if r["kind"] == "throughput"]
    assert len(throughput) == 16
    for row in throughput:
        assert {"learner", "input", "source", "conversions", "examples_per_s"} <= set(row)
    json.dumps(rows)  # serialisable
    text = as_text(*quick_bench)
    assert "x the reference loop" in text and "distinct r" in text


def test_cutoff_memory_grows_like_the_square_root_of_m():
    rows = cutoff_memory([500, 5_000, 50_000])
    for row in rows:  # distinct survival times r are at most sqrt(2m) + 1
        assert 0 < row["distinct_r"] <= math.sqrt(2 * row["m"]) + 1
        assert row["W_r_mb"] == pytest.approx(row["distinct_r"] * 100 * 8 / 1e6)
    assert rows[0]["distinct_r"] < rows[-1]["distinct_r"] < 100 * rows[0]["distinct_r"]


def test_bench_cli_rejects_unknown_learner(capsys):
    assert main(["bench", "--only", "nope"]) == 2
    assert "unknown learner 'nope'" in capsys.readouterr().err


@requires_shared_data("mnist")
def test_the_kernel_bench_measures_lasvm_on_mnist(capsys):
    """`dolb bench --kernel N --no-peers` on real digits: LASVM's line, its FINISH and the
    NumPy kernel row, with a test error a kernel machine reaches (the majority class errs
    on 10 % of the test digits)."""
    assert main(["bench", "--kernel", "600", "--mnist", str(SHARED_DATA / "mnist"), "--no-peers"]) == 0
    out = capsys.readouterr().out
    error = float(re.search(r"LASVM n=600: .* test error ([\d.]+)%", out).group(1))
    assert 0.0 < error < 6.0 and "FINISH:" in out and "NumPy RBF kernel row" in out


def test_the_kernel_bench_needs_the_digits(tmp_path, capsys):
    assert main(["bench", "--kernel", "10", "--mnist", str(tmp_path / "none")]) == 2
    assert capsys.readouterr().err == f"dolb: error: --mnist {tmp_path / 'none'}: no such folder (the four MNIST IDX files)\n"
