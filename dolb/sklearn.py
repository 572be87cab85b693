"""A scikit-learn estimator around the linear online classifiers of dolb.

:class:`OnlineClassifier` runs any registered binary learner (``"perceptron"``,
``"margin_perceptron"``, ``"pa"``, ``"sgd"``, ``"adagrad"``, ``"ftrl"``, ``"ogd"``,
``"dual_averaging"``) for one pass over the data in the given order and predicts with the
output hypothesis of one online-to-batch conversion (``"last"``, ``"average"``,
``"longest_survivor"``, ``"suffix"``, ``"cutoff"``).

Conventions: the two classes are sorted (``classes_``) and mapped to −1 (``classes_[0]``)
and +1 (``classes_[1]``); ``decision_function > 0`` predicts ``classes_[1]``. Invalid
learner parameters are reported when fitting, as scikit-learn requires, as ``ValueError``
(the dolb ``ConfigError`` message, chained); labels are validated by scikit-learn.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from dolb.conversions import CONVERSIONS
from dolb.errors import ConfigError
from dolb.learners import learner_class


def _two_classes(y) -> np.ndarray:
    classes = np.unique(np.asarray(y))
    k = classes.shape[0]
    if k != 2:
        raise ValueError(
            f"Only binary classification is supported by OnlineClassifier: "
            f"got {k} class{'' if k == 1 else 'es'} ({classes[:5]!r})"
        )
    return classes


class OnlineClassifier(ClassifierMixin, BaseEstimator):
    """One pass of an online linear classifier, then an online-to-batch conversion.

    Parameters
    ----------
    learner : str
        Registered binary learner (default ``"perceptron"``).
    conversion : str
        Output hypothesis used by ``predict`` / ``decision_function`` (default ``"last"``).
    n_train : int, optional
        Horizon announced to the learner (the margin Perceptron needs it). ``fit`` uses
        the number of rows when it is not set; ``partial_fit`` needs it for learners that
        require a horizon.
    **params
        The learner's parameters (e.g. ``variant="pa2", C=0.5`` for ``"pa"``).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    learner_ : dolb.learners.linear.LinearLearner
        The online learner (its state, every conversion's output via ``outputs()``).
    coef_ : ndarray of shape (1, n_features)
        Weights of the output hypothesis.
    info_ : dict
        What the conversion reports with its output (e.g. ``cutoff_k``).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.2], [-1.0, 0.1], [0.9, -0.3], [-0.8, 0.4]])
    >>> clf = OnlineClassifier("pa", conversion="average", C=0.5).fit(X, ["b", "a", "b", "a"])
    >>> clf.predict([[2.0, 0.0], [-2.0, 0.0]]).tolist()
    ['b', 'a']
    """

    def __init__(self, learner: str = "perceptron", conversion: str = "last", n_train: int | None = None,
                 **params: Any) -> None:
        self.learner = learner
        self.conversion = conversion
        self.n_train = n_train
        self._params = dict(params)

    # --- parameters (the learner's are keyword arguments, kept in ``_params``) ----------

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        out = super().get_params(deep=deep)
        out.update(self._params)
        return out

    def set_params(self, **params: Any) -> OnlineClassifier:
        """Set ``learner``, ``conversion``, ``n_train`` or any learner parameter (checked
        when fitting)."""
        nested = [k for k in params if "__" in k]
        if nested:
            raise ValueError(
                f"Invalid parameter {nested[0]!r} for OnlineClassifier: it has no sub-estimators"
            )
        own = {k: v for k, v in params.items() if k in ("learner", "conversion", "n_train")}
        super().set_params(**own)
        self._params.update({k: v for k, v in params.items() if k not in own})
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = True
        return tags

    # --- fitting -------------------------------------------------------------------------

    def _new_learner(self, n_features: int, n_train: int | None):
        if self.conversion not in CONVERSIONS:
            raise ValueError(f"unknown conversion {self.conversion!r} (known: {', '.join(CONVERSIONS)})")
        try:
            cls = learner_class(self.learner)
            if cls.task != "binary":
                raise ConfigError(
                    f"learner {self.learner!r} is a {cls.task} learner, not a binary classifier"
                )
            return cls(n_features, n_train=n_train, conversions=(self.conversion,), **self._params)
        except ConfigError as exc:
            raise ValueError(str(exc)) from exc

    def _signs(self, y) -> np.ndarray:
        return np.where(y == self.classes_[1], 1.0, -1.0)

    def fit(self, X, y) -> OnlineClassifier:
        """Fresh learner, one pass over (X, y) in the given order."""
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64, reset=True)
        check_classification_targets(y)
        self.classes_ = _two_classes(y)
        self.learner_ = self._new_learner(X.shape[1], self.n_train or X.shape[0])
        self.learner_.learn(X, self._signs(y))
        self._refresh()
        return self

    def partial_fit(self, X, y, classes=None) -> OnlineClassifier:
        """Learn one more block; ``classes`` (exactly two) is required on the first call."""
        first = not hasattr(self, "learner_")
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64, reset=first)
        check_classification_targets(y)
        if first:
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit")
            self.classes_ = _two_classes(classes)
            self.learner_ = self._new_learner(X.shape[1], self.n_train)
        elif classes is not None and not np.array_equal(np.unique(np.asarray(classes)), self.classes_):
            raise ValueError(f"classes {classes!r} differ from the first call's {self.classes_!r}")
        unknown = ~np.isin(y, self.classes_)
        if unknown.any():
            raise ValueError(f"y holds a label {y[unknown][0]!r} not in classes {self.classes_!r}")
        self.learner_.learn(X, self._signs(y))
        self._refresh()
        return self

    def _refresh(self) -> None:
        # The output hypothesis is built on first use (the log-based conversions cost
        # O(log) each time), so that a stream of partial_fit calls stays O(block) each.
        self._cache = {}

    def _hypothesis(self):
        if "output" not in self._cache:
            self._cache["output"] = self.learner_.outputs()[self.conversion]
        return self._cache["output"]

    @property
    def coef_(self) -> np.ndarray:
        check_is_fitted(self, "learner_")
        return self._hypothesis().predict.weights[None, :].copy()

    @property
    def info_(self) -> dict:
        check_is_fitted(self, "learner_")
        return dict(self._hypothesis().info)

    # --- predicting ----------------------------------------------------------------------

    def decision_function(self, X) -> np.ndarray:
        """Decision values of the conversion's output hypothesis (> 0: ``classes_[1]``)."""
        check_is_fitted(self, "learner_")
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        return self._hypothesis().predict(X)

    def predict(self, X) -> np.ndarray:
        check_is_fitted(self, "learner_")
        return self.classes_[(self.decision_function(X) > 0).astype(int)]
