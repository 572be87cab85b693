"""Shared fixtures: small pipeline files written on the fly."""

import textwrap
from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

SMALL_IRMA = """
[pipeline]
name = "small-irma"
seed = 11

[datasets.irma]
generator = "irma"
params = { n_sequences = 12, length = 60, n_test = 200 }

[experiments.table]
dataset = "irma"
task = "regression"
split = { scheme = "sequences", count = 12 }
checkpoints = [10, 30, 60]
metrics = ["test_mse", "online_loss"]
learners = [
  { learner = "irma", complexity = [3, 5], params = { basis = "legendre", domain_high = 3.0 } },
  { learner = "batch_ls", complexity = [3, 5], params = { domain_high = 3.0 } },
]

[experiments.curve]
dataset = "irma"
task = "regression"
split = { scheme = "sequences", count = 6, length = 60 }
checkpoints = "all"
metrics = ["cumulative_loss"]
learners = [
  { learner = "rls", complexity = 4, params = { domain_high = 3.0, forgetting = 0.9, tikhonov = 0.05 } },
  { learner = "irma", complexity = 4, params = { basis = "legendre", domain_high = 3.0 } },
]

[[reports]]
kind = "table"
experiment = "table"
metric = "test_mse"
at = [10, 60]
stats = ["mean", "var"]

[[reports]]
kind = "curve"
experiment = "curve"
metric = "cumulative_loss"
"""


@pytest.fixture
def small_pipeline(tmp_path):
    """A small IRMA pipeline file: 48 table cells and 12 curve cells."""
    path = tmp_path / "small.toml"
    path.write_text(textwrap.dedent(SMALL_IRMA))
    return path


def cell_files(folder):
    """Every stored cell result of a result folder: file name to bytes."""
    return {p.name: p.read_bytes() for p in sorted((folder / "cells").glob("*.json"))}


def requires_shared_data(*parts):
    """Skip (with the reason) when ../shared/data, or the named file in it, is absent."""
    path = SHARED_DATA.joinpath(*parts)
    return pytest.mark.skipif(not path.exists(), reason=f"real data not found at {path}")
