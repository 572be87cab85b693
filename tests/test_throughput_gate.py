"""The throughput gate of `dolb compare`: bench.json with every repeat (and the older
single-measurement files), the judgement against scipy on hand-made measurements, and
its false-alarm and detection rates under a seeded noise model."""

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dolb.errors import DataError
from dolb.results.throughput import MIN_REPEATS, compare_throughput, judge_throughput, read_bench

LEARNERS = [f"learner{i}" for i in range(8)]
SETTINGS = [(i, s, c) for i in ("sparse", "dense") for s in ("memory", "zarr") for c in ("last", "all")]


def record(learner, speeds, kind="throughput", **key):
    key = {"input": "sparse", "source": "memory", "conversions": "last"} | key
    return {"kind": kind, "learner": learner, **key, "examples_per_s": float(np.median(speeds)),
            "repeats": list(speeds)}


def test_bench_json_keeps_every_repeat_and_reads_old_files(tmp_path):
    (tmp_path / "bench.json").write_text(json.dumps([
        {"kind": "machine", "cpu": "x", "cpus": 2},  # not a measurement
        record("sgd", [3.0, 1.0, 2.0, 5.0, 4.0], conversions=["last", "average"]),
        record("reference_perceptron", [9.0, 8.0, 7.0, 6.0, 5.0], kind="reference", conversions="none"),
        {"kind": "cutoff_memory", "m": 1000, "distinct_r": 20},
    ]))
    bench = read_bench(tmp_path)
    assert bench[["learner", "conversions", "examples_per_s"]].values.tolist() == [
        ["reference_perceptron", "none", 7.0], ["sgd", "last+average", 3.0]]
    assert bench["repeats"].tolist() == [(9.0, 8.0, 7.0, 6.0, 5.0), (3.0, 1.0, 2.0, 5.0, 4.0)]
    # an older file: one measurement per record, each counts as one repeat
    (tmp_path / "bench.json").write_text(json.dumps([
        {"learner": "sgd", "input": "sparse", "source": "memory", "conversions": "last", "examples_per_s": 7.0},
        {"learner": "sgd", "input": "sparse", "source": "memory", "conversions": "last", "examples_per_s": 9.0},
    ]))
    old = read_bench(tmp_path)
    assert old["repeats"].tolist() == [(7.0, 9.0)] and old["examples_per_s"].tolist() == [8.0]
    table = compare_throughput(old.assign(repeats=[(1.0, 1.0)]), old)
    assert table[["ratio", "verdict"]].values.tolist() == [[0.125, "not judged"]]  # too few repeats
    assert not table["slower"].any() and table["ci_low"].isna().all()


@pytest.mark.parametrize("bad", [
    '{"learner": "sgd"}',
    '[{"learner": "sgd", "examples_per_s": 1.0}]',
    '[{"learner": "sgd", "input": "i", "source": "s", "conversions": "c", "examples_per_s": 1.0, "repeats": []}]',
    '[{"learner": "sgd", "input": "i", "source": "s", "conversions": "c", "examples_per_s": 1.0, "repeats": [1, -2]}]',
    '[{"learner": "sgd", "input": "i", "source": "s", "conversions": "c", "examples_per_s": 1.0, "repeats": ["x"]}]',
])
def test_bad_bench_json_is_one_error_naming_the_file(tmp_path, bad):
    (tmp_path / "bench.json").write_text(bad)
    with pytest.raises(DataError, match=r"bench.json: expected a JSON list of objects"):
        read_bench(tmp_path)


def bench(speeds: dict) -> pd.DataFrame:
    """A read_bench table from {(learner, input, source, conversions): repeats}."""
    rows = [(*key, float(np.median(found)), tuple(found)) for key, found in speeds.items()]
    return pd.DataFrame(rows, columns=["learner", "input", "source", "conversions", "examples_per_s", "repeats"])


