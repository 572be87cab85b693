"""The shipped studies cut down to test size: pipeline texts for the session-scoped
study fixtures of ``conftest.py``, which the study tests and the notebook test share
(each study runs once in a test session)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"
RCV1 = SHARED_DATA / "rcv1" / "rcv1v2_mulan_dedup.npz"

RCV1_STUDIES = """
[pipeline]
name = "rcv1-reduced"
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
checkpoints = [100, 1000, 5000]
metrics = ["test_error", "online_loss"]
conversions = ["last", "average", "cutoff"]
learners = [{{ learner = "perceptron" }}]

[experiments.fig3]
dataset = ["ccat_ecat", "gcat_mcat"]
task = "binary"
split = {{ scheme = "holdout", count = 3, test_fraction = 0.2, order = "random" }}
checkpoints = [100, 1000, 5000]
metrics = ["test_hinge"]
conversions = ["last", "average", "cutoff"]
learners = [{{ learner = "margin_perceptron", params = {{ radius = 1.0001 }} }}]

[experiments.zoo]
dataset = ["ccat_ecat", "gcat_mcat"]
task = "binary"
split = {{ scheme = "holdout", count = 1, test_fraction = 0.2, order = "random" }}
checkpoints = [300, 3000]
metrics = ["test_error", "test_hinge"]
conversions = ["last", "average", "cutoff"]
learners = [{{ learner = "pa", params = {{ variant = ["pa", "pa1"] }} }}, {{ learner = "adagrad" }}]

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

[[reports]]
kind = "ranking"
experiment = "zoo"
metric = "test_error"
"""
"""Two reduced studies on the real RCV1 sample, in one run (one cluster start): the
cutoff-averaging study (Dekel 2008; ``fig2``, ``fig3``: two problems, three splits, the
Perceptron and the margin Perceptron with the last hypothesis, averaging and cutoff
averaging, at the sizes the notebook's tables read) and the linear zoo (``zoo``: three
more learner configurations on the same problems, one split)."""


def rcv1_pipeline() -> str:
    """The reduced RCV1 studies' pipeline text."""
    return RCV1_STUDIES.format(npz=RCV1)


def oms_pipeline() -> str:
    """The OMS study's pipeline with its data, grid, orders and sizes cut down: 4,000
    training digits, 2,000 test digits, a 3 gamma x 2 degree grid of fixed LASVM, one
    order, and OMS-LASVM with both ladders."""
    text = (ROOT / "pipelines" / "oms_mnist.toml").read_text()
    text = text.replace('"../../shared/data/mnist", positive = [3]',
                        f'"{SHARED_DATA / "mnist"}", positive = [3], n_train = 4000, n_test = 2000')
    text = text.replace("[0.0025, 0.005, 0.01, 0.02, 0.03, 0.04, 0.08]", "[0.005, 0.01, 0.03]")
    text = text.replace("degree = [1, 2, 3, 4, 5]", "degree = [1, 3]")
    text = text.replace("count = 5", "count = 1")
    text = text.replace("[100, 200, 500, 1000, 2000, 4000, 8000, 15000, 30000, 60000]", "[100, 300, 1000, 4000]")
    text = text.replace("at = [1000, 4000, 60000]", "at = [1000, 4000]")
    return text.replace("cache_mb = 200.0", "cache_mb = 20.0")


OMR_LARGEST = 500
"""Training examples of the longest stream of the online manifold regularisation study
at test size."""


def omr_pipeline() -> str:
    """The online manifold regularisation study at test size: streams of at most 500
    examples (checkpoints beyond cut, reports at 500, the drift streams 300, 400 and 500
    long), two splits each."""
    text = (ROOT / "pipelines" / "online_mr.toml").read_text()
    text = text.replace("n_rows = 100000", "n_rows = 3000")
    for long, short in (("1000", "300"), ("2000", "400"), ("4000", "500")):
        text = text.replace(f"n_rows = {long}, n_test = 2000, rotation", f"n_rows = {short}, n_test = 500, rotation")
        text = re.sub(rf"(\[experiments\.drift{long}\][^\[]*)checkpoints = \[{long}\]", rf"\1checkpoints = [{short}]",
                      text)
    text = re.sub(r"count = \d+", "count = 2", text)

    def cut(match: re.Match) -> str:
        sizes = [int(size) for size in match.group(1).split(",")]
        return f"checkpoints = {[size for size in sizes if size <= OMR_LARGEST] or [OMR_LARGEST]}"

    text = re.sub(r"at = \[[\d, ]+\]", f"at = [{OMR_LARGEST}]", text)
    return re.sub(r"checkpoints = \[([\d, ]+)\]", cut, text).replace("../../shared", str(SHARED_DATA.parent))
