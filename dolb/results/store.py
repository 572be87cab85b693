"""The result store: a Parquet dataset of typed rows under ``DIR/results``, in parts.

One row per cell × conversion × checkpoint × metric (a failed cell: one row with its
error), with every cell coordinate in a column of its own (``param_<name>`` for each
learner parameter) and, beside the metric, the cell's status, error, time, CPU time,
peak memory and worker. Whoever computed the cells writes the part (a worker when it
can reach the folder, else the client), whole or not at all; the client commits the
parts with a manifest under ``manifests/`` naming each part and its cells
(:meth:`ResultStore.missing_parts`: those gone), and keeps the union of every part's
schema in ``results/0-schema.parquet``. A cell stored twice is read once
(:mod:`dolb.results.query`); a compaction (:mod:`dolb.results.compaction`) merges parts;
``DIR/format.json`` names the format. Why: docs/design/store-format.md.

Examples
--------
>>> import tempfile
>>> store = ResultStore(tempfile.mkdtemp())
>>> from dolb.results.cell_rows import CellRows
>>> rows = CellRows(result_schema({}), run_id="r1", worker="here")
>>> rows.add_failed("c1", {"experiment": "e", "split": 0}, "boom")
>>> store.write_part(rows.table())  # doctest: +ELLIPSIS
'part-...parquet'
>>> len(store.parts())
1
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import time
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as pds
import pyarrow.parquet as pq

from dolb.data.store.format import url_filesystem
from dolb.errors import ConfigError, DataError, StorageError
from dolb.results.manifests import COMPACTION_PREFIX, Manifests, read_manifests
from dolb.results.parquet_file import compression, write_local
from dolb.results.store_format import FORMAT, FORMAT_FILE, marker_text, parse_marker, unmarked

RESULTS = "results"
"""The dataset's folder inside a result folder."""
MANIFESTS = "manifests"
"""Manifests of committed parts, inside a result folder."""
SCHEMA_FILE = "0-schema.parquet"
"""The schema of every part (no rows), inside the dataset's folder: named to be listed
before any part (``part-...``), so that readers taking the first file's schema see the
columns of all."""

CELL_COLUMNS = [
    ("cell_id", pa.string()),
    ("status", pa.string()),
    ("error", pa.string()),
    ("experiment", pa.string()),
    ("dataset", pa.string()),
    ("task", pa.string()),
    ("learner", pa.string()),
    ("split", pa.int64()),
    ("seed", pa.int64()),
    ("params", pa.string()),
    ("complexity", pa.string()),
]
"""Per-cell columns before the parameter columns: identity, status and coordinates
(``params`` and ``complexity`` are the readable labels the tables group by)."""

VALUE_COLUMNS = [
    ("conversion", pa.string()),
    ("n_train", pa.int64()),
    ("metric", pa.string()),
    ("value", pa.float64()),
]
"""What one row measures: a metric of a conversion's output at a training size."""

RUN_COLUMNS = [
    ("cell_seconds", pa.float64()),
    ("cell_cpu_seconds", pa.float64()),
    ("cell_peak_rss", pa.int64()),
    ("resumed_from", pa.int64()),
    ("worker", pa.string()),
    ("run_id", pa.string()),
    ("attempt", pa.string()),
]
"""How the cell ran: wall and CPU seconds, the worker's peak resident memory seen
during the cell (bytes), the examples it resumed from (0: from the start), where, in
which run, and the attempt (task) that wrote it.
These differ between runs; every other column is deterministic."""

ARROW_TYPES = {float: pa.float64(), int: pa.int64(), str: pa.string(), bool: pa.bool_()}


TUNED = "tuned"
"""The ``params`` label of a tuned learner's cells: their values, chosen per split by its
tuning, are in the ``param_`` columns."""
TRIAL_COLUMNS = [("trial", pa.int64()), ("bracket", pa.int64()), ("rung", pa.int64()), ("budget", pa.int64())]
"""Where a tuning trial's row belongs: its trial, bracket, rung and budget (training
examples); empty in other rows (see :mod:`dolb.experiment.tuned_cells`)."""


