"""What one ``dolb run`` did, as :func:`dolb.execution.sweep.run_sweep` returns it and
the command prints it: the cells of the pipeline stored before, computed, failed, and
what its tuning did."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SweepSummary:
    """What one ``dolb run`` did."""

    n_cells: int
    n_cached: int
    n_computed: int
    n_failed: int
    seconds: float
    report: str
    run_id: str = ""
    timings: dict[str, float] = field(default_factory=dict)
    gather: str = ""
    n_failed_before: int = 0
    """Cells of the pipeline whose stored attempt failed in an earlier run and that were
    not run again (``retry_failed`` off): they count among ``n_cached``."""
    tuning: dict[str, int] = field(default_factory=dict)
    """What the tuning stage did (:meth:`dolb.execution.tuning.Tuned.counts`); empty without one."""

    @property
    def ok(self) -> bool:
        """Whether every cell of the pipeline is stored with a result (none failed, now
        or before, tuning trials included)."""
        return (self.n_failed == 0 and self.n_failed_before == 0 and not self.tuning.get("failed")
                and not self.n_untuned)

    @property
    def n_untuned(self) -> int:
        """Tuned cells left without a choice, every trial of their split having failed:
        neither stored nor computed, they count as failed."""
        return self.tuning.get("untuned", 0)

    def counts_line(self) -> str:
        """What the run did, on one line."""
        before = ""
        if self.n_failed_before:
            before = f" ({self.n_failed_before} failed in an earlier run: --retry-failed runs them again)"
        if self.n_untuned:
            before += (f" ({self.n_untuned} tuned without a choice: every tuning trial of their split failed, "
                       "see `dolb status`)")
        tuning = ""
        if self.tuning:
            tuning = (f"; tuning: {self.tuning['cells']} trial cells, {self.tuning['computed']} computed, "
                      f"{self.tuning['failed']} failed")
        return (
            f"{self.n_cells} cells: {self.n_cached} already stored, {self.n_computed} computed, "
            f"{self.n_failed + self.n_failed_before + self.n_untuned} failed{before}{tuning}"
        )

    def time_line(self) -> str:
        """Where the time went, on one line."""
        return "time: " + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in self.timings.items())
