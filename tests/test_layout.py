"""The tests do not depend on where the data folder physically is: a checkout whose
``../shared`` is a symbolic link (a fresh clone beside a linked data folder, a worktree
elsewhere) passes the tests that read the shipped pipelines' data locations."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import requires_shared_data
from tests.studies import SHARED_DATA

ROOT = Path(__file__).resolve().parents[1]
LAYOUT_TESTS = ("tests/test_pipeline.py", "tests/test_shipped.py")
"""The test modules that hold paths of the data folder."""


def checkout_copy(folder: Path) -> Path:
    """A copy of the checkout's files (tracked, and new ones git does not ignore) in
    ``folder``."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, folder / name)
    return folder


@requires_shared_data()
def test_the_tests_pass_on_a_checkout_whose_data_folder_is_a_symbolic_link(tmp_path):
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: its files cannot be listed")
    checkout = checkout_copy(tmp_path / "checkout")
    (tmp_path / "shared").symlink_to(SHARED_DATA.parent.resolve(), target_is_directory=True)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", *LAYOUT_TESTS],
                          cwd=checkout, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(checkout), "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout.splitlines()[-1] and "skipped" not in done.stdout.splitlines()[-1]
