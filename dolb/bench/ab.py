"""Speed of two source trees of dolb side by side (A/B): ``dolb bench`` run alternately
on each, round after round (before, after, after, before, ...), so that a machine that
slows down or speeds up during the measurement weighs on both alike; the nightly gate
(``dolb compare --confirm``) re-measures a suspected slowdown this way before it alarms,
and ``dolb bench ab BEFORE AFTER`` compares two checkouts by hand (:func:`main`).

Each tree runs in its own environment: its ``dolb`` package first on PYTHONPATH, with
this interpreter, when its ``requirements.lock`` is the same as the other tree's (the
installed packages are then the locked ones of both); otherwise a virtual environment
with the tree installed at its own locked versions (``pip install -c requirements.lock
-e TREE``, which needs the package index). A side may run Python source of its own
before dolb's command (``Tree.prelude``: the nightly gate's trial injects a slowdown
into the *after* side this way, so that it behaves as a change of its code).

dolb's plugins are found through the installed package's entry points, which may name
modules a tree does not have (an older tree, say): each run sees only the ``dolb.*``
entry points whose module its own tree can import (:data:`LAUNCH`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from dolb.bench.records import derived, measurement, new_record, write_record
from dolb.errors import ConfigError

LAUNCH = """
import importlib, importlib.metadata as metadata, sys
installed = metadata.entry_points
def importable(point):
    try:
        importlib.import_module(point.module)
    except ImportError:
        return False
    return True
def entry_points(**selection):
    found = installed(**selection)
    if not selection.get("group", "").startswith("dolb."):
        return found
    return metadata.EntryPoints(p for p in found if importable(p))
