"""What a run ran on: package versions, git commit, Python, platform, CPUs, BLAS threads,
and the machine that did the arithmetic (CPU model, BLAS library, its kernel and threads,
Numba's target CPU); and the check that the client and every worker run the same
versions."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from dolb.errors import ConfigError
from dolb.execution.lost_workers import run_on_workers

PACKAGES = ("dolb", "numpy", "scipy", "numba", "llvmlite", "zarr", "numcodecs", "dask", "distributed", "pandas")
"""Packages whose versions can change results or their speed."""


def package_versions() -> dict[str, str | None]:
    """Installed version of each package in :data:`PACKAGES` (None if absent)."""
    found = {}
    for name in PACKAGES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    return found


def blas_threads() -> dict[str, int]:
    """Threads each BLAS/OpenMP library a learner may call would use, by library name
    (:func:`load_blas`)."""
    from threadpoolctl import threadpool_info

    load_blas()
    return {f"{info['internal_api']}:{Path(info['filepath']).name}": info["num_threads"] for info in threadpool_info()}


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux, else the platform's word)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def load_average() -> float | None:
    """The machine's load average over the last minute (None where the system has none)."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def frequency_governor() -> str | None:
    """The CPU frequency governor of the first CPU (Linux ``cpufreq``; None where it is
    not readable, as in most containers and virtual machines)."""
    try:
        return Path("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor").read_text().strip() or None
    except OSError:
        return None


def load_blas() -> None:
    """Load every BLAS a learner may call, NumPy's and SciPy's own (SciPy's wheels carry
    a copy of OpenBLAS of their own, loaded with ``scipy.linalg``): a process lists the
    same libraries whether or not it has computed anything yet."""
    import numpy  # noqa: F401
    import scipy.linalg  # noqa: F401


def arithmetic() -> dict:
    """What decides the bits of this process's floating-point results beyond the code:
    the CPU, each loaded BLAS (library, version, the kernel it chose, threads), the CPU
    Numba compiles for (``NUMBA_CPU_NAME`` when set, else the host's) and the instruction
    set NumPy's loops dispatch to (:func:`numpy_simd`)."""
    import numba
    from llvmlite import binding
    from threadpoolctl import threadpool_info

    load_blas()
    blas = [
        {"library": info["internal_api"], "version": info.get("version"), "kernel": info.get("architecture"),
         "threads": info["num_threads"]}
        for info in threadpool_info() if info["user_api"] == "blas"
    ]
    return {"cpu": cpu_model(), "blas": blas, "numba_cpu": numba.config.CPU_NAME or binding.get_host_cpu_name(),
            "numpy_simd": numpy_simd()}


def numpy_simd() -> str:
    """The widest instruction set NumPy's own loops (``exp``, ``log``, ``sin`` ... of
    float64 arrays) dispatch to here, e.g. ``X86_V4`` (AVX-512), or its baseline. Their
    float64 ``exp`` and ``log`` give other last bits on AVX-512 than on AVX2 (the IRMA
    generator's targets, for one); ``NPY_DISABLE_CPU_FEATURES``, set before NumPy is
    imported, narrows it."""
    from numpy._core._multiarray_umath import __cpu_baseline__, __cpu_dispatch__, __cpu_features__

    enabled = [target for target in __cpu_dispatch__ if __cpu_features__.get(target)]
    return (enabled or __cpu_baseline__ or ["none"])[-1]


def git_commit() -> str | None:
    """The commit of dolb's code when it runs from the git checkout the command runs in
    (the working folder); None otherwise: outside a checkout, or in a checkout that does
    not hold the dolb running (the user's own project, a site-packages inside one)."""
    try:
        run = subprocess.run(["git", "rev-parse", "--show-toplevel", "HEAD"], capture_output=True, text=True,
                             timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = run.stdout.split()
    if run.returncode != 0 or len(lines) != 2:
        return None
    top, commit = lines
    ours = Path(sys.modules["dolb"].__file__).resolve()
    return commit if ours.is_relative_to(Path(top).resolve()) and "site-packages" not in ours.parts else None


def plugin_packages() -> dict[str, str]:
    """The packages that add learners, with their versions and source digests
    (:func:`dolb.learners.code.plugin_packages`)."""
    from dolb.learners.code import plugin_packages

    return plugin_packages()


def fingerprint() -> dict:
    """The environment of this process, as recorded beside a run's results."""
    return {
        "packages": package_versions(),
        "plugins": plugin_packages(),
        "git_commit": git_commit(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "blas_threads": blas_threads(),
        "arithmetic": arithmetic(),
    }


def worker_fingerprint() -> dict:
    """What a worker reports: its package versions, learner plugins, BLAS threads and
    arithmetic."""
    return {"packages": package_versions(), "plugins": plugin_packages(), "blas_threads": blas_threads(),
            "arithmetic": arithmetic()}


def scheduler_fingerprint() -> dict:
    """What the scheduler reports: its package versions (it runs no learner: reading its
    plugins would import them there)."""
    return {"packages": package_versions()}


def check_workers(client) -> dict:
    """Ask the scheduler and every worker for their environment; ConfigError naming the
    first whose package versions (or, for a worker, learner plugins: see
    :func:`plugin_packages`) differ from the client's. Returns the fingerprints of the
    workers (but of one lost meanwhile)."""
    ours = package_versions()
    plugins = plugin_packages()
    theirs = run_on_workers(client, worker_fingerprint)
    scheduler = {f"scheduler {client.scheduler.address}": client.run_on_scheduler(scheduler_fingerprint)}
    for address, found in sorted(theirs.items()) + list(scheduler.items()):
        where = address if address.startswith("scheduler") else f"worker {address}"
        wanted = ours | ({} if address.startswith("scheduler") else plugins)
        there = found["packages"] | found.get("plugins", {})  # the scheduler's: packages only
        for name, expected in wanted.items():
            if there.get(name) != expected:
                raise ConfigError(
                    f"{where} runs {name} {there.get(name) or '(not installed)'}, the client {expected}: "
                    "install the same versions everywhere"
                    + ("" if name in ours else " (a worker started before a plugin was edited runs its old code)")
                )
    return theirs
