"""Quick in-process check of the regression learners against the IRMA paper's numbers.

Buschermöhle et al., "The Incremental Risk Functional" (IEEE SMC 2013): target
f(x) = x·exp(−x²), x ~ U[0, 3], y = f(x) + U[−0.05, 0.05]. Table I: mean and variance over
1000 sequences of the MSE against f (1000 equally spaced test points on [0, 3]) after 10,
80 and 150 examples, IRMA (Legendre basis, stiffness 0.1, growth 1.05) vs the batch
least-squares fit, orders 4, 6, 10. Fig. 1: cumulative squared prequential loss over 150
examples at order 6, 500 sequences, GD vs RLS vs IRMA. Then how other readings of the
stiffness schedule would change IRMA's Table I, and the time of one 150-example sequence
per learner. No Dask; run ``python scripts/irma_check.py [seed]``.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from dolb.learners import learner_class

DOMAIN = {"domain_low": 0.0, "domain_high": 3.0}
IRMA = dict(name="irma", basis="legendre", stiffness=0.1, stiffness_growth=1.05, **DOMAIN)
BATCH = dict(name="batch_ls", basis="monomial", **DOMAIN)
CHECKPOINTS = (10, 80, 150)
ORDERS = (4, 6, 10)
# Table I of the paper: mean MSE per method and order at the three checkpoints.
PAPER_MEAN = {
    "irma": {4: (3.1e-3, 3.0e-4, 2.0e-4), 6: (5.5e-3, 2.2e-4, 9.4e-5), 10: (1.2e-2, 3.1e-4, 1.2e-4)},
    "batch_ls": {4: (4.4e2, 2.0e-4, 1.6e-4), 6: (7.2e7, 1.0e-4, 5.0e-5), 10: (1.8e14, 4.0e-4, 8.4e-5)},
}


def target(x):
    return x * np.exp(-(x**2))


def sequences(n_sequences, n_examples, seed):
    """x and noisy y, each (n_sequences, n_examples)."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 3.0, (n_sequences, n_examples))
    return x, target(x) + rng.uniform(-0.05, 0.05, x.shape)


def make(order, name, **params):
    return learner_class(name)(1, order=order, **params)


def checkpoint_mse(spec, order, x, y):
    """MSE against f on the test grid after each checkpoint, shape (n_sequences, 3)."""
    grid = np.linspace(0.0, 3.0, 1000)
    mse = np.empty((x.shape[0], len(CHECKPOINTS)))
    for s in range(x.shape[0]):
        learner = make(order, **spec)
        start = 0
        for c, stop in enumerate(CHECKPOINTS):
            learner.learn(x[s, start:stop, None], y[s, start:stop])
            mse[s, c] = np.mean((learner.predict(grid[:, None]) - target(grid)) ** 2)
            start = stop
    return mse


def cumulative_loss(spec, order, x, y):
    """Σ_t (prediction_t − y_t)² over each whole sequence, shape (n_sequences,)."""
    losses = [make(order, **spec).learn(x[s, :, None], y[s]) - y[s] for s in range(x.shape[0])]
    return np.sum(np.square(losses), axis=1)


def table_one(x, y):
    print(f"Table I: MSE against f over {x.shape[0]} sequences; paper = the paper's mean")
    print(f"{'method':9} {'order':>5} {'n':>4} {'mean':>9} {'variance':>9} {'median':>9} "
          f"{'max':>9} {'paper':>9} {'mean/paper':>10}")
    for method, spec in (("irma", IRMA), ("batch_ls", BATCH)):
        for order in ORDERS:
            mse = checkpoint_mse(spec, order, x, y)
            for c, n in enumerate(CHECKPOINTS):
                m, paper = mse[:, c], PAPER_MEAN[method][order][c]
                print(f"{method:9} {order:5d} {n:4d} {m.mean():9.2e} {m.var():9.2e} "
                      f"{np.median(m):9.2e} {m.max():9.2e} {paper:9.1e} {m.mean() / paper:10.2f}")


def figure_one(x, y):
    print(f"\nFig. 1: cumulative squared prequential loss over {x.shape[1]} examples, order 6, "
          f"{x.shape[0]} sequences")
    print(f"{'learner':40} {'mean':>9} {'std':>9} {'min':>9} {'max':>9}")
    ngd = dict(name="ngd", tikhonov=0.05, **DOMAIN)
    rls = dict(name="rls", forgetting=0.9, tikhonov=0.05, **DOMAIN)
    runs = {
        "ngd (eta 0.5, tikhonov 0.05) monomial": ngd,
        "ngd (eta 0.5, tikhonov 0.05) legendre": dict(ngd, basis="legendre"),
        "rls (g 0.9, tikhonov 0.05) monomial": rls,
        "rls (g 0.9, tikhonov 0.05) legendre": dict(rls, basis="legendre"),
        "irma (0.1, 1.05) legendre": IRMA,
    }
    for label, spec in runs.items():
        loss = cumulative_loss(spec, 6, x, y)
        print(f"{label:40} {loss.mean():9.3e} {loss.std():9.3e} {loss.min():9.3e} {loss.max():9.3e}")


def stiffness_readings(x, y):
    print("\nIRMA mean MSE / paper mean at 10, 80, 150 examples under other stiffness readings")
    readings = {
        "lambda_1 = 0.1 (ours)": 0.1,
        "lambda grown before the 1st update": 0.1 * 1.05,
        "A normalised by |domain| (= 0.1 / 3)": 0.1 / 3,
    }
    for label, stiffness in readings.items():
        ratios = []
        for order in ORDERS:
            means = checkpoint_mse(dict(IRMA, stiffness=stiffness), order, x, y).mean(axis=0)
            ratios.append(" ".join(f"{m / p:5.2f}" for m, p in zip(means, PAPER_MEAN["irma"][order])))
        print(f"{label:38} " + " | ".join(f"order {o}: {r}" for o, r in zip(ORDERS, ratios)))


def timings(x, y, order=10, repeats=300):
    print(f"\nTime of one 150-example sequence at order {order} (construct + learn, median of {repeats})")
    specs = {
        "batch_ls": BATCH,
        "irma": IRMA,
        "ngd": dict(name="ngd", **DOMAIN),
        "rls": dict(name="rls", forgetting=0.9, **DOMAIN),
    }
    for label, spec in specs.items():
        times = []
        for s in range(repeats):
            begin = time.perf_counter()
            make(order, **spec).learn(x[s, :, None], y[s])
            times.append(time.perf_counter() - begin)
        print(f"{label:9} {1e6 * np.median(times):7.1f} µs")


def main(seed=2013):
    x, y = sequences(1000, 150, seed)
    table_one(x, y)
    figure_one(*sequences(500, 150, seed + 1))
    stiffness_readings(x, y)
    timings(x, y)


if __name__ == "__main__":
    main(*(int(arg) for arg in sys.argv[1:]))
