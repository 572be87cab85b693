"""Pinned arithmetic: every worker computes with the same BLAS kernel and the same Numba
target, so workers on x86-64 CPUs of different models store the same bits.

What decides the last bits of a result beyond the code is the BLAS kernel OpenBLAS picks
for the CPU it finds (it reads ``OPENBLAS_CORETYPE`` once, when NumPy loads it) and the
CPU Numba compiles for (``NUMBA_CPU_NAME``; with ``NUMBA_CPU_FEATURES`` empty, that CPU's
own features rather than the host's). A pipeline's ``[execution] arithmetic`` names an
x86-64 microarchitecture level (:data:`PINS`); every worker then uses its kernel and
target, whatever its CPU, provided the CPU has the level's instructions:

* the embedded cluster's worker processes are started with the pin's environment
  (:func:`environment`);
* a worker of a scheduler or a cluster file started without it is given the environment
  through its nanny and restarted, and so is one that joins later (:class:`PinnedArithmetic`);
* a worker that cannot be pinned (not x86-64, a CPU without the level's instructions, no
  nanny to restart it) computes as it is, and the run says so in one warning line; its
  arithmetic is in the run record, and ``dolb reproduce`` and ``dolb compare`` name it.

``arithmetic = "native"`` pins nothing: every worker uses the kernel and target of its
own CPU (a little faster on newer CPUs; the same bits on machines of one type only).
"""

from __future__ import annotations

import contextlib
import logging
import os
import platform
from collections.abc import Iterator
from dataclasses import dataclass

from distributed.diagnostics.plugin import NannyPlugin

from dolb.execution.environment import check_workers

logger = logging.getLogger("dolb")


@dataclass(frozen=True)
class Pin:
    """The arithmetic of one x86-64 microarchitecture level.

    Attributes
    ----------
    level : str
        The level's name (``x86-64-v3``).
    blas_kernel : str
        The OpenBLAS core type (``OPENBLAS_CORETYPE``) whose kernels need only the level.
    flags : tuple of str
        The ``/proc/cpuinfo`` flags a CPU needs to run those kernels and that target.
    """

    level: str
    blas_kernel: str
    flags: tuple[str, ...]

    @property
    def environment(self) -> dict[str, str]:
        """The variables a worker process must start with (before it imports NumPy)."""
        return {"OPENBLAS_CORETYPE": self.blas_kernel, "NUMBA_CPU_NAME": self.level, "NUMBA_CPU_FEATURES": ""}

    def holds(self, arithmetic: dict) -> bool:
        """Whether a worker's recorded arithmetic (:func:`dolb.execution.environment.arithmetic`)
        is this pin's: every loaded BLAS an OpenBLAS on its kernel, Numba on its target."""
        blas = arithmetic.get("blas", [])
        return arithmetic.get("numba_cpu") == self.level and all(
            found["library"] == "openblas" and str(found["kernel"]).lower() == self.blas_kernel.lower()
            for found in blas
        )

    def supported(self) -> bool:
        """Whether this machine can compute with the pin: an x86-64 CPU with every flag."""
        return platform.machine().lower() in ("x86_64", "amd64") and set(self.flags) <= cpu_flags()


PINS = {
    "x86-64-v3": Pin("x86-64-v3", "Haswell", ("avx", "avx2", "fma")),
    "x86-64-v2": Pin("x86-64-v2", "Nehalem", ("ssse3", "sse4_1", "sse4_2", "popcnt")),
}
"""The levels ``[execution] arithmetic`` may name (besides ``"native"``, no pin). The
default, x86-64-v3 (AVX2 and FMA: Intel since Haswell, 2013; AMD since Excavator and every
Zen), runs on nearly every x86-64 server in use; x86-64-v2 serves clusters with older nodes."""


@contextlib.contextmanager
def environment(variables: dict[str, str]) -> Iterator[None]:
    """``os.environ`` with ``variables`` set while the block runs, as it was afterwards.
    The worker processes a local cluster's nannies spawn (and respawn) in the meantime
    inherit them before they import anything; a nanny's ``env`` is set in its worker only
    after the worker has imported NumPy, too late for OpenBLAS's ``OPENBLAS_CORETYPE``."""
    before = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def pin_of(level: str) -> Pin | None:
    """The pin of a pipeline's ``arithmetic`` (None for ``"native"``)."""
    return PINS.get(level)


def cpu_flags() -> set[str]:
    """The instruction-set flags of this machine's CPU (``/proc/cpuinfo``; none elsewhere)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            for line in info:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


class PinnedArithmetic(NannyPlugin):
    """A nanny plugin: the nanny starts its worker process with ``pin``'s environment
    (set in the nanny's own environment before it spawns the process, as NumPy reads it on
    import) and restarts a worker that started without it. A nanny that joins later gets
    it before it starts its worker; a machine that cannot run the pin is left alone."""

    name = "dolb-pinned-arithmetic"

    def __init__(self, pin: Pin) -> None:
        self.pin = pin
        self.restart = False

    def setup(self, nanny) -> None:
        wanted = self.pin.environment
        started = {name: nanny.pre_spawn_env.get(name, os.environ.get(name)) for name in wanted}
        if started == wanted or not self.pin.supported():
            return
        nanny.pre_spawn_env.update(wanted)
        nanny.env.update(wanted)
        self.restart = True  # this nanny's copy: restart its worker with the pin


def pin_workers(client, pin: Pin | None) -> dict:
    """Make every worker of ``client`` that can compute with ``pin`` do so, and check.

    Parameters
    ----------
    client : distributed.Client
    pin : Pin or None
        None: only check (:func:`dolb.execution.environment.check_workers`).

    Returns
    -------
    dict
        The workers' fingerprints. A worker still off the pin (a machine that cannot run
        it, or a worker without a nanny) is named in one warning line.
    """
    if pin is None:
        return check_workers(client)
    client.register_plugin(PinnedArithmetic(pin))
    workers = check_workers(client)
    off = sorted(address for address, found in workers.items() if not pin.holds(found.get("arithmetic", {})))
    if off:
        logger.warning("%d of %d workers compute unpinned, not with %s (OpenBLAS %s, Numba %s): %s; their results "
                       "may differ from other machines' in the last bits (a CPU without %s, no nanny, or not x86-64)",
                       len(off), len(workers), pin.level, pin.blas_kernel, pin.level, ", ".join(off),
                       "/".join(pin.flags))
    return workers
