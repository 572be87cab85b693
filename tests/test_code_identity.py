"""A stored cell is reused only for the code that computed it (dolb/learners/code.py):
a plugin learner edited and run again computes its cells anew, and only those; an
unchanged one (or one whose comments alone changed) computes nothing; the run record
names the plugin and ``dolb reproduce`` says when it differs; a worker whose plugins
differ is refused; a built-in learner's
source is the one recorded for its revision."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from dolb.execution.reproduce import Reproduction, _version_changes
from dolb.learners import OnlineLearner, learner_class, registered_learners
from dolb.learners import code as learner_code_module
from dolb.learners.code import built_in_sources, learner_code, source_digest
from dolb.learners.revisions import SOURCES
from dolb.results.query import rows
from dolb.results.store import ResultStore

ROOT = Path(__file__).resolve().parents[1]
AROW = ROOT / "tests" / "plugin" / "mylearner" / "arow.py"


def test_every_built_in_learner_s_source_is_the_one_recorded_for_its_revision():
    now = built_in_sources()
    assert set(now) == set(SOURCES), "python3 -m dolb.learners.code --write records the learners as they are"
    for name, entry in sorted(now.items()):
        assert entry == SOURCES[name], (
            f"learner {name!r}: its source is not the one recorded for revision {SOURCES[name]['revision']}: "
            "if its results change, raise its `revision`; then record the source with "
            "`python3 -m dolb.learners.code --write`")


def test_a_built_in_learner_edited_in_a_checkout_is_told_apart_and_a_raised_revision_replaces_the_digest(
        monkeypatch):
    perceptron = learner_class("perceptron")
    source = source_digest(perceptron)
    assert learner_code(perceptron) is None  # revision 1 as recorded: the ids stored before revisions
    monkeypatch.setitem(SOURCES, "perceptron", {"revision": 1, "source": "0" * 16})  # the record of older code
    learner_code.cache_clear()
    assert learner_code(perceptron) == {"revision": 1, "source": source}
    monkeypatch.setattr(perceptron, "revision", 2)
    monkeypatch.setitem(SOURCES, "perceptron", {"revision": 2, "source": source})
    learner_code.cache_clear()
    assert learner_code(perceptron) == {"revision": 2}
    monkeypatch.undo()
    learner_code.cache_clear()


def test_a_peer_s_identity_holds_its_library_s_version():
    from importlib.metadata import version

    pytest.importorskip("river")
    assert learner_code(learner_class("river_pa")) == {"wraps": {"river": version("river")}}


def test_docstrings_comments_and_layout_never_change_a_source_digest_but_code_and_its_helpers_do(
        tmp_path, monkeypatch):
    package = tmp_path / "digestpkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "helper.py").write_text("def step(w):\n    return w + 1.0\n")
    learner = package / "learner.py"
    learner.write_text(textwrap.dedent('''
        """A learner."""
        from dolb.learners import OnlineLearner
        from digestpkg.helper import step

        class Mine(OnlineLearner):
            """Mine."""
            name = "mine"
            """Its name."""
            task = "binary"

            def _learn(self, X, y):
                return step(y)
        '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    from digestpkg.learner import Mine

    assert issubclass(Mine, OnlineLearner)
    first = source_digest(Mine)
    assert sorted(learner_code_module.source_modules(Mine)) == ["digestpkg.helper", "digestpkg.learner"]
    learner.write_text(learner.read_text().replace('"""Mine."""', '"""Mine, said otherwise."""\n    # a note')
                       .replace('"""Its name."""', '"""What the registry calls it."""')
                       .replace("return step(y)", "return step(  y )  # the same"))
    assert source_digest(Mine) == first
    learner.write_text(learner.read_text().replace("return step(  y )", "return -step(y)"))
    edited = source_digest(Mine)
    assert edited != first
    (package / "helper.py").write_text("def step(w):\n    return w + 2.0\n")
    assert source_digest(Mine) not in (first, edited)


def test_a_plugin_s_identity_names_its_distribution_version_and_source():
    arow = learner_class("arow")
    assert learner_code(arow) == {"distribution": "mylearner", "version": "0.1.0", "source": source_digest(arow)}
    assert set(registered_learners()) >= {"arow", "perceptron"}


# --- a plugin edited between runs: a real sweep, run as a user runs it ---------------------

PIPELINE = """
[pipeline]
name = "own-learner"
seed = 5

[datasets.own]
importer = "svmlight"
params = {{ path = "{train}", test_path = "{test}" }}

