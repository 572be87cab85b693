"""The optional dependencies (:mod:`dolb.extras`): ``import dolb`` needs none of them, and
a feature asked for without its package is one line naming the extra, exit status 2,
nothing written. A missing package is simulated by ``sys.modules[name] = None``, which
makes both finding and importing it fail."""

import subprocess
import sys
import textwrap

import pytest

import dolb
from dolb.cli import main
from dolb.errors import MissingExtra
from tests.conftest import SMALL_IRMA
from tests.test_bad_input import KERNEL_PIPELINE

OPTIONAL = ("scikit_posthocs", "statsmodels", "seaborn", "osqp", "bokeh")


def test_dolb_and_its_command_line_import_without_any_optional_package():
    blocked = "; ".join(f"sys.modules[{name!r}] = None" for name in OPTIONAL)
    code = (f"import sys; {blocked}; import dolb, dolb.cli, dolb.execution.sweep, dolb.results.kinds; "
            "from dolb.learners import registered_learners; print(len(registered_learners()))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) >= 20  # every learner is listed, batch_mr too


@pytest.fixture
def without(monkeypatch):
    """``without(name)``: the package ``name`` cannot be found or imported."""
    return lambda name: monkeypatch.setitem(sys.modules, name, None)


def run_is_one_line(argv, out, capsys) -> str:
    """The error line of ``dolb run`` with ``argv``, checked to be alone, exit 2, ``out`` unwritten."""
    assert main(["-q", "run", *map(str, argv), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert not out.exists()
    return err


def test_a_ranking_report_without_scikit_posthocs(without, tmp_path, capsys):
    without("scikit_posthocs")
    pipeline = tmp_path / "p.toml"
    pipeline.write_text(textwrap.dedent(SMALL_IRMA) + textwrap.dedent("""
        [[reports]]
        kind = "ranking"
        experiment = "table"
        metric = "test_mse"
        posthoc = "holm"
    """))
    err = run_is_one_line([pipeline], tmp_path / "out", capsys)
    assert err == (f"dolb: error: {pipeline}: reports[2].kind: the ranking report's holm test needs scikit-posthocs, "
                   "which is not installed: pip install 'dolb[stats]'\n")


def test_batch_mr_without_osqp(without, tmp_path, capsys):
    without("osqp")
    (tmp_path / "data.svm").write_text("1 1:0.5\n-1 2:1\n1 1:1\n-1 2:0.5\n")
    pipeline = tmp_path / "k.toml"
    pipeline.write_text(KERNEL_PIPELINE.format(learner="batch_mr", params=""))
    err = run_is_one_line([pipeline], tmp_path / "out", capsys)
    assert err == (f"dolb: error: {pipeline}: experiments.e.learners[0]: learner 'batch_mr' needs osqp, "
                   "which is not installed: pip install 'dolb[batch-mr]'\n")


@pytest.mark.parametrize("option", [["--dashboard"], ["--performance-report", "{tmp}/report.html"]])
def test_the_dashboard_and_the_performance_report_without_bokeh(option, without, tmp_path, capsys):
    without("bokeh")
    pipeline = tmp_path / "small.toml"
    pipeline.write_text(textwrap.dedent(SMALL_IRMA))
    option = [o.format(tmp=tmp_path) for o in option]
    err = run_is_one_line([pipeline, *option], tmp_path / "out", capsys)
    assert err == ("dolb: error: Dask's dashboard or performance report (--dashboard, --performance-report) "
                   "needs bokeh, which is not installed: pip install 'dolb[dashboard]'\n")
    assert not (tmp_path / "report.html").exists()
    with pytest.raises(MissingExtra, match=r"pip install 'dolb\[dashboard\]'"):
        dolb.run(pipeline, tmp_path / "out", dashboard=True)
