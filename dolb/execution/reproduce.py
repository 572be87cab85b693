"""``dolb reproduce``: run a recorded run again into a fresh folder and say whether
every value is bit-identical, and if not, how far the values differ (within
floating-point noise or beyond ``--rtol``, in which learners) and which versions and
machines differ.

The recorded run's pipeline text is run as it was (relative paths resolve against the
recorded pipeline file's folder); rows are matched on their coordinates (not cell ids,
which change with the dolb version) and values compared bit for bit (all but timing
metrics such as ``learn_seconds``, which measure the run, not the results).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from dolb.data.store.format import is_url
from dolb.errors import ConfigError
from dolb.evaluation.metrics import deterministic_metrics
from dolb.execution.sweep import run_sweep
from dolb.options import RunOptions
from dolb.results.agreement import RTOL, Agreement, agreement
from dolb.results.history import find_record, machines, recorded_pipeline, same_machines
from dolb.results.query import check_complete, rows
from dolb.results.store import ResultStore

KEYS = ["experiment", "dataset", "task", "learner", "params", "complexity", "split", "conversion", "n_train", "metric"]
"""What places a value, whatever the version that computed it."""


@dataclass
class Reproduction:
    """The outcome of :func:`reproduce`."""

    run_id: str
    n_values: int
    n_identical: int
    n_missing: int
    n_extra: int
    largest_difference: float
    version_changes: dict[str, tuple] = field(default_factory=dict)
    machines: tuple[str, str] = ("", "")
    """What did the arithmetic of the recorded run and of this one (:func:`dolb.results.history.machines`),
    when their kinds of worker differ; empty otherwise."""
    agreement: Agreement | None = None
    """How the values found in both runs agree (bit for bit, within floating-point noise or beyond ``--rtol``)."""

    @property
    def identical(self) -> bool:
        return self.n_values == self.n_identical and not self.n_missing and not self.n_extra

    def describe(self) -> str:
        """A few lines for the console."""
        if self.identical:
            head = f"run {self.run_id} reproduced: all {self.n_values:,} values bit-identical"
        else:
            head = (
                f"run {self.run_id} NOT reproduced: {self.n_values - self.n_identical:,} of {self.n_values:,} "
                f"values differ (largest difference {self.largest_difference:.3g}), "
                f"{self.n_missing:,} missing, {self.n_extra:,} new"
            )
        lines = [head]
        recorded, now = self.machines
        explained = self.agreement is not None and self.agreement.verdict != "identical"
        if explained:  # naming the machines when they differ
            lines.append(self.agreement.describe({"recorded": recorded, "now": now}))
        if not self.version_changes:
            lines.append("same versions as recorded")
        else:
            changes = "; ".join(f"{name}: {old} -> {new}" for name, (old, new) in sorted(self.version_changes.items()))
            lines.append(f"versions that differ: {changes}")
        if recorded != now and not explained:
            lines.append(f"machines that differ: recorded {recorded}; now {now}")
        return "\n".join(lines)


def reproduce(run_dir: str | Path, out_dir: str | Path, run_id: str | None = None, rtol: float | None = None,
              options: RunOptions | None = None) -> Reproduction:
    """Run the recorded run ``run_id`` of ``run_dir`` (default: its last finished run)
    again into the fresh folder ``out_dir`` with ``options`` (where to run: see
    :class:`dolb.options.RunOptions`; never a progress bar) and compare (``rtol``: the
    largest relative difference called floating-point noise, default
    :data:`~dolb.results.agreement.RTOL`)."""
    original = ResultStore(run_dir)
    check_complete(original)
    record = find_record(original, run_id)
    pipeline_path, pipeline_text = recorded_pipeline(original, record, "reproduce this run")
    if ResultStore(out_dir).exists():
        raise ConfigError(f"{out_dir}: already holds results; reproduce into a fresh folder")
    before = rows(original)  # every part read (and refused if damaged) before any cell runs
    options = recorded_places(options or RunOptions(), record)
    summary = run_sweep(pipeline_path, out_dir, options, pipeline_text=pipeline_text)
    again = find_record(ResultStore(out_dir), summary.run_id)
    return _compare(record, again, before, rows(ResultStore(out_dir)), RTOL if rtol is None else rtol)


def recorded_places(options: RunOptions, record: dict) -> RunOptions:
    """``options`` (never a progress bar) reading the datasets where the run ``record``
    says it read them, unless ``options`` names other places: its data folder, and its
    data cache when that is a URL (every host reaches it) or a folder this host has (a
    cache in another host's home is not made here).

    Examples
    --------
    >>> record = {"options": {"data_cache": "s3://bucket/cache", "data": "/data"}}
    >>> again = recorded_places(RunOptions(), record)
    >>> again.data_cache, again.data, again.progress
    ('s3://bucket/cache', '/data', False)
    >>> recorded_places(RunOptions(data="/mine"), record).data
    '/mine'
    >>> recorded_places(RunOptions(), {"options": {"data_cache": "/home/nobody/cache"}}).data_cache is None
    True
    """
    recorded = record.get("options") or {}
    cache = recorded.get("data_cache")
    reachable = cache is not None and (is_url(cache) or Path(cache).is_dir())
    return replace(options, progress=False, data_cache=options.data_cache or (cache if reachable else None),
                   data=options.data or recorded.get("data"))


def _compare(record: dict, again: dict, before: pd.DataFrame, after: pd.DataFrame, rtol: float = RTOL
             ) -> Reproduction:
    """Match the deterministic values of two runs (timing metrics are left out), count
    the bit-identical ones and say how the others differ."""
    compared = deterministic_metrics()
    before, after = (frame[frame["metric"].isin(compared)] for frame in (before, after))
    merged = before[KEYS + ["value"]].merge(after[KEYS + ["value"]], on=KEYS, how="outer", indicator=True)
    both = merged[merged["_merge"] == "both"]
    old, new = both["value_x"].to_numpy(np.float64), both["value_y"].to_numpy(np.float64)
    same = old.view(np.int64) == new.view(np.int64)
    with np.errstate(invalid="ignore"):
        difference = np.abs(old - new)[~same]
    return Reproduction(
        run_id=record["run_id"],
        n_values=len(both),
        n_identical=int(same.sum()),
        n_missing=int((merged["_merge"] == "left_only").sum()),
        n_extra=int((merged["_merge"] == "right_only").sum()),
        largest_difference=(
            float(np.nanmax(difference)) if difference.size and not np.all(np.isnan(difference)) else 0.0
        ),
        version_changes=_version_changes(record, again),
        machines=("", "") if same_machines(record, again) else (machines(record), machines(again)),
        agreement=agreement(both["learner"].to_numpy(), old, new, rtol),
    )


def _version_changes(record: dict, again: dict) -> dict[str, tuple]:
    """Packages, learner plugins (version and source digests), Python and platform that
    differ between the two runs' clients and workers."""
    def versions(run: dict) -> dict[str, set]:
        found: dict[str, set] = {}
        client = run.get("client", {})
        for source in [client] + list(run.get("workers", {}).values()):
            for name, value in source.get("packages", {}).items():
                found.setdefault(name, set()).add(value)
            for name, value in source.get("plugins", {}).items():
                found.setdefault(f"plugin {name}", set()).add(value)
        for name in ("python", "platform"):
            if name in client:
                found.setdefault(name, set()).add(client[name])
        return found

    old, new = versions(record), versions(again)
    return {
        name: (", ".join(sorted(map(str, old.get(name, {None})))), ", ".join(sorted(map(str, new.get(name, {None})))))
        for name in sorted(set(old) | set(new))
        if old.get(name) != new.get(name)
    }


__all__ = ["Reproduction", "reproduce"]
