"""The guide page "Your own study" (docs/guide/own-study.md), step by step: its files,
written as the page shows them into an empty folder, make a package that declares a
study through the ``dolb.studies`` entry point (made visible as an installed package is:
a ``*.dist-info`` with its ``entry_points.txt`` on the path, nothing installed); then
``dolb study --list`` names it, ``dolb run`` and ``dolb study`` make its table record,
figure and verdict, and an MkDocs site built with dolb's hook makes its page."""

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "guide" / "own-study.md"
pytestmark = pytest.mark.e2e


def guide_files() -> dict[str, str]:
    """Each file the guide shows: its path (the bold line above the block) and text."""
    text = GUIDE.read_text(encoding="utf-8")
    return dict(re.findall(r"^\*\*`([^`]+)`\*\*\n\n```\w*\n(.*?)^```$", text, flags=re.S | re.M))


def guide_commands() -> list[str]:
    """Every command of the guide's bash blocks, comments left out."""
    blocks = re.findall(r"^```bash\n(.*?)^```$", GUIDE.read_text(encoding="utf-8"), flags=re.S | re.M)
    return [line.split("  #")[0].strip() for block in blocks for line in block.splitlines() if line.strip()]


def package(folder: Path) -> dict[str, str]:
    """The guide's files in ``folder``, and the environment in which its package is
    installed as ``pip install -e .`` would: its folder and its dist-info on the path."""
    files = guide_files()
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text.replace("../dolb/docs/hooks.py", str(ROOT / "docs" / "hooks.py")))
    info = folder / "my_study-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-study\nVersion: 0.1\n")
    points = tomllib.loads(files["pyproject.toml"])["project"]["entry-points"]["dolb.studies"]
    (info / "entry_points.txt").write_text("[dolb.studies]\n" + "".join(f"{k} = {v}\n" for k, v in points.items()))
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(folder), str(ROOT)]))


def test_the_guides_files_and_commands_are_the_ones_run_here():
    assert sorted(guide_files()) == ["docs/index.md", "mkdocs.yml", "my_study.py", "pipelines/irma_vs_rls.toml",
                                     "pyproject.toml"]
    assert guide_commands() == [
        "pip install -e .", "dolb study --list",
        "dolb run pipelines/irma_vs_rls.toml --out runs/irma_vs_rls --workers 1",
        "dolb study irma_vs_rls runs/irma_vs_rls --record benchmarks/studies --figures docs/figures",
        "python3 -m mkdocs build"]


def test_a_study_from_a_plugin_package_runs_and_gets_its_page(tmp_path):
    folder = tmp_path / "my-study"
    folder.mkdir()
    env = package(folder)

    def run(*command: str) -> str:
        done = subprocess.run([sys.executable, "-m", *command], cwd=folder, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert "irma_vs_rls        IRMA against RLS (pipelines/irma_vs_rls.toml)" in run("dolb", "study", "--list")
    for command in guide_commands()[2:4]:
        printed = run(*command.split())
    record = json.loads((folder / "benchmarks" / "studies" / "irma_vs_rls" / "errors.json").read_text())
    means = dict(record["rows"])
    assert sorted(means) == ["irma", "rls"] and record["source"].startswith("dolb run pipelines/irma_vs_rls.toml")
    verdict = "holds" if means["irma"] < means["rls"] else "does not hold"
    assert f"{verdict}: IRMA learns the target better than RLS from 80 examples (IRMA " in printed
    assert (folder / "docs" / "figures" / "irma_vs_rls.png").stat().st_size > 5_000

    run("mkdocs", "build", "--site-dir", str(folder / "site"))
    page = (folder / "site" / "studies" / "irma_vs_rls.html").read_text(encoding="utf-8")
    assert "IRMA against RLS" in page and "The Incremental Risk Functional" in page
    assert f"<strong>{verdict}</strong>: IRMA {means['irma']:.3g}" in page  # the claim, judged from the record
    assert f'<span class="number">{means["rls"]:.3g}</span>' in page  # the table
    assert 'src="../figures/irma_vs_rls.png"' in page and (folder / "site" / "figures" / "irma_vs_rls.png").is_file()
    assert "dolb study irma_vs_rls runs/irma_vs_rls --record benchmarks/studies" in page  # how to run it
