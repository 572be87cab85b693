"""``dolb bench omr T``: online manifold regularisation's cost on the two spirals
(1.5 turns, noise 0.03, 2 % of the labels revealed, all drawn from one seed), RBF
kernel, the learners fed in blocks of 8,192 rows as a cell feeds them.

For ``online_mr_buffer`` with τ = 100 and τ = 200 and for ``online_mr_rptree`` over a
stream of ``T`` examples: examples per second, the test error of the last hypothesis on
2,000 fresh spiral points, the state's size and the time per example in the first and in
the last tenth of the stream (equal when the total time is linear in T). Then the exact
``online_mr``'s time per step in the 100 steps up to t = 250, 500, …, 4,000 (never past
min(T, 4,000) examples: its round t costs O(t²)), the log-log slope of that time against
t, and the same for the buffered and clustered learners (their round costs O(τ³) and
O(n²) whatever t), with the ratios exact / buffered, measured in the same run. One BLAS
thread (the projection calls LAPACK).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import numpy as np

from dolb.bench.records import measurement, new_record, write_record
from dolb.data.sources.spirals import spiral_points
from dolb.data.splits import labelled_rows
from dolb.learners import learner_class
from dolb.losses import misclassified

BLOCK = 8192
TEST_POINTS = 2000
WINDOW = 100
"""Steps timed at each t of :data:`GROWTH_AT` (the steps t − 99, …, t)."""
GROWTH_AT = (250, 500, 1000, 2000, 4000)
"""Where the exact learner's time per step is measured; its stream stops at the last
one that fits in T."""

LEARNERS = (
    ("online_mr_buffer τ=100", "online_mr_buffer", {"buffer": 100, "keep_labelled": True}),
    ("online_mr_buffer τ=200", "online_mr_buffer", {"buffer": 200, "keep_labelled": True}),
    ("online_mr_rptree", "online_mr_rptree", {}),  # its defaults: 100 clusters, leaves of 20
)
"""What runs over the whole stream: a label, the registered learner, its own parameters.
The buffers drop unlabelled representers first (``keep_labelled``), at the same cost per
step."""


@dataclass(frozen=True)
class Setting:
    """The spirals, their label rate, and the parameters every learner is run with (the
    RBF kernel's γ, the graph's width σ, λ₁, λ₂, η₀ of η_t = η₀/√t; η₀λ₁ < 1). The
    spirals have radius at most 1 (plus the noise) and their arms lie 1/3 apart: σ =
    0.1 links a point to its own arm only."""

    turns: float = 1.5
    noise: float = 0.03
    label_rate: float = 0.02
    gamma: float = 20.0
    sigma: float = 0.1
    lam1: float = 1e-3
    lam2: float = 1e-4
    eta: float = 1.0

    def params(self) -> dict:
        """The learners' parameters (``label_rate``: the stream's)."""
        return {k: v for k, v in asdict(self).items() if k not in ("turns", "noise")}


def spirals(n: int, setting: Setting, seed: int):
    """The stream of ``n`` points, its labelled flags and the test points, each from its
    own child of ``seed`` (the test points do not depend on ``n``)."""
    stream, flags, test = np.random.SeedSequence(seed).spawn(3)
    X, y = spiral_points(n, setting.turns, setting.noise, 0.0, np.random.default_rng(stream))
    labelled = labelled_rows(n, setting.label_rate, 0, flags)
    Xt, yt = spiral_points(TEST_POINTS, setting.turns, setting.noise, 0.0, np.random.default_rng(test))
    return X, y, labelled, Xt, yt


def windows(n: int) -> list[tuple[int, int]]:
    """The timed windows (t − WINDOW, t] of :data:`GROWTH_AT` that fit in ``n`` examples."""
    return [(t - WINDOW, t) for t in GROWTH_AT if t <= n]


def feed(learner, X, y, labelled, cuts) -> dict[int, float]:
    """Learn every row in blocks of at most :data:`BLOCK`, also cut at each of ``cuts``
    (as a cell cuts its blocks at checkpoints); returns the wall time elapsed when each
    cut, and the end, was reached."""
    n = len(y)
    stops = sorted({c for c in cuts if 0 < c < n} | set(range(BLOCK, n, BLOCK)) | {n})
    reached, start, a = {0: 0.0}, time.perf_counter(), 0
    for b in stops:
        learner.learn(X[a:b], y[a:b], labelled[a:b])
        reached[b] = time.perf_counter() - start
        a = b
    return reached


def per_step(reached: dict[int, float], a: int, b: int) -> float:
    """Seconds per example between examples ``a`` and ``b``."""
    return (reached[b] - reached[a]) / (b - a)


def slope(at: list[tuple[int, int]], seconds: list[float]) -> float:
    """The least-squares slope of log(time per step) against log(t), t the windows'
    middles."""
    middle = [(a + b) / 2 for a, b in at]
    return float(np.polyfit(np.log(middle), np.log(seconds), 1)[0])


def error(learner, Xt, yt) -> float:
    """The last hypothesis's test error (:func:`~dolb.losses.misclassified`: a score
    of 0 predicts -1; NaN, from coefficients that diverged, is a mistake)."""
    return float(misclassified(learner.predict(Xt), yt).mean())


def growth_line(label: str, at, seconds) -> str:
    """One learner's time per step (µs) at each window's t, and the fitted slope."""
    cells = ", ".join(f"t={b:,} {s * 1e6:,.0f}" for (_, b), s in zip(at, seconds))
    fitted = f"; log-log slope {slope(at, seconds):.2f}" if len(at) > 1 else ""
    return f"  {label}: {cells}{fitted}"


def omr_bench(n: int, setting: Setting = Setting(), seed: int = 0) -> list[dict]:
    """Print the measurements of the module docstring for a stream of ``n`` examples;
    returns each learner's examples per second and time per step at each t (a record's
    measurements, :mod:`dolb.bench.records`), each measured once."""
    from threadpoolctl import threadpool_limits

    X, y, labelled, Xt, yt = spirals(n, setting, seed)
    params = setting.params()
    limit = min(n, GROWTH_AT[-1])
    at = windows(limit)
    print(f"two spirals: {setting.turns} turns, noise {setting.noise}, T={n:,} in blocks of {BLOCK:,}, "
          f"{labelled.sum():,} labelled ({labelled.mean():.2%}), test on {TEST_POINTS:,} fresh points, seed {seed}; "
          + ", ".join(f"{k} {v}" for k, v in params.items()) + "; one BLAS thread")
    for name, own in (("online_mr_buffer", {"buffer": 2}), ("online_mr_rptree", {}), ("online_mr", {})):
        learner_class(name)(2, **params, **own).learn(X[:8], y[:8], labelled[:8])  # compile (or load) first
    # only now: threadpoolctl limits the libraries loaded so far, and the LAPACK the
    # projection calls (SciPy's) is loaded with the compiled code
    with threadpool_limits(1):
        tenth = max(n // 10, 1)
        growth, speed = {}, {}
        for label, name, own in LEARNERS:
            learner = learner_class(name)(2, n_train=n, **params, **own)
            reached = feed(learner, X, y, labelled, [tenth, n - tenth] + [c for w in at for c in w])
            first, last = per_step(reached, 0, tenth), per_step(reached, n - tenth, n)
            speed[label] = n / reached[n]
            growth[label] = [per_step(reached, a, b) for a, b in at]
            print(f"{label}: {reached[n]:.1f} s, {speed[label]:,.0f} examples/s, test error "
                  f"{error(learner, Xt, yt):.2%}, state {learner.state_nbytes() / 1e3:,.0f} kB; per example "
                  f"{first * 1e6:,.0f} µs in the first tenth, {last * 1e6:,.0f} µs in the last "
                  f"(last / first {last / first:.2f})")
        base = LEARNERS[0][0]
        print(", ".join(f"examples/s {label} / {base}: {speed[label] / speed[base]:.2f}"
                        for label, _, _ in LEARNERS[1:]))

        exact = learner_class("online_mr")(2, n_train=limit, **params)
        reached = feed(exact, X[:limit], y[:limit], labelled[:limit], [c for w in at for c in w])
        seconds = [per_step(reached, a, b) for a, b in at]
        print(f"online_mr (exact) on the first {limit:,}: {reached[limit]:.1f} s, test error "
              f"{error(exact, Xt, yt):.2%}, state {exact.state_nbytes() / 1e6:,.1f} MB")
        found = [measurement({"learner": label, "T": n}, "examples/s", [speed[label]]) for label in speed]
        growth["online_mr (exact)"] = seconds
        found += [measurement({"learner": label, "t": b}, "µs/step", [s * 1e6])
                  for label, times in growth.items() for (_, b), s in zip(at, times)]
        if not at:
            print(f"time per step: no t of {GROWTH_AT} within T")
            return found
        print(f"time per step (µs) in the {WINDOW} steps up to t:")
        for label in ["online_mr (exact)", *speed]:
            print(growth_line(label, at, growth[label]))
        for label, _, _ in LEARNERS[:2]:
            print(f"  exact / {label}: " + ", ".join(
                f"t={b:,} {s / other:.2f}" for (_, b), s, other in zip(at, seconds, growth[label])))
    return found


def main(args) -> int:
    """``dolb bench omr [T]``: the measurements of the module docstring; with
    ``args.record`` a record of them."""
    found = omr_bench(args.T)
    if args.record:
        print(f"record: {write_record(args.record, new_record('omr', found, command=args.command_line))}")
    return 0
