"""The public API, the registries, `dolb learners`, logging and `python -m dolb`."""

import datetime
import json
import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import numpy as np
import pytest

import dolb
from dolb.cli import main
from dolb.errors import ConfigError
from dolb.registry import Registry, did_you_mean
from tests.conftest import SMALL_IRMA

ROOT = Path(__file__).resolve().parent.parent

pytest_plugins = ["pytester"]

THROWAWAY = """
from dolb.learners import register
from dolb.learners.perceptron import Perceptron


@register
class Throwaway(Perceptron):
    \"\"\"A throwaway learner from another package (the Perceptron under another name).\"\"\"

    name = "throwaway_perceptron"
    bench_params = {}
"""


def plugin_folder(folder: Path) -> Path:
    """A folder on which a package ``throwaway`` declares a learner through the
    ``dolb.learners`` entry point group, as an installed package would."""
    folder.mkdir()
    (folder / "throwaway.py").write_text(THROWAWAY)
    info = folder / "throwaway-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: throwaway\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[dolb.learners]\nthrowaway_perceptron = throwaway\n")
    return folder


def test_registry_names_entries_and_suggests_the_closest_name():
    kinds = Registry("colour")
    kinds.add("red", 1)
    kinds.add("green", 2)
    assert kinds.names() == ["green", "red"] and "red" in kinds and len(kinds) == 2
    assert kinds["green"] == 2
    with pytest.raises(ConfigError, match=r"^unknown colour 'gren' \(did you mean 'green'\?; known: green, red\)$"):
        kinds["gren"]
    with pytest.raises(ConfigError, match=r"^unknown colour 'blue' \(known: green, red\)$"):
        kinds["blue"]
    with pytest.raises(TypeError, match="registered twice"):
        kinds.add("red", 3)
    kinds.add("red", 1)  # the same entry again (a module imported twice) is fine
    assert did_you_mean("sedd", ["seed", "name"]) == " (did you mean 'seed'?)"


def test_learners_command_lists_every_learner_with_its_parameters(capsys):
    from dolb.learners import LEARNERS

    assert main(["learners"]) == 0
    text = capsys.readouterr().out
    for name, cls in LEARNERS.items():
        assert f"\n{name} ({cls.task}): " in "\n" + text
        for param in cls.params:
            assert f"  {param} (" in text
    assert main(["learners", "--json", "ftrl"]) == 0
    (record,) = json.loads(capsys.readouterr().out)
    assert record["name"] == "ftrl" and record["task"] == "binary"
    alpha = next(p for p in record["params"] if p["name"] == "alpha")
    assert alpha == {"name": "alpha", "kind": "float", "default": 0.1, "allowed": "> 0",
                     "doc": LEARNERS["ftrl"].params["alpha"].doc}
    assert main(["learners", "perceptorn"]) == 2
    assert "did you mean 'perceptron'" in capsys.readouterr().err


