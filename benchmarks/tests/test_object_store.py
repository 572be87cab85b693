"""``python -m benchmarks object-store`` on 3,000 rows: every order and source measured
into a record (moto's S3 server, started on loopback, from the test extra)."""

import pytest


def test_the_object_store_bench_measures_every_order_and_source_into_a_record():
    from benchmarks.engine.object_store import SOURCES, TARGETS, as_record, as_text, object_store_bench
    from dolb.bench.records import check

    found = object_store_bench(repeat=1, n_rows=3000)
    assert set(found["rates"]) == set(found["memory"]) == {(o, s) for o in TARGETS for s in SOURCES}
    assert all(len(rates) == 1 and rates[0] > 0 for rates in found["rates"].values())
    assert all(mb > 0 for mb in found["memory"].values())
    record = check(as_record(found, quick=True, command="python -m benchmarks object-store"), "record")
    assert record["bench"] == "object-store-quick"
    ratios = {(d["labels"]["order"], d["labels"]["source"]): d["value"] for d in record["derived"]
              if d["unit"] == "× local"}
    assert len(ratios) == 9 and all(value > 0 for value in ratios.values())
    # the raw fetch's rate over local disk's stream: the most a stream from the server could reach
    for i, order in enumerate(TARGETS):  # one round of each order, the orders one after the other
        local = found["rates"][(order, "local")][0]
        assert ratios[(order, "raw fetch")] == pytest.approx(found["rows"] / found["raw"][i]["seconds"] / local)
    layout = {d["labels"]["array"]: d["value"] for d in record["derived"] if d["unit"] == "elements a chunk"}
    assert layout == {name: entry["chunk_elements"] for name, entry in found["layout"].items()} and layout["X/data"] > 0
    raw = found["raw"]
    assert len(raw) == len(TARGETS) and all(r["requests"] == raw[0]["requests"] > 0 and r["bytes"] > 0 for r in raw)
    assert all(len(cpu) == 1 and min(cpu[0]) >= 0 for cpu in found["cpu"].values())  # 10 ms ticks: a pass may show 0
    assert {d["labels"]["order"] for d in record["derived"] if d["unit"] == "× raw fetch"} == set(TARGETS)
    assert {m["labels"]["fetch"] for m in record["measurements"] if "fetch" in m["labels"]} == {
        "raw, concurrent", "local files"}
    assert "holds" in as_text(found) and "raw fetch" in as_text(found) and "X/data: " in as_text(found)
