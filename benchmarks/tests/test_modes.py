"""The modes of ``python -m benchmarks`` (benchmarks.modes), each on its quickest
setting or with its runs replaced by given figures: the record each writes, and its
mistakes refused in one line before anything runs."""

import contextlib
import json

import pandas as pd
import pytest

from benchmarks.__main__ import main
from benchmarks.modes import MODES
from dolb.bench.modes import MODES as DOLB_MODES
from dolb.bench.records import read_record
from dolb.cli import main as dolb_main


def test_the_list_names_every_mode_and_none_is_also_dolbs(capsys):
    assert main(["--list"]) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()] == list(MODES)
    assert not set(MODES) & set(DOLB_MODES)


@pytest.mark.parametrize("name", list(MODES))
def test_every_mode_has_its_help_a_runner_and_a_record_folder(name, capsys):
    assert main([name, "--help"]) == 0
    assert "--record DIR" in capsys.readouterr().out
    assert callable(MODES[name].runner())


def test_a_mode_of_the_benchmarks_is_no_mode_of_dolb_bench(capsys):
    assert dolb_main(["bench", "scale"]) == 2
    assert "invalid choice: 'scale'" in capsys.readouterr().err


def test_contention_records_each_process_alone_and_side_by_side(tmp_path, capsys):
    """`python -m benchmarks contention` on the register-only workload for a fifth of a second:
    one rate alone, two side by side, and their ratios to it."""
    assert main(["contention", "--seconds", "0.2", "--workloads", "arithmetic", "--record",
                 str(tmp_path)]) == 0
    (path,) = (tmp_path / "contention").iterdir()
    record = read_record(path)
    alone, paired = record["measurements"]
    assert alone["labels"] == {"workload": "arithmetic", "processes": "1"} and len(alone["repeats"]) == 1
    assert paired["labels"] == {"workload": "arithmetic", "processes": "2"} and len(paired["repeats"]) == 2
    assert all(rate > 0 for rate in alone["repeats"] + paired["repeats"])
    ratios = {d["labels"]["ratio"]: d["value"] for d in record["derived"]}
    assert ratios == {"slower side by side / alone": min(paired["repeats"]) / alone["repeats"][0],
                      "faster side by side / alone": max(paired["repeats"]) / alone["repeats"][0]}


