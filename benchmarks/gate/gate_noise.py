"""``python -m benchmarks gate-noise``: the noise model of the nightly throughput gate, simulated:
how often does it alarm on identical code, and how often does it see a 20 % slowdown of
one learner, when nights differ by a shift of the whole machine and of each learner?

A night's log speed of one repeat of measurement m of learner l is the night's shift
(normal, sd ``--night-sd``, every learner alike) + the learner's shift that night (sd
``--learner-sd``) + the repeat's noise (sd ``--repeat-sd``); each learner has 8
measurements (sparse/dense × memory/Zarr × last/all), 7 repeats, like ``dolb bench
--quick``. Each simulated night is judged against a simulated baseline night by the
gate's own code (:func:`~dolb.results.throughput.judge_throughput`,
:func:`~dolb.results.nightly_gate.suspects`, :func:`~dolb.results.nightly_gate.judge_ab`):
the A/B measures both sides in the same rounds, so the nights' shifts cancel and only
its within-round noise (sd ``--ab-sd`` per side) remains, over 7 rounds of the 4
measurements from memory. Defaults: the spreads ``python -m benchmarks gate-trial`` measured over
11 nights on a shared 2-core machine (load average 8-14; see
``cluster/nightly/README.md``). Prints, and records as ``gate-noise``, the false-alarm
rate (identical code) and the detection rate (one learner 0.8x), with and without the
A/B; the same seed gives the same figures on any machine.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dolb.bench.records import derived, measurement, new_record, write_record
from dolb.results.nightly_gate import judge_ab, suspects
from dolb.results.throughput import SLOWDOWN, judge_throughput

MEASUREMENTS = [(i, s, c) for i in ("sparse", "dense") for s in ("memory", "zarr") for c in ("last", "all")]
REPEATS = 7
ROUNDS = 7


def night(rng, learners: list[str], sd: dict, slow: dict[str, float]) -> dict[tuple, np.ndarray]:
    """One night's repeats (examples per second) of every measurement, learner ``l``
    multiplied by ``slow.get(l, 1)``."""
    shift = rng.normal(0, sd["night"])
    found = {}
    for learner in learners:
        own = shift + rng.normal(0, sd["learner"]) + np.log(slow.get(learner, 1.0))
        for key in MEASUREMENTS:
            found[(learner, *key)] = np.exp(10 + own + rng.normal(0, sd["repeat"], REPEATS))
    return found


def ab_rounds(rng, chosen: list[str], sd: float, slow: dict[str, float]) -> pd.DataFrame:
    """An A/B of the ``chosen`` learners from memory: both sides in each round share
    the round's shift; each has its own noise of sd ``sd``."""
    rows = []
    for r in range(ROUNDS):
        shift = rng.normal(0, 0.1)
        for learner in chosen:
            for key in (m for m in MEASUREMENTS if m[1] == "memory"):
                before, after = np.exp(10 + shift + rng.normal(0, sd, 2))
                rows.append((learner, *key, r, before, after * slow.get(learner, 1.0)))
    return pd.DataFrame(rows, columns=["learner", "input", "source", "conversions", "round", "before", "after"])


def simulate(nights: int, n_learners: int, sd: dict, slowed: str | None, seed: int = 0) -> dict:
    """``nights`` nights judged against a baseline night each; ``slowed`` (a learner
    name such as ``l0``) runs at 0.8x in the judged night and on the A/B's after
    side. Returns the nights with an alarm from the rank test alone (``rank``), with
    the A/B (``gate``), with the A/B naming ``slowed`` (``named``), with ``slowed``
    re-measured (``suspected``), all as fractions of the nights, and the learners
    re-measured per night (``ab_learners``)."""
    rng = np.random.default_rng(seed)
    learners = [f"l{i}" for i in range(n_learners)]
    slow = {slowed: 0.8} if slowed else {}
    counts = {"rank": 0, "gate": 0, "named": 0, "suspected": 0, "ab_learners": 0}
    for _ in range(nights):
        base, run = night(rng, learners, sd, {}), night(rng, learners, sd, slow)
        table = pd.DataFrame({"learner": [k[0] for k in run], "repeats_run": [tuple(v) for v in run.values()],
                              "repeats_baseline": [tuple(base[k]) for k in run]})
        judged = judge_throughput(table, slowdown=SLOWDOWN).assign(band_sd=np.nan)
        counts["rank"] += bool(judged["slower"].any())
        chosen = suspects(judged, SLOWDOWN)
        counts["suspected"] += bool(slowed in chosen)
        counts["ab_learners"] += len(chosen)
        if chosen:
            ab = judge_ab(ab_rounds(rng, chosen, sd["ab"], slow), SLOWDOWN, intervals=False)
            confirmed = set(ab.loc[ab["confirmed"], "learner"])
            counts["gate"] += bool(confirmed)
            counts["named"] += bool(slowed in confirmed)
    return {name: count / nights for name, count in counts.items()}


SHOWN = {"rank": "alarms, rank test alone", "gate": "alarms, with the A/B", "named": "slowed learner named",
         "suspected": "slowed learner re-measured", "ab_learners": "learners re-measured a night"}
"""The figures of :func:`simulate` a record keeps, by their names there."""


def main(args) -> int:
    """``python -m benchmarks gate-noise``: the rates with identical code and with one learner
    0.8x (seeds ``args.seed`` and the next), printed; with ``args.record`` a record of
    them, the spreads as its derived figures."""
    sd = {"night": args.night_sd, "learner": args.learner_sd, "repeat": args.repeat_sd, "ab": args.ab_sd}
    same = simulate(args.nights, args.learners, sd, None, args.seed)
    slower = simulate(args.nights, args.learners, sd, "l0", args.seed + 1)
    print(f"{args.nights} nights, {args.learners} learners, spreads {sd}")
    print(f"identical code: alarms {same['gate']:.1%} with the A/B, {same['rank']:.1%} from the rank test alone; "
          f"{same['ab_learners']:.2f} learners re-measured A/B per night")
    print(f"one learner 0.8x: detected and named {slower['named']:.1%} (suspected {slower['suspected']:.1%}), "
          f"rank test alone {slower['rank']:.1%}")
    if args.record:
        labels = {"nights": args.nights, "learners": args.learners, "seed": args.seed}
        found = [measurement(labels | {"code": code, "figure": SHOWN[name]},
                             "learners" if name == "ab_learners" else "fraction of nights", [rates[name]])
                 for code, rates in (("identical", same), ("one learner 0.8x", slower)) for name in SHOWN]
        spreads = [derived({"spread": name}, "sd of log speed", value) for name, value in sd.items()]
        print(f"record: {write_record(args.record, new_record('gate-noise', found, spreads, args.command_line))}")
    return 0
