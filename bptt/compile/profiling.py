"""Call statistics of compiled functions (``function(..., profile=True)``)."""
from __future__ import annotations


class FunctionProfile:
    def __init__(self, name):
        self.name = name
        self.calls = 0
        self.call_time = 0.0
        self.rewrite_time = 0.0
        self.link_time = 0.0

    def record(self, seconds):
        self.calls += 1
        self.call_time += seconds

    def summary(self):
        per = self.call_time / self.calls if self.calls else 0.0
        return (f"function {self.name or '<unnamed>'}: {self.calls} calls, "
                f"{self.call_time:.6f} s total ({per * 1e6:.1f} us/call); "
                f"rewrite {self.rewrite_time:.3f} s, link {self.link_time:.3f} s")

    def __str__(self):
        return self.summary()
