"""Online manifold regularisation with a buffer of τ representers."""

from __future__ import annotations

from dolb.learners.base import Param, register
from dolb.learners.manifold.learner import MR_PARAMS, ManifoldLearner


@register
class OnlineMRBuffer(ManifoldLearner):
    """Online manifold regularisation with a buffer (Goldberg, Li & Zhu, "Online
    manifold regularization: a new learning setting and empirical study", ECML PKDD
    2008): f_t = Σ α_i K(x_i, ·) over at most τ (``buffer``) representers.

    On round t, with the n = min(t − 1, τ) representers held: predict f_t(x_t); the
    gradient step of :class:`~.exact.OnlineMR` with the graph term over the buffer
    scaled by (t − 1)/n (the edges it stands for), η_t = eta/√t or eta; x_t joins the
    buffer. Then, while it holds more than τ, kernel matching pursuit: the oldest
    representer (with ``keep_labelled``, the oldest unlabelled one while there is one;
    labels are never used) is dropped and the others re-fitted to the least-squares
    projection of f in the RKHS onto their span (K_kept β = K_kept,all α). With τ ≥ T
    it is the exact algorithm.

    Cost of round t: min(t − 1, τ) kernel evaluations, O(τ²) arithmetic for the step and
    O(τ³) for the projection (a least-squares solve); memory O(τ²) whatever the stream's
    length.

    Examples
    --------
    >>> import numpy as np
    >>> learner = OnlineMRBuffer(1, buffer=2, gamma=1.0, sigma=1.0, lam1=0.1, lam2=1.0, eta=0.5,
    ...                          schedule="constant")
    >>> X, y = np.array([[0.0], [0.5], [1.0]]), np.array([1.0, np.nan, -1.0])
    >>> learner.learn(X, y, labelled=np.array([True, False, True])).round(4)
    array([0.    , 0.3894, 0.2149])
    >>> learner.coefficients().round(4), learner.support_vectors().toarray().ravel()
    (array([-0.3291,  0.2044]), array([1. , 0.5]))
    """

    name = "online_mr_buffer"
    params = {
        **MR_PARAMS,
        "buffer": Param(100, int, low=1, doc="tau: the most representers kept (kernel matching pursuit beyond)"),
        "keep_labelled": Param(False, bool, doc="drop unlabelled representers first (their labels unused)"),
    }
    bench_params = None  # per example O(tau^3): slower than the benchmark's linear learners by far
    test_params = {"gamma": 2.0, "lam2": 0.1, "sigma": 0.5, "label_rate": 0.3, "buffer": 20, "keep_labelled": True}
