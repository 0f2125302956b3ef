"""Numba lowerings, one module per tensor module. Importing this registers them all."""
import importlib

for _family in ("elemwise", "math", "shape", "basic", "subtensor", "random", "nnet", "scan",
                "blas", "elemwise_reduce", "product_rows", "extra_ops", "search", "patches"):
    try:
        importlib.import_module(f"{__name__}.{_family}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{_family}":
            raise