[experiments.e]
dataset = "own"
task = "binary"
split = {{ scheme = "given", count = 1 }}
checkpoints = [50, 300]
metrics = ["test_error", "online_loss"]
learners = [
  {{ learner = "perceptron" }},
  {{ learner = "arow_copy", params = {{ r = [0.5, 2.0] }} }},
]
"""


def _svmlight(path: Path, X: np.ndarray, y: np.ndarray) -> None:
    path.write_text("".join(f"{int(t)} " + " ".join(f"{j + 1}:{v!r}" for j, v in enumerate(row.tolist())) + "\n"
                            for row, t in zip(X, y)))


def _install_plugin(site: Path, source: str) -> Path:
    """A package ``arowcopy`` laid out on ``site`` as pip lays out an installed one (its
    dist-info with the entry point), holding the AROW example under the name ``arow_copy``."""
    (site / "arowcopy").mkdir(parents=True, exist_ok=True)
    (site / "arowcopy" / "__init__.py").write_text("")
    module = site / "arowcopy" / "arow.py"
    module.write_text(source.replace('name = "arow"', 'name = "arow_copy"'))
    info = site / "arowcopy-1.0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: arowcopy\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[dolb.learners]\narow_copy = arowcopy.arow\n")
    (info / "top_level.txt").write_text("arowcopy\n")
    (info / "RECORD").write_text("")
    return module


def _dolb(site: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "dolb", *args], capture_output=True, text=True, env=env,
                          timeout=300)


def _counts(run: subprocess.CompletedProcess) -> str:
    assert run.returncode == 0, run.stderr
    return next(line for line in run.stdout.splitlines() if " cells: " in line).split(";")[0]


def _arow_transcription(X, y, X_test, y_test, r, sizes):
    """Test error after each of ``sizes`` examples of the diagonal AROW update, written
    from the paper's equations (Crammer, Kulesza and Dredze 2009, the diagonal case)."""
    mu, sigma, errors = np.zeros(X.shape[1]), np.ones(X.shape[1]), {}
    for t, (x, target) in enumerate(zip(X, y), start=1):
        margin = mu @ x
        if target * margin < 1:
            confidence = np.sum(sigma * x * x)
            beta = 1 / (confidence + r)
            alpha = max(0.0, 1 - target * margin) * beta
            mu = mu + alpha * target * sigma * x
            sigma = sigma - beta * (sigma * x) ** 2
        if t in sizes:
            errors[t] = float(np.mean(np.where(X_test @ mu > 0, 1.0, -1.0) != y_test))
    return errors


@pytest.mark.e2e
def test_an_edited_plugin_computes_its_cells_anew_and_only_those(tmp_path):
    rng = np.random.default_rng(3)
    w = rng.normal(size=6)
    X, X_test = rng.normal(size=(300, 6)) / 3, rng.normal(size=(200, 6)) / 3
    y, y_test = (np.where(X @ w + rng.normal(scale=0.3, size=300) > 0, 1.0, -1.0),
                 np.where(X_test @ w > 0, 1.0, -1.0))
    _svmlight(tmp_path / "train.svm", X, y)
    _svmlight(tmp_path / "test.svm", X_test, y_test)
    pipeline = tmp_path / "own.toml"
    pipeline.write_text(PIPELINE.format(train=tmp_path / "train.svm", test=tmp_path / "test.svm"))
    site, out = tmp_path / "site", tmp_path / "out"
    module = _install_plugin(site, AROW.read_text())
    options = ("--out", str(out), "--workers", "1", "--no-progress")

    assert _counts(_dolb(site, "run", str(pipeline), *options)) == "3 cells: 0 already stored, 3 computed, 0 failed"
    stored = rows(ResultStore(out))
    for r in (0.5, 2.0):  # the sweep's values are the paper's update's
        mine = stored[(stored["learner"] == "arow_copy") & (stored["param_r"] == r)
                      & (stored["metric"] == "test_error")].set_index("n_train")["value"]
        assert mine.to_dict() == pytest.approx(_arow_transcription(X, y, X_test, y_test, r, {50, 300}), abs=1e-12)
    record = json.loads(next((out / "runs").glob("*.json")).read_text())
    assert record["client"]["plugins"]["arowcopy"].startswith("1.0 (arow_copy ")

    module.write_text(module.read_text().replace("Examples\n", "Examples (a docstring edit)\n") + "# a comment\n")
    assert _counts(_dolb(site, "run", str(pipeline), *options)) == "3 cells: 3 already stored, 0 computed, 0 failed"

    module.write_text(module.read_text().replace("if y[i] * margin < 1.0:", "if y[i] * margin < 0.5:"))
    assert _counts(_dolb(site, "run", str(pipeline), *options)) == "3 cells: 1 already stored, 2 computed, 0 failed"

    last = max((json.loads(path.read_text()) for path in (out / "runs").glob("*.json")), key=lambda r: r["started"])
    assert last["client"]["plugins"]["arowcopy"] != record["client"]["plugins"]["arowcopy"]
    changes = _version_changes(record, last)  # what dolb reproduce of the first run says
    assert list(changes) == ["plugin arowcopy"]
    assert Reproduction("r", 1, 1, 0, 0, 0.0, changes).describe().splitlines()[1] == (
        f"versions that differ: plugin arowcopy: {record['client']['plugins']['arowcopy']} -> "
        f"{last['client']['plugins']['arowcopy']}")


def test_a_worker_whose_plugins_differ_from_the_client_s_is_refused_naming_it(monkeypatch):
    from types import SimpleNamespace

    from dolb.errors import ConfigError
    from dolb.execution import environment

    ours = environment.worker_fingerprint()
    stale = {**ours, "plugins": {**ours["plugins"], "mylearner": "0.1.0 (arow 0000000000000000)"}}
    client = SimpleNamespace(scheduler=SimpleNamespace(address="tcp://127.0.0.1:1"),
                             run_on_scheduler=lambda function: {"packages": environment.package_versions()})
    monkeypatch.setattr(environment, "run_on_workers",
                        lambda client, function: {"tcp://127.0.0.1:2": ours, "tcp://127.0.0.1:3": stale})
    with pytest.raises(ConfigError) as refused:
        environment.check_workers(client)
    assert str(refused.value) == (
        f"worker tcp://127.0.0.1:3 runs mylearner 0.1.0 (arow 0000000000000000), the client {ours['plugins']['mylearner']}: "
        "install the same versions everywhere (a worker started before a plugin was edited runs its old code)")
    monkeypatch.setattr(environment, "run_on_workers", lambda client, function: {"tcp://127.0.0.1:2": ours})
    assert environment.check_workers(client) == {"tcp://127.0.0.1:2": ours}  # the scheduler needs no plugin
