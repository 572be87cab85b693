"""An installed dolb does the main job: dolb's wheel, installed in a fresh virtual
environment, runs a shipped pipeline by name from an empty folder, with the values of the
same pipeline run from this checkout.

Costly (~30 s on a busy 2-core machine): the wheel's build (~5 s), a virtual environment
(~3 s) and two runs of the quick IRMA pipeline on one worker each. The environment sees
the system's packages (``--system-site-packages``: no network) but imports its own dolb:
its site-packages come before the system's on ``sys.path``, ahead of the finder of an
editable dolb installed there, and nothing else is put first (no ``PYTHONPATH``, no user
site, an empty working folder); the test checks ``dolb.__file__``."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dolb.cli import main
from tests.conftest import assert_same

ROOT = Path(__file__).resolve().parents[1]
BUILT_FROM = ("pyproject.toml", "setup.py", "README.md", "dolb", "pipelines")
"""What the wheel is built from (a copy: nothing is written into the checkout)."""


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A fresh virtual environment holding dolb's wheel (and the system's packages)."""
    folder = tmp_path_factory.mktemp("installed")
    source = folder / "source"
    source.mkdir()
    for name in BUILT_FROM:
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy
        copy(ROOT / name, source / name, **({"ignore": shutil.ignore_patterns("__pycache__")}
                                            if (ROOT / name).is_dir() else {}))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                            str(folder / "dist"), str(source)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr  # (the test extra's wheel package builds it with setuptools < 70.1)
    wheel = next((folder / "dist").glob("dolb-*.whl"))
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(folder / "venv")], check=True)
    python = folder / "venv" / "bin" / "python"
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)], check=True,
                   capture_output=True, env=clean_env())
    return folder / "venv"


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without what would put another dolb first."""
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONHOME")}
    return env | {"PYTHONNOUSERSITE": "1"} | extra


def installed(venv: Path, folder: Path, *argv: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([venv / "bin" / argv[0], *argv[1:]], cwd=folder, env=clean_env(**env),
                          capture_output=True, text=True, timeout=600)


@pytest.mark.e2e
@pytest.mark.wheel
def test_an_installed_dolb_runs_a_shipped_pipeline_by_name_with_the_checkouts_values(venv, tmp_path):
    empty = tmp_path / "anywhere"
    empty.mkdir()
    listed = installed(venv, empty, "python", "-c", "import sys, dolb; from dolb.cli import main; "
                       "print(dolb.__file__); sys.exit(main(['study', '--list']))")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith(str(venv)), listed.stdout  # the wheel's dolb, not a checkout's
    assert "irma               The IRMA study (irma)" in listed.stdout and "irma_quick" in listed.stdout

    done = installed(venv, empty, "dolb", "run", "irma_quick", "--out", "runs/irma", "--workers", "1",
                     "--no-progress", DOLB_DATA_CACHE=str(tmp_path / "cache"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "120 cells: 0 already stored, 120 computed, 0 failed" in done.stdout and "Traceback" not in done.stderr
    assert sorted(path.name for path in empty.iterdir()) == ["runs"]  # it wrote its result folder, nothing else

    clone = tmp_path / "clone"
    assert main(["run", str(ROOT / "pipelines" / "irma_quick.toml"), "--out", str(clone), "--workers", "1",
                 "--no-progress"]) == 0
    assert_same(empty / "runs" / "irma", clone)  # every stored value, cell ids included, to the bit


@pytest.mark.wheel
def test_an_installed_dolb_says_where_a_shipped_pipelines_data_goes(venv, tmp_path):
    done = installed(venv, tmp_path, "dolb", "plan", "oms_mnist", "--out", "runs/oms", DOLB_DATA=str(tmp_path / "d"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    shipped = venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages" / "dolb"
    assert done.stderr == (f"dolb: error: {shipped / 'pipelines' / 'oms_mnist.toml'}: datasets.mnist3.params.path: "
                           f"{tmp_path / 'd' / 'mnist'} is missing; the data folder holds mnist/, libsvm/, rcv1/ and "
                           "face/ (see the datasets guide); give it with --data DIR or $DOLB_DATA\n")
    assert not (tmp_path / "runs").exists()
