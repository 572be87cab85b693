"""Datasets and result folders on a real S3-protocol server (tests/s3_server.py)."""

import numpy as np

from dolb.data.store import open_dataset, write_dataset


def test_a_dataset_written_to_the_server_reads_back_the_same(s3_bucket):
    X = np.arange(60, dtype=np.float64).reshape(20, 3)
    y = np.where(np.arange(20) % 2 == 0, 1.0, -1.0)
    write_dataset(f"{s3_bucket}/store", X, y, chunk_rows=8)
    dataset = open_dataset(f"{s3_bucket}/store")
    assert dataset.n_rows == 20
    np.testing.assert_array_equal(dataset.read(np.arange(20))[0], X)
