"""Seeded synthetic generators: IRMA data, determinism, parameter checks, the disk cache."""

import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from dolb.data import GENERATORS, generate, materialize
from dolb.data.sources.irma import irma_target
from dolb.errors import ConfigError

SMALL = {"n_sequences": 20, "length": 50, "n_test": 101}


def test_irma_default_shapes_and_sequence_layout():
    parts = generate("irma", {}, seed=0)
    assert sorted(parts) == ["test", "train"]
    X, y, about = parts["train"]
    assert X.shape == (150_000, 1) and y.shape == (150_000,)
    assert X.dtype == y.dtype == np.float64
    assert about["params"] == {"n_sequences": 1000, "length": 150, "noise": 0.05, "n_test": 1000}
    assert parts["test"][0].shape == (1000, 1) and parts["test"][1].shape == (1000,)


def test_same_seed_gives_bit_identical_arrays():
    first = generate("irma", SMALL, seed=7)
    again = generate("irma", dict(SMALL), seed=np.random.SeedSequence(7))
    for part in ("train", "test"):
        for a, b in zip(first[part][:2], again[part][:2]):
            assert a.tobytes() == b.tobytes()
    other = generate("irma", SMALL, seed=8)["train"]
    assert not np.array_equal(first["train"][0], other[0])


def test_randomness_never_comes_from_global_state():
    np.random.seed(1)
    first = generate("irma", SMALL, seed=3)["train"][1]
    np.random.seed(2)
    np.random.random(10)
    assert generate("irma", SMALL, seed=3)["train"][1].tobytes() == first.tobytes()


def test_train_statistics_and_noise_bounds():
    X, y, _ = generate("irma", {"n_sequences": 200, "length": 100, "noise": 0.2}, seed=1)["train"]
    x = X[:, 0]
    assert x.min() >= 0.0 and x.max() < 3.0
    assert abs(x.mean() - 1.5) < 0.02 and abs(x.var() - 0.75) < 0.02  # uniform on [0, 3]
    residual = y - irma_target(x)
    assert np.abs(residual).max() <= 0.2 and np.abs(residual).max() > 0.199
    assert abs(residual.mean()) < 0.003 and abs(residual.var() - 0.2**2 / 3) < 0.001
    assert np.corrcoef(x, residual)[0, 1] < 0.02  # noise independent of x


def test_test_part_is_the_noise_free_grid():
    X, y, about = generate("irma", SMALL, seed=0)["test"]
    np.testing.assert_array_equal(X[:, 0], np.linspace(0.0, 3.0, 101))
    np.testing.assert_array_equal(y, [x * math.exp(-x * x) for x in X[:, 0]])  # the C library's exp
    assert about["part"] == "test"
    assert irma_target(np.array([1.0]))[0] == pytest.approx(np.exp(-1.0))


def test_zero_noise_gives_the_target_exactly():
    X, y, _ = generate("irma", {**SMALL, "noise": 0}, seed=0)["train"]
    np.testing.assert_array_equal(y, irma_target(X[:, 0]))


def test_smaller_study_is_a_prefix_of_a_larger_one():
    small = generate("irma", {"n_sequences": 3, "length": 10}, seed=5)["train"]
    large = generate("irma", {"n_sequences": 6, "length": 10}, seed=5)["train"]
    np.testing.assert_array_equal(large[0][:30], small[0])
    np.testing.assert_array_equal(large[1][:30], small[1])


def test_provenance_records_generator_params_and_seed():
    seed = np.random.SeedSequence(9, spawn_key=(1, 2))
    about = generate("irma", {"noise": 0.1, "n_sequences": 2}, seed=seed)["train"][2]
    assert about["generator"] == "irma" and about["part"] == "train"
    assert "Buschermöhle" in about["reference"]
    assert about["params"]["noise"] == 0.1 and about["params"]["length"] == 150
    assert about["seed"] == {"entropy": 9, "spawn_key": [1, 2], "pool_size": 4}


@pytest.mark.parametrize(
    "params, message",
    [
        ({"sequences": 3}, "unknown parameter 'sequences'"),
        ({"noise": -0.1}, "'noise': -0.1 is below the minimum"),
        ({"noise": float("nan")}, "'noise': expected a finite number"),
        ({"length": 2.5}, "'length': expected a whole number"),
        ({"n_test": 0}, "'n_test': 0 is below the minimum"),
        ({"n_sequences": True}, "'n_sequences': expected a number"),
        ({"n_sequences": "10"}, "'n_sequences': expected a number"),
    ],
)
def test_bad_params_name_generator_and_parameter(params, message):
    with pytest.raises(ConfigError, match="generator 'irma'") as info:
        generate("irma", params, seed=0)
    assert message in str(info.value)


