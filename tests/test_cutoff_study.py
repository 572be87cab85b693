"""A reduced cutoff-averaging study (Dekel 2008) on the real RCV1 sample, end to end on
a 2-worker LocalCluster: two problems, three splits, the Perceptron and the margin
Perceptron with the last hypothesis, averaging and cutoff averaging (the
session's ``rcv1_study``, see tests/studies.py)."""

import pandas as pd
import pytest

from dolb.results.tables import read_results
from tests.conftest import requires_shared_data

pytestmark = [pytest.mark.e2e, requires_shared_data("rcv1", "rcv1v2_mulan_dedup.npz")]

@pytest.fixture(scope="module")
def study(rcv1_study):
    out, summary = rcv1_study
    assert (summary.n_cells, summary.n_failed) == (12 + 6, 0)  # and the zoo's cells
    return out, read_results(out)


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