def test_python_dash_m_dolb_runs_the_command():
    done = subprocess.run([sys.executable, "-m", "dolb", "--version"], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == f"dolb {dolb.__version__}"


def test_public_api_is_exported():
    for name in ("run", "read_results", "OnlineClassifier", "LEARNERS", "CONVERSIONS", "GENERATORS",
                 "IMPORTERS", "METRICS", "ConfigError", "DataError", "DolbError", "__version__"):
        assert name in dolb.__all__ and hasattr(dolb, name), name


def test_import_is_light_and_figures_need_no_pyplot(tmp_path):
    """`import dolb` loads neither Numba nor pandas; drawing a figure chooses no global
    matplotlib backend (no pyplot)."""
    script = f"""
import sys
import dolb
assert "numba" not in sys.modules and "pandas" not in sys.modules, "import dolb is heavy"
import pandas as pd
from dolb.results.figures import curve_figure
summary = pd.DataFrame({{"experiment": "e", "metric": "m", "dataset": "d", "learner": "l", "params": "",
                        "complexity": "", "conversion": "last", "n_train": [1, 10], "mean": [1.0, 0.5],
                        "q25": [0.9, 0.4], "q75": [1.1, 0.6]}})
curve_figure(summary, "e", "m", "title", {str(tmp_path / "f.png")!r})
assert "matplotlib.pyplot" not in sys.modules
"""
    subprocess.run([sys.executable, "-c", script], check=True)
    assert (tmp_path / "f.png").stat().st_size > 5_000


@pytest.mark.e2e
def test_run_takes_a_mapping_and_matches_the_file(tmp_path, capsys):
    """dolb.run on the pipeline as a dict stores what `dolb run` stores for its file,
    and records the pipeline as TOML that `dolb report` reads again; -v says what it does."""
    document = tomllib.loads(textwrap.dedent(SMALL_IRMA))
    document["experiments"] = {"table": document["experiments"]["table"]}
    document["reports"] = [document["reports"][0]]
    summary = dolb.run(document, tmp_path / "api", workers=1)
    assert (summary.n_cells, summary.n_failed) == (48, 0)
    file = tmp_path / "small.toml"
    file.write_text(textwrap.dedent(SMALL_IRMA))
    assert main(["-v", "run", str(file), "--out", str(tmp_path / "cli"), "--workers", "1"]) == 0
    assert "dolb: small-irma: 60 cells, 0 stored, 60 to compute" in capsys.readouterr().err
    from dolb.results.query import rows
    from dolb.results.store import ResultStore

    cli = rows(ResultStore(tmp_path / "cli"))
    api = rows(ResultStore(tmp_path / "api"))
    assert set(api["cell_id"]) < set(cli["cell_id"])  # same cell ids: same specs
    assert main(["report", str(tmp_path / "api")]) == 0
    with pytest.raises(ConfigError, match="^pipeline: expected a file path or a mapping, got list$"):
        dolb.run([1], tmp_path / "bad")
    assert not (tmp_path / "bad").exists()


def _holding_itself():
    mapping = {"pipeline": {"name": "p"}}
    mapping["pipeline"]["again"] = mapping
    return mapping


@pytest.mark.parametrize("pipeline, message", [
    ({"pipeline": {"at": datetime.time(1, 2, tzinfo=datetime.UTC)}},
     "pipeline mapping, at pipeline.at: datetime.time(1, 2, tzinfo=datetime.timezone.utc) is a time with a zone, "
     "which TOML cannot hold"),
    ({"pipeline": {float("nan"): 1}}, "pipeline mapping, at pipeline: the key nan is a float; TOML keys are strings"),
    ({"datasets": {"d": {"params": {(1, 2): 3}}}},
     "pipeline mapping, at datasets.d.params: the key (1, 2) is a tuple; TOML keys are strings"),
    ({1: {}}, "pipeline mapping: the key 1 is a int; TOML keys are strings"),
    ({"pipeline": {"name": b"p"}}, "pipeline mapping, at pipeline.name: a bytes (b'p') cannot be written as TOML"),
    ({"experiments": {"e": {"checkpoints": {10, 20}}}},
     "pipeline mapping, at experiments.e.checkpoints: a set ({10, 20}) cannot be written as TOML"),
    ({"experiments": {"e": {"checkpoints": [10, None]}}},
     "pipeline mapping, at experiments.e.checkpoints[1]: a NoneType (None) cannot be written as TOML"),
    ({"pipeline": {"seed": np.int64(3)}},
     "pipeline mapping, at pipeline.seed: a int64 (np.int64(3)) cannot be written as TOML; give int(...) or float"),
    (_holding_itself(), "pipeline mapping, at pipeline.again: holds itself"),
])
def test_a_mapping_toml_cannot_hold_is_one_line_naming_the_key(tmp_path, pipeline, message):
    with pytest.raises(ConfigError) as caught:
        dolb.run(pipeline, tmp_path / "out")
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value), str(caught.value)
    assert not (tmp_path / "out").exists()


def test_a_learner_from_another_package_appears_everywhere(pytester, monkeypatch, tmp_path):
    """A learner registered through the ``dolb.learners`` entry point shows in the
    registry, in `dolb learners`, in `dolb bench`'s list, and in the generic learner
    tests, with nothing of dolb touched."""
    folder = plugin_folder(tmp_path / "plugin")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(folder), str(ROOT)]))
    listing = subprocess.run([sys.executable, "-m", "dolb", "learners", "throwaway_perceptron"],
                             env=env, capture_output=True, text=True, check=True).stdout
    assert listing.startswith("throwaway_perceptron (binary): A throwaway learner from another package")
    script = "import dolb.bench.throughput; print(sorted(dolb.bench.throughput.LEARNERS))"
    benched = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert "throwaway_perceptron" in benched.stdout

    monkeypatch.setenv("PYTHONPATH", env["PYTHONPATH"])
    pytester.chdir()
    generic = [str(ROOT / "tests" / name) for name in ("test_conversions.py", "test_check_learner.py")]
    collected = pytester.runpytest_subprocess("--collect-only", "-q", "-p", "no:cacheprovider",
                                              "--rootdir", str(ROOT), *generic)
    ids = [line for line in collected.outlines if "throwaway_perceptron" in line]
    assert any("test_every_conversion_matches_brute_force" in i for i in ids), collected.outlines[-5:]
    assert any("test_every_registered_learner_follows_the_protocol" in i for i in ids)
    assert any("test_dense_and_sparse_inputs_agree" in i for i in ids)