def test_the_judgement_against_scipy_on_hand_made_measurements():
    rng = np.random.default_rng(5)
    base = {("pa", *s): list(rng.uniform(90, 110, 7)) for s in SETTINGS}
    factors = dict(zip(SETTINGS, [0.7, 0.8, 0.75, 0.9, 0.6, 0.85, 1.05, 0.8]))
    run = {("pa", *s): [v * factors[s] for v in base["pa", *s]] for s in SETTINGS}
    base |= {("sgd", *s): [100.0, 101, 99, 102, 98] for s in SETTINGS}
    run |= {("sgd", *s): [100.5, 101, 99, 102, 97.5] for s in SETTINGS}
    table = compare_throughput(bench(run), bench(base)).set_index(["learner", "input", "source", "conversions"])
    pa = table.loc["pa"]
    ratios = [np.median(run["pa", *s]) / np.median(base["pa", *s]) for s in SETTINGS]
    assert [pa.loc[s, "ratio"] for s in SETTINGS] == pytest.approx(ratios)
    p = {name: [stats.mannwhitneyu(run[name, *s], base[name, *s], alternative="less").pvalue for s in SETTINGS]
         for name in ("pa", "sgd")}
    assert [pa.loc[s, "p"] for s in SETTINGS] == pytest.approx(p["pa"])
    assert p["pa"][4] == pytest.approx(1 / 3432)  # 0.6x: every run repeat below every baseline one, 1 / C(14, 7)
    assert pa["learner_ratio"].iloc[0] == pytest.approx(np.median(ratios))
    fisher = {name: stats.combine_pvalues(p[name], method="fisher").pvalue for name in ("pa", "sgd")}
    assert pa["learner_p"].iloc[0] == pytest.approx(fisher["pa"])
    assert table.loc["sgd", "learner_p"].iloc[0] == pytest.approx(fisher["sgd"])
    q = stats.false_discovery_control([fisher["pa"], fisher["sgd"]])
    assert pa["q"].iloc[0] == pytest.approx(q[0]) and table.loc["sgd", "q"].iloc[0] == pytest.approx(q[1])
    # pa is slower: its rows below 0.9 are flagged, the 0.9 and 1.05 ones are not; sgd is not
    assert [pa.loc[s, "slower"] for s in SETTINGS] == [r < 0.9 for r in ratios]
    assert not table.loc["sgd", "slower"].any() and set(table.loc["sgd", "verdict"]) == {"unchanged"}
    # the interval: scipy's percentile bootstrap of the ratio of medians, seeded
    expected = stats.bootstrap((run["pa", "sparse", "memory", "last"], base["pa", "sparse", "memory", "last"]),
                               lambda a, b, axis: np.median(a, axis=axis) / np.median(b, axis=axis),
                               n_resamples=2000, method="percentile", rng=np.random.default_rng(0))
    row = pa.loc[("sparse", "memory", "last")]
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(
        (expected.confidence_interval.low, expected.confidence_interval.high))
    assert row["ci_low"] < row["ratio"] < row["ci_high"]


def test_a_slower_learner_below_the_threshold_only_is_not_flagged():
    """Significant but small (5 % slower, every repeat): unchanged at the 0.9 threshold,
    slower at 0.97."""
    base = {("pa", *s): [100.0, 101, 102, 103, 104, 105, 106] for s in SETTINGS}
    run = {key: [0.95 * v for v in found] for key, found in base.items()}
    judged = compare_throughput(bench(run), bench(base))
    assert (judged["learner_p"] < 1e-6).all() and set(judged["verdict"]) == {"unchanged"}
    assert set(compare_throughput(bench(run), bench(base), slowdown=0.97)["verdict"]) == {"slower"}


def simulated_nights(nights: int, seed: int, slowdown: dict[str, float]) -> list[pd.DataFrame]:
    """Side-by-side tables of simulated nights of 8 learners × 8 measurements, 7
    repeats a side: run times log-normal (σ = 0.15) with 10 % of repeats slowed 2×,
    the learners of ``slowdown`` that much slower in the run."""
    rng = np.random.default_rng(seed)
    keys = [(learner, *s) for learner in LEARNERS for s in SETTINGS]
    factor = np.array([slowdown.get(learner, 1.0) for learner, *_ in keys])[:, None]

    def speeds():
        times = np.exp(rng.normal(0.0, 0.15, (len(keys), 7))) * np.where(rng.random((len(keys), 7)) < 0.10, 2.0, 1.0)
        return 1e6 / times

    tables = []
    for _ in range(nights):
        baseline, run = speeds(), speeds() * factor
        tables.append(pd.DataFrame({"learner": [k[0] for k in keys], "repeats_run": list(map(tuple, run)),
                                    "repeats_baseline": list(map(tuple, baseline))}))
    return tables


def alarm_rate(tables) -> float:
    return float(np.mean([judge_throughput(table)["slower"].any() for table in tables]))


def test_the_gate_rarely_cries_wolf_and_sees_a_real_slowdown():
    """Seeded noise model (log-normal σ = 0.15, 10 % of repeats 2× slower, 7 repeats a
    side, 8 learners × 8 measurements as in the nightly's bench): over 200 identical
    nights at most 1 % raise the alarm; a code 20 % slower everywhere, and one learner
    alone 20 % slower, are each caught in at least 90 % of 200 nights."""
    assert MIN_REPEATS <= 7
    identical = alarm_rate(simulated_nights(200, seed=1, slowdown={}))
    everywhere = alarm_rate(simulated_nights(200, seed=2, slowdown=dict.fromkeys(LEARNERS, 0.8)))
    one_learner = alarm_rate(simulated_nights(200, seed=3, slowdown={"learner0": 0.8}))
    print(f"false alarms {identical:.1%}, 20 % slower everywhere caught {everywhere:.1%}, "
          f"one learner 20 % slower caught {one_learner:.1%}")
    assert identical <= 0.01
    assert everywhere >= 0.90
    assert one_learner >= 0.90
