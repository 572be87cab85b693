"""A plugin that fails to load breaks only what names it: `dolb learners` lists every
learner, then the plugins that could not load; `dolb plan` of a pipeline that does not
name it works, of one that does fails on one line naming that learner's key. The plugin
is a distribution on the path (a ``*.dist-info`` with its ``entry_points.txt``, as an
installed package has) whose module raises on import."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dolb.cli import main
from dolb.errors import ConfigError
from dolb.learners import LEARNERS
from dolb.registry import Registry

ROOT = Path(__file__).resolve().parents[1]
FAILED = "could not load entry point brokenplug: ModuleNotFoundError: No module named 'not_installed_dependency'"

PIPELINE = """
[pipeline]
name = "with-a-plugin"
seed = 3

[datasets.irma]
generator = "irma"
params = {{ n_sequences = 4, length = 30, n_test = 50 }}

[experiments.e]
dataset = "irma"
task = "regression"
split = {{ scheme = "sequences", count = 4 }}
checkpoints = [10, 30]
metrics = ["test_mse"]
learners = [
  {{ learner = "rls", complexity = 3, params = {{ domain_high = 3.0 }} }},
  {{ learner = "irma", complexity = 3, params = {{ domain_high = 3.0 }} }},{named}
]
"""


@pytest.fixture(scope="module")
def broken(tmp_path_factory) -> dict[str, str]:
    """The environment of a machine where the package ``brokenplug``, declaring the learner
    ``shaky``, is installed but its module cannot be imported."""
    folder = tmp_path_factory.mktemp("broken-plugin")
    (folder / "brokenplug.py").write_text("import not_installed_dependency\n")
    info = folder / "brokenplug-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: brokenplug\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[dolb.learners]\nshaky = brokenplug\n")
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(folder)]))


def dolb(env, *args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dolb", *args], env=env, cwd=cwd, capture_output=True, text=True)


def test_dolb_learners_lists_every_learner_then_the_plugins_that_could_not_load(broken):
    done = dolb(broken, "learners")
    assert done.returncode == 0, done.stderr
    assert "\nperceptron (binary): The Perceptron" in done.stdout and "\nshaky (" not in done.stdout
    assert done.stdout.endswith(f"\n\nPlugins that could not load:\nshaky: {FAILED}\n")


def test_a_pipeline_fails_only_if_it_names_the_plugin_that_could_not_load(broken, tmp_path):
    fine, naming = tmp_path / "fine.toml", tmp_path / "naming.toml"
    fine.write_text(textwrap.dedent(PIPELINE.format(named="")))
    naming.write_text(textwrap.dedent(PIPELINE.format(named='\n  { learner = "shaky" },')))
    planned = dolb(broken, "plan", str(fine), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert planned.returncode == 0, planned.stderr
    assert "8 cells" in planned.stdout
    done = dolb(broken, "plan", str(naming), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"dolb: error: {naming}: experiments.e.learners[2].learner: learner 'shaky': {FAILED}\n"


@pytest.fixture
def unloadable(monkeypatch):
    """This process's learner registry, as if the plugin ``shaky`` had failed to load."""
    monkeypatch.setitem(LEARNERS._unloadable, "shaky", FAILED)


def test_a_run_naming_the_plugin_that_could_not_load_writes_nothing(unloadable, tmp_path, capsys):
    naming = tmp_path / "naming.toml"
    naming.write_text(textwrap.dedent(PIPELINE.format(named='\n  { learner = "shaky" },')))
    assert main(["run", str(naming), "--out", str(tmp_path / "out")]) == 2
    line = capsys.readouterr().err
    assert line == f"dolb: error: {naming}: experiments.e.learners[2].learner: learner 'shaky': {FAILED}\n"
    assert not (tmp_path / "out").exists()


def test_a_learner_is_shown_unless_it_is_the_plugin_that_could_not_load(unloadable, capsys):
    assert main(["learners", "perceptron"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("perceptron (binary): ") and "shaky" not in out + err
    assert main(["learners", "shaky"]) == 2
    assert capsys.readouterr() == ("", f"dolb: error: learner 'shaky': {FAILED}\n")


def test_the_json_and_markdown_listings_say_it_beside_them(unloadable, capsys):
    for form in ("--json", "--markdown"):
        assert main(["learners", form]) == 0
        out, err = capsys.readouterr()
        assert out.startswith(("[", "|")) and "shaky" not in out and err == f"shaky: {FAILED}\n"


def test_the_registry_keeps_a_plugin_that_could_not_load_aside(monkeypatch):
    class Point:
        def __init__(self, name, value, error=None):
            self.name, self.value, self.error = name, value, error

        def load(self):
            if self.error:
                raise self.error
            kinds.add(self.name, self.value)

    kinds = Registry("learner", entry_point_group="dolb.test-group")
    points = [Point("broken", "nowhere.module", ImportError("No module named 'nowhere'\nmore lines")),
              Point("fine", "somewhere.module"), Point("silent", "quiet.module", RuntimeError())]
    monkeypatch.setattr("dolb.registry.entry_points", lambda group: points)
    assert kinds.names() == ["fine"] and kinds["fine"] == "somewhere.module"
    assert kinds.unloadable() == {
        "broken": "could not load entry point nowhere.module: ImportError: No module named 'nowhere'",
        "silent": "could not load entry point quiet.module: RuntimeError"}
    with pytest.raises(ConfigError, match=r"^learner 'broken': could not load entry point nowhere.module: "
                                          r"ImportError: No module named 'nowhere'$"):
        kinds["broken"]
    with pytest.raises(ConfigError, match=r"^unknown learner 'fin' \(did you mean 'fine'\?; known: fine; "
                                          r"entry points that could not load: broken, silent\)$"):
        kinds["fin"]
