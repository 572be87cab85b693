"""A dolb learner in a package of its own (see docs/guide/own-learner.md)."""