metadata.entry_points = entry_points
from dolb.cli import main
sys.exit(main(sys.argv[1:]))
"""
"""Runs ``dolb`` with the ``dolb.*`` entry points limited to the modules the tree on
PYTHONPATH can import."""
ROUNDS = 7
"""Rounds of an A/B: each runs ``dolb bench`` once on each tree."""
KEY = ("learner", "input", "source", "conversions")


@dataclass
class Tree:
    """A dolb source tree and how to run it: ``python`` (an interpreter; this one, or a
    virtual environment's), ``env``, its environment, and ``prelude``, Python source run
    before dolb's command in each of its processes."""

    path: Path
    python: str = sys.executable
    env: dict[str, str] = field(default_factory=dict)
    prelude: str = ""




def bench_once(tree: Tree, only: list[str], quick: bool = True, repeat: int = 3) -> dict[tuple, float]:
    """One ``dolb bench --json --no-zarr`` process on ``tree`` (``repeat`` interleaved
    repeats inside it): examples per second, the median of the repeats, by (learner,
    input, source, conversions)."""
    command = [tree.python, "-c", tree.prelude + LAUNCH, "bench", "--json", "--no-zarr", "--repeat", str(repeat),
               "--only", ",".join(only)] + (["--quick"] if quick else [])
    done = subprocess.run(command, env=tree.env, cwd=tree.path, capture_output=True, text=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise ConfigError(f"dolb bench failed in {tree.path}: {last}")
    return {tuple(row[k] for k in KEY): row["examples_per_s"] for row in json.loads(done.stdout)
            if row.get("kind") == "throughput"}


def interleave(before: Tree, after: Tree, only: list[str], rounds: int = ROUNDS, quick: bool = True,
               measure: Callable[[Tree], dict[tuple, float]] | None = None) -> pd.DataFrame:
    """``rounds`` rounds of the benchmark on both trees, alternating which goes first.

    Parameters
    ----------
    before, after : Tree
        The baseline's and the run's trees.
    only : list of str
        The learners measured.
    measure : callable, optional
        Tree -> examples per second by key (default :func:`bench_once` of ``only``).

    Returns
    -------
    DataFrame
        One row per round × measurement in both: learner, input, source, conversions,
        ``round``, ``before`` and ``after`` (examples per second).
    """
    measure = measure or (lambda tree: bench_once(tree, only, quick))
    rows = []
    for r in range(rounds):
        order = [before, after] if r % 2 == 0 else [after, before]
        found = {id(tree): measure(tree) for tree in order}
        speeds_before, speeds_after = found[id(before)], found[id(after)]
        rows += [(*key, r, speeds_before[key], speed) for key, speed in speeds_after.items() if key in speeds_before]
    return pd.DataFrame(rows, columns=[*KEY, "round", "before", "after"])


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise ConfigError(f"git {' '.join(args)} in {repo}: {last}")
    return done.stdout


def check_checkout(repo: Path) -> None:
    """ConfigError naming ``repo`` when it is not a git checkout."""
    try:
        _git(repo, "rev-parse", "--git-dir")
    except ConfigError as exc:
        raise ConfigError(f"--confirm {repo}: not a git checkout ({exc})") from None


def checkout(repo: Path, commit: str, folder: Path) -> Path:
    """A git worktree of ``repo`` at ``commit`` in ``folder`` (detached)."""
    _git(repo, "worktree", "add", "--detach", "--force", str(folder), commit)
    return folder


def environment(tree: Path, other: Path, scratch: Path, prelude: str = "") -> Tree:
    """How to run ``tree`` (each process running ``prelude`` first): with this
    interpreter and ``tree`` as PYTHONPATH when its ``requirements.lock`` is the same as
    ``other``'s, else in a new virtual environment in ``scratch`` with ``tree``
    installed at its locked versions."""
    lock, theirs = tree / "requirements.lock", other / "requirements.lock"
    env = {**os.environ, "PYTHONPATH": str(Path(tree).resolve())}
    if lock.is_file() and theirs.is_file() and lock.read_bytes() == theirs.read_bytes():
        return Tree(tree, sys.executable, env, prelude)
    venv = scratch / f"venv-{tree.name}"
    steps = [[sys.executable, "-m", "venv", str(venv)],
             [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "-e", str(tree)]
             + (["-c", str(lock)] if lock.is_file() else [])]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True)
        if done.returncode != 0:
            raise ConfigError(f"cannot build the environment of {tree}: {(done.stderr.strip() or 'failed')[-300:]}")
    env.pop("PYTHONPATH")
    return Tree(tree, str(venv / "bin" / "python"), env, prelude)


def confirm_commits(repo: str | Path, scratch: str | Path | None = None, rounds: int = ROUNDS,
                    quick: bool = True, prelude: str = "") -> Callable[[str, str, list[str]], pd.DataFrame]:
    """The A/B step of the nightly gate, for :func:`dolb.results.compare_report.compare_folders`:
    a function (baseline commit, run commit, learners) -> :func:`interleave`'s table,
    which checks both commits of the git repository ``repo`` out as worktrees in
    ``scratch`` (default: a temporary folder, deleted after), each in its own
    environment (:func:`environment`; the run's side runs ``prelude`` first); the
    worktrees are removed after. ConfigError at
    once when ``repo`` is not a git checkout (whether or not an A/B is needed tonight)."""
    repo = Path(repo).resolve()
    check_checkout(repo)

    def confirm(before: str, after: str, learners: list[str]) -> pd.DataFrame:
        folder = Path(scratch).resolve() if scratch else Path(tempfile.mkdtemp(prefix="dolb-ab-"))
        folder.mkdir(parents=True, exist_ok=True)
        trees = [folder / f"before-{before[:12]}", folder / f"after-{after[:12]}"]
        try:
            for tree, commit in zip(trees, (before, after)):
                checkout(repo, commit, tree)
            sides = [environment(trees[0], trees[1], folder), environment(trees[1], trees[0], folder, prelude)]
            return interleave(*sides, learners, rounds, quick)
        finally:
            for tree in trees:
                if tree.exists():
                    _git(repo, "worktree", "remove", "--force", str(tree))
            if not scratch:
                shutil.rmtree(folder, ignore_errors=True)

    return confirm


def main(args) -> int:
    """``dolb bench ab BEFORE AFTER``: ``args.rounds`` rounds of ``dolb bench --no-zarr``
    (3 repeats a process) on each tree alternately, and per learner × input ×
    conversions the median ratio of examples per CPU second after / before with its
    BCa bootstrap 95 % interval and the one-sided Wilcoxon p, as the nightly gate judges
    an A/B (:func:`dolb.results.nightly_gate.judge_ab`); "kept" when the interval's
    lower bound is at least 0.95. With ``args.record`` a record ``ab``: both sides'
    speeds in every round, and the judged figures. ConfigError when a tree is no
    checkout of dolb or a learner is unknown."""
    from dolb.bench.throughput import LEARNERS
    from dolb.results.nightly_gate import judge_ab
    from dolb.results.throughput import SLOWDOWN

    for tree in (args.before, args.after):
        if not (Path(tree) / "dolb" / "__init__.py").is_file():
            raise ConfigError(f"{tree}: not a checkout of dolb (no dolb/__init__.py)")
    only = args.only.split(",") if args.only else list(LEARNERS)
    for name in only:
        if name not in LEARNERS:
            raise ConfigError(f"--only: unknown learner {name!r} (known: {', '.join(LEARNERS)})")
    before, after = Path(args.before).resolve(), Path(args.after).resolve()
    with tempfile.TemporaryDirectory(prefix="dolb-ab-") as scratch:
        trees = [environment(before, after, Path(scratch)), environment(after, before, Path(scratch))]
        rounds = interleave(*trees, only, args.rounds, args.quick)
    judged = judge_ab(rounds, SLOWDOWN)
    print(f"{'learner':<18}{'input':<8}{'conv':<6}{'median':>8}{'95 % interval':>18}{'p':>8}  kept")
    for row in judged.itertuples():
        kept = "yes" if row.ab_low >= 0.95 else "NO"
        print(f"{row.learner:<18}{row.input:<8}{row.conversions:<6}{row.ab_ratio:>8.3f}"
              f"{f'[{row.ab_low:.3f}, {row.ab_high:.3f}]':>18}{row.ab_p:>8.3f}  {kept}")
    if args.record:
        print(f"record: {write_record(args.record, ab_record(rounds, judged, args.command_line))}")
    return 0


def ab_record(rounds: pd.DataFrame, judged: pd.DataFrame, command: str) -> dict:
    """The record ``ab`` of an A/B: per measurement and side, the examples per second of
    every round; derived, the median ratio after / before, its interval and p."""
    found = [measurement(dict(zip(KEY, key)) | {"side": side}, "examples/CPU-s", group[side].tolist())
             for key, group in rounds.groupby(list(KEY), sort=True) for side in ("before", "after")]
    figures = [derived(dict(zip(KEY, key)) | {"figure": name}, unit, getattr(row, column))
               for row in judged.itertuples() for key in [tuple(getattr(row, k) for k in KEY)]
               for name, unit, column in (("median after / before", "ratio", "ab_ratio"),
                                          ("95 % low", "ratio", "ab_low"), ("95 % high", "ratio", "ab_high"),
                                          ("Wilcoxon p", "p", "ab_p"))
               if np.isfinite(getattr(row, column))]
    return new_record("ab", found, figures, command)
