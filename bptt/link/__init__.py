"""Executors: `python` (reference) and `numba`."""
