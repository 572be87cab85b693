"""Peers: other libraries' online learners registered as dolb learners, so that a study runs
them as cells on the same splits, orders, checkpoints and metrics as dolb's own and its
tables put them side by side.

* :mod:`.river_models`: river's Perceptron, logistic regression (SGD or AdaGrad),
  Passive-Aggressive classifier and linear regression;
* :mod:`.vw`: Vowpal Wabbit's in-process workspace;
* :mod:`.sklearn_models`: scikit-learn's ``partial_fit`` estimators.

river and vowpalwabbit are optional (``pip install 'dolb[peers]'``); :mod:`.peer` holds
what the wrappers share, including the one-line refusal when a library is missing.
"""

from dolb.learners.peers import river_models, sklearn_models, vw  # noqa: F401  (register learners)
