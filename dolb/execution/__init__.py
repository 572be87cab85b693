"""Dask client and cluster set-up; the sweep (submit, store, retry, resume, progress)."""
