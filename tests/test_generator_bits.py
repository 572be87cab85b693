"""A generated dataset is the same bits whatever NumPy's own loops dispatch to: a process
whose NumPy is kept off AVX-512 (as on an AVX2 CPU) or off AVX2 too generates what this
one does. (On a CPU without AVX-512 the first check is this process against itself.)"""

import hashlib
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dolb.data import generate, materialize
from dolb.data.sources import libm
from dolb.data.sources.irma import IRMA

ROOT = Path(__file__).resolve().parents[1]
SMALL = {"irma": {"n_sequences": 20, "length": 50, "n_test": 101},
         "sparse_text": {"n_rows": 300, "n_features": 2000, "nnz_per_row": 20, "n_test": 50},
         "spirals": {"n_rows": 500, "n_test": 100}}
WITHOUT = {"AVX2": "X86_V4 AVX512_ICL AVX512_SPR", "SSE4": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR"}
"""NumPy's dispatch targets to turn off to compute as a CPU without AVX-512 does, or
without AVX2 either (``NPY_DISABLE_CPU_FEATURES``, read when NumPy is imported)."""


def digests() -> dict[str, str]:
    """{generator/part/array: sha256 of its bytes} of every generator at a small size."""
    found = {}
    for name, params in SMALL.items():
        for part, (X, y, _) in generate(name, params, seed=11).items():
            arrays = {"X": X, "y": y} if not hasattr(X, "indptr") else {"X": X.data, "indices": X.indices, "y": y}
            for array, values in arrays.items():
                found[f"{name}/{part}/{array}"] = hashlib.sha256(np.ascontiguousarray(values).tobytes()).hexdigest()
    return found


@pytest.mark.parametrize("cpu", sorted(WITHOUT))
def test_a_dataset_is_the_same_bits_whatever_numpy_dispatches_to(cpu):
    environment = os.environ | {"NPY_DISABLE_CPU_FEATURES": WITHOUT[cpu], "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-c", "import json, tests.test_generator_bits as t; print(json.dumps(t.digests()))"],
                         env=environment, cwd=ROOT, capture_output=True, text=True, timeout=600, check=True)
    theirs = json.loads(run.stdout)
    ours = digests()
    assert sorted(theirs) == sorted(ours)
    assert [name for name in ours if ours[name] != theirs[name]] == []


def test_the_c_librarys_functions_elementwise():
    x = np.array([[0.5, 1.0], [2.5, 1e-9]])
    for mine, theirs in ((libm.exp, math.exp), (libm.log, math.log), (libm.log1p, math.log1p),
                         (libm.expm1, math.expm1)):
        assert mine(x).tolist() == [[theirs(v) for v in row] for row in x.tolist()]
        assert mine(x).dtype == np.float64
    assert libm.power(np.array([2.0, 3.0]), -1.5).tolist() == [2.0**-1.5, 3.0**-1.5]
    assert libm.exp(3).shape == () and libm.exp(3) == math.exp(3)


def test_geomspace_is_numpys_with_the_c_librarys_power():
    values = libm.geomspace(1.0, 1280.0, 256)
    assert values.tolist() == [1.0, *[10.0 ** v for v in np.linspace(0.0, math.log10(1280.0), 256)[1:-1]], 1280.0]
    assert np.allclose(values, np.geomspace(1.0, 1280.0, 256), rtol=1e-15, atol=0)


def test_a_cache_never_serves_the_arrays_of_an_earlier_revision(tmp_path, monkeypatch):

    assert IRMA.revision == 1
    now = materialize("irma", SMALL["irma"], 0, tmp_path)["train"].path
    monkeypatch.setattr(IRMA, "revision", 0)
    before = materialize("irma", SMALL["irma"], 0, tmp_path)["train"].path
    assert Path(now).parent != Path(before).parent and len(list(tmp_path.iterdir())) == 2
