"""Cell identity never drifts silently: the cell ids of every shipped pipeline (and of
tuning's trials and tuned cells) hash to what ``tests/data/cell_ids.json`` holds.

The datasets are stand-ins (a fixed fingerprint and size per dataset, no data read):
what is checked is how a pipeline becomes cell specs and ids. After a change meant to
alter identity, write the file again with ``python3 -m tests.test_cell_ids``.
"""

import hashlib
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from dolb.experiment.cells import expand_groups
from dolb.experiment.pipeline import load_pipeline
from dolb.experiment.tuned_cells import trial_group, tuned_group, tuning_plans

ROOT = Path(__file__).resolve().parents[1]
IDS = ROOT / "tests" / "data" / "cell_ids.json"
PIPELINES = [*sorted((ROOT / "pipelines").glob("*.toml")), ROOT / "tests" / "data" / "pipelines" / "tuning_ids.toml"]
N_ROWS = 1_000_000


def stand_in(name: str, part: str) -> SimpleNamespace:
    """A dataset part as cell expansion sees it, without its data."""
    return SimpleNamespace(fingerprint=f"{name}/{part}", n_rows=N_ROWS, path=f"/data/{name}/{part}",
                           n_features=10, sparse=False, labels=lambda: np.array([-1.0, 1.0]), provenance={})


def cell_ids(path: Path) -> set[str]:
    """Every cell id of the pipeline at ``path``: its groups', every trial's at every
    rung, and the tuned cells of every configuration a trial tries."""
    pipeline = load_pipeline(path)
    datasets = {name: {"train": stand_in(name, "train"), "test": stand_in(name, "test")}
                for name in pipeline.datasets}
    groups = expand_groups(pipeline, datasets)
    for plan in tuning_plans(pipeline, datasets):
        for bracket in plan.brackets:
            for trial in bracket.trials:
                groups += [trial_group(plan, bracket, trial, rung) for rung in range(len(bracket.budgets))]
                groups.append(tuned_group(plan, trial))
    return {group.cell_id(index) for group in groups for index in range(group.n_splits)}


def id_digests() -> dict[str, str]:
    """{pipeline file: sha256 of its sorted cell ids, one a line}."""
    return {str(path.relative_to(ROOT)): hashlib.sha256("\n".join(sorted(cell_ids(path))).encode()).hexdigest()
            for path in PIPELINES}


@pytest.mark.parametrize("path", PIPELINES, ids=lambda path: path.name)
def test_cell_ids_are_unchanged(path):
    expected = json.loads(IDS.read_text())[str(path.relative_to(ROOT))]
    ids = cell_ids(path)
    assert len(ids) > 0
    assert hashlib.sha256("\n".join(sorted(ids)).encode()).hexdigest() == expected


if __name__ == "__main__":
    IDS.write_text(json.dumps(id_digests(), indent=2) + "\n")
