"""``python -m benchmarks gate-trial OUT``: nights of the nightly throughput gate on this machine,
simulated: identical code, a background load that changes from night to night, and
optionally a slowdown injected into one learner; each night after the first (the
reference night) is judged against it as ``dolb compare --confirm`` would (the rank
test, the history band, the A/B of the suspects on the commits of both nights).

A night runs ``dolb bench --quick --json --only LEARNERS`` into ``OUT/night-NN/bench.json``
while, where ``--busy`` says 1 (the pattern repeats), a busy-loop process keeps one core
busy (bounded in time, stopped after the night, A/B included). ``--inject LEARNER``
slows LEARNER (:mod:`benchmarks.gate.slowdown`: 25 % more CPU time per block, a speed of
0.8x) in every night after the reference night and in the A/B's tonight side.
The code benchmarked is the commit of the git checkout dolb runs from (commit first).
Prints one line per night and writes ``OUT/trial.json``: per night the load, the
suspects, the alarms, the A/B ratios; over the nights, the between-night spread of
every measurement (robust sd of the log of its medians) and the A/B's within-round
spread, what ``python -m benchmarks gate-noise`` takes. Its record (``gate-trial``): each night's
median ratio to the reference night and A/B ratio of every learner; derived, the
spreads and the nights that alarmed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks import ROOT
from benchmarks.gate.slowdown import prelude
from dolb.bench.ab import LAUNCH, confirm_commits
from dolb.bench.records import derived, measurement, new_record, write_record
from dolb.errors import ConfigError
from dolb.results.nightly_gate import judge_nights
from dolb.results.throughput import BENCH_KEYS, read_bench

BUSY_SECONDS = 1800
"""A busy-loop process ends by itself after this, whatever happens to the bench."""


def busy_core() -> subprocess.Popen:
    """A process that keeps one core busy for at most :data:`BUSY_SECONDS`."""
    loop = f"import time\nend = time.time() + {BUSY_SECONDS}\nwhile time.time() < end:\n    pass\n"
    return subprocess.Popen([sys.executable, "-c", loop])


def bench_night(folder: Path, learners: str, inject: str | None) -> None:
    """``dolb bench --quick --json`` of ``learners`` into ``folder/bench.json``, learner
    ``inject`` (if any) slowed."""
    folder.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", prelude(inject) + LAUNCH, "bench", "--quick", "--json", "--only",
                           learners], env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    (folder / "bench.json").write_text(done.stdout)


def judge(night: Path, reference: Path, history: list[Path], rounds: int, scratch: Path, inject: str | None):
    """The gate of ``night`` against ``reference``, the injected slowdown (if any) in
    the A/B's tonight side."""
    confirm = confirm_commits(ROOT, scratch, rounds, prelude=prelude(inject))
    return judge_nights(night, reference, history, confirm=confirm)


def spreads(nights: list[Path], abs_: list[pd.DataFrame]) -> dict:
    """The between-night robust sd of the log median of every measurement, and the
    A/B's within-round sd of the log ratio (median over measurements)."""
    logs = pd.concat([read_bench(n).set_index(BENCH_KEYS)["examples_per_s"] for n in nights], axis=1).apply(np.log)
    between = 1.4826 * logs.sub(logs.median(axis=1), axis=0).abs().median(axis=1)
    common = logs.sub(logs.iloc[:, 0], axis=0).median(axis=0)  # each night's shift of the median row
    within = [np.log(r["after"] / r["before"]).groupby([r[k] for k in BENCH_KEYS]).std().median()
              for r in abs_ if len(r)]
    return {"between_night_sd_median": float(between.median()), "between_night_sd_max": float(between.max()),
            "night_shift": common.round(4).tolist(), "ab_round_sd_median": float(np.median(within)) if within else None}


def main(args) -> int:
    """``python -m benchmarks gate-trial OUT``: the nights of the module docstring; with
    ``args.record`` a record of them. ConfigError when dolb does not run from a git
    checkout or ``--busy`` is not a list of 0 and 1."""
    busy = args.busy.split(",")
    if not set(busy) <= {"0", "1"}:
        raise ConfigError(f"--busy {args.busy}: expected a comma-separated list of 0 and 1")
    if not (ROOT / ".git").exists():
        raise ConfigError(f"{ROOT}: not a git checkout (the nights benchmark its commit)")
    out = Path(args.out)
    folders = [out / f"night-{i:02d}" for i in range(args.nights)]
    nights, ab_rounds = [], []
    for i, folder in enumerate(folders):
        loaded = int(busy[i % len(busy)])
        inject = args.inject if i else None
        load = busy_core() if loaded else None
        try:
            time.sleep(2 if loaded else 0)
            bench_night(folder, args.learners, inject)
            if i == 0:
                print(f"night 0 (reference): busy core {loaded}", flush=True)
                continue
            start = time.monotonic()
            found = judge(folder, folders[0], folders[:i], args.rounds, out / "scratch", inject)
            seconds = time.monotonic() - start
        finally:
            if load is not None:
                load.kill()
                load.wait()
        table, ab = found.table, found.ab
        judged = table[table["verdict"] != "reference"]
        alarms = sorted(set(table.loc[table["slower"], "learner"]))
        night = {"night": i, "busy": loaded, "inject": inject, "load": found.machines.set_index("night").loc[
            "run", ["load_before", "load_after"]].tolist(), "below_0.9": int((judged["ratio"] < 0.9).sum()),
            "rows": len(judged), "suspects": sorted(set(ab["learner"])) if len(ab) else [], "alarms": alarms,
            "ab_seconds": round(seconds, 1), "learner_ratio": judged.groupby("learner")["ratio"].median().round(3)
            .to_dict(), "ab_ratio": ab.groupby("learner")["learner_ab_ratio"].first().round(3).to_dict() if len(ab)
            else {}, "note": found.note}
        nights.append(night)
        ab_rounds.append(found.rounds)
        print(json.dumps(night), flush=True)
    summary = {"command": args.command_line, "nights": nights, **spreads(folders, ab_rounds),
               "alarm_nights": sum(bool(n["alarms"]) for n in nights),
               "named": sum(args.inject in n["alarms"] for n in nights) if args.inject else None}
    (out / "trial.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps({k: v for k, v in summary.items() if k != "nights"}))
    if args.record:
        print(f"record: {write_record(args.record, trial_record(summary, args.command_line))}")
    return 0


def trial_record(summary: dict, command: str) -> dict:
    """The record ``gate-trial`` of a trial's ``summary`` (what ``OUT/trial.json`` holds)."""
    found = [measurement({"night": n["night"], "busy": n["busy"], "inject": n["inject"] or "", "learner": learner,
                          "figure": figure}, "ratio", [ratio])
             for n in summary["nights"] for figure, ratios in (("night / reference", n["learner_ratio"]),
                                                                 ("A/B after / before", n["ab_ratio"]))
             for learner, ratio in ratios.items()]
    figures = [derived({"figure": name}, unit, summary[name]) for name, unit in (
        ("between_night_sd_median", "sd of log speed"), ("between_night_sd_max", "sd of log speed"),
        ("ab_round_sd_median", "sd of log ratio"), ("alarm_nights", "nights"), ("named", "nights"))
        if summary[name] is not None and np.isfinite(summary[name])]
    return new_record("gate-trial", found, figures, command)
