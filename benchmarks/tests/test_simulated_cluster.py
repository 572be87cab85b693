"""The simulated cluster: the ``sleep`` learner (deterministic cell times of a given
shape), a sweep of sleep cells on a real LocalCluster, the cost model's arithmetic, and
the record of the bench with its performance page and figure."""

import pickle
import textwrap
from collections import Counter

import numpy as np
import pytest
from distributed import LocalCluster

from benchmarks.engine.cost_model import Costs, amdahl, list_schedule, per_cell_and_task, predict, tasks_of_length
from benchmarks.engine.simulate import seconds_of, slept_cells, sweep_cells
from benchmarks.engine.simulate_record import (
    as_record,
    engine_batches,
    fitted_costs,
    found_of,
    simulated_text,
    study_predictions,
)
from benchmarks.engine.sleep import SleepLearner, admitted, draw, parse_seconds, recorded_seconds
from docs.pages import performance_pages
from dolb.bench.records import read_record, write_record
from dolb.cli import main
from dolb.errors import ConfigError
from dolb.experiment.pipeline import load_pipeline
from dolb.learners.base import LEARNERS


@pytest.fixture
def sleep_registered(monkeypatch):
    """The ``sleep`` learner registered in this process for one test only (the generic
    tests must never see it)."""
    from dolb.experiment import schema_learner

    monkeypatch.setitem(LEARNERS._entries, "sleep", SleepLearner)
    monkeypatch.setattr(schema_learner, "_unreachable", admitted(schema_learner._unreachable))


# --- the sleep learner -----------------------------------------------------------------


def _cell_seconds(seconds: str, y: np.ndarray, offset: float = 0.0) -> float:
    learner = SleepLearner(1, seconds=seconds, examples=len(y), offset=offset)
    learner.learn(np.zeros((len(y), 1)), y)
    return learner.cell_seconds


def test_the_same_cell_always_sleeps_the_same_time_and_other_cells_draw_anew():
    y = np.array([0.25, 1.5, 2.0])
    choices = "0,0.0001,0.0002,0.0003,0.0004,0.0005,0.0006,0.0007"
    assert len({_cell_seconds(choices, y) for _ in range(5)}) == 1  # same parameters, same rows
    others = {_cell_seconds(choices, y + k) for k in range(20)}  # other rows (splits)
    assert len(others) > 3
    assert len({_cell_seconds(choices, y, offset=k / 10) for k in range(20)}) > 3  # other configurations


def test_the_draws_follow_the_listed_times_uniformly():
    choices = (0.025, 0.05, 0.1)
    counts = Counter(draw(choices, np.array([float(i)]).tobytes()) for i in range(3000))
    assert set(counts) == set(choices)
    assert all(abs(count - 1000) < 100 for count in counts.values())  # 3 sigma is 77


def test_each_block_sleeps_its_share_and_a_loaded_state_counts_its_own():
    learner = SleepLearner(1, seconds="0.004", examples=4)
    predictions = learner.learn(np.zeros((1, 1)), np.array([1.0]))
    assert predictions.tolist() == [0.0] and learner.slept == pytest.approx(0.001)
    learner.learn(np.zeros((3, 1)), np.array([1.0, 2.0, 3.0]))
    assert learner.slept == pytest.approx(0.004)  # the whole cell: its time once
    loaded = pickle.loads(pickle.dumps(learner))
    assert loaded.slept == 0.0 and loaded.cell_seconds == 0.004  # a next rung keeps the cell's draw
    assert SleepLearner(1, offset=0.5).predict(np.zeros((2, 1))).tolist() == [0.5, 0.5]


@pytest.mark.parametrize("text", ["", "0.5,x", "-1", "nan"])
def test_bad_seconds_are_refused_naming_the_parameter(text):
    with pytest.raises(ConfigError, match="learner 'sleep', parameter 'seconds'"):
        SleepLearner(1, seconds=text)


