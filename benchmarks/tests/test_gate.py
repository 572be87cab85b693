"""The nightly gate measured: its noise model's simulated nights, and the slowdown its
trial injects into the processes it benchmarks (none of dolb's code knows of it)."""

import subprocess
import sys

import numpy as np

from benchmarks.__main__ import main
from benchmarks.gate.slowdown import install, prelude
from dolb.bench.records import read_record
from dolb.learners import learner_class
from dolb.learners.linear.learner import LinearLearner


def test_noise_model_few_false_alarms_and_sees_a_slowdown(tmp_path, capsys):
    """`python -m benchmarks gate-noise` (seeds 1 and 2): the rank test alone cries wolf, the A/B
    does not, and a learner 0.8x is named; the record keeps the rates and the spreads."""
    argv = ["gate-noise", "--nights", "25", "--learners", "5", "--night-sd", "0.12", "--learner-sd", "0.05",
            "--repeat-sd", "0.05", "--ab-sd", "0.04", "--seed", "1", "--record", str(tmp_path)]
    assert main(argv) == 0
    assert "identical code: alarms 0.0% with the A/B" in capsys.readouterr().out
    (path,) = (tmp_path / "gate-noise").iterdir()
    record = read_record(path)
    rates = {(m["labels"]["code"], m["labels"]["figure"]): m["repeats"] for m in record["measurements"]}
    assert len(rates) == 10 and all(len(r) == 1 for r in rates.values())
    assert rates["identical", "alarms, with the A/B"] == [0.0] and rates["identical", "alarms, rank test alone"][0] > 0.2
    assert rates["one learner 0.8x", "slowed learner named"][0] >= 0.9
    assert {d["labels"]["spread"]: d["value"] for d in record["derived"]} == {
        "night": 0.12, "learner": 0.05, "repeat": 0.05, "ab": 0.04}


def test_the_slowdown_slows_its_learner_only_and_reaches_a_child_through_its_prelude(monkeypatch):
    """``install("pa:1")``: pa's blocks take about twice their CPU time, sgd's not, the
    mistakes the same; a child running :func:`prelude` has the wrapped method."""
    import time

    monkeypatch.setattr(LinearLearner, "learn_running", LinearLearner.learn_running)  # put back after
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(20_000, 20)), rng.integers(0, 2, 20_000) * 2 - 1.0

    def cpu(name):
        learner = learner_class(name)(**learner_class(name).bench_params)
        learner.learn_running(X[:100], y[:100])  # compiled
        start = time.thread_time()
        running = learner.learn_running(X, y)
        return time.thread_time() - start, running

    before = {name: cpu(name) for name in ("pa", "sgd")}
    install("pa:1")
    after = {name: cpu(name) for name in ("pa", "sgd")}
    assert after["pa"][0] >= 1.9 * before["pa"][0] and np.array_equal(after["pa"][1], before["pa"][1])
    assert after["sgd"][0] < after["pa"][0]
    code = prelude("pa") + "from dolb.learners.linear.learner import LinearLearner as L\nprint(L.learn_running.__qualname__)"
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert child.stdout.strip() == "install.<locals>.learn_running" and prelude(None) == ""
