"""The record of ``python -m benchmarks scale``: every run by worker count, the
ratios, Amdahl's predictions and the client's marginal work per cell."""

import pytest

from benchmarks.engine.scale_runs import summarise
from benchmarks.engine.scale_text import as_record as scale_record


def test_a_scale_record_keeps_every_run_by_worker_count():
    def run(requested, wall):
        return {"requested": requested, "cells": 10, "wall": wall, "startup": 1.0, "imports": 0.5, "data": 0.1,
                "cluster": 0.2, "compute": wall - 1, "client_us": 5.0, "client_compute_us": 4.0, "worker_us": 50.0,
                "share": 0.1, "peak_rss_mib": 100.0}

    runs = [run(1, 10.0), run(2, 6.0), run(1, 12.0), run(2, 8.0)]
    record = scale_record({"tiny": {"runs": runs, "summary": summarise(runs)}}, None)
    walls = {m["labels"]["workers"]: m["repeats"] for m in record["measurements"] if m["labels"]["figure"] == "wall"}
    assert walls == {"1": [10.0, 12.0], "2": [6.0, 8.0]}
    ratios = {d["labels"]["figure"]: d["value"] for d in record["derived"]}
    assert ratios["wall 1 -> 2 workers"] == 11 / 7 and ratios["client share s"] == 0.1
    assert ratios["Amdahl 16 workers"] == pytest.approx(1 / (0.1 + 0.9 / 16))


def test_a_scale_record_keeps_the_clients_marginal_work_per_cell():
    """The client's cost per cell added (a larger run against the workload's, on a
    scheduler and 1 worker of their own), less the background of the added compute
    seconds; its fixed part."""
    def run(requested, cells, cpu, compute_wall):
        return {"requested": requested, "cells": cells, "wall": 10.0, "startup": 1.0, "imports": 0.5, "data": 0.1,
                "cluster": 0.2, "compute": compute_wall, "client_us": cpu / cells * 1e6, "client_compute_us": 1.0,
                "worker_us": 10_000.0, "share": 0.1, "peak_rss_mib": 100.0, "cpu": cpu + 2.0, "client_cpu": cpu,
                "compute_cpu": cpu - 3.0,
                "compute_wall": compute_wall, "main_cpu": cells * 1e-6, "idle_rate": 0.01, "tasks": 20}

    runs = [run(1, 100, 3.3, 1.0), run(2, 100, 3.3, 0.5), run(1, 100, 3.5, 1.0)]
    sizes = ([runs[0], runs[2]], [run(1, 200, 3.6, 2.0), run(1, 200, 3.4, 2.0)])  # on a scheduler of their own
    record = scale_record({"zoo": {"runs": runs, "sizes": sizes, "summary": summarise(runs, sizes)}}, None)
    found = {d["labels"]["figure"]: (d["unit"], d["value"]) for d in record["derived"]}
    # from the first submit: (3.5 - 3.4) s / 100 cells = 1,000 µs; background 0.01 × 1 s / 100 = 100 µs
    assert found["client marginal"] == ("µs/cell", pytest.approx(1_000.0))
    assert found["client background"] == ("µs/cell", pytest.approx(100.0))
    assert found["client work"] == ("µs/cell", pytest.approx(900.0))
    assert found["client marginal main thread"] == ("µs/cell", pytest.approx(1.0))
    assert found["client fixed"] == ("CPU s", pytest.approx(5.4 - 0.1))
    assert found["Amdahl 64 workers, marginal share"][1] == pytest.approx(1 / (0.09 + 0.91 / 64))
    cpus = {m["labels"]["cells"]: m["repeats"] for m in record["measurements"]
            if m["labels"]["figure"] == "cpu" and m["labels"].get("scheduler") == "own process"}
    assert cpus == {"100": [5.3, 5.5], "200": [5.6, 5.4]}