def test_seconds_of_a_range_a_list_or_a_recorded_study(tmp_path):
    assert parse_seconds(seconds_of("1-2")) == tuple(1 + i / 10 for i in range(11))
    assert seconds_of("0.025,0.05,0.1") == "0.025,0.05,0.1"
    with pytest.raises(ConfigError, match="--seconds: '2-1' runs from high to low"):
        seconds_of("2-1")
    import pyarrow as pa
    import pyarrow.parquet as pq

    (tmp_path / "results").mkdir()
    times = pa.table({"cell_id": ["a", "a", "b", "c", "d"], "cell_seconds": [1.0, 1.0, 2.0, 3.0, 4.0]})
    pq.write_table(times, tmp_path / "results" / "part-1.parquet")
    assert recorded_seconds(tmp_path, count=4) == "1,2,3,4"  # one time a cell, its quantiles
    assert seconds_of(str(tmp_path)) == recorded_seconds(tmp_path)
    with pytest.raises(ConfigError, match="not a result folder"):
        recorded_seconds(tmp_path / "none")


SWEEP = """
[pipeline]
name = "sleepers"
seed = 3

[datasets.rows]
generator = "irma"
params = {{ n_sequences = 6, length = 5, n_test = 1 }}

[experiments.sleep]
dataset = "rows"
task = "regression"
split = {{ scheme = "sequences", count = 6 }}
checkpoints = [5]
metrics = ["online_loss"]
learners = [{{ learner = "sleep", params = {{ seconds = "{seconds}", examples = 5 }} }}]
"""


def test_a_pipeline_with_bad_seconds_is_one_line_naming_the_parameter(tmp_path, sleep_registered):
    path = tmp_path / "bad.toml"
    path.write_text(textwrap.dedent(SWEEP.format(seconds="soon")))
    with pytest.raises(ConfigError, match=r"bad.toml: experiments.sleep.learners\[0\].params.seconds: 'soon' is not a"):
        load_pipeline(path)


def test_a_sleep_sweep_on_a_local_cluster_stores_every_cell_with_its_drawn_time(
        tmp_path, monkeypatch, sleep_registered, capsys):
    path = tmp_path / "sweep.toml"
    path.write_text(textwrap.dedent(SWEEP.format(seconds="0.001,0.002,0.003")))
    monkeypatch.setenv("DOLB_DATA_CACHE", str(tmp_path / "cache"))
    with LocalCluster(n_workers=2, threads_per_worker=2, processes=True, dashboard_address=None,
                      preload=["benchmarks.engine.sleep"]) as cluster:
        status = main(["-v", "run", str(path), "--out", str(tmp_path / "out"), "--scheduler", cluster.scheduler_address,
                       "--no-progress"])
    assert status == 0
    assert "4 worker slots" in capsys.readouterr().err  # 2 workers of 2 threads: 4 tasks at once
    import pyarrow.dataset as pds

    rows = pds.dataset(tmp_path / "out" / "results", format="parquet").to_table().to_pandas()
    slept = rows[rows.metric == "slept"].set_index("split")["value"].sort_index()
    assert slept.index.tolist() == list(range(6)) and set(slept) <= {0.001, 0.002, 0.003}
    assert len(rows[rows.metric == "online_loss"]) == 6
    assert slept_cells(tmp_path / "out").tolist() == slept.tolist()  # in the order of their splits


# --- the cost model ----------------------------------------------------------------------


def test_the_model_names_the_longest_bound():
    costs = Costs(client_cell=0.001, client_task=0.010, scheduler_task=0.005, worker_cell=0.010)
    cells = np.full(1000, 0.01)  # 10 s of work
    # on 100 slots: slots (10 + 10) / 100 = 0.2 s; client 1 + 100 × 0.01 = 2 s; scheduler 0.5 s
    found = predict(cells, slots=100, tasks=100, costs=costs)
    assert found.limit == "client" and found.bounds == pytest.approx({"slots": 0.2, "client": 2.0, "scheduler": 0.5})
    # ends: 100 tasks × max(0.010 + 10 × 0.001, 0.005) / 2 = 1.0 s, half a cell 0.01 s
    assert found.seconds == pytest.approx(2.0 + 1.0 + 0.01)
    # the end loses half of its last tasks: of 1 s, 0.5 s; a client idle at 20 % of its core, 2 / 0.8 s
    idle = Costs(client_cell=0.001, client_task=0.010, scheduler_task=0.005, worker_cell=0.010, client_idle=0.2)
    assert predict(cells, slots=100, tasks=100, costs=idle, tail=1.0).seconds == pytest.approx(2.5 + 1.0 + 0.5)
    assert found.ideal == pytest.approx(0.1) and found.efficiency == pytest.approx(0.1 / 3.01)
    heavy = Costs(client_cell=0.0, client_task=0.0, scheduler_task=0.05, worker_cell=0.0)
    assert predict(cells, slots=100, tasks=100, costs=heavy).limit == "scheduler"  # 5 s


