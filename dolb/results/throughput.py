"""Throughput of two runs judged: ``bench.json`` holds every repeat of examples per
second of learner × input × source × conversions (``dolb bench`` repeats each
measurement, interleaved). Each measurement gets its ratio of medians run / baseline
with a bootstrap interval and the one-sided Mann–Whitney U p-value that the run is
slower; each learner is judged over its measurements, their p-values combined by
Fisher's method, Benjamini–Hochberg over the learners: it is *slower* when q <
:data:`SPEED_ALPHA` and its median ratio is below the threshold, and then so is each of
its measurements whose own ratio is below the threshold.

A single measurement is never judged on its own: with 7 repeats and a log-normal noise
of σ = 0.15 no test can both keep false alarms under 1 % and see a 20 % slowdown of one
measurement 9 nights in 10 (the difference of two means of 7 logs has a standard
deviation of 0.08 against a shift of 0.22); a learner's measurements together can.
"""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats as st

from dolb import location
from dolb.errors import DataError
from dolb.results.stats import fisher_p_values, median_ratio_interval, slower_p_values

SLOWDOWN = 0.9
"""Throughput ratio run / baseline below which a significant change counts as slower."""
SPEED_ALPHA = 0.01
"""False-discovery rate over the learners' throughput tests."""
MIN_REPEATS = 5
"""Repeats a throughput measurement needs on both sides to be judged."""
REFERENCE = "reference_perceptron"
"""The hand-written reference loop of ``dolb bench``: shown (the machine's own change),
never judged."""
BENCH_KEYS = ["learner", "input", "source", "conversions"]
"""What one throughput measurement is about."""
THROUGHPUT_COLUMNS = ["n_baseline", "n_run", "examples_per_s_baseline", "examples_per_s_run", "ratio", "ci_low",
                      "ci_high", "p", "learner_ratio", "learner_p", "q", "slower", "verdict"]
"""Columns of the throughput table (``throughput.csv``) after :data:`BENCH_KEYS`."""


def read_bench(folder: str | Path) -> pd.DataFrame:
    """Throughput measurements of a result folder (``bench.json``, a list of objects
    with at least ``learner, input, source, conversions, examples_per_s`` and, from
    ``dolb bench`` since it repeats, ``repeats``), one row per learner × input × source ×
    conversions: ``repeats``, a tuple of every repeat's examples per second (a record
    without repeats, as older files have, counts as one), and ``examples_per_s`` their
    median. An empty table when the folder has none. A list of conversions is joined
    with ``+``.

    Examples
    --------
    >>> read_bench("no-such-folder").columns.tolist()
    ['learner', 'input', 'source', 'conversions', 'examples_per_s', 'repeats']
    """
    path = location.joined(folder, "bench.json")
    columns = BENCH_KEYS + ["examples_per_s", "repeats"]
    if not location.is_file(path):
        return pd.DataFrame(columns=columns)
    try:
        records = json.loads(location.read_text(path))
        if not isinstance(records, list) or not all(isinstance(record, dict) for record in records):
            raise TypeError(f"a JSON {type(records).__name__}, not a list of objects")
        repeats: dict[tuple, list[float]] = {}
        for record in records:
            if "examples_per_s" in record:  # `dolb bench --json` also lists the machine and memory rows
                key = tuple(_key_text(record[key]) for key in BENCH_KEYS)
                repeats.setdefault(key, []).extend(_speeds(record))
    except (ValueError, KeyError, TypeError) as exc:
        raise DataError(
            f"{path}: expected a JSON list of objects with {', '.join(BENCH_KEYS)}, examples_per_s and "
            f"optionally repeats, positive numbers ({exc})"
        ) from None
    rows = [(*key, float(np.median(found)), tuple(found)) for key, found in sorted(repeats.items())]
    return pd.DataFrame(rows, columns=columns)


def _speeds(record: dict) -> list[float]:
    """Every repeat of a bench.json record (its ``examples_per_s`` when it has none),
    checked to be positive finite numbers."""
    found = record.get("repeats", [record["examples_per_s"]])
    if not isinstance(found, list) or not found:
        raise TypeError(f"repeats of {record['learner']} is not a non-empty list")
    speeds = [float(value) for value in found]
    if not all(math.isfinite(value) and value > 0 for value in speeds):
        raise ValueError(f"{record['learner']} has a speed that is not a positive number")
    return speeds


def _key_text(value) -> str:
    return "+".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)


