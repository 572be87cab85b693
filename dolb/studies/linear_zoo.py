"""The linear zoo: every linear online learner of dolb with every online-to-batch
conversion, ranked across nine binary problems, from the result folder of
``dolb run pipelines/linear_zoo.toml --out runs/linear_zoo``. Its figures are the run's
two ranking reports (critical-difference diagrams of test error and test hinge loss),
and the tuning report of the run of ``pipelines/linear_zoo_tuned.toml`` (the zoo at
tuned settings).
"""

from __future__ import annotations

from dolb.studies import STUDIES
from dolb.studies.study import Figure, Study, report_figure

STUDY = Study(
    name="linear_zoo",
    title="The linear zoo",
    paper="No single paper: the standard linear online learners and online-to-batch conversions side by side.",
    pipelines=("linear_zoo", "linear_zoo_tuned"),
    figures=(Figure("linear_zoo_ranking.png", report_figure("01-zoo-test_error-ranking.png"), ("zoo",),
                    "Mean rank of test error at the end of training across the 9 problems"),
             Figure("linear_zoo_test_hinge.png", report_figure("02-zoo-test_hinge-ranking.png"), ("zoo",),
                    "Mean rank of test hinge loss at the end of training across the 9 problems"),
             Figure("tuning_linear_zoo.png", report_figure("02-zoo-test_error-tuning.png"), ("zoo",),
                    "Validation loss against budget", tuned=True)),
)
STUDIES.add(STUDY.name, STUDY)
