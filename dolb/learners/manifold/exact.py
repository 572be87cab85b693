"""Online manifold regularisation, exact: every example is kept as a representer."""

from __future__ import annotations

from dolb.learners.base import register
from dolb.learners.manifold.learner import MR_PARAMS, ManifoldLearner


@register
class OnlineMR(ManifoldLearner):
    """Online manifold regularisation (Goldberg, Li & Zhu, "Online manifold
    regularization: a new learning setting and empirical study", ECML PKDD 2008), exact:
    f_t = Σ_{i<t} α_i K(x_i, ·) over every example seen, labelled or not.

    On round t: predict f_t(x_t); then the gradient step on the instantaneous risk
    J_t(f) = (T/l)·δ(y_t)·max(0, 1 − y_t f(x_t)) + (λ₁/2)‖f‖²_K
    + λ₂ Σ_{i<t} (f(x_i) − f(x_t))² w_it, w_it = exp(−‖x_i − x_t‖²/2σ²) (σ, ``sigma``,
    is the graph's width, apart from the kernel's γ), with η_t = eta/√t or eta:
    α_i ← (1 − η_tλ₁) α_i − 2η_tλ₂ (f_t(x_i) − f_t(x_t)) w_it for i < t, and x_t joins
    with α_t = 2η_tλ₂ Σ_{i<t} (f_t(x_i) − f_t(x_t)) w_it + η_t (T/l) y_t when y_t is
    given and y_t f_t(x_t) < 1 (δ(y_t) = 0 for an unlabelled x_t, whose target is never
    read). T/l is 1/``label_rate``: set it to the stream's label rate. η_1 λ₁ = eta·lam1
    must be below 1.

    Cost of round t: t − 1 kernel evaluations (and as many edge weights, not counted);
    f_t at the t − 1 stored points from the Gram matrix, O(t²) arithmetic; memory O(t²)
    for the Gram matrix. The whole stream is O(T³) time and O(T²) memory: for short
    streams, and as the reference of :class:`~.buffer.OnlineMRBuffer`.

    Examples
    --------
    >>> import numpy as np
    >>> learner = OnlineMR(1, gamma=1.0, sigma=1.0, lam1=0.1, lam2=1.0, eta=0.5, schedule="constant")
    >>> X, y = np.array([[0.0], [0.5], [1.0]]), np.array([1.0, np.nan, -1.0])
    >>> learner.learn(X, y, labelled=np.array([True, False, True])).round(4)
    array([0.    , 0.3894, 0.2149])
    >>> learner.coefficients().round(4)
    array([ 0.2138, -0.0632, -0.1994])
    """

    name = "online_mr"
    params = MR_PARAMS
    bench_params = None  # O(T^3): a benchmark of 10^5 examples would not end
    test_params = {"gamma": 2.0, "lam2": 0.1, "sigma": 0.5, "label_rate": 0.3}
