"""cluster/nightly/nightly.sh: every step runs whatever an earlier one found, and the
exit status tells what happened (0 all well, 1 failed cells or a regression, 2 an
error). The script runs against stand-ins for `dolb` and `python3` that record their
calls and exit as told."""

import datetime
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "cluster" / "nightly" / "nightly.sh"

STAND_IN = """#!/usr/bin/env bash
echo "$(basename "$0") $*" >> "$CALLS"
case "$1 $2" in
  "-m pip") exit "${PIP_STATUS:-0}" ;;
esac
case "$1" in
  run) mkdir -p "$4"; exit "${RUN_STATUS:-0}" ;;
  bench) echo '[]'; exit "${BENCH_STATUS:-0}" ;;
  compare) exit "${COMPARE_STATUS:-0}" ;;
esac
"""


def night(tmp_path, previous=True, **status):
    """Run the script in a copy of the checkout's layout; (exit status, commands called,
    tonight's folder)."""
    root = tmp_path / "repo"
    (root / "cluster" / "nightly").mkdir(parents=True)
    shutil.copy(SCRIPT, root / "cluster" / "nightly" / "nightly.sh")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("dolb", "python3"):
        (bin_dir / name).write_text(STAND_IN)
        (bin_dir / name).chmod(0o755)
    if previous:
        (root / "runs" / "nightly" / "2000-01-01").mkdir(parents=True)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "CALLS": str(tmp_path / "calls")}
    env |= {f"{step.upper()}_STATUS": str(code) for step, code in status.items()}
    done = subprocess.run(["bash", str(root / "cluster" / "nightly" / "nightly.sh")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, check=False)
    calls = [line.split()[1] if line.startswith("dolb") else "pip"
             for line in (tmp_path / "calls").read_text().splitlines()]
    tonight = root / "runs" / "nightly" / datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")
    return done.returncode, calls, tonight, done.stderr


def test_a_good_night_runs_every_step_and_exits_0(tmp_path):
    code, calls, tonight, _ = night(tmp_path)
    assert (code, calls) == (0, ["pip", "run", "bench", "compare"])
    assert (tonight / "bench.json").read_text() == "[]\n"
    compare = (tmp_path / "calls").read_text().splitlines()[-1]
    assert compare.endswith("--confirm .")  # a suspected slowdown is re-measured A/B in this checkout


def test_failed_cells_are_still_benched_and_compared(tmp_path):
    code, calls, tonight, err = night(tmp_path, run=1)
    assert (code, calls) == (1, ["pip", "run", "bench", "compare"])
    assert (tonight / "bench.json").is_file() and "some cells failed" in err


@pytest.mark.parametrize(("status", "code"), [
    ({"compare": 1}, 1),  # a regression
    ({"compare": 2}, 2),  # compare could not run
    ({"run": 1, "compare": 2}, 2),  # an error outranks failed cells
])
def test_the_exit_status_tells_what_happened(tmp_path, status, code):
    assert night(tmp_path, **status)[:2] == (code, ["pip", "run", "bench", "compare"])


def test_a_failed_bench_leaves_no_file_but_the_night_is_compared(tmp_path):
    code, calls, tonight, err = night(tmp_path, bench=1)
    assert (code, calls) == (2, ["pip", "run", "bench", "compare"])
    assert list(tonight.iterdir()) == [] and "dolb bench failed" in err


def test_a_sweep_that_cannot_run_stops_the_night(tmp_path):
    assert night(tmp_path, run=2)[:2] == (2, ["pip", "run"])
    assert night(tmp_path / "b", pip=1)[:2] == (2, ["pip"])


def test_the_first_night_has_nothing_to_compare(tmp_path):
    code, calls, _, err = night(tmp_path, previous=False, run=1)
    assert (code, calls) == (1, ["pip", "run", "bench"]) and "first night" in err
