"""The scan oracle: random scan programs evaluated by a NumPy interpreter of Theano's
rules, by bptt without rewrites, and by bptt with every rewrite in PY and NUMBA mode.

`program` (the data), `strategy` (hypothesis), `interpret` (NumPy), `build` (bptt),
`check` (the comparisons), `mutate` (broken versions of the rewrite passes).
tests/scan/test_oracle.py runs it in CI; tools/scan_oracle_soak.py runs any number of
programs; tools/scan_oracle_mutations.py breaks each rewrite pass and shows the oracle
catches it, on exactly the programs CI draws (it runs `test_programs_py` with a
collector), and writes `caught`, which tests/scan/test_oracle_mutations.py replays.

Every pass of `bptt.compile.passes.pm` has the generic mutation ("corrupt": every
value it writes into a graph is off by 1e-3, integers by 1) and some a targeted one
(a bug the pass could have). "Fired on": programs of CI's 300 on which the pass edits
a graph; "caught at": the index of the program whose outputs or gradients the broken
pass makes wrong (programs already catching another mutation are tried first).

==================================  ==========================================  =====  ========
pass                                mutation                                    fired  caught
==================================  ==========================================  =====  ========
merge                               corrupt                                     300    0
constant_folding                    corrupt                                     297    2
canonicalize                        corrupt                                     300    0
scan_inline_constants               corrupt                                     54     34
scan_merge_inputs                   corrupt                                     2      208
scan_merge_inputs                   inputs keyed by type, not identity          2      208
scan_remove_unused                  corrupt                                     273    2
scan_inner                          corrupt                                     88     208
scan_pushout_last_step              corrupt                                     29     49
scan_reuse_forward                  corrupt                                     27     49
scan_pushout_non_seqs               corrupt                                     132    0
scan_pushout_invariant_nit_sots     corrupt                                     48     27
scan_pushout_invariant_nit_sots     n_steps - 1 rows                            48     64
scan_pushout_seqs                   corrupt                                     69     27
scan_pushout_seqs                   lower-rank operand aligned on the right     69     hand [1]
scan_pushout_accumulators           corrupt                                     7      160
scan_merge                          corrupt                                     39     27
scan_merge_outputs                  corrupt                                     18     84
scan_merge_outputs                  nit_sots grouped by length only             18     84
scan_step_shapes                    corrupt                                     166    2
scan_save_mem                       corrupt                                     215    2
scan_fill_sequences                 corrupt                                     11     107
scan_fill_sequences                 zeros instead of the fill value             11     107
sequence_memory                     corrupt                                     49     27
scan_chunk_accumulators             corrupt                                     69     2
scan_read_through_join              corrupt                                     16     160
scan_read_through_join              fill taken one row short (k - 1)            16     160
gemm                                corrupt                                     77     2
fuse_elemwise                       corrupt                                     288    2
reduce_of_elemwise                  corrupt                                     256    0
gemm_inplace                        corrupt                                     69     2
scan_inner_gemm                     corrupt                                     266    0
scan_nit_sot_into_seq               corrupt                                     130    2
scan_chunk_seq_products             corrupt                                     24     160
scan_seq_into_buffer                corrupt                                     45     27
inplace_elemwise                    corrupt                                     216    2
remove_dead_code                    corrupt: writes no value [2]                0      -
remove_dead_code                    live set misses the last output             0      0
==================================  ==========================================  =====  ========

[1] No program of the draw has a sequence of 0-d rows times a row operand with more
    steps than H (size-1 or equal sizes broadcast the bug away); the hand-written
    ``test_oracle.ISSUE_PUSHOUT`` catches it (`test_oracle_mutations.HAND_WRITTEN`).
[2] It drops nodes no output needs; on the oracle's graphs nothing is left dead
    (`FunctionGraph.replace` prunes), so only its targeted mutation, which acts on
    every graph, shows it is covered.
"""
