"""Rewrites of Scan nodes, one module per family.

Each module exposes graph rewriters; `bptt/compile/passes.py` orders them.
A rewriter that needs the whole pipeline (to rewrite a scan's inner graph)
receives it as an argument: `bptt.scan` must not import `bptt.compile`.
"""
