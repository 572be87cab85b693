"""Losses and metrics, checkpoints, and running one cell."""
