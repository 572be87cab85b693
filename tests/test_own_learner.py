"""The guide page "Your own learner" (docs/guide/own-learner.md) and its package
(tests/plugin/, installed by the test command): the page shows the package's files as
they are, the learner's predictions are those of a NumPy transcription of the AROW
update written here, and the page's pipeline runs it beside dolb's learners."""

import re
from pathlib import Path

import numpy as np
from mylearner.arow import DiagonalArow
from sklearn.datasets import load_svmlight_file

from dolb.evaluation.run_cell import run_cell
from dolb.execution.sweep import plan_groups
from dolb.experiment.pipeline import load_pipeline
from dolb.learners import LEARNERS
from tests.conftest import requires_shared_data
from tests.studies import SHARED_DATA

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "guide" / "own-learner.md"
PACKAGE = ROOT / "tests" / "plugin"


def test_the_guide_shows_the_package_s_files_as_they_are():
    text = GUIDE.read_text(encoding="utf-8")
    shown = dict(re.findall(r"^\*\*`([^`]+)`\*\*\n\n```\w*\n(.*?)^```$", text, flags=re.S | re.M))
    assert sorted(shown) == ["mylearner/arow.py", "pipelines/arow.toml", "pyproject.toml", "tests/test_arow.py"]
    for name, code in shown.items():
        assert code == (PACKAGE / name).read_text(encoding="utf-8"), f"{name} is not shown as it is"
    assert LEARNERS["arow"] is DiagonalArow  # the package, installed, registers it through its entry point


def arow_transcribed(X: np.ndarray, y: np.ndarray, r: float) -> np.ndarray:
    """Crammer, Kulesza & Dredze (2009), Fig. 1 with a diagonal Σ: for each example, the
    margin m_t = μ·x_t; if y_t m_t < 1, β_t = 1 / (x_tᵀ Σ x_t + r), α_t = (1 − y_t m_t) β_t,
    μ ← μ + α_t y_t Σ x_t, Σ ← Σ − β_t (Σ x_t)(Σ x_t)ᵀ kept to its diagonal."""
    mu, sigma = np.zeros(X.shape[1]), np.ones(X.shape[1])
    margins = np.empty(X.shape[0])
    for t, x in enumerate(X):
        margins[t] = mu @ x
        if y[t] * margins[t] < 1.0:
            beta = 1.0 / (x @ (sigma * x) + r)
            alpha = (1.0 - y[t] * margins[t]) * beta
            mu = mu + alpha * y[t] * sigma * x
            sigma = sigma - beta * (sigma * x) ** 2
    return margins


@requires_shared_data("libsvm", "a9a")
def test_diagonal_arow_is_the_papers_update_on_a9a():
    X, y = load_svmlight_file(str(SHARED_DATA / "libsvm" / "a9a"), n_features=123)
    X, y = X[:3000], y[:3000]
    X.data /= np.sqrt(np.diff(X.indptr)).repeat(np.diff(X.indptr))  # rows of norm 1
    learner = DiagonalArow(123, r=0.5)
    predictions = np.concatenate([learner.learn(X[a:a + 700], y[a:a + 700]) for a in range(0, 3000, 700)])
    expected = arow_transcribed(X.toarray(), y, 0.5)
    np.testing.assert_allclose(predictions, expected, rtol=1e-9, atol=1e-12)
    assert learner.updates == int(np.sum(y * expected < 1.0)) > 1000
    assert np.mean(np.sign(predictions[1000:]) != y[1000:]) < 0.2  # it learns: a9a's error is about 15 %


def test_the_guide_s_pipeline_runs_arow_beside_dolb_s_learners():
    pipeline = load_pipeline(PACKAGE / "pipelines" / "arow.toml")
    groups = plan_groups(pipeline)
    assert sorted({group.cell(0).spec.learner for group in groups}) == ["arow", "pa", "perceptron"]
    arow = next(group.cell(0) for group in groups if group.cell(0).spec.learner == "arow")
    result = run_cell(arow)
    online, tested = result["metrics"]["online"], result["metrics"]["last"]
    assert online["updates"][-1] > 1000 and len(online["updates"]) == len(result["checkpoints"])
    assert 0.1 < tested["test_error"][-1] < 0.4
