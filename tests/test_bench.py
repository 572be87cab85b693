"""`dolb bench`: every measurement is there, the JSON has the documented fields, and the
ratios inside one run hold (no wall-clock limits: the machine may be shared)."""

import json
import math
import re
import statistics

import pytest

from dolb.bench.throughput import as_json, as_text, cutoff_memory, measure, run_bench, sparse_stream
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
    assert ours.examples_per_s > 0.2 * reference["reference_perceptron_sparse_memory"][0]


def test_json_and_text(quick_bench):
    rows = as_json(*quick_bench, load_before=1.5)
    throughput = [r for r in rows if r["kind"] == "throughput"]
    assert len(throughput) == 16
    for row in throughput:
        assert {"learner", "input", "source", "conversions", "examples_per_s"} <= set(row)
    json.dumps(rows)  # serialisable
    machine = rows[0]
    assert machine["kind"] == "machine" and machine["cpus"] >= 1
    assert {"host", "cpu", "system", "python", "numpy", "scipy", "numba", "dolb", "governor", "git_commit"} <= set(machine)
    assert machine["load_before"] == 1.5 and machine["load_after"] >= 0  # the load around the benchmark
    for row in throughput + [r for r in rows if r["kind"] == "reference"]:  # every repeat kept, the median shown
        assert len(row["repeats"]) == 1 and row["examples_per_s"] == row["repeats"][0]
    text = as_text(*quick_bench)
    assert "x the reference loop" in text and "distinct r" in text


def test_every_measurement_is_repeated_round_robin_and_kept():
    X, y = sparse_stream(3_000)
    reference = []
    found = measure(["perceptron", "pa"], X, y, "sparse", 3, None, reference)
    assert [(m.learner, m.source, m.conversions) for m in found] == [
        (name, "memory", conversions) for name in ("perceptron", "pa") for conversions in ("last", "all")]
    assert len(reference) == 3 and all(speed > 0 for speed in reference)
    for m in found:
        assert len(m.repeats) == 3 and m.examples_per_s == statistics.median(m.repeats) and m.examples == 3_000


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
    """`dolb bench kernel N --no-peers` on real digits: LASVM's line, its FINISH and the
    NumPy kernel row, with a test error a kernel machine reaches (the majority class errs
    on 10 % of the test digits)."""
    assert main(["bench", "kernel", "600", "--mnist", str(SHARED_DATA / "mnist"), "--no-peers"]) == 0
    out = capsys.readouterr().out
    error = float(re.search(r"LASVM n=600: .* test error ([\d.]+)%", out).group(1))
    assert 0.0 < error < 6.0 and "FINISH:" in out and "NumPy RBF kernel row" in out


def test_the_kernel_bench_needs_the_digits(tmp_path, capsys):
    assert main(["bench", "kernel", "10", "--mnist", str(tmp_path / "none")]) == 2
    assert capsys.readouterr().err == f"dolb: error: --mnist {tmp_path / 'none'}: no such folder (the four MNIST IDX files)\n"


def test_the_omr_bench_measures_the_three_learners_and_the_exact_growth(capsys):
    """`dolb bench omr 1000` (a short stream: the full one takes minutes): a line for
    each learner with finite figures, a buffer that learns the spirals, and the exact
    learner's time per step at t = 250, 500, 1,000 with its fitted slope."""
    assert main(["bench", "omr", "1000"]) == 0
    out = capsys.readouterr().out
    for label in ("online_mr_buffer τ=100", "online_mr_buffer τ=200", "online_mr_rptree"):
        line = re.search(rf"^{label}: ([\d.]+) s, ([\d,]+) examples/s, test error ([\d.]+)%, state ([\d,]+) kB; "
                         r"per example ([\d,]+) µs in the first tenth, ([\d,]+) µs in the last", out, re.M)
        figures = [float(x.replace(",", "")) for x in line.groups()]
        assert all(math.isfinite(x) for x in figures) and figures[1] > 0 and figures[3] > 0
        if label.startswith("online_mr_buffer"):
            assert figures[2] < 35.0  # 28.7 % measured; the majority class errs on half
    exact = re.search(r"^  online_mr \(exact\): t=250 ([\d,]+), t=500 ([\d,]+), t=1,000 ([\d,]+); "
                      r"log-log slope (-?[\d.]+)$", out, re.M)
    assert exact and all(float(x.replace(",", "")) > 0 for x in exact.groups()[:3])
    assert math.isfinite(float(exact.group(4)))
    assert re.search(r"^  exact / online_mr_buffer τ=100: t=250 [\d.]+, t=500 [\d.]+, t=1,000 [\d.]+$", out, re.M)


@pytest.mark.parametrize("argv, message", [
    (["omr", "0"], "dolb bench omr: error: argument T: expected at least 1, got 0 (see dolb bench omr --help)"),
    (["omr", "10", "--kernel", "10"],
     "dolb: error: unrecognized arguments: --kernel 10 (see dolb --help)"),
])
def test_the_omr_bench_refuses_bad_input(argv, message, capsys):
    assert main(["bench", *argv]) == 2
    assert capsys.readouterr().err == f"{message}\n"