def test_bad_generator_and_seed():
    with pytest.raises(ConfigError, match="unknown generator 'nope' \\(known: irma, rcv1_resample, sparse_text, spirals\\)"):
        generate("nope", {}, seed=0)
    with pytest.raises(ConfigError, match="unknown generator 'sparse-text' \\(did you mean 'sparse_text'\\?"):
        materialize("sparse-text", {}, 0, "unused")
    for seed in (-1, 1.5, "3", None, True):
        with pytest.raises(ConfigError, match="seed"):
            generate("irma", SMALL, seed=seed)


def test_integer_params_are_written_as_whole_numbers():
    """One rule with the pipeline's own integers: ``2.0`` and ``1e12`` are floats, not counts."""
    X, _, about = generate("irma", {"n_sequences": 2, "length": 3}, seed=0)["train"]
    assert X.shape == (6, 1) and about["params"]["n_sequences"] == 2
    assert isinstance(about["params"]["n_sequences"], int)
    for written in (2.0, 1e12):
        with pytest.raises(ConfigError, match=rf"^generator 'irma', parameter 'n_sequences': expected a whole number, "
                                              rf"got {written!r}$"):
            generate("irma", {"n_sequences": written, "length": 3}, seed=0)


# --------------------------------------------------------------------------- materialize


def test_materialize_writes_the_generated_parts(tmp_path):
    sets = materialize("irma", SMALL, 4, tmp_path)
    assert sorted(sets) == ["test", "train"]
    parts = generate("irma", SMALL, 4)
    for name, ds in sets.items():
        X, y = ds.read(slice(None))
        np.testing.assert_array_equal(X, parts[name][0])
        np.testing.assert_array_equal(y, parts[name][1])
        assert ds.provenance == parts[name][2]
    (run,) = tmp_path.iterdir()
    assert run.name.startswith("irma-") and sorted(p.name for p in run.iterdir()) == ["test", "train"]


def test_materialize_reuses_what_it_wrote(tmp_path, monkeypatch):
    calls = []
    generator = GENERATORS["irma"]
    make = generator.make

    def counted(params, rng):
        calls.append(params)
        return make(params, rng)

    monkeypatch.setattr(generator, "make", counted)
    first = materialize("irma", SMALL, 4, tmp_path)
    files = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")}
    same_run = {**SMALL, "noise": 0.05}  # the default made explicit
    second = materialize("irma", same_run, np.random.SeedSequence(4), tmp_path)
    assert len(calls) == 1
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")} == files
    assert {k: v.fingerprint for k, v in second.items()} == {k: v.fingerprint for k, v in first.items()}
    materialize("irma", SMALL, 5, tmp_path)
    materialize("irma", {**SMALL, "noise": 0.1}, 4, tmp_path)
    assert len(calls) == 3 and len(list(tmp_path.iterdir())) == 3


def test_concurrent_materialize_of_the_same_run(tmp_path):
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: materialize("irma", SMALL, 11, tmp_path), range(4)))
    prints = {tuple(sorted((k, v.fingerprint) for k, v in sets.items())) for sets in results}
    assert len(prints) == 1
    assert [p.name.startswith("irma-") for p in tmp_path.iterdir()] == [True]  # no temporary left


def test_materialize_checks_params_before_writing(tmp_path):
    with pytest.raises(ConfigError, match="noise"):
        materialize("irma", {"noise": -1}, 0, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_registry_entries_declare_params_and_parts(monkeypatch):
    assert GENERATORS.names() == ["irma", "rcv1_resample", "sparse_text", "spirals"]
    irma = GENERATORS["irma"]
    assert irma.parts == ("train", "test") and irma.params["noise"].doc
    monkeypatch.setattr(irma, "make", lambda params, rng: {"validation": (np.zeros((1, 1)), np.zeros(1))})
    with pytest.raises(TypeError, match="generator 'irma' made part 'validation', not among"):
        generate("irma", SMALL, seed=0)


def test_spirals_lie_on_their_arms_and_rotate_as_the_stream_goes():
    """Without noise every point is on its class's arm, turned by rotation·t/n for
    training row t and by the whole rotation for the test part (the distribution at T)."""
    params = {"n_rows": 500, "n_test": 200, "turns": 1.5, "noise": 0.0, "rotation": np.pi / 2}
    parts = generate("spirals", params, seed=4)
    again = generate("spirals", params, seed=4)
    assert all(np.array_equal(parts[p][0], again[p][0]) for p in parts)

    def offset(X, y, turn):
        radius = np.hypot(X[:, 0], X[:, 1])
        theta = np.arctan2(X[:, 1], X[:, 0]) - 2 * np.pi * 1.5 * radius - np.where(y < 0, np.pi, 0.0) - turn
        return np.angle(np.exp(1j * theta))  # wrapped to (-pi, pi]: 0 on the arm

    X, y, _ = parts["train"]
    assert np.abs(offset(X, y, np.pi / 2 * np.arange(500) / 500)).max() < 1e-9
    X_test, y_test, _ = parts["test"]
    assert np.abs(offset(X_test, y_test, np.pi / 2)).max() < 1e-9
    assert 0.4 < (y > 0).mean() < 0.6
