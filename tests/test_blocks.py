"""Blocks as learners take them (dolb.data.blocks): the structure check against a plain
reference, and canonical form."""

import numpy as np
import pytest
import scipy.sparse as sp

from dolb.data.blocks import as_block
from dolb.errors import DataError


def random_structure(rng):
    rows = int(rng.integers(1, 8))
    pointers = np.concatenate([[0], np.cumsum(rng.integers(0, 4, rows))]).astype(np.int64)
    return pointers, rng.integers(-1, 6, pointers[-1]).astype(np.int32)


def reference(pointers, indices, width):
    """What as_block must do, written plainly: the first row with a column outside
    0..width−1 is refused; rows out of order make the block canonical."""
    for row in range(pointers.shape[0] - 1):
        columns = indices[pointers[row] : pointers[row + 1]]
        if ((columns < 0) | (columns >= width)).any():
            return row, None
    ordered = all((np.diff(indices[pointers[r] : pointers[r + 1]]) > 0).all() for r in range(pointers.shape[0] - 1))
    return None, ordered


def test_the_structure_check_agrees_with_a_plain_reference():
    rng = np.random.default_rng(0)
    for _ in range(3000):
        pointers, indices = random_structure(rng)
        data = rng.normal(size=indices.shape[0])
        X = sp.csr_matrix((data, indices.copy(), pointers.copy()), shape=(pointers.shape[0] - 1, 5))
        bad_row, ordered = reference(pointers, indices, 5)
        if bad_row is not None:
            with pytest.raises(DataError, match=f"^block: row {bad_row} has column index"):
                as_block(X, 5)
            continue
        block = as_block(X, 5)
        assert (block is X) == ordered
        assert block.has_canonical_format
        np.testing.assert_array_equal(block.toarray(), X.toarray())


def test_a_row_range_is_scipys_slice_without_a_copy_and_keeps_the_checked_flag():
    from dolb.data.blocks import row_range
    from dolb.data.store.readers import CHECKED

    X = sp.random(40, 30, density=0.2, format="csr", random_state=np.random.default_rng(3))
    setattr(X, CHECKED, True)
    for start, stop in ((0, 40), (3, 17), (17, 18), (39, 40), (5, 5)):
        rows = row_range(X, start, stop)
        assert rows.shape == (stop - start, 30)
        assert (rows != X[start:stop]).nnz == 0
        assert rows.indptr.tolist() == X[start:stop].indptr.tolist()
        assert getattr(rows, CHECKED, False)
        assert rows.nnz == 0 or np.shares_memory(rows.data, X.data)
    unchecked = sp.csr_matrix(X)
    assert not getattr(row_range(unchecked, 1, 4), CHECKED, False)  # a block of unknown rows stays unknown
    dense = X.toarray()
    assert np.shares_memory(row_range(dense, 2, 9), dense) and (row_range(dense, 2, 9) == dense[2:9]).all()
