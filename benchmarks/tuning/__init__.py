"""Tuning's searches benchmarked (:mod:`.tuning_bench`); its records are the JSON files
beside this package."""
