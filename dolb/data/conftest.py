"""Names the examples of :mod:`dolb.data` use (``python -m pytest --doctest-modules dolb/data``):
``tmp`` (a fresh folder holding the dataset ``toy``: X the 3 x 3 identity, y 0, 1, 2),
``shared`` (the real data sets), ``np``, ``sp``, ``open_dataset`` and ``write_dataset``."""

import numpy as np
import pytest
import scipy.sparse as sp

from dolb.data.store import open_dataset, write_dataset


@pytest.fixture(autouse=True)
def _example_names(doctest_namespace, tmp_path, request):
    write_dataset(tmp_path / "toy", np.eye(3), np.arange(3.0))
    doctest_namespace.update(
        tmp=tmp_path,
        shared=request.config.rootpath.parent / "shared" / "data",  # beside the checkout pytest runs in
        np=np,
        sp=sp,
        open_dataset=open_dataset,
        write_dataset=write_dataset,
    )
