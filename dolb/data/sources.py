"""Turn a pipeline's dataset entry into opened datasets (its ``train`` and ``test`` parts)."""

from __future__ import annotations

from pathlib import Path

from dolb.data.generators import materialize
from dolb.data.importers import import_dataset
from dolb.data.store import Dataset, open_dataset
from dolb.experiment.pipeline import DatasetSpec
from dolb.experiment.seeding import seed_for, seed_int


def resolve_dataset(spec: DatasetSpec, data_dir: str | Path, root_seed: int) -> dict[str, Dataset]:
    """Open the stores of ``spec``, first generating or importing them under
    ``data_dir`` if it names a generator or an importer (written once, then reused;
    a generator's seed comes from the root seed and the dataset's name).

    Returns
    -------
    dict
        ``{"train": Dataset}`` plus ``"test"`` when the dataset has a test part.
    """
    if spec.generator is not None:
        seed = seed_int(seed_for(root_seed, "dataset", spec.name))
        return materialize(spec.generator, dict(spec.params), seed, Path(data_dir))
    if spec.importer is not None:
        return import_dataset(spec.importer, dict(spec.params), Path(data_dir))
    parts = {"train": open_dataset(spec.train)}
    if spec.test is not None:
        parts["test"] = open_dataset(spec.test)
    return parts