def test_amdahl_and_the_split_of_costs_per_cell_and_per_task():
    assert amdahl(0.05, 1) == 1.0 and amdahl(0.05, 1000) == pytest.approx(1 / (0.05 + 0.95 / 1000))
    # 2 ms a cell and 30 ms a task, three runs
    cells, tasks = [400, 400, 800], [20, 100, 50]
    spent = [0.002 * c + 0.030 * t for c, t in zip(cells, tasks)]
    assert per_cell_and_task(spent, cells, tasks) == pytest.approx((0.002, 0.030))
    assert per_cell_and_task([1.0, 1.0], [100, 200], [10, 10]) == pytest.approx((0.0, 0.1))  # not below zero
    assert tasks_of_length(np.full(100, 0.1), slots=4) == 40 and tasks_of_length(np.full(100, 0.1), 64) == 64


def test_the_cells_alone_bound_the_efficiency_and_the_default_sweep_grows_with_the_slots():
    # 400 cells of 0.5-1 s: a list schedule with no cost at all ends ~10 % after the ideal on
    # 64 slots (6 cells a slot, the last ones ending apart), ~3 % with 25 cells a slot
    rng = np.random.default_rng(0)
    times = np.linspace(0.5, 1.0, 11)

    def best(cells, slots):
        return np.mean([(c := rng.choice(times, cells)).sum() / slots / list_schedule(c, slots) for _ in range(20)])

    assert best(400, 64) < 0.92 < 0.96 < best(sweep_cells(64), 64)
    assert sweep_cells(8) == 400 and sweep_cells(64) == 1600


# --- the record and its page -------------------------------------------------------------


def _run(cells, tasks, slept, compute, client):
    return {"cells": cells, "tasks": tasks, "parts": tasks, "slept": slept, "ideal": 0.0, "schedule": 0.0,
            "compute": compute, "efficiency": 0.0, "client": client, "scheduler": 0.004 * tasks,
            "workers": 0.002 * cells, "scheduler_idle": 0.0, "workers_idle": 0.0, "client_rss": 250.0,
            "scheduler_rss": 240.0, "wall": compute + 5, "load": 3.0, "speed": 1.0}


def _found():
    found = []
    for slots, tasks in ((8, 100), (16, 200)):
        runs = {"sweep": _run(400, tasks, 300.0, 300.0 / slots * 1.1, 0.001 * 400 + 0.005 * tasks),
                "tuned": _run(390, tasks, 180.0, 180.0 / slots * 1.5, 0.001 * 390 + 0.005 * tasks)}
        for run in runs.values():
            run["ideal"] = run["slept"] / slots
            run["schedule"] = run["ideal"] * 1.05
            run["efficiency"] = run["ideal"] / run["compute"]
        found.append({"slots": slots, "processes": 8, "start_method": "spawn", "joined": 5.0, "start_cpu": 1.5,
                      "start_load": 2.0, "first_run": 20.0, "runs": runs})
    return found


def test_the_costs_are_fitted_from_the_runs():
    costs = fitted_costs(_found(), client_cell=0.001)
    assert costs.client_cell == 0.001 and costs.client_task == pytest.approx(0.005)
    assert costs.client_idle == pytest.approx(0.0, abs=1e-12)
    assert costs.scheduler_task == pytest.approx(0.004) and costs.worker_cell == pytest.approx(0.002)


def test_the_client_cost_per_task_is_told_apart_when_every_task_holds_one_cell():
    """As in the simulated runs from 16 slots on: one cell a task, so cells and tasks
    rise together. A client of 1 µs a cell, 2 ms a task and 1 % of a core: a fit of
    cells and tasks puts the tasks' cost on the cells; given the cost a cell (measured
    apart), the rest splits into per task and per second."""
    found = _found()
    for one, compute in zip(found, (40.0, 20.0)):
        for run in one["runs"].values():
            run |= {"tasks": run["cells"], "compute": compute}
            run["client"] = 1e-6 * run["cells"] + 0.002 * run["tasks"] + 0.01 * compute
    runs = [run for one in found for run in one["runs"].values()]
    cell, task = per_cell_and_task([r["client"] for r in runs], [r["cells"] for r in runs], [r["tasks"] for r in runs])
    assert task == 0.0 and cell > 0.002  # all of it a cost per cell: 2.6-3.0 ms
    costs = fitted_costs(found, client_cell=1e-6)
    assert (costs.client_cell, costs.client_task, costs.client_idle) == pytest.approx((1e-6, 0.002, 0.01))


