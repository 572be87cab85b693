"""A reduced cutoff-averaging study (Dekel 2008) on the real RCV1 sample, end to end on
a 2-worker LocalCluster: two problems, three splits, the Perceptron and the margin
Perceptron with the last hypothesis, averaging and cutoff averaging."""

import pandas as pd
import pytest

from dolb.execution.sweep import run_sweep
from dolb.results.tables import read_results
from tests.conftest import SHARED_DATA, requires_shared_data

pytestmark = [pytest.mark.e2e, requires_shared_data("rcv1", "rcv1v2_mulan_dedup.npz")]

REDUCED = """
[pipeline]
name = "cutoff-reduced"
seed = 2008

[datasets.ccat_ecat]
importer = "rcv1"
params = {{ path = "{npz}", pair = ["CCAT", "ECAT"] }}

[datasets.gcat_mcat]
importer = "rcv1"
params = {{ path = "{npz}", pair = ["GCAT", "MCAT"] }}

[experiments.fig2]
dataset = ["ccat_ecat", "gcat_mcat"]
task = "binary"
split = {{ scheme = "holdout", count = 3, test_fraction = 0.2, order = "random" }}
checkpoints = [50, 500, 5000]
metrics = ["test_error", "online_loss"]
conversions = ["last", "average", "cutoff"]
learners = [{{ learner = "perceptron" }}]

[experiments.fig3]
dataset = ["ccat_ecat", "gcat_mcat"]
task = "binary"
split = {{ scheme = "holdout", count = 3, test_fraction = 0.2, order = "random" }}
checkpoints = [50, 500, 5000]
metrics = ["test_hinge"]
conversions = ["last", "average", "cutoff"]
learners = [{{ learner = "margin_perceptron", params = {{ radius = 1.0001 }} }}]

[[reports]]
kind = "curve"
experiment = "fig2"
metric = "test_error"

[[reports]]
kind = "paired"
experiment = "fig3"
metric = "test_hinge"
at = [5000]
compare = "conversion"
baseline = "last"
"""


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cutoff")
    pipeline = folder / "reduced.toml"
    pipeline.write_text(REDUCED.format(npz=SHARED_DATA / "rcv1" / "rcv1v2_mulan_dedup.npz"))
    summary = run_sweep(pipeline, folder / "out", workers=2, progress=False)
    assert (summary.n_cells, summary.n_failed) == (12, 0)
    return folder / "out", read_results(folder / "out")


def test_perceptron_averages_beat_the_last_hypothesis(study):
    _, frame = study
    error = frame[(frame.experiment == "fig2") & (frame.metric == "test_error") & (frame.n_train == 5000)]
    mean = error.groupby(["dataset", "conversion"])["value"].mean()
    for dataset in ("ccat_ecat", "gcat_mcat"):
        assert mean[dataset, "average"] < mean[dataset, "last"]
        assert mean[dataset, "cutoff"] <= mean[dataset, "last"]
        assert 0.0 < mean[dataset, "cutoff"] < 0.06  # RCV1 pairs are nearly separable
    k = frame[(frame.metric == "cutoff_k") & (frame.experiment == "fig2")]
    bound = frame[(frame.metric == "cutoff_bound") & (frame.experiment == "fig2")]
    assert len(k) == len(bound) == 2 * 3 * 3 and (k.value >= 0).all() and (bound.value > 0).all()


def test_margin_perceptron_last_hypothesis_is_best_on_hinge_loss(study):
    out, frame = study
    paired = pd.read_csv(out / "report" / "02-fig3-test_hinge-paired.csv")
    average = paired[paired.conversion == "average"]
    assert len(average) == 2 and (average["mean difference"] > 0).all()  # averaging is worse
    assert (out / "report" / "01-fig2-test_error-curve.png").stat().st_size > 20_000
