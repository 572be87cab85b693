"""The ``sleep`` learner of the simulated cluster: a cell that holds its worker's slot for
a time and computes nothing, so that what a sweep of them costs beyond the sleeping is
the engine's own (client, scheduler, worker around the learner).

It is not one of dolb's learners: nothing registers it when dolb is imported (``dolb
learners``, the reference pages and the generic tests never see it). A process that
runs it registers it first: the client with :func:`register_sleep`, a Dask worker by
preloading this module (``dask worker ... --preload benchmarks.engine.sleep``, or
``preload=["benchmarks.engine.sleep"]`` of a ``LocalCluster``), which calls :func:`dask_setup`.

A cell's time is one of the listed ``seconds``, drawn uniformly and deterministically,
keyed by the learner's parameters and the targets of its first block (which the cell's
coordinates determine): the same cell always sleeps the same time, on any worker, in any
run, and two cells of other splits draw independently. The list gives the shape: one
value (fixed), a spread such as ``"0.025,0.05,0.1"``, or the quantiles of a recorded
study's cell times (:func:`recorded_seconds`).

Examples
--------
>>> learner = SleepLearner(1, seconds="0.001,0.002", examples=4)
>>> learner.learn(np.zeros((2, 1)), np.array([0.5, 1.5]))
array([0., 0.])
>>> learner.cell_seconds, learner.diagnostics()
(0.002, {'slept': 0.001})
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import numpy as np

from dolb.errors import ConfigError
from dolb.learners.base import OnlineLearner, Param, register


def parse_seconds(text: str, where: str = "seconds") -> tuple[float, ...]:
    """The cell times a ``seconds`` parameter lists (comma-separated, each ≥ 0);
    ConfigError naming ``where`` otherwise.

    >>> parse_seconds("0.5, 1")
    (0.5, 1.0)
    """
    try:
        values = tuple(float(part) for part in text.split(","))
    except ValueError:
        raise ConfigError(f"{where}: {text!r} is not a comma-separated list of seconds") from None
    if not all(np.isfinite(value) and value >= 0 for value in values):
        raise ConfigError(f"{where}: {text!r} holds a time that is negative or not finite")
    return values


def draw(choices: tuple[float, ...], key: bytes) -> float:
    """One of ``choices``, picked uniformly by the SHA-256 of ``key``.

    >>> draw((1.0, 2.0, 3.0), b"a"), draw((1.0, 2.0, 3.0), b"a") == draw((1.0, 2.0, 3.0), b"a")
    (2.0, True)
    """
    index = int.from_bytes(hashlib.sha256(key).digest()[:8], "little") % len(choices)
    return choices[index]


class SleepLearner(OnlineLearner):
    """Sleeps for its cell's time (``time.sleep``: no CPU, the GIL released) and
    predicts ``offset`` for every example.

    Each block sleeps its share of the cell's time, ``cell_seconds × rows / examples``:
    a whole cell of ``examples`` rows sleeps its time once, a tuning rung the share of
    its budget. ``diagnostics()['slept']`` is what this cell slept (a rung's own share:
    the count starts again when a state is loaded), recorded as a metric, so the time a
    sweep slept is read from its result store.
    """

    name = "sleep"
    task = "regression"
    params = {
        "seconds": Param("0.5", kind=str, doc="a cell's time, drawn from these comma-separated seconds"),
        "examples": Param(1, kind=int, low=1, doc="the examples of a whole cell (each block sleeps its share)"),
        "offset": Param(0.0, doc="every prediction (what a tuning searches)"),
    }
    test_params = {"seconds": "0", "examples": 1}

    def __init__(self, n_features, n_train=None, **params):
        super().__init__(n_features, n_train, **params)
        self.choices = parse_seconds(self.config["seconds"], "learner 'sleep', parameter 'seconds'")
        self.cell_seconds: float | None = None
        self.slept = 0.0

    @classmethod
    def check_params(cls, params):
        checked = super().check_params(params)
        parse_seconds(checked["seconds"], "learner 'sleep', parameter 'seconds'")
        return checked

    def _learn(self, X, y: np.ndarray) -> np.ndarray:
        if self.cell_seconds is None:
            key = repr(sorted(self.config.items())).encode() + np.ascontiguousarray(y).tobytes()
            self.cell_seconds = draw(self.choices, key)
        pause = self.cell_seconds * len(y) / self.config["examples"]
        time.sleep(pause)
        self.slept += pause
        return self._predict(X)

    def _predict(self, X) -> np.ndarray:
        return np.full(X.shape[0], self.config["offset"])

    def diagnostics(self) -> dict[str, float]:
        return {"slept": self.slept}

    def __getstate__(self) -> dict:
        return self.__dict__ | {"slept": 0.0}  # a loaded state counts its own cell's sleep


def admitted(unreachable):
    """dolb's check of a pipeline's learner (why no worker would find its class, or
    None) with the ``sleep`` learner admitted: no ``dolb.learners`` entry point imports
    this module, but the benchmarks' workers import it themselves (``--preload``)."""

    def sleep_admitted(cls):
        return None if cls is SleepLearner else unreachable(cls)

    return sleep_admitted


def register_sleep() -> None:
    """Add the ``sleep`` learner to the learner registry of this process and admit it in
    its pipelines' checks (:func:`admitted`; again: nothing)."""
    from dolb.experiment import schema_learner

    register(SleepLearner)
    if schema_learner._unreachable.__name__ != "sleep_admitted":
        schema_learner._unreachable = admitted(schema_learner._unreachable)


def dask_setup(worker) -> None:
    """A Dask preload's hook: the worker's process knows the ``sleep`` learner."""
    register_sleep()


def recorded_seconds(folder: str | Path, count: int = 64) -> str:
    """The ``seconds`` of a recorded study: ``count`` quantiles (each a time measured)
    of the wall time of the cells its result folder holds (the ``cell_seconds`` column,
    one value a cell), as a ``seconds`` parameter. ConfigError naming the folder when it holds no timed cell."""
    import pyarrow.dataset as pds

    path = Path(folder) / "results"
    try:
        table = pds.dataset(path, format="parquet").to_table(columns=["cell_id", "cell_seconds"])
    except (OSError, ValueError) as error:
        raise ConfigError(f"{folder}: not a result folder with cell times ({error})") from None
    frame = table.to_pandas().dropna().drop_duplicates("cell_id")
    if frame.empty:
        raise ConfigError(f"{folder}: its result store holds no timed cell")
    quantiles = np.quantile(frame["cell_seconds"].to_numpy(), (np.arange(count) + 0.5) / count, method="inverted_cdf")
    return ",".join(f"{value:.6g}" for value in quantiles)
