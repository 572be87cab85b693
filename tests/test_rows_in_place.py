"""Rows left in place: a permuted sparse block read from a store as spans of its decoded
chunk (RowSpans), not gathered; the linear learners read it as it is and learn what they
learn from the gathered CSR block, bit for bit."""

import numpy as np
import pytest
import scipy.sparse as sp

from dolb.data import ChunkCache, stream_blocks, write_dataset
from dolb.data.blocks import as_block
from dolb.data.store.readers import RowReader
from dolb.data.store.spans import RowSpans
from dolb.errors import DataError
from dolb.learners import learner_class, registered_learners
from dolb.learners.linear import LinearLearner

LINEAR = tuple(name for name, cls in registered_learners().items() if issubclass(cls, LinearLearner))


def labelled_rows(n=500, d=60, seed=0, dtype=np.float64):
    """Sparse rows of norm below 1, of several lengths (some empty), labels ±1."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.08, format="csr", rng=rng, dtype=np.float64)
    X.data = rng.normal(size=X.nnz)
    X = sp.csr_matrix(sp.diags(0.9 / np.maximum(sp.linalg.norm(X, axis=1), 1.0)) @ X).astype(dtype)
    y = np.where(X @ rng.normal(size=d) + 0.1 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


@pytest.fixture(params=[np.float64, np.float32], ids=["float64", "float32"])
def store(request, tmp_path):
    X, y = labelled_rows(dtype=request.param)
    return write_dataset(tmp_path / "rows", X, y), X, y


def test_row_spans_slice_and_gather():
    data, indices = np.arange(1.0, 7.0), np.array([0, 2, 1, 0, 1, 2], np.int32)
    block = RowSpans(np.array([3, 0, 5, 2]), np.array([5, 2, 5, 3]), indices, data, n_features=3)
    assert block.shape == (4, 3) and block.nnz == 5
    expected = np.array([[4.0, 5.0, 0.0], [1.0, 0.0, 2.0], [0.0, 0.0, 0.0], [0.0, 3.0, 0.0]])
    np.testing.assert_array_equal(block.tocsr().toarray(), expected)
    assert block[1:3].nnz == 2
    np.testing.assert_array_equal(block[1:3].tocsr().toarray(), expected[1:3])
    with pytest.raises(TypeError, match="slice of rows"):
        block[::2]


def test_a_permuted_block_in_one_chunk_is_left_in_place(store):
    ds, X, y = store
    order = np.random.default_rng(1).permutation(ds.n_rows)
    cache = ChunkCache(1 << 26)
    in_place = list(stream_blocks(ds, order, block_size=128, cache=cache, in_place=True))
    gathered = list(stream_blocks(ds, order, block_size=128, cache=cache))
    assert all(isinstance(block, RowSpans) for block, _ in in_place)
    for (spans, y1), (csr, y2) in zip(in_place, gathered, strict=True):
        np.testing.assert_array_equal(y1, y2)
        assert spans.data.dtype == np.float64 and not spans.data.flags.writeable
        # row pointers of one type whichever way the rows come: the driver compiles once
        assert spans.begins.dtype == spans.ends.dtype == csr.indptr.dtype == np.int32
        assert spans.nnz == csr.nnz
        rebuilt = spans.tocsr()
        for name in ("indptr", "indices", "data"):
            np.testing.assert_array_equal(getattr(rebuilt, name), getattr(csr, name))
    np.testing.assert_array_equal(sp.vstack([b.tocsr() for b, _ in in_place]).toarray(), X[order].toarray())
    # the values converted to float64 once, and cached so: the next stream's blocks share them
    again = next(iter(stream_blocks(ds, order, block_size=128, cache=cache, in_place=True)))[0]
    assert again.data is in_place[0][0].data


def test_blocks_in_stored_order_are_views_of_the_float64_chunk(store):
    """Consecutive rows inside one chunk come as views of the decoded chunk, converted
    to float64 once a chunk (a float32 store's values too), shared by the next stream."""
    ds, X, y = store
    cache = ChunkCache(1 << 26)
    blocks = [block for block, _ in stream_blocks(ds, block_size=128, cache=cache)]
    assert all(b.data.dtype == np.float64 and not b.data.flags.writeable for b in blocks)
    assert all(np.shares_memory(b.data, blocks[0].data.base) for b in blocks)
    np.testing.assert_array_equal(sp.vstack(blocks).toarray(), X.astype(np.float64).toarray())
    again = next(iter(stream_blocks(ds, block_size=128, cache=cache)))[0]
    assert again.data.base is blocks[0].data.base


def test_blocks_that_cannot_stay_in_place_are_gathered(tmp_path):
    X, y = labelled_rows()
    chunked = write_dataset(tmp_path / "chunked", X, y, chunk_rows=50)
    order = np.random.default_rng(2).permutation(X.shape[0])
    # rows from many chunks, and rows in stored order (views of the chunk already)
    for rows in (order, None):
        for block, _ in stream_blocks(chunked, rows, block_size=100, in_place=True):
            assert isinstance(block, sp.csr_matrix)
    # rows from one chunk of many stay in place
    block, _ = RowReader(chunked).read(np.array([7, 3, 40]), in_place=True)
    assert isinstance(block, RowSpans)
    np.testing.assert_array_equal(block.tocsr().toarray(), X[[7, 3, 40]].toarray())
    dense = write_dataset(tmp_path / "dense", X.toarray(), y)
    block, _ = next(iter(stream_blocks(dense, order, block_size=100, in_place=True)))
    assert isinstance(block, np.ndarray)


@pytest.mark.parametrize("name", LINEAR)
def test_a_learner_learns_rows_in_place_as_it_does_gathered_rows(name, store):
    """Every conversion, a block cut at a checkpoint as a cell cuts it, and the learner
    that cannot read rows in place (it checks whole blocks first) gets them gathered."""
    ds, X, y = store
    order = np.random.default_rng(3).permutation(ds.n_rows)
    cls = learner_class(name)
    found = []
    for in_place in (False, True):
        learner = cls(ds.n_features, n_train=ds.n_rows, conversions=cls.conversions_supported, **cls.test_params)
        predictions = []
        for block, labels in stream_blocks(ds, order, block_size=128, in_place=in_place):
            predictions += [learner.learn(block[:50], labels[:50]), learner.learn(block[50:], labels[50:])]
        outputs = {key: h.predict(X[:40]) for key, h in learner.outputs().items()}
        found.append((np.concatenate(predictions), learner.weights(), learner.rounds, outputs))
    (p1, w1, n1, o1), (p2, w2, n2, o2) = found
    np.testing.assert_array_equal(p1, p2)
    np.testing.assert_array_equal(w1, w2)
    assert n1 == n2 == ds.n_rows and o1.keys() == o2.keys()
    for key in o1:
        np.testing.assert_array_equal(o1[key], o2[key])


def test_a_bad_label_in_rows_in_place_is_named_after_the_rows_before_it(store):
    ds, X, y = store
    order = np.random.default_rng(4).permutation(ds.n_rows)
    block, labels = RowReader(ds).read(order[:100], in_place=True)
    labels = labels.copy()
    labels[61] = 2.0
    learner = learner_class("perceptron")(ds.n_features)
    with pytest.raises(DataError, match=r"row 61 has 2\.0"):
        learner.learn(block, labels)
    reference = learner_class("perceptron")(ds.n_features)
    reference.learn(X[order[:61]], labels[:61])
    np.testing.assert_array_equal(learner.weights(), reference.weights())
    assert learner.n_seen == 61


def test_rows_in_place_with_other_features_are_refused(store):
    ds, _, _ = store
    block, _ = RowReader(ds).read(np.array([5, 1]), in_place=True)
    with pytest.raises(ValueError, match="block has 60 features, learner expects 61"):
        as_block(block, 61, spans=True)
    assert isinstance(as_block(block, 60, spans=True), RowSpans)
    assert isinstance(as_block(block, 60), sp.csr_matrix)
