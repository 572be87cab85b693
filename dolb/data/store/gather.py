"""Compiled gathers: the rows of a block, in any order, copied out of decoded chunks in
one pass per chunk.

Every array of a store is cut along axis 0 into chunks of ``chunk_length`` elements (a
row of a dense ``X`` or of a 2-D ``y`` is ``width`` consecutive elements of its flattened
chunk). A block asks for *spans*: span ``i`` is the elements ``starts[i]`` to
``starts[i] + lengths[i] - 1`` of the whole array, and goes to ``out[out_ptr[i]:
out_ptr[i + 1]]``. :func:`touched_chunks` says which chunks hold some span;
:func:`gather_spans` copies, from one of them, the part of every span it holds
(converting to ``out``'s dtype on the way), without the GIL. Why nothing is sorted:
docs/design/data-store.md.

Examples
--------
>>> chunk0, chunk1 = np.arange(0, 4.0), np.arange(4, 8.0)  # an array of 8 in chunks of 4
>>> starts, lengths = np.array([5, 0, 3]), np.array([2, 1, 2])  # elements 5-6, 0, 3-4
>>> out_ptr = np.array([0, 2, 3, 5])
>>> touched_chunks(starts, lengths, 4, 2).tolist()
[True, True]
>>> out = np.zeros(5)
>>> gather_spans(chunk0, 0, starts, lengths, out_ptr, out)
>>> gather_spans(chunk1, 4, starts, lengths, out_ptr, out)
>>> out.tolist()
[5.0, 6.0, 0.0, 3.0, 4.0]
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils
from numba.extending import intrinsic

PREFETCH_AHEAD = 8
"""Spans (rows) ahead whose first element a gather asks the CPU to fetch while it copies
the current one: a permuted block's rows lie anywhere in its chunks, and without it
every row waits for memory in turn (what it saves: docs/design/data-store.md)."""


_unsigned = numba.uint64
"""Copy loops index with unsigned integers: Numba wraps a negative signed index around
(a compare and select on every access), which keeps LLVM from vectorising the copy
(docs/design/data-store.md)."""

CACHE_LINE = 64
"""Bytes the CPU fetches from memory at once (x86-64 and most ARM cores)."""


@intrinsic
def _prefetch(typingctx, array, index):
    """Ask the CPU to bring ``array[index]`` into its caches (LLVM's ``llvm.prefetch``:
    a read, kept in all cache levels); no effect on the program's results, nor a fault
    for an index outside the array."""

    def codegen(context, builder, signature, args):
        array_type = signature.args[0]
        data = context.make_array(array_type)(context, builder, args[0])
        pointer = cgutils.get_item_pointer(context, builder, array_type, data, [args[1]], wraparound=False)
        byte_pointer, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        function = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte_pointer, i32, i32, i32]), "llvm.prefetch.p0i8"
        )
        builder.call(function, [builder.bitcast(pointer, byte_pointer), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return numba.types.void(array, index), codegen


@numba.njit(cache=True, inline="always")
def prefetch_span(array, start, stop):
    """Ask the CPU to bring every cache line of ``array[start:stop]`` into its caches."""
    for k in range(start, stop, max(CACHE_LINE // array.itemsize, 1)):
        _prefetch(array, _unsigned(k))


@numba.njit(cache=True, nogil=True)
def touched_chunks(starts, lengths, chunk_length, n_chunks):
    """Boolean mask of the chunks that hold at least one element of some span (all of
    them at once when there is one chunk; else one division a span, two for a span that
    crosses a chunk boundary)."""
    touched = np.zeros(n_chunks, np.bool_)
    if n_chunks == 1:
        touched[0] = starts.shape[0] > 0 and lengths.max() > 0
        return touched
    for i in range(starts.shape[0]):
        if lengths[i] > 0:
            first = starts[i] // chunk_length
            touched[first] = True
            if starts[i] + lengths[i] > (first + 1) * chunk_length:
                for c in range(first + 1, (starts[i] + lengths[i] - 1) // chunk_length + 1):
                    touched[c] = True
    return touched


def consecutive(rows: np.ndarray) -> bool:
    """Whether ``rows`` (not empty) are ``rows[0], rows[0] + 1, ...``.

    >>> consecutive(np.array([3, 4, 5])), consecutive(np.array([3, 5, 4]))
    (True, False)
    """
    return int(rows[-1]) - int(rows[0]) == rows.shape[0] - 1 and bool(np.all(np.diff(rows) == 1))


OUTSIDE, REPEATED = 1, 2
"""What :func:`first_bad_row` found wrong with a row number."""
SORT_BELOW = 16
"""Row numbers fewer than 1/SORT_BELOW of the dataset's rows are checked for repeats by
sorting them, more by marking each row once."""


@numba.njit(cache=True, nogil=True)
def first_bad_row(rows, n_rows):
    """A row of ``rows`` that is outside ``[0, n_rows)`` or there a second time, and
    which of the two: ``(row, OUTSIDE)`` or ``(row, REPEATED)``; ``(-1, 0)`` when every
    row is sound. One pass with a mark per row of the dataset (the first bad row in the
    order given), or, for a few rows of many, a pass for the bounds (the first row
    outside) and a sort (the smallest row there twice)."""
    n = rows.shape[0]
    if n * SORT_BELOW < n_rows:
        for i in range(n):
            if _unsigned(rows[i]) >= _unsigned(n_rows):  # a negative row wraps to a huge number
                return rows[i], OUTSIDE
        ordered = np.sort(rows)
        for i in range(1, n):
            if ordered[i] == ordered[i - 1]:
                return ordered[i], REPEATED
        return -1, 0
    seen = np.zeros(n_rows, np.bool_)
    for i in range(n):
        row = rows[i]
        if _unsigned(row) >= _unsigned(n_rows):
            return row, OUTSIDE
        if seen[row]:
            return row, REPEATED
        seen[row] = True
    return -1, 0


@numba.njit(cache=True, nogil=True)
def gather_spans(chunk, chunk_start, starts, lengths, out_ptr, out):
    """Copy into ``out`` the part of every span held by ``chunk`` (1-D, its first element
    being element ``chunk_start`` of the array)."""
    low = chunk_start
    high = chunk_start + chunk.shape[0]
    n = starts.shape[0]
    for i in range(n):
        if i + PREFETCH_AHEAD < n and low <= starts[i + PREFETCH_AHEAD] < high:
            _prefetch(chunk, _unsigned(starts[i + PREFETCH_AHEAD] - low))
        first = max(starts[i], low)
        stop = min(starts[i] + lengths[i], high)
        if stop <= first:
            continue
        to, source = _unsigned(out_ptr[i] + first - starts[i]), _unsigned(first - low)
        for k in range(_unsigned(stop - first)):
            out[to + k] = chunk[source + k]



@numba.njit(cache=True, nogil=True)
def gather_span_pairs(chunk_a, chunk_b, chunk_start, starts, lengths, out_ptr, out_a, out_b):
    """:func:`gather_spans` of two arrays chunked alike (a CSR block's values and column
    indices) in one pass over the spans."""
    low = chunk_start
    high = chunk_start + chunk_a.shape[0]
    n = starts.shape[0]
    for i in range(n):
        if i + PREFETCH_AHEAD < n and low <= starts[i + PREFETCH_AHEAD] < high:
            _prefetch(chunk_a, _unsigned(starts[i + PREFETCH_AHEAD] - low))
            _prefetch(chunk_b, _unsigned(starts[i + PREFETCH_AHEAD] - low))
        first = max(starts[i], low)
        stop = min(starts[i] + lengths[i], high)
        if stop <= first:
            continue
        to, source = _unsigned(out_ptr[i] + first - starts[i]), _unsigned(first - low)
        for k in range(_unsigned(stop - first)):
            out_a[to + k] = chunk_a[source + k]
            out_b[to + k] = chunk_b[source + k]


@numba.njit(cache=True, nogil=True)
def gather_rows(chunk, first_row, rows, out):
    """Copy into ``out[i]`` row ``rows[i]`` of the array for every such row that
    ``chunk`` holds (both 2-D, a row of ``width`` elements; the chunk's first row being
    row ``first_row`` of the array)."""
    held = _unsigned(chunk.shape[0])
    width = _unsigned(chunk.shape[1])
    elements = chunk.reshape(chunk.size)
    n = rows.shape[0]
    for i in range(n):
        ahead = _unsigned(rows[i + PREFETCH_AHEAD] - first_row) if i + PREFETCH_AHEAD < n else held
        if ahead < held:
            _prefetch(elements, ahead * width)
        row = _unsigned(rows[i] - first_row)  # a row before the chunk wraps to a huge number
        if row < held:
            for k in range(width):
                out[i, k] = chunk[row, k]


@numba.njit(cache=True, nogil=True)
def row_spans(indptr, rows, starts, lengths, out_ptr):
    """The spans of CSR ``rows`` (their elements, by the row pointers ``indptr``) and
    where they go in a block (``out_ptr``, from 0)."""
    out_ptr[0] = 0
    for i in range(rows.shape[0]):
        starts[i] = indptr[rows[i]]
        lengths[i] = indptr[rows[i] + 1] - starts[i]
        out_ptr[i + 1] = out_ptr[i] + lengths[i]


@numba.njit(cache=True, nogil=True)
def spans_in_one_chunk(indptr, rows, chunk_length, begins, ends):
    """Where CSR ``rows`` lie (by the row pointers ``indptr``) when one chunk of
    ``chunk_length`` elements holds them all: fills ``begins`` and ``ends`` counted from
    that chunk's first element and returns ``(chunk, nnz)``; ``(-1, nnz)`` when they are
    spread over more chunks or hold no value (``begins`` and ``ends`` are then
    meaningless)."""
    nnz = 0
    low = indptr[-1]
    high = 0
    for i in range(rows.shape[0]):
        begin, end = indptr[rows[i]], indptr[rows[i] + 1]
        begins[i], ends[i] = begin, end
        if end > begin:
            nnz += end - begin
            low = min(low, begin)
            high = max(high, end)
    chunk = low // chunk_length
    if nnz == 0 or (high - 1) // chunk_length != chunk:
        return -1, nnz
    offset = chunk * chunk_length
    if offset:
        for i in range(rows.shape[0]):
            begins[i] -= offset
            ends[i] -= offset
    return chunk, nnz