def result_schema(param_types: dict[str, type], trials: bool = False) -> pa.Schema:
    """The schema of a run's parts, given the Python type of each learner parameter
    (a ``param_<name>`` column each, in name order), with :data:`TRIAL_COLUMNS` when
    the run tunes."""
    params = [(f"param_{name}", ARROW_TYPES[kind]) for name, kind in sorted(param_types.items())]
    return pa.schema(CELL_COLUMNS + params + (TRIAL_COLUMNS if trials else []) + VALUE_COLUMNS + RUN_COLUMNS)


def new_attempt() -> str:
    """A unique, time-ordered tag for one task's attempt at its cells."""
    return f"{time.time_ns():020d}-{uuid.uuid4().hex[:8]}"


class ResultStore:
    """The Parquet result dataset of a result folder (a path or an fsspec URL).

    Parameters
    ----------
    root : str or Path
        The result folder.
    """

    def __init__(self, root: str | os.PathLike) -> None:
        self.root = str(root)
        if not self.root.strip():
            raise ConfigError("the result folder's name is empty (give a folder, e.g. --out runs/study)")
        self.fs, path = url_filesystem(self.root)
        self.local = "://" not in self.root  # a path: rename is atomic there
        self.path = str(Path(path).absolute()) if self.local else path.rstrip("/")
        self.results = f"{self.path}/{RESULTS}"
        self.location = self.path if self.local else self.root.rstrip("/")  # as printed: a URL keeps its scheme
        self.format: int | None = None
        """The format its marker names, once read (:mod:`dolb.results.store_format`)."""

    def __repr__(self) -> str:
        return f"ResultStore({self.root!r})"

    def shown(self, path: str) -> str:
        """A path of the folder's file system as messages name it: a URL keeps its scheme."""
        return path if self.local else self.fs.unstrip_protocol(path)

    def check_format(self) -> None:
        """DataError naming the folder when its format marker names another format or is
        malformed, or when it holds result files but no marker; nothing when it holds
        neither (a store not written yet). The marker is read once per store object."""
        if self.format is not None:
            return
        text = self._read(FORMAT_FILE)
        if text is not None:
            self.format = parse_marker(self.location, text)
        elif self._names() or self.fs.exists(f"{self.results}/{SCHEMA_FILE}"):
            raise unmarked(self.location)

    def _mark(self) -> None:
        """Check the format, and write the marker before the store's first file."""
        self.check_format()
        if self.format is None:
            self._write_small(FORMAT_FILE, marker_text())
            self.format = FORMAT

    def exists(self) -> bool:
        """Whether any part has been written here."""
        return bool(self.parts())

    def write_part(self, table: pa.Table, staged: bool = False) -> str:
        """Write ``table`` as a new part, whole or not at all; return its name.
        StorageError naming the folder if it cannot be written. ``staged``: hidden until
        :meth:`reveal` (behind a URL, until committed anyway)."""
        name = f"part-{new_attempt()}.parquet"
        self._mark()
        self._write_parquet(table, name, staged=staged)
        return name

    def reveal(self, name: str) -> None:
        """Give a part written ``staged`` its name: readers see it from now on."""
        if self.local:
            os.replace(self._staged(name), f"{self.results}/{name}")

    def _staged(self, name: str) -> str:
        """Where a staged part waits (a temporary file: see :mod:`dolb.execution.lock`)."""
        return f"{self.results}/.{name}.staged.tmp"

    def _write_parquet(self, table: pa.Table, name: str, folder: str | None = None, staged: bool = False) -> None:
        """Write ``table`` as ``name`` in ``folder`` (default: the dataset's), whole or
        not at all (``staged``: see :meth:`write_part`)."""
        where = os.path.dirname(final := f"{folder or self.results}/{name}")
        try:
            if self.local:
                os.makedirs(where, exist_ok=True)
                write_local(table, self._staged(name) if staged else final)
            else:
                self.fs.makedirs(where, exist_ok=True)
                pq.write_table(table, final, filesystem=self.fs, compression=compression(table))
        except OSError as exc:
            reason = os.strerror(exc.errno) if exc.errno else str(exc).splitlines()[0]
            message = f"cannot write results: {reason} (the cells stored are whole; run again to resume)"
            raise StorageError(f"{self.shown(where)}: {message}") from exc

    def write_table(self, name: str, table: pa.Table) -> None:
        """Write a Parquet file of the result folder (``name`` relative to it, outside
        ``results/``) whole or not at all."""
        self._mark()
        self._write_parquet(table, name, self.path)

    def commit(self, parts: dict[str, list[str]], run_id: str, replaces: list[str] | None = None) -> None:
        """Commit ``parts`` (each part's name and the ids of the cells it holds) with a
        new manifest; ``replaces``: a compaction's (:mod:`dolb.results.manifests`)."""
        if not parts and not replaces:
            return
        listed = {"run_id": run_id, "parts": parts}
        name = f"{run_id}-{new_attempt()}"
        if replaces is not None:
            listed["replaces"], name = replaces, f"{COMPACTION_PREFIX}{new_attempt()}"
        self.write_text(f"{MANIFESTS}/{name}.json", json.dumps(listed))

    def manifests(self, compactions_only: bool = False) -> Manifests:
        """Every manifest of the folder, read (``compactions_only``: the compactions')."""
        self.check_format()
        return read_manifests(self.fs, f"{self.path}/{MANIFESTS}", self.local, compactions_only)

    def committed(self) -> dict[str, list[str]]:
        """Every part a manifest commits, with the ids of the cells it holds."""
        return self.manifests().committed

    def present(self) -> set[str]:
        """Names of the parts in the dataset's folder, committed or not."""
        self.check_format()
        return self._names()

    def _names(self) -> set[str]:
        """:meth:`present`, the format unchecked."""
        if self.local:
            names = os.listdir(self.results) if os.path.isdir(self.results) else []
        else:
            names = [Path(p).name for p in self.fs.glob(f"{self.results}/part-*.parquet")]
        return {n for n in names if n.startswith("part-") and n.endswith(".parquet")}

    def parts(self) -> list[str]:
        """Paths of the parts to read, oldest first: in a folder every part, behind a URL
        the committed ones; none a compaction retired or left pending."""
        names, manifests = self.present(), self.manifests(compactions_only=self.local)
        if not self.local:
            names &= set(manifests.committed)
        retired, pending = manifests.settle(names)
        return [f"{self.results}/{n}" for n in sorted(names - retired - pending)]

    def missing_parts(self) -> dict[str, list[str]]:
        """The committed parts gone from the folder (but those a compaction replaced or
        left pending), each with its cells' ids."""
        present, manifests = self.present(), self.manifests()
        retired, pending = manifests.settle(present)
        return {name: cells for name, cells in manifests.committed.items()
                if name not in present and name not in retired and name not in pending}

    def remove(self, paths: list[str]) -> None:
        """Remove files of the folder (paths as :meth:`parts` gives), in order, if there."""
        for path in paths:
            with contextlib.suppress(FileNotFoundError):
                self.fs.rm_file(path)

    def extend_schema(self, schema: pa.Schema) -> None:
        """Make :data:`SCHEMA_FILE` hold every column of ``schema`` (the schema of the
        parts a run is about to write) and of the parts stored; rewritten only when a
        column is new. DataError when a column's type differs from a stored one's."""
        self._mark()
        path = f"{self.results}/{SCHEMA_FILE}"
        known = self.fs.exists(path)  # else parts written by write_part alone (no run): they say
        stored = [self.schema_of(path)] if known else [self.schema_of(part) for part in self.parts()]
        unified = self._unified([*stored, schema]).remove_metadata()
        if not (known and unified.equals(stored[0])):
            self._write_parquet(unified.empty_table(), SCHEMA_FILE)

    def dataset(self, parts: list[str] | None = None) -> pds.Dataset:
        """Every part to read (or ``parts``) as one ``pyarrow.dataset`` of the union
        schema, :data:`SCHEMA_FILE`'s (else, parts written by :meth:`write_part` alone,
        without a run recording their schema, every part's)."""
        parts = self.parts() if parts is None else parts
        if not parts:
            raise DataError(f"{self.root}: no results stored (run `dolb run` first)")
        path = f"{self.results}/{SCHEMA_FILE}"
        known = [self.schema_of(path)] if self.fs.exists(path) else [self.schema_of(part) for part in parts]
        return pds.dataset(parts, schema=self._unified(known), format="parquet", filesystem=self.fs)

    def schema_of(self, part: str) -> pa.Schema:
        """The schema of a part; DataError naming it when it cannot be read."""
        try:
            return pq.read_schema(part, filesystem=self.fs)
        except (OSError, pa.ArrowInvalid) as exc:
            reason = str(exc).strip().splitlines()[0]
            raise DataError(f"{self.shown(part)}: unreadable result part ({reason})") from None

    def _unified(self, schemas: list[pa.Schema]) -> pa.Schema:
        """One schema holding the columns of all; DataError when a column's types differ."""
        try:
            return pa.unify_schemas(schemas, promote_options="permissive")
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise DataError(f"{self.shown(self.results)}: result parts of incompatible schemas ({exc})") from None

    def write_text(self, name: str, text: str) -> None:
        """Write a small file of the result folder (``name`` relative to it) whole or
        not at all where the file system allows (local: temporary file, fsync, rename)."""
        self._mark()
        self._write_small(name, text)

    def _write_small(self, name: str, text: str) -> None:
        """:meth:`write_text`, the format unchecked."""
        final = f"{self.path}/{name}"
        if not self.local:
            self.fs.makedirs(final.rsplit("/", 1)[0], exist_ok=True)
            self.fs.pipe_file(final, text.encode())
            return
        folder = os.path.dirname(final)
        os.makedirs(folder, exist_ok=True)
        temporary = f"{folder}/.{os.path.basename(final)}.{uuid.uuid4().hex[:8]}.tmp"
        try:
            with open(temporary, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, final)
        finally:
            if os.path.exists(temporary):
                os.unlink(temporary)

    def read_text(self, name: str) -> str | None:
        """A small file of the result folder, or None when it does not exist;
        DataError when it is not UTF-8 text."""
        self.check_format()
        return self._read(name)

    def _read(self, name: str) -> str | None:
        """:meth:`read_text`, the format unchecked."""
        try:
            return self.fs.cat_file(f"{self.path}/{name}").decode("utf-8")
        except (FileNotFoundError, NotADirectoryError):
            return None
        except UnicodeDecodeError as exc:
            raise DataError(f"{self.shown(f'{self.path}/{name}')}: not UTF-8 text (byte {exc.start})") from None

    def list(self, folder: str) -> list[str]:
        """Names of the files in a sub-folder of the result folder, sorted."""
        self.check_format()
        try:
            return sorted(Path(p).name for p in self.fs.ls(f"{self.path}/{folder}", detail=False))
        except FileNotFoundError:
            return []

    def check_creatable(self) -> None:
        """OSError naming the folder if a local result folder could not be created or
        written (a name too long, a file on its path, no write permission, a read-only
        file system), found without writing anything. URLs are checked by writing."""
        if not self.local:
            return
        path = Path(self.path)
        existing = next(p for p in (path, *path.parents) if p.exists())
        if not existing.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(existing))
        name_max = os.pathconf(existing, "PC_NAME_MAX")
        for part in path.relative_to(existing).parts:
            if len(os.fsencode(part)) > name_max:
                raise OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG), str(path))
        if not os.access(existing, os.W_OK | os.X_OK):
            code = errno.EROFS if os.statvfs(existing).f_flag & os.ST_RDONLY else errno.EACCES
            raise OSError(code, os.strerror(code), str(path))
