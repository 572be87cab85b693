"""Online model selection: learners that choose their own complexity as the stream goes
(:mod:`dolb.selection.oms`), with the switch test of :mod:`dolb.selection.welch`.

Importing this package registers ``oms_lasvm``; dolb's own ``dolb.learners`` entry point
(``pyproject.toml``) imports it the first time the learner registry is read, because the
learners' package sits below this one and cannot import it.
"""

from dolb.learners import register
from dolb.learners.kernel.lasvm import LASVM
from dolb.selection.oms import OnlineModelSelection, oms_learner

OMS_LASVM = register(oms_learner(LASVM))
"""``oms_lasvm``: online model selection over LASVM (RBF: ``ladder = "double"`` on
``gamma``; polynomial: ``ladder = "step"``, ``ladder_param = "degree"``)."""

__all__ = ["OMS_LASVM", "OnlineModelSelection", "oms_learner"]
