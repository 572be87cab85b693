"""Compaction: many small result parts merged into a few large ones, each cell once.

A sweep leaves a part per task, so a large one leaves thousands, and every reader pays
per part (DuckDB opening each file, a reader listing them). :func:`compact` merges the
parts into parts of :data:`PART_ROWS` rows, keeping each cell once (the copy every
reader keeps: see :mod:`dolb.results.query`), with the rows unchanged. A run compacts
its folder when it ends with more than :data:`RUN_END_PARTS` parts; ``dolb compact DIR``
compacts it whatever the number. Either way the parts a compaction wrote are left
alone unless they are small (under half of :data:`PART_ROWS`).

It keeps every guarantee of the store, a kill at any moment included:

1. the new parts are written whole under hidden names (staged; behind a URL under
   their own names, read only once committed);
2. one compaction manifest commits them and names the parts they replace;
3. they are given their names (revealed);
4. the parts they replace are removed, then the manifests that name nothing else.

dolb's readers see the replaced parts until the compaction is done (3), the new ones
after, never both (:mod:`dolb.results.manifests`); a kill leaves a store that reads the
same, and the next compaction (or a run's end) finishes steps 3-4 or undoes 1-3. Plain
readers (pandas, pyarrow, DuckDB, dask on ``DIR/results``) see the copies of both
between steps 3 and 4, as they see any cell stored twice.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from dolb.errors import DataError, DolbError
from dolb.results import query
from dolb.results.store import ResultStore

PART_ROWS = 1_000_000
"""Rows of a compacted part (its last may have fewer)."""
RUN_END_PARTS = 100
"""A run that ends with more parts than this compacts them."""


@dataclass
class Compacted:
    """What a compaction did: parts read, parts written, and rows kept and dropped."""

    before: int
    after: int
    merged: int = 0
    written: int = 0
    rows: int = 0

    def line(self, root: str) -> str:
        """What it did, on one line."""
        if not self.written:
            return f"{root}: {_parts(self.before)}, nothing to compact"
        return (f"{root}: {_parts(self.merged)} compacted into {self.written} ({self.rows:,} rows, each cell once); "
                f"{_parts(self.after)} now")


def _parts(n: int) -> str:
    """``"1 part"``, ``"2 parts"``."""
    return f"{n} part{'s' * (n != 1)}"


def compact(store: ResultStore, run_id: str = "compaction") -> Compacted:
    """Merge the parts of ``store`` (but the large parts of earlier compactions) into
    parts of :data:`PART_ROWS` rows, each cell once, and finish or undo what an
    interrupted compaction left. The caller holds the folder
    (:class:`dolb.execution.lock.FolderLock`): no run writes meanwhile.

    Raises
    ------
    DataError
        A part cannot be read (its name is given); no part is replaced.
    """
    tidy(store)
    parts = store.parts()
    compacted = {part for c in store.manifests(compactions_only=True).compactions for part in c.parts}
    chosen = [part for part in parts if os.path.basename(part) not in compacted
              or pq.read_metadata(part, filesystem=store.fs).num_rows < PART_ROWS // 2]
    done = Compacted(before=len(parts), after=len(parts))
    if len(chosen) < 2:
        return done
    written: dict[str, list[str]] = {}
    for table in _each_cell_once(store, chosen):
        name = store.write_part(table, staged=True)
        written[name] = pc.unique(table.column("cell_id")).to_pylist()
        done.rows += table.num_rows
    store.commit(written, run_id, replaces=[os.path.basename(part) for part in chosen])
    for name in written:
        store.reveal(name)
    tidy(store)
    done.merged, done.written, done.after = len(chosen), len(written), len(store.parts())
    return done


def compact_after_run(store: ResultStore, run_id: str, most_parts: int | None = None) -> str | None:
    """What a run does as it ends, its folder held: finish what an interrupted compaction
    left and, when more than ``most_parts`` (default :data:`RUN_END_PARTS`) parts are
    left, compact the small ones. (A folder behind a URL is not held: nothing is done
    there.) Every cell is stored by then: a compaction that fails is a warning,
    returned (None when there is none) for the run to log, and the parts stay as they
    are. It reads every row of the parts it merges: a run whose workers reach the
    folder has one of them do it (:mod:`dolb.execution.run_end`)."""
    if not store.local:
        return None
    try:
        tidy(store)
        if len(store.parts()) > (RUN_END_PARTS if most_parts is None else most_parts):
            compact(store, run_id)
    except DolbError as exc:
        return f"the result folder was not compacted ({exc}); `dolb compact {store.root}` tries again"
    return None


def tidy(store: ResultStore) -> None:
    """Finish what compactions left: undo those a kill stopped before they were done
    (their revealed parts, then their manifests), remove the parts the done ones
    replaced, then the manifests that name nothing else (in the order of
    :meth:`dolb.results.manifests.Manifests.obsolete`)."""
    manifests, present = store.manifests(), store.present()
    for unfinished in manifests.unfinished(present):
        store.remove([f"{store.results}/{part}" for part in unfinished.parts if part in present])
        store.remove([unfinished.path])
    manifests, present = store.manifests(), store.present()
    retired, _ = manifests.settle(present)
    store.remove([f"{store.results}/{part}" for part in sorted(retired & present)])
    store.remove(manifests.obsolete(store.present()))


def _each_cell_once(store: ResultStore, parts: list[str]):
    """The rows of ``parts``, each cell once, sorted, in tables of the store's schema of
    about :data:`PART_ROWS` rows, a cell's rows in one (a part lost takes whole cells);
    DataError naming a part that cannot be read."""
    dataset = store.dataset(parts)
    connection = duckdb.connect()
    try:
        connection.execute(f"SET memory_limit = '{query.MEMORY_LIMIT}'")
        connection.execute(f"SET temp_directory = '{tempfile.gettempdir()}/dolb-duckdb'")
        connection.register("parts", dataset)
        reader = connection.sql(f"WITH {query._chosen('parts', 'rows')} SELECT rows.* FROM rows "
                                "ORDER BY cell_id, conversion, metric, n_train").to_arrow_reader(PART_ROWS)
        held = None
        for batch in reader:
            held = pa.Table.from_batches([batch]) if held is None else pa.concat_tables([held, pa.table(batch)])
            cut = _cell_boundary(held.column("cell_id"))
            if cut is not None:
                yield held.slice(0, cut).cast(dataset.schema)
                held = held.slice(cut)
        if held is not None and held.num_rows:
            yield held.cast(dataset.schema)
    except (duckdb.IOException, duckdb.InvalidInputException) as exc:
        query._refuse_damaged_part(store)
        raise DataError(f"{store.root}: cannot compact: {str(exc).splitlines()[0]}") from None
    finally:
        connection.close()


def _cell_boundary(cells: pa.ChunkedArray) -> int | None:
    """The first row at or after :data:`PART_ROWS` that begins a cell (rows sorted by
    cell), None when there is none yet."""
    if len(cells) <= PART_ROWS:
        return None
    tail = cells.slice(PART_ROWS - 1).to_numpy()
    changes = np.flatnonzero(tail[1:] != tail[:-1])
    return PART_ROWS + int(changes[0]) if len(changes) else None


__all__ = ["Compacted", "compact", "compact_after_run", "tidy"]