@pytest.mark.parametrize("argv, message", [
    (["--workloads", "disk"], "benchmarks: error: --workloads: unknown workload 'disk' (known: arithmetic, stream)"),
    (["--seconds", "0"], "python -m benchmarks contention: error: argument --seconds: expected a number above 0, got 0"),
    (["--workloads", "stream", "--rcv1", "{tmp}/junk.npz"], "benchmarks: error: the stream workload failed in its process: "),
])
def test_contention_refuses_bad_input_in_one_line(tmp_path, capsys, argv, message):
    (tmp_path / "junk.npz").write_text("not an archive")
    argv = [a.format(tmp=tmp_path) for a in argv]
    assert main(["contention", *argv, "--record", str(tmp_path / "records")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1 and not (tmp_path / "records").exists()


def test_gate_trial_records_each_nights_ratios_and_the_alarms(tmp_path, monkeypatch, capsys):
    """`python -m benchmarks gate-trial` with each night's `dolb bench` and the A/B replaced by
    given speeds, pa injected 0.8x after the reference night: every later night alarms
    on pa and names it; the record keeps each night's ratios and the spreads."""
    import benchmarks.gate.gate_trial as trial

    def bench_night(folder, learners, inject):
        folder.mkdir(parents=True)
        rows = [{"kind": "machine", "cpu": "AMD EPYC", "cpus": 2, "load_before": 1.0, "load_after": 1.0,
                 "git_commit": "a" * 40}]
        rows += [{"kind": "throughput", "learner": learner, "input": "sparse", "source": "memory",
                  "conversions": "last", "examples_per_s": speed, "repeats": [speed * r for r in (0.99, 1, 1.01)] * 2}
                 for learner in learners.split(",") for speed in [100.0 * (0.8 if learner == inject else 1.0)]]
        (folder / "bench.json").write_text(json.dumps(rows))

    def confirm_commits(repo, scratch, rounds, prelude):
        def confirm(before, after, learners):
            return pd.DataFrame([(learner, "sparse", "memory", "last", r, 100.0, 100.0 * (0.8 if learner == "pa" else 1)
                                  * (1 + r / 100)) for r in range(rounds) for learner in learners],
                                columns=["learner", "input", "source", "conversions", "round", "before", "after"])
        return confirm

    monkeypatch.setattr(trial, "bench_night", bench_night)
    monkeypatch.setattr(trial, "confirm_commits", confirm_commits)
    argv = ["gate-trial", str(tmp_path / "out"), "--nights", "3", "--busy", "0", "--inject", "pa",
            "--learners", "pa,sgd", "--rounds", "7", "--record", str(tmp_path / "records")]
    assert main(argv) == 0
    summary = json.loads((tmp_path / "out" / "trial.json").read_text())
    assert [n["alarms"] for n in summary["nights"]] == [["pa"], ["pa"]] and summary["named"] == 2
    (path,) = (tmp_path / "records" / "gate-trial").iterdir()
    record = read_record(path)
    ratios = {(m["labels"]["night"], m["labels"]["learner"], m["labels"]["figure"]): m["repeats"]
              for m in record["measurements"]}
    assert ratios[("1", "pa", "night / reference")] == [0.8] and ratios[("2", "sgd", "night / reference")] == [1.0]
    assert ratios[("2", "pa", "A/B after / before")] == [0.824]  # the median round's, 0.8 x 1.03
    figures = {d["labels"]["figure"]: d["value"] for d in record["derived"]}
    assert figures["alarm_nights"] == 2 and figures["named"] == 2
    assert figures["between_night_sd_median"] == 0.0  # a robust sd: one change in three nights is no spread


def test_gate_trial_refuses_a_busy_pattern_of_other_than_0_and_1(tmp_path, capsys):
    assert main(["gate-trial", str(tmp_path / "out"), "--busy", "1,2"]) == 2
    assert capsys.readouterr().err == "benchmarks: error: --busy 1,2: expected a comma-separated list of 0 and 1\n"
    assert not (tmp_path / "out").exists()


def test_reader_records_every_pass_of_each_store_and_order(tmp_path, capsys):
    assert main(["reader", "--rows-dense", "3000", "--rows-sparse", "2000", "--block-size", "512",
                 "--record", str(tmp_path)]) == 0
    (path,) = (tmp_path / "reader").iterdir()
    found = {tuple(m["labels"].values()): m["repeats"] for m in read_record(path)["measurements"]}
    assert sorted(found) == sorted((store, rows, order, "float64", "512") for store, rows in
                                   (("dense", "3000"), ("sparse", "2000")) for order in ("stored order", "permuted"))
    assert all(len(rates) == 3 and min(rates) > 0 for rates in found.values())


def test_cold_start_records_both_runs_phases_and_fails_when_their_values_differ(tmp_path, monkeypatch, capsys):
    """`python -m benchmarks cold-start` with each `dolb run` replaced by a run record of given
    phases: the record keeps each phase of each cache state, every repeat; a cold and a
    warm run that stored different values end with status 1 and no record."""
    import benchmarks.engine.cold_start as cold

    seconds = iter([9.0, 3.0, 8.0, 2.5])
    monkeypatch.setattr(cold, "run", lambda pipeline, out, cache, workers, data: {
        "seconds": (wall := next(seconds)), "timings": {"data": 0.25, "cluster": wall - 1.0, "compute": 0.5}})
    monkeypatch.setattr(cold, "values", lambda out: pd.DataFrame({"value": [1.0, 2.0]}))
    assert main(["cold-start", "--repeats", "2", "--record", str(tmp_path)]) == 0
    (path,) = (tmp_path / "cold-start").iterdir()
    found = {(m["labels"]["cache"], m["labels"]["figure"]): m["repeats"] for m in read_record(path)["measurements"]}
    assert found == {("cold", "cluster"): [8.0, 7.0], ("cold", "compute"): [0.5, 0.5], ("cold", "wall"): [9.0, 8.0],
                     ("warm", "cluster"): [2.0, 1.5], ("warm", "compute"): [0.5, 0.5], ("warm", "wall"): [3.0, 2.5],
                     ("cold", "data"): [0.25, 0.25], ("warm", "data"): [0.25, 0.25]}
    seconds = iter([9.0, 3.0])
    monkeypatch.setattr(cold, "values", lambda out: pd.DataFrame({"value": [1.0, 2.0 if out.name.startswith("cold") else 2.1]}))
    assert main(["cold-start", "--record", str(tmp_path / "again")]) == 1
    assert capsys.readouterr().err == "dolb: the cold and the warm run stored different values\n"
    assert not (tmp_path / "again").exists()
    assert main(["cold-start", "--pipeline", "nowhere.toml"]) == 2
    assert capsys.readouterr().err == "benchmarks: error: --pipeline nowhere.toml: no such file\n"


def test_store_records_each_step_and_the_parts_before_and_after_compaction(tmp_path, monkeypatch, capsys):
    """`python -m benchmarks store` on 100 cells in 4 parts, each timed step run here (its timing
    replaced by given seconds): the parts written, fewer after `dolb compact`."""
    import benchmarks.engine.store as bench

    steps = []

    def in_process(argv):
        steps.append(argv[0])
        if argv[0] == "-c":
            exec(argv[1])
        else:
            assert dolb_main(argv) == 0
        return 2.0, 1.5

    monkeypatch.setattr(bench, "timed", in_process)
    assert main(["store", "--cells", "100", "--parts", "4", "--work", str(tmp_path / "work"),
                 "--record", str(tmp_path / "records")]) == 0
    assert steps == ["status", "compact", "status", "report", "-c"]
    (path,) = (tmp_path / "records" / "store").iterdir()
    found = {(m["labels"]["step"], m["labels"].get("figure")): m["repeats"] for m in read_record(path)["measurements"]}
    assert found.pop(("parts before compaction", None)) == [4.0]
    (after,) = found.pop(("parts after compaction", None))
    assert 1 <= after < 4
    assert found == {(step, figure): [seconds] for step in ("status (as the run left it)", "compact", "status",
                                                            "report", "read_results")
                     for figure, seconds in (("wall", 2.0), ("cpu", 1.5))}


def test_tuning_timeline_records_when_each_splits_rungs_ran(tmp_path, capsys):
    """`python -m benchmarks tuning-timeline` on 2 worker threads, no cell held: every split's three
    rungs and chosen cell, each stage after the one before it, and the cell runner put
    back after."""
    from dolb.execution import tasks

    run_cell = tasks.run_cell
    assert main(["tuning-timeline", "--workers", "2", "--fast", "0", "--record", str(tmp_path)]) == 0
    assert tasks.run_cell is run_cell
    (path,) = (tmp_path / "tuning-timeline").iterdir()
    found = {(m["labels"].get("split", ""), m["labels"].get("stage", ""), m["labels"]["figure"]): m["repeats"][0]
             for m in read_record(path)["measurements"]}
    stages = ["rung 0", "rung 1", "rung 2", "chosen"]
    assert sorted(found) == sorted([(str(split), stage, figure) for split in range(4) for stage in stages
                                    for figure in ("first start", "last end")] + [("", "", "compute")])
    for split in map(str, range(4)):
        assert found[split, "rung 0", "first start"] >= 0.0
        for before, after in zip(stages, stages[1:]):
            assert found[split, before, "last end"] <= found[split, after, "first start"]


def test_scale_records_each_run_of_the_tiny_workload_on_one_and_two_workers(tmp_path, monkeypatch, capsys):
    """`python -m benchmarks scale` on 10 tiny cells, twice on each worker count, each `dolb run`
    replaced by the figures its process would report (compute halved on 2 workers):
    every figure of every run, and the ratios 1 -> 2 workers."""
    import benchmarks.engine.scale as scale

    def launch(argv, log, env, kill_when=None, prelude=""):
        workers = int(argv[argv.index("--workers") + 1]) if "--workers" in argv else 1  # else its own scheduler's
        cells = 1010 if "-x101-" in str(log) else 10  # the larger run (the client's marginal cost)
        record = {"counts": {"computed": cells, "failed": 0, "cached": 0}, "workers": workers, "tasks": 2,
                  "timings": {"plan": 0.1, "data": 0.2, "cluster": 1.0, "compute": 2.0 / workers},
                  "client_cpu_seconds": 0.01}
        return {"record": record, "submit_cpu": 0.5, "exit_cpu": 0.52, "submit_at": 1.5, "main_at": 0.3,
                "computed_cpu": 0.51, "computed_at": 1.5 + 2.0 / workers, "idle_rate": 0.001, "main_cpu": 0.005,
                "wall": 1.5 + 2.0 / workers, "peak_rss": 2**27, "status": 0, "killed": False, "log": str(log)}

    @contextlib.contextmanager
    def own_scheduler(folder):
        yield folder / "scheduler.json"

    monkeypatch.setattr(scale, "launch", launch)
    monkeypatch.setattr(scale, "own_scheduler", own_scheduler)
    assert main(["scale", "--only", "tiny", "--cells", "10", "--repeats", "2", "--work",
                 str(tmp_path / "work"), "--record", str(tmp_path / "records")]) == 0
    (path,) = (tmp_path / "records" / "scale").iterdir()
    record = read_record(path)
    assert record["command"].startswith("python -m benchmarks scale --only tiny")
    runs = {(m["labels"]["workers"], m["labels"]["figure"]): m["repeats"] for m in record["measurements"]
            if "scheduler" not in m["labels"]}
    own = {(m["labels"]["cells"], m["labels"]["figure"]): m["repeats"] for m in record["measurements"]
           if m["labels"].get("scheduler") == "own process"}
    assert own["1010", "worker_us"] == [2.0 * 1 / 1010 * 1e6] * 2 and own["10", "tasks"] == [2, 2]
    assert runs["1", "wall"] == [3.5, 3.5] and runs["2", "wall"] == [2.5, 2.5]
    assert runs["1", "worker_us"] == [2.0 * 1 / 10 * 1e6] * 2 and runs["2", "worker_us"] == [1.0 * 2 / 10 * 1e6] * 2
    assert runs["2", "client_us"] == pytest.approx([0.02 / 10 * 1e6] * 2) and runs["1", "peak_rss_mib"] == [128.0] * 2
    ratios = {d["labels"]["figure"]: d["value"] for d in record["derived"]}
    assert ratios["wall 1 -> 2 workers"] == 3.5 / 2.5 and ratios["compute 1 -> 2 workers"] == 2.0


@pytest.mark.parametrize("argv, message", [
    (["scale", "--only", "huge"], "--only: unknown workload(s) huge (known: tiny, irma, cutoff_rcv1, linear_zoo)"),
    (["scale", "--splits", "irma=3"], "--splits: 'irma=3' is not STUDY=K with STUDY one of cutoff_rcv1, linear_zoo"),
    (["simulated", "--slots", "8,x"], "--slots: '8,x' is not a comma-separated list of whole numbers"),
    (["simulated", "--slots", "12", "--processes", "8"], "--slots: 12 slots do not share evenly among 8 processes"),
])
def test_scale_and_simulated_refuse_bad_options_before_any_run(tmp_path, capsys, argv, message):
    assert main([*argv, "--work", str(tmp_path / "work"), "--record", str(tmp_path / "records")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"benchmarks: error: {message}") and err.count("\n") == 1
    assert not (tmp_path / "work").exists() and not (tmp_path / "records").exists()


def test_simulated_records_each_slot_count_and_predicts_the_studies_of_the_latest_scale_record(
        tmp_path, monkeypatch, capsys):
    """`python -m benchmarks simulated --slots 8,16` with each slot count's runs replaced by given
    figures: the record keeps them, and the studies' predictions take their cell times
    from the scale record already in the records folder."""
    import benchmarks.engine.simulated as simulated
    from benchmarks.tests.test_simulated_cluster import _found
    from dolb.bench.records import derived, measurement, new_record, write_record

    given = {entry["slots"]: entry for entry in _found()}
    asked = []

    def simulate(slots, processes, cells, seconds, workloads, folder, env, start_method):
        asked.append((slots, processes, cells, seconds, workloads))
        return given[slots]

    monkeypatch.setattr(simulated, "simulate", simulate)
    scale = new_record("scale", [measurement({"workload": "cutoff_rcv1", "workers": 1, "figure": "worker_us"},
                                             "µs/cell", [40_000.0])],
                       [derived({"workload": "cutoff_rcv1", "figure": "client work"}, "µs", 20.0)])
    write_record(tmp_path / "records", scale)
    assert main(["simulated", "--slots", "8,16", "--sim-cells", "40", "--seconds", "0.5,1", "--work",
                 str(tmp_path / "work"), "--record", str(tmp_path / "records")]) == 0
    assert asked == [(8, 8, 40, "0.5,1", ("sweep", "tuned")), (16, 8, 40, "0.5,1", ("sweep", "tuned"))]
    (path,) = (tmp_path / "records" / "simulated").iterdir()
    record = read_record(path)
    assert record["command"].startswith("python -m benchmarks simulated --slots 8,16")
    efficiency = {(d["labels"]["slots"], d["labels"]["workload"]): d["value"] for d in record["derived"]
                  if d["labels"].get("figure") == "efficiency"}
    assert efficiency == pytest.approx({("8", "sweep"): 1 / 1.1, ("16", "sweep"): 1 / 1.1,
                                        ("8", "tuned"): 1 / 1.5, ("16", "tuned"): 1 / 1.5})
    assert {d["labels"]["study"] for d in record["derived"] if "study" in d["labels"]} == {"cutoff_rcv1"}

    # derived again from its own runs, nothing run: the same figures, the machine it was measured on
    measured = dict(record, machine=record["machine"] | {"cpu": "elsewhere"})
    write_record(tmp_path / "measured", measured)
    (source,) = (tmp_path / "measured" / "simulated").iterdir()
    asked.clear()
    assert main(["simulated", "--rederive", str(source), "--record", str(tmp_path / "records")]) == 0
    assert asked == []
    (again,) = [found for found in map(read_record, (tmp_path / "records" / "simulated").iterdir())
                if "--rederive" in found["command"]]
    assert again["derived"] == record["derived"] and again["machine"]["cpu"] == "elsewhere"
    assert main(["simulated", "--rederive", str(tmp_path / "none.json")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
