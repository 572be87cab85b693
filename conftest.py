"""The test session compiles Numba's kernels for the CPU that pinned workers compile for
(dolb's default ``[execution] arithmetic = "x86-64-v3"``), so in-process tests and the
workers of the tests' sweeps share Numba's on-disk cache, which is keyed by the target
CPU, instead of compiling every kernel twice. Set here, before anything imports Numba;
a target already set in the environment is kept."""

import os


def _has_avx2_and_fma() -> bool:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            flags = next((line.split(":", 1)[1].split() for line in info if line.startswith("flags")), [])
    except OSError:
        return False
    return {"avx2", "fma"} <= set(flags)


if _has_avx2_and_fma() and "NUMBA_CPU_NAME" not in os.environ:
    os.environ["NUMBA_CPU_NAME"] = "x86-64-v3"
    os.environ["NUMBA_CPU_FEATURES"] = ""
