"""Importers of tables: CSV, Parquet and Arrow IPC (Feather) files, read by pyarrow.

A table's ``label`` column holds the labels; its other columns (or those listed in
``features``) are the features, read as float64. The labels are kept as numbers, or
mapped to -1/+1 by ``positive`` or ``label_map`` (:mod:`dolb.data.sources.columns`).
A cell that is not a number, an empty cell and a NaN or infinite feature are refused,
naming the file, the line (CSV, counted from 1 with the header as line 1) or the row
(Parquet, Feather: counted from 0) and the column. Registered as the importers ``csv``,
``parquet`` and ``feather`` in :data:`~dolb.data.sources.importers.IMPORTERS`.

Examples
--------
>>> _ = (tmp / "mine.csv").write_text("x1,x2,y\\n0.5,1,0\\n2,0,1\\n")
>>> X, y = read_table("csv", tmp / "mine.csv", {"label": "y", "features": None, "positive": None,
...                                              "label_map": "0/1", "sparse": False})
>>> X.tolist(), y.tolist()
([[0.5, 1.0], [2.0, 0.0]], [-1.0, 1.0])
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from dolb.data.params import FilePath, Names, Text
from dolb.data.sources.cache import file_identity
from dolb.data.sources.columns import LABEL_PARAMS, Where, one_rule, part
from dolb.data.sources.importers import IMPORTERS, Importer
from dolb.errors import DataError

KINDS = {"csv": "CSV", "parquet": "Parquet", "feather": "Feather"}
"""Each table importer and how messages name its files."""


def _read_arrow(kind: str, path: Path, strings: bool = False):
    """The pyarrow table of a file (with ``strings``, a CSV file's cells all as text)."""
    import pyarrow as pa

    try:
        if kind == "csv":
            import pyarrow.csv as csv

            options = None
            if strings:
                names = csv.open_csv(path).schema.names  # the first block's
                options = csv.ConvertOptions(column_types={name: pa.string() for name in names})
            return csv.read_csv(path, convert_options=options)
        if kind == "parquet":
            import pyarrow.parquet as pq

            return pq.read_table(path)
        import pyarrow.feather as feather

        return feather.read_table(path)
    except FileNotFoundError:
        raise DataError(f"{KINDS[kind]} file {path}: no such file") from None
    except (pa.ArrowException, OSError) as exc:
        if kind == "csv" and not strings and "conversion error" in str(exc):
            return _read_arrow(kind, path, strings=True)  # a column typed by its first block: find the cell
        reason = " ".join(str(exc).split())
        raise DataError(f"{KINDS[kind]} file {path}: cannot read it ({reason})") from None


def _columns(table, kind: str, path: Path, label: str, features: list[str] | None) -> list[str]:
    """The feature columns: ``features``, or every column but the label and a pandas
    index; DataError naming the file and the column if one is missing."""
    present = table.column_names
    index = (table.schema.pandas_metadata or {}).get("index_columns", [])
    wanted = [label] + (features or [])
    for name in wanted:
        if name not in present:
            shown = ", ".join(repr(c) for c in present)
            role = "label" if name == label else "feature"
            raise DataError(f"{KINDS[kind]} file {path}: no {role} column {name!r} (its columns: {shown})")
    if features is not None:
        if label in features:
            raise DataError(f"{KINDS[kind]} file {path}: column {label!r} is both the label and a feature")
        return features
    return [name for name in present if name != label and name not in index]


def _numbers(column, name: str, at: Where) -> np.ndarray:
    """A feature column as float64; DataError naming the first cell that is empty or not
    a number."""
    import pandas as pd
    import pyarrow as pa

    if column.null_count:
        row = int(np.argmax(column.is_null().to_numpy(zero_copy_only=False)))
        raise DataError(f"{at(row)}, column {name!r}: no value (an empty, NA or NaN cell)")
    if pa.types.is_integer(column.type) or pa.types.is_floating(column.type) or pa.types.is_boolean(column.type):
        return column.to_numpy(zero_copy_only=False).astype(np.float64)
    cells = column.to_pandas()
    values = pd.to_numeric(cells, errors="coerce")
    if values.isna().any():
        row = int(np.argmax(values.isna().to_numpy()))
        raise DataError(f"{at(row)}, column {name!r}: {cells.iloc[row]!r} is not a number")
    return values.to_numpy(dtype=np.float64)


def _label_values(column, name: str, at: Where) -> np.ndarray:
    """The label column as numbers where it holds numbers, else as text; DataError
    naming its first empty cell."""
    import pyarrow as pa

    if column.null_count:
        row = int(np.argmax(column.is_null().to_numpy(zero_copy_only=False)))
        raise DataError(f"{at(row)}, label column {name!r}: no value")
    values = column.to_numpy(zero_copy_only=False)
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        import pandas as pd

        numbers = pd.to_numeric(values, errors="coerce")
        return numbers if not np.isnan(numbers).any() else values.astype(str)
    return values.astype(np.float64) if pa.types.is_boolean(column.type) else values


def read_table(kind: str, path: Path, params: dict[str, Any]) -> tuple[Any, np.ndarray]:
    """``(X, y)`` of one table file under the importer's checked ``params``."""
    table = _read_arrow(kind, path)
    name = f"{KINDS[kind]} file {path}"

    def at(row: int | None) -> str:
        if row is None:
            return name
        return f"{name}, line {row + 2}" if kind == "csv" else f"{name}, row {row} (from 0)"

    if table.num_rows == 0:
        raise DataError(f"{name} holds no examples")
    label = params["label"]
    features = _columns(table, kind, path, label, params["features"])
    X = np.empty((table.num_rows, len(features)), dtype=np.float64)
    for j, column in enumerate(features):
        X[:, j] = _numbers(table.column(column).combine_chunks(), column, at)
    labels = _label_values(table.column(label).combine_chunks(), label, at)
    return part(X, labels, [f"column {c!r}" for c in features], at, params, f"importer {kind!r}")


# --------------------------------------------------------------------------- the importers


def _files(params: dict[str, Any]) -> dict[str, Path]:
    """The file of each part, training first."""
    files = {"train": Path(params["path"])}
    if params["test_path"] is not None:
        files["test"] = Path(params["test_path"])
    return files


def _importer(kind: str, suffixes: tuple[str, ...], doc: str) -> Importer:
    """The importer of one kind of table file."""
    return Importer(
        name=kind,
        read=lambda params: {p: read_table(kind, path, params) for p, path in _files(params).items()},
        sources=lambda params: [file_identity(path) for path in _files(params).values()],
        params={
            "path": FilePath(doc=f"the training file ({doc})"),
            "test_path": FilePath(None, "the test file, with the same columns (optional)"),
            "label": Text(doc="the name of the label column"),
            "features": Names(None, "the feature columns, in order (default: every other column)"),
            **LABEL_PARAMS,
        },
        parts=("train", "test"),
        reference=f"{KINDS[kind]} files, read by pyarrow",
        settle=one_rule,
        suffixes=suffixes,
    )


CSV = _importer("csv", (".csv", ".csv.gz", ".csv.bz2"), "a header line, then one example a line; .gz or .bz2 too")
PARQUET = _importer("parquet", (".parquet", ".pq"), "Parquet")
FEATHER = _importer("feather", (".feather", ".arrow", ".ipc"), "Arrow IPC, as Feather writes it")
IMPORTERS.add(CSV.name, CSV)
IMPORTERS.add(PARQUET.name, PARQUET)
IMPORTERS.add(FEATHER.name, FEATHER)
