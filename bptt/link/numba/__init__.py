"""The numba executor."""
