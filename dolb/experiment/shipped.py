"""The pipelines dolb ships (``pipelines/*.toml``): run by name from any folder
(``dolb run irma``), and the data folder their real data sets are read from.

An installed dolb holds them as package data (``dolb/pipelines``; see ``setup.py``), a
checkout in its ``pipelines/`` folder. A pipeline names its files relative to its own
folder; the shipped ones name their real data sets under ``../../shared/data/`` (the
``shared/data`` folder beside a checkout: ``mnist/``, ``libsvm/``, ``rcv1/``, ``face/``).
Where ``$DOLB_DATA`` names a folder (``dolb run --data DIR`` sets it), a shipped
pipeline reads them there instead: ``../../shared/data/mnist`` is ``$DOLB_DATA/mnist``.

Examples
--------
>>> "irma" in shipped_names()
True
>>> pipeline_file("irma") == shipped_folder() / "irma.toml"
True
>>> data_needs("oms_mnist"), data_needs("irma")
(['mnist'], [])
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from dolb.errors import ConfigError
from dolb.registry import did_you_mean

PACKAGE = Path(__file__).resolve().parents[1]
"""The folder of the ``dolb`` package."""
SHIPPED_DATA = "../../shared/data/"
"""Where the shipped pipelines' relative file names of real data sets begin."""
DATA_VARIABLE = "DOLB_DATA"
"""The environment variable naming the data folder of the shipped pipelines."""
DATA_HINT = ("the data folder holds mnist/, libsvm/, rcv1/ and face/ (see the datasets guide); give it with --data DIR "
             f"or ${DATA_VARIABLE}")


def shipped_folder() -> Path:
    """The folder of the shipped pipelines: an installed dolb's package data, else the
    ``pipelines/`` folder of the checkout dolb runs from."""
    installed = PACKAGE / "pipelines"
    return installed if installed.is_dir() else PACKAGE.parent / "pipelines"


def shipped_names() -> list[str]:
    """The names of the shipped pipelines, sorted."""
    return sorted(path.stem for path in shipped_folder().glob("*.toml"))


def is_shipped(path: str | Path) -> bool:
    """Whether ``path`` is the file of a shipped pipeline."""
    return Path(path).resolve().parent == shipped_folder().resolve()


def pipeline_file(pipeline: str | Path) -> Path:
    """The pipeline file ``pipeline`` names: a file, or a shipped pipeline's name (no
    ``/``, no ``.toml``, not a file here). ConfigError for a name that is neither; the
    message of a missing file names the shipped pipeline of its name, when there is one."""
    path = Path(pipeline)
    if path.is_file():
        return path
    named = "/" not in str(pipeline) and os.sep not in str(pipeline) and path.suffix != ".toml"
    if named and path.name in shipped_names():
        return shipped_folder() / f"{path.name}.toml"
    if named:
        hint = did_you_mean(path.name, shipped_names())
        raise ConfigError(f"{pipeline}: neither a pipeline file nor a pipeline dolb ships{hint} (it ships: "
                          f"{', '.join(shipped_names())})")
    if not path.exists() and path.stem in shipped_names():
        raise ConfigError(f"{pipeline}: no such pipeline file; dolb ships one of this name: dolb run {path.stem}")
    return path


def data_location(value: str, base: Path, folder: str | Path | None = None) -> str:
    """The absolute path of the file name ``value`` of a dataset of the pipeline in
    folder ``base``: relative to ``base``, or for a shipped pipeline's real data set,
    under the data folder ``folder`` (default ``$DOLB_DATA``) when there is one."""
    folder = folder or os.environ.get(DATA_VARIABLE)
    if folder and value.startswith(SHIPPED_DATA) and base.resolve() == shipped_folder().resolve():
        return str((Path(folder) / value.removeprefix(SHIPPED_DATA)).resolve())
    return str((base / value).resolve())


def check_data(path: str | Path, named: dict[str, dict[str, str]]) -> None:
    """ConfigError, in one line, when a file a shipped pipeline reads is missing: where
    it was looked for and where the data folder is given. ``named``: the file names of
    each dataset (key to absolute path), by dataset."""
    if not is_shipped(path):
        return
    for dataset, files in named.items():
        for key, location in files.items():
            if not Path(location).exists():
                raise ConfigError(f"{path}: datasets.{dataset}.params.{key}: {location} is missing; {DATA_HINT}")


def data_needs(name: str) -> list[str]:
    """What the shipped pipeline ``name`` reads from the data folder: the first folder
    (or file) under it of each of its real data sets, sorted."""
    text = (shipped_folder() / f"{name}.toml").read_text(encoding="utf-8")
    needs = set()
    for dataset in tomllib.loads(text).get("datasets", {}).values():
        for value in dataset.get("params", {}).values():
            if isinstance(value, str) and value.startswith(SHIPPED_DATA):
                needs.add(value.removeprefix(SHIPPED_DATA).split("/")[0])
    return sorted(needs)