def judge_throughput(table: pd.DataFrame, alpha: float = SPEED_ALPHA, slowdown: float = SLOWDOWN) -> pd.DataFrame:
    """The throughput judgement of measurements side by side.

    Parameters
    ----------
    table : DataFrame
        One row per measurement: ``learner`` and the tuples of examples per second
        ``repeats_run`` and ``repeats_baseline`` (empty where a side has none).
    alpha : float
        False-discovery rate over the learners.
    slowdown : float
        A slower learner's median ratio is below this.

    Returns
    -------
    DataFrame
        ``table`` with ``n_baseline``, ``n_run`` (repeats), the medians
        ``examples_per_s_baseline`` and ``examples_per_s_run``, their ``ratio`` run /
        baseline, ``p`` (one-sided Mann–Whitney U, run slower; where both sides have
        :data:`MIN_REPEATS` or more repeats) and, per learner over its measurements
        with p, ``learner_ratio`` (their median ratio), ``learner_p`` (their p-values
        combined by Fisher's method) and ``q`` (Benjamini–Hochberg over the learners);
        then ``slower`` (the learner is
        slower, q < alpha and learner_ratio < slowdown, and this measurement's own ratio
        is below slowdown) and ``verdict``: ``slower``, ``unchanged``, ``not judged``
        (too few repeats, or in one run only) or ``reference``.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"learner": "sgd", "repeats_run": [(7.0, 8.0, 9.0, 8.5, 7.5)] * 4,
    ...                       "repeats_baseline": [(10.0, 10.5, 9.5, 11.0, 9.2)] * 4})
    >>> judged = judge_throughput(table)
    >>> float(judged["ratio"].iloc[0]), float(judged["p"].iloc[0])  # 1 / C(10, 5)
    (0.8, 0.003968253968253968)
    >>> judged["verdict"].tolist()
    ['slower', 'slower', 'slower', 'slower']
    """
    run, baseline = table["repeats_run"].tolist(), table["repeats_baseline"].tolist()
    n_run, n_baseline = np.array([len(r) for r in run]), np.array([len(b) for b in baseline])
    median_run, median_baseline = (np.array([statistics.median(found) if len(found) else np.nan for found in side])
                                   for side in (run, baseline))
    ratio = median_run / median_baseline
    learner = table["learner"].to_numpy()
    tested = np.minimum(n_run, n_baseline) >= MIN_REPEATS
    judged = tested & (learner != REFERENCE)
    p = np.full(len(table), np.nan)
    p[tested] = slower_p_values([run[i] for i in np.flatnonzero(tested)], [baseline[i] for i in np.flatnonzero(tested)])
    names = sorted(set(learner[judged]))
    learner_ratio = {name: np.median(ratio[judged & (learner == name)]) for name in names}
    learner_p = dict(zip(names, fisher_p_values([p[judged & (learner == name)] for name in names])))
    q = dict(zip(names, st.false_discovery_control([learner_p[name] for name in names]) if names else []))
    slower_learners = [name for name in names if q[name] < alpha and learner_ratio[name] < slowdown]
    slower = judged & np.isin(learner, slower_learners) & (ratio < slowdown)
    verdict = np.select([learner == REFERENCE, ~judged, slower], ["reference", "not judged", "slower"], "unchanged")
    per_learner = {column: [values.get(name, np.nan) if ok else np.nan for name, ok in zip(learner, judged)]
                   for column, values in (("learner_ratio", learner_ratio), ("learner_p", learner_p), ("q", q))}
    found = pd.DataFrame({"n_baseline": n_baseline, "n_run": n_run, "examples_per_s_baseline": median_baseline,
                          "examples_per_s_run": median_run, "ratio": ratio, "p": p, **per_learner, "slower": slower,
                          "verdict": verdict}, index=table.index)
    return pd.concat([table, found], axis=1)


def compare_throughput(
    run: pd.DataFrame, baseline: pd.DataFrame, slowdown: float = SLOWDOWN, alpha: float = SPEED_ALPHA
) -> pd.DataFrame:
    """Throughput of two runs (tables from :func:`read_bench`) side by side, judged by
    :func:`judge_throughput`, with the 95 % bootstrap interval ``ci_low``–``ci_high`` of
    each ratio of medians (:func:`~dolb.results.stats.median_ratio_interval`).
    Measurements in one run only are kept, not judged.

    Examples
    --------
    >>> import pandas as pd
    >>> bench = lambda *v: pd.DataFrame([{"learner": "sgd", "input": "sparse", "source": "memory",
    ...                                   "conversions": "last", "examples_per_s": v[0], "repeats": v}])
    >>> compare_throughput(bench(60.0), bench(100.0))[["ratio", "verdict"]].values.tolist()
    [[0.6, 'not judged']]
    """
    table = baseline.merge(run, on=BENCH_KEYS, how="outer", suffixes=("_baseline", "_run"), sort=True)
    for column in ("repeats_run", "repeats_baseline"):
        table[column] = table[column].map(lambda found: found if isinstance(found, tuple) else ())
    table = judge_throughput(table.drop(columns=["examples_per_s_run", "examples_per_s_baseline"]), alpha, slowdown)
    intervals = [median_ratio_interval(r, b) if min(len(r), len(b)) >= MIN_REPEATS else (np.nan, np.nan)
                 for r, b in zip(table["repeats_run"], table["repeats_baseline"])]
    table[["ci_low", "ci_high"]] = intervals if intervals else np.empty((0, 2))
    return table[BENCH_KEYS + THROUGHPUT_COLUMNS]
