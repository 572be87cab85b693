"""The nightly throughput gate: a slowdown between two nights is an alarm only when an
interleaved A/B confirms it.

The rank test of :func:`dolb.results.throughput.judge_throughput` only *suspects*: a
learner significantly slower (q < :data:`~dolb.results.throughput.SPEED_ALPHA`) with a
median ratio below :data:`SUSPECT`, or much slower than the night's other learners
(:func:`suspects`). At most :data:`MAX_AB` suspects, the most surprising first given the
history band (:func:`history_band`), are re-measured A/B (:mod:`dolb.bench.ab`: both
nights' commits, their benchmarks interleaved in the same rounds on this machine) and
judged by :func:`judge_ab`: a learner is *confirmed* when q < ``alpha`` and its median
ratio is below the slowdown threshold, and only a confirmed learner's measurements whose
A/B ratio is below the threshold are *slower* (:func:`gate`). The band ranks the
suspects and is shown, never an alarm by itself. Without an A/B (``dolb compare``
without ``--confirm``) a suspected slowdown below the threshold is an alarm, except
between nights on different CPU models (verdict ``other machine``). Why the gate is
built so, and how the band and the A/B are computed: docs/design/nightly-gate.md.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats as st

from dolb import location
from dolb.errors import DataError
from dolb.results.history import read_records
from dolb.results.stats import fisher_p_values
from dolb.results.store import ResultStore
from dolb.results.throughput import BENCH_KEYS, SLOWDOWN, SPEED_ALPHA, compare_throughput, read_bench

SUSPECT = 1.0
"""A learner significantly slower with a median ratio below this is re-measured A/B."""
MAX_AB = 6
"""Learners re-measured at most in one A/B (to keep it within minutes)."""
BAND_NIGHTS = 3
"""Earlier nights a history band needs."""
MACHINE_FIELDS = ["cpu", "cpus", "governor", "load_before", "load_after", "git_commit"]
"""What the comparison shows of each night's machine (``bench.json``'s machine row)."""
AB_COLUMNS = ["rounds", "ab_before", "ab_after", "ab_ratio", "ab_low", "ab_high", "ab_p", "learner_ab_ratio",
              "learner_ab_q", "confirmed"]
"""Columns of a judged A/B after :data:`~dolb.results.throughput.BENCH_KEYS`."""
COMMIT = re.compile(r"[0-9a-f]{7,64}")
"""A night's git commit: what ``git rev-parse HEAD`` prints (never an option or a path
handed to git)."""


def read_machine(folder: str | Path) -> dict:
    """The machine a night ran on: ``bench.json``'s machine row (:data:`MACHINE_FIELDS`,
    None where absent) with ``git_commit`` taken from the folder's last run record when
    the bench did not say. Empty values when the folder has no ``bench.json``; DataError
    naming the file when it is not a list of objects, or its CPU or commit is not text
    (a commit: :data:`COMMIT`, hexadecimal)."""
    path = location.joined(folder, "bench.json")
    machine: dict = {}
    try:
        text = location.read_text(path)
        rows = None if text is None else json.loads(text)
    except (OSError, ValueError) as exc:
        raise DataError(f"{path}: not a readable JSON file ({exc})") from None
    if rows is not None:
        if not isinstance(rows, list):
            raise DataError(f"{path}: a JSON {type(rows).__name__}, not a list of objects")
        machine = next((row for row in rows if isinstance(row, dict) and row.get("kind") == "machine"), {})
    found = {name: machine.get(name) for name in MACHINE_FIELDS}
    if not isinstance(found["cpu"], (str, type(None))):
        raise DataError(f"{path}: the machine's cpu is {found['cpu']!r}, not text")
    if not found["git_commit"]:
        records = read_records(ResultStore(folder)) if location.is_folder(folder) else []
        found["git_commit"] = records[-1].get("client", {}).get("git_commit") if records else None
        path = f"{folder}/runs/{records[-1]['run_id']}.json" if records else path
    if found["git_commit"] is not None and not (isinstance(found["git_commit"], str)
                                               and COMMIT.fullmatch(found["git_commit"])):
        raise DataError(f"{path}: the git commit is {found['git_commit']!r}, not a commit's hexadecimal name")
    return found


def history_band(nights: list[pd.DataFrame]) -> pd.DataFrame:
    """The between-night spread of every measurement over ``nights`` (tables of
    :func:`~dolb.results.throughput.read_bench`): ``band_nights``, ``band_sd`` (robust
    standard deviation of the log of the nights' medians), ``band_low`` and
    ``band_high`` (examples per second), NaN with fewer than :data:`BAND_NIGHTS`.

    Examples
    --------
    >>> import pandas as pd
    >>> night = lambda v: pd.DataFrame({"learner": ["pa"], "input": "sparse", "source": "memory",
    ...                                 "conversions": "last", "examples_per_s": [v]})
    >>> band = history_band([night(90.0), night(100.0), night(110.0)])
    >>> int(band["band_nights"].iloc[0]), round(float(band["band_sd"].iloc[0]), 3)
    (3, 0.141)
    """
    columns = BENCH_KEYS + ["band_nights", "band_sd", "band_low", "band_high"]
    if not nights:
        return pd.DataFrame(columns=columns)
    logs = pd.concat([night.set_index(BENCH_KEYS)["examples_per_s"] for night in nights], axis=1).apply(np.log)
    centre = logs.median(axis=1)
    sd = 1.4826 * logs.sub(centre, axis=0).abs().median(axis=1)
    count = logs.notna().sum(axis=1)
    sd[count < BAND_NIGHTS] = np.nan
    band = pd.DataFrame({"band_nights": count, "band_sd": sd, "band_low": np.exp(centre - 2 * sd),
                         "band_high": np.exp(centre + 2 * sd)})
    return band.reset_index()[columns]


def suspects(throughput: pd.DataFrame, slowdown: float = SLOWDOWN) -> list[str]:
    """The learners to re-measure A/B: significantly slower (q <
    :data:`~dolb.results.throughput.SPEED_ALPHA`) with a median ratio below
    :data:`SUSPECT`, or, relative to the night's own change (the median of every
    learner's ratio: a learner slowed by its code on a night the machine got faster),
    below halfway between 1 and ``slowdown``; the most surprising first (the log of
    their relative ratio over the median ``band_sd`` of their measurements, or 0.1
    without a band), at most :data:`MAX_AB`.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"learner": ["pa", "sgd", "ftrl", "ogd"], "q": [0.001, 0.5, 0.5, 0.5],
    ...                       "learner_ratio": [0.95, 0.95, 1.2, 1.3], "band_sd": [0.01, 0.2, 0.1, 0.1]})
    >>> suspects(table)  # pa significantly slower; sgd 0.88x the night's median ratio (1.075), below 0.95
    ['pa', 'sgd']
    """
    judged = throughput[throughput["q"].notna()]
    by_learner = judged.groupby("learner").agg(ratio=("learner_ratio", "first"), q=("q", "first"),
                                                sd=("band_sd", "median"))
    relative = by_learner["ratio"] / by_learner["ratio"].median()
    chosen = ((by_learner["q"] < SPEED_ALPHA) & (by_learner["ratio"] < SUSPECT)) | (relative < (1 + slowdown) / 2)
    surprise = np.log(relative[chosen]) / by_learner.loc[chosen, "sd"].fillna(0.1)
    return surprise.sort_values(kind="stable").index[:MAX_AB].tolist()


def judge_ab(rounds: pd.DataFrame, slowdown: float, alpha: float = SPEED_ALPHA, intervals: bool = True
             ) -> pd.DataFrame:
    """An A/B's verdict (the rounds of :func:`dolb.bench.ab.interleave`), one row per
    measurement, :data:`AB_COLUMNS`: the medians ``ab_before``, ``ab_after`` and of the
    per-round ratios ``ab_ratio`` (with ``intervals``, its 95 % BCa bootstrap interval
    ``ab_low``–``ab_high``), ``ab_p`` (one-sided Wilcoxon signed-rank test of the log
    ratios, after slower), and per learner ``learner_ab_ratio`` (median of its
    ``ab_ratio``), ``learner_ab_q`` (its p-values by Fisher's method,
    Benjamini–Hochberg over the learners) and ``confirmed`` (q < alpha and ratio below
    ``slowdown``).

    Examples
    --------
    >>> import pandas as pd
    >>> rounds = pd.DataFrame({"learner": "pa", "input": "sparse", "source": "memory", "conversions": "last",
    ...                        "round": range(7), "before": 100.0, "after": [80.0, 79, 81, 78, 82, 80, 80]})
    >>> judged = judge_ab(rounds, 0.9, intervals=False)
    >>> float(judged["ab_ratio"].iloc[0]), round(float(judged["ab_p"].iloc[0]), 4), bool(judged["confirmed"].iloc[0])
    (0.8, 0.0078, True)
    """
    rows = []
    for key, found in rounds.groupby(BENCH_KEYS, sort=True):
        ratios = (found["after"] / found["before"]).to_numpy(dtype=float)
        p = st.wilcoxon(np.log(ratios), alternative="less").pvalue if len(ratios) > 1 else np.nan
        rows.append((*key, len(ratios), found["before"].median(), found["after"].median(), np.median(ratios),
                     *(_interval(ratios) if intervals else (np.nan, np.nan)), p))
    table = pd.DataFrame(rows, columns=BENCH_KEYS + AB_COLUMNS[:7])
    names = sorted(set(table["learner"]))
    groups = [table.loc[table["learner"] == name, "ab_p"].dropna().tolist() for name in names]
    tested = [i for i, group in enumerate(groups) if group]
    q = dict.fromkeys(names, np.nan)
    if tested:
        combined = fisher_p_values([groups[i] for i in tested])
        q.update(zip([names[i] for i in tested], st.false_discovery_control(combined)))
    ratio = table.groupby("learner")["ab_ratio"].transform("median")
    learner_q = table["learner"].map(q)
    return table.assign(learner_ab_ratio=ratio, learner_ab_q=learner_q,
                        confirmed=(learner_q < alpha) & (ratio < slowdown))


def _interval(ratios: np.ndarray) -> tuple[float, float]:
    """The 95 % BCa bootstrap interval of the median of ``ratios`` (the median itself
    where BCa is undefined: every resample has one median)."""
    if len(ratios) < 3:
        return np.nan, np.nan
    found = st.bootstrap((ratios,), np.median, confidence_level=0.95, method="BCa", n_resamples=2000,
                         random_state=0).confidence_interval
    if not np.isfinite(found.low):
        return float(np.median(ratios)), float(np.median(ratios))
    return float(found.low), float(found.high)


def gate(throughput: pd.DataFrame, slowdown: float, same_cpu: bool, ab: pd.DataFrame | None = None,
         remeasured: tuple[str, ...] = ()) -> pd.DataFrame:
    """The throughput table with the gate's ``slower`` and ``verdict``.

    Parameters
    ----------
    throughput : DataFrame
        :func:`~dolb.results.throughput.compare_throughput`'s table.
    same_cpu : bool
        Whether both nights ran on the same CPU model.
    ab : DataFrame, optional
        :func:`judge_ab` of the A/B, when one was run (then the gate confirms).
    remeasured : tuple of str
        The learners the A/B re-measured (:func:`suspects`).

    Returns
    -------
    DataFrame
        With an A/B: its columns joined on; ``slower`` where the learner is confirmed
        and the measurement's A/B ratio (the night's ratio for a measurement the A/B
        does not make: from a Zarr store) is below ``slowdown``; verdicts ``slower``,
        ``not confirmed`` (re-measured, not slower), ``suspected`` (a suspect left out
        of the A/B by :data:`MAX_AB`), else as before. Without: ``slower`` as
        before on the same CPU model; on another every judged row ``other machine``.
    """
    table = throughput.drop(columns=[c for c in AB_COLUMNS if c in throughput])
    if ab is None:
        if same_cpu:
            return table
        judged = table["verdict"].isin(["slower", "unchanged"])
        return table.assign(slower=False, verdict=table["verdict"].where(~judged, "other machine"))
    table = table.merge(ab, on=BENCH_KEYS, how="left")
    learners = set(table.loc[table["confirmed"].fillna(False).astype(bool), "learner"])
    below = table["ab_ratio"].fillna(table["ratio"]) < slowdown  # the A/B's figure, else (Zarr) the night's
    confirmed = table["learner"].isin(learners) & below & (table["verdict"] != "reference")
    suspected = (table["q"] < SPEED_ALPHA) & (table["learner_ratio"] < SUSPECT) & (table["verdict"] != "reference")
    verdict = np.select([confirmed, table["learner"].isin(remeasured) & suspected, suspected],
                        ["slower", "not confirmed", "suspected"], table["verdict"].where(lambda v: v != "slower",
                                                                                          "unchanged"))
    return table.assign(slower=confirmed, verdict=verdict)


@dataclass
class NightGate:
    """The throughput of two nights judged by :func:`judge_nights`.

    Attributes
    ----------
    table : DataFrame
        :func:`gate`'s throughput table, with the history band of each measurement.
    ab : DataFrame
        :func:`judge_ab` of the A/B (empty when none ran).
    machines : DataFrame
        The two nights' machines (:func:`read_machine`), rows ``baseline`` and ``run``.
    note : str
        What the gate did, one sentence or two.
    rounds : DataFrame
        The A/B's speeds, round by round (empty when none ran).
    """

    table: pd.DataFrame
    ab: pd.DataFrame
    machines: pd.DataFrame
    note: str
    rounds: pd.DataFrame


Confirm = Callable[[str, str, list[str]], pd.DataFrame]
"""The A/B step: (baseline commit, run commit, learners) -> rounds as
:func:`dolb.bench.ab.interleave` gives them."""


def judge_nights(run: str | Path, baseline: str | Path, history=(), slowdown: float = SLOWDOWN,
                 confirm: Confirm | None = None) -> NightGate:
    """Judge the throughput of result folder ``run`` against ``baseline``: the rank
    test, the history band over the ``history`` nights other than ``run`` on the same
    CPU model, and, with ``confirm``, the A/B of the :func:`suspects` on both nights'
    commits (DataError when a night's commit is unknown).

    Examples
    --------
    >>> judge_nights("no-such-night", "no-such-night").note
    'No A/B asked: a learner judged slower is an alarm.'
    """
    machines = {"baseline": read_machine(baseline), "run": read_machine(run)}
    same_cpu = machines["run"]["cpu"] == machines["baseline"]["cpu"]
    table = compare_throughput(read_bench(run), read_bench(baseline), slowdown)
    earlier = [night for night in history if not location.same(night, run)
               and read_machine(night)["cpu"] == machines["run"]["cpu"]]
    table = table.merge(history_band([read_bench(night) for night in earlier]), on=BENCH_KEYS, how="left")
    chosen, ab, rounds = [], pd.DataFrame(columns=BENCH_KEYS + AB_COLUMNS), pd.DataFrame()
    if confirm is None:
        note = "No A/B asked: a learner judged slower is an alarm."
        if not same_cpu:
            note = (f"The nights ran on different CPU models ({machines['baseline']['cpu']}; "
                    f"{machines['run']['cpu']}): throughput not compared (no A/B asked).")
    else:
        chosen = suspects(table, slowdown)
        note = "A/B: no learner suspected."
        if chosen:
            commits = [machines[night]["git_commit"] for night in ("baseline", "run")]
            for folder, commit in zip((baseline, run), commits):
                if not commit:
                    raise DataError(f"{folder}: its git commit is not recorded (bench.json, run record): "
                                    "no A/B of a suspected slowdown is possible")
            rounds = confirm(*commits, chosen)
            ab = judge_ab(rounds, slowdown)
            confirmed = sorted(set(ab.loc[ab["confirmed"], "learner"]))
            note = (f"A/B: {', '.join(chosen)} re-measured on both commits ({commits[0][:10]}, {commits[1][:10]}), "
                    f"{int(ab['rounds'].max())} interleaved rounds; confirmed slower: "
                    f"{', '.join(confirmed) or 'none'}.")
    return NightGate(gate(table, slowdown, same_cpu, ab if confirm is not None else None, tuple(chosen)), ab,
                     pd.DataFrame(machines).T.rename_axis("night").reset_index(), note, rounds)
