"""What a run ran on: package versions, git commit, Python, platform, CPUs, BLAS threads;
and the check that the client and every worker run the same versions."""

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
    """Threads each loaded BLAS/OpenMP library would use, by library name."""
    from threadpoolctl import threadpool_info

    return {f"{info['internal_api']}:{Path(info['filepath']).name}": info["num_threads"] for info in threadpool_info()}


def git_commit() -> str | None:
    """The commit of the dolb source tree, when it is a git checkout."""
    try:
        run = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent, capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if run.returncode != 0:
        return None
    return run.stdout.strip() or None


def fingerprint() -> dict:
    """The environment of this process, as recorded beside a run's results."""
    return {
        "packages": package_versions(),
        "git_commit": git_commit(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "blas_threads": blas_threads(),
    }


def worker_fingerprint() -> dict:
    """What a worker reports: its package versions and BLAS threads."""
    return {"packages": package_versions(), "blas_threads": blas_threads()}


def check_workers(client) -> dict:
    """Ask the scheduler and every worker for their environment; ConfigError naming the
    first whose package versions differ from the client's. Returns the fingerprints
    of the workers (but of one lost meanwhile)."""
    ours = package_versions()
    theirs = run_on_workers(client, worker_fingerprint)
    scheduler = {f"scheduler {client.scheduler.address}": client.run_on_scheduler(worker_fingerprint)}
    for address, found in sorted(theirs.items()) + list(scheduler.items()):
        for name, wanted in ours.items():
            if found["packages"].get(name) != wanted:
                where = address if address.startswith("scheduler") else f"worker {address}"
                raise ConfigError(
                    f"{where} runs {name} {found['packages'].get(name)}, the client {wanted}: "
                    "install the same versions everywhere"
                )
    return theirs