def test_the_studies_are_predicted_with_their_own_client_cost_and_the_engines_tasks():
    """A study of 45 ms cells, 1,000,000 of them on 1,000 slots (45 s ideal): the
    engine's batching cuts a first wave of 1,000 tasks of 1/16,000 of the work, then
    tasks of the scheduler's floor, 1,000 / 200 = 5 s, to the end, so the last lose 2.5 s.
    With the costs of ``_found`` (client 5 ms a task, scheduler 4 ms) and the study's
    client work of 10 µs a cell, the client is the limit: 10 + 5 ms × tasks."""
    tasks, tail = engine_batches(1_000_000, 0.045, 1_000)
    assert tail == pytest.approx(5.0, rel=0.01)
    assert tasks == pytest.approx(1_000 + (45_000 - 45_000 / 16) / 5.0, rel=0.01)  # 9,438
    costs = Costs(0.0, 0.005, 0.004, 0.002, 0.001)
    figures = {(d["labels"]["slots"], d["labels"]["batching"], d["labels"]["figure"]): d
               for d in study_predictions({"cutoff_rcv1": 0.045}, {"cutoff_rcv1": 1e-5}, costs)}
    found = figures[("1000", "engine's", "predicted efficiency")]
    client = 10.0 + 0.005 * tasks  # the workers' costs are in the cell time already: none added
    ends = 1_000 * (0.005 + 1e-5 * 1_000_000 / tasks) / 2 + tail / 2
    assert found["labels"]["limit"] == "client" and found["value"] == pytest.approx(45.0 / (client + ends))
    assert study_predictions({"linear_zoo": 0.045}, {}, costs) == []  # no client work measured: no prediction


def test_a_record_is_derived_again_from_its_own_runs():
    record = as_record(_found(), SCALE)
    assert as_record(found_of(record), SCALE)["derived"] == record["derived"]


SCALE = {"measurements": [{"labels": {"workload": "cutoff_rcv1", "workers": "1", "figure": "worker_us"},
                           "unit": "µs/cell", "repeats": [40_000.0, 50_000.0]}],
         "derived": [{"labels": {"workload": "cutoff_rcv1", "figure": "client work"}, "unit": "µs", "value": 20.0},
                     {"labels": {"workload": "tiny", "figure": "client work"}, "unit": "µs", "value": 1_000.0}]}
"""A ``scale`` record's figures the simulated record takes: a study's cell time and its
client work a cell, and the tiny cells' client work (the sleep cells are given it)."""


def test_the_record_round_trips_and_renders_its_page_and_figure(tmp_path):
    record = as_record(_found(), SCALE)
    assert read_record(write_record(tmp_path, record)) == record
    figures = {(d["labels"].get("workload"), d["labels"].get("slots"), d["labels"]["figure"]): d["value"]
               for d in record["derived"] if "workload" in d["labels"]}
    assert figures[("sweep", "8", "efficiency")] == pytest.approx(1 / 1.1)
    # the cells alone end 5 % after the ideal: the engine's own loss is the rest
    assert figures[("sweep", "8", "schedule efficiency")] == pytest.approx(1 / 1.05)
    assert figures[("sweep", "8", "efficiency against the schedule")] == pytest.approx(1.05 / 1.1)
    # a core each, 8 slots: (300 + 400 × 2 ms) / 8 = 37.6 s, ends 8 × (5 + 4 × 1 ms) / 2 + (0.75 + 0.002) / 2
    assert figures[("sweep", "8", "predicted efficiency, a core each")] == pytest.approx(37.5 / (37.6 + 0.036 + 0.376))
    study = [d for d in record["derived"] if d["labels"].get("study") == "cutoff_rcv1"]
    assert {d["labels"]["slots"] for d in study} == {"64", "256", "1000"}
    assert all(0 < d["value"] <= 1 for d in study if d["labels"]["figure"] == "predicted efficiency")
    assert "== studies' cell times, predicted" in simulated_text(record)

    pages = performance_pages(tmp_path)
    page = pages["performance/simulated.md"]
    assert "![Efficiency against worker slots](simulated.png)" in page
    assert "Limited by this machine (2 cores shared by client, scheduler and workers" in page
    assert pages["performance/simulated.png"][:8] == b"\x89PNG\r\n\x1a\n"
