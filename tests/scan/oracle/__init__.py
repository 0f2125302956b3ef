"""The scan oracle: random scan programs evaluated by a NumPy interpreter of Theano's
rules, by bptt without rewrites, and by bptt with every rewrite in PY and NUMBA mode.

`program` (the data), `strategy` (hypothesis), `interpret` (NumPy), `build` (bptt),
`check` (the comparisons). tests/scan/test_oracle.py runs it in CI;
tools/scan_oracle_soak.py runs any number of programs; tools/scan_oracle_mutations.py
breaks each rewrite pass and shows the oracle catches it.
"""
