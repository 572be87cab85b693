"""The nightly gate measured: its noise model's simulated nights, and the slowdown its
trial injects into the processes it benchmarks (none of dolb's code knows of it)."""

import subprocess
import sys
from types import SimpleNamespace

from benchmarks.__main__ import main
from benchmarks.gate import slowdown
from benchmarks.gate.slowdown import install, prelude
from dolb.bench.records import read_record
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
    """``install("pa:1")`` on blocks of 4 CPU seconds (a clock that ticks 0.5 s a
    reading): pa's block ends after at least twice its time, sgd's at once, both giving
    the block's mistakes; a child running :func:`prelude` has the wrapped method."""
    clock = SimpleNamespace(now=0.0)

    def thread_time():
        clock.now += 0.5
        return clock.now

    def block(learner, X, y, labelled=None, total=0.0):
        clock.now += 4.0
        return "mistakes"

    monkeypatch.setattr(LinearLearner, "learn_running", block)
    monkeypatch.setattr(slowdown, "time", SimpleNamespace(thread_time=thread_time))
    install("pa:1")
    for name, at_least, below in (("pa", 8.0, 11.0), ("sgd", 4.0, 6.0)):
        clock.now = 0.0
        assert LinearLearner.learn_running(SimpleNamespace(name=name), None, None) == "mistakes"
        assert at_least <= clock.now < below, name
    code = prelude("pa") + "from dolb.learners.linear.learner import LinearLearner as L\nprint(L.learn_running.__qualname__)"
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert child.stdout.strip() == "install.<locals>.learn_running" and prelude(None) == ""
