"""The programs of CI's oracle draw that catch each broken rewrite pass.

Written by ``tools/scan_oracle_mutations.py --write tests/scan/oracle/caught.py``
(do not edit by hand): for each pass of `bptt.compile.passes.pm` and each of its
mutations (`mutate.mutations`), the first program of `test_programs_py`'s draw,
among those on which the pass fires, whose outputs or gradients the broken pass
makes wrong. tests/scan/test_oracle_mutations.py replays them.
"""
from .program import E, NonSeq, Out, Program, Seq

#: (pass, mutation, index in test_programs_py's draw of the program catching it,
#: programs of the draw on which the pass fired)
CATCHES = [
    ('merge', 'corrupt', 0, 300),
    ('constant_folding', 'corrupt', 2, 283),
    ('canonicalize', 'corrupt', 0, 299),
    ('scan_inline_constants', 'corrupt', 10, 51),
    ('scan_merge_inputs', 'corrupt', 202, 3),
    ('scan_merge_inputs', 'targeted', 202, 3),
    ('scan_remove_unused', 'corrupt', 2, 258),
    ('scan_inner', 'corrupt', 8, 70),
    ('scan_pushout_last_step', 'corrupt', 8, 14),
    ('scan_reuse_forward', 'corrupt', 23, 5),
    ('scan_pushout_non_seqs', 'corrupt', 0, 144),
    ('scan_pushout_invariant_nit_sots', 'corrupt', 6, 36),
    ('scan_pushout_invariant_nit_sots', 'targeted', 6, 36),
    ('scan_pushout_rows', 'corrupt', 78, 26),
    ('scan_pushout_rows', 'targeted', 78, 26),
    ('scan_state_rows', 'corrupt', 118, 1),
    ('scan_state_rows', 'targeted', 118, 1),
    ('scan_pushout_seqs', 'corrupt', 6, 78),
    ('scan_pushout_seqs', 'targeted', 36, 78),
    ('scan_pushout_accumulators', 'corrupt', 59, 12),
    ('scan_merge', 'corrupt', 4, 18),
    ('scan_merge_outputs', 'corrupt', 60, 20),
    ('scan_merge_outputs', 'targeted', 89, 20),
    ('scan_step_shapes', 'corrupt', 2, 110),
    ('scan_save_mem', 'corrupt', 2, 201),
    ('scan_fill_sequences', 'corrupt', 4, 10),
    ('scan_fill_sequences', 'targeted', 64, 10),
    ('sequence_memory', 'corrupt', 29, 45),
    ('scan_chunk_accumulators', 'corrupt', 2, 72),
    ('scan_read_through_join', 'corrupt', 93, 1),
    ('scan_read_through_join', 'targeted', 93, 1),
    ('gemm', 'corrupt', 2, 98),
    ('fuse_elemwise', 'corrupt', 2, 276),
    ('reduce_of_elemwise', 'corrupt', 0, 258),
    ('gemm_inplace', 'corrupt', 2, 58),
    ('scan_inner_gemm', 'corrupt', 0, 230),
    ('scan_nit_sot_into_seq', 'corrupt', 2, 116),
    ('scan_chunk_seq_products', 'corrupt', 118, 18),
    ('scan_seq_into_buffer', 'corrupt', 6, 60),
    ('scan_sum_layout', 'corrupt', 121, 3),
    ('inplace_elemwise', 'corrupt', 2, 187),
    ('inplace_inc_subtensor', 'corrupt', 2, 243),
    ('remove_dead_code', 'targeted', 0, 0),
]

#: index in test_programs_py's draw -> the program
PROGRAMS = {
    0: Program(
        seqs=(Seq(shape=('K', 'H'), taps=(0,)),),
        outs=(
            Out(
                kind='sit_sot',
                taps=(-1,),
                shape=('K', 'H'),
                expr=E(
                    'tanh',
                    (
                        E(
                            'add',
                            (
                                E(
                                    'add',
                                    (
                                        E(
                                            'dot',
                                            (
                                                E('leaf', (), 's0@0', ('K', 'H')),
                                                E('leaf', (), 'n1', ('H', 'H')),
                                            ),
                                            None,
                                            ('K', 'H'),
                                        ),
                                        E(
                                            'dot',
                                            (
                                                E('leaf', (), 'o0@-1', ('K', 'H')),
                                                E('leaf', (), 'n0', ('H', 'H')),
                                            ),
                                            None,
                                            ('K', 'H'),
                                        ),
                                    ),
                                    None,
                                    ('K', 'H'),
                                ),
                                E('leaf', (), 'n2', ('H',)),
                            ),
                            None,
                            ('K', 'H'),
                        ),
                    ),
                    None,
                    ('K', 'H'),
                ),
                init='const',
            ),
        ),
        non_seqs=(NonSeq(shape=('H', 'H')), NonSeq(shape=('H', 'H')), NonSeq(shape=('H',))),
        n_steps=('const', 0),
        steps=0,
        until=(E('sum', (E('leaf', (), 'n2', ('H',)),), None, ()), -0.5),
        shared=(
            (),
            E(
                'add',
                (E('scale', (E('leaf', (), 'sh', ()),), 0.5, ()), E('leaf', (), 'sh', ())),
                None,
                (),
            ),
        ),
        wrt=(0,),
        twin=E('sum', (E('leaf', (), 'n2', ('H',)),), None, ()),
        sizes=(1, 1),
    ),
    2: Program(
        seqs=(
            Seq(shape=('K', 'H'), taps=(0,)),
            Seq(shape=('H', 'K'), taps=(2, -3)),
            Seq(shape=('K', 'K'), taps=(3,), extra=1),
        ),
        outs=(
            Out(
                kind='sit_sot',
                taps=(-1,),
                shape=('K', 'H'),
                expr=E(
                    'tanh',
                    (
                        E(
                            'add',
                            (
                                E(
                                    'dot',
                                    (
                                        E('leaf', (), 's0@0', ('K', 'H')),
                                        E('leaf', (), 'n1', ('H', 'H')),
                                    ),
                                    None,
                                    ('K', 'H'),
                                ),
                                E(
                                    'dot',
                                    (
                                        E('leaf', (), 'o0@-1', ('K', 'H')),
                                        E('leaf', (), 'n0', ('H', 'H')),
                                    ),
                                    None,
                                    ('K', 'H'),
                                ),
                            ),
                            None,
                            ('K', 'H'),
                        ),
                    ),
                    None,
                    ('K', 'H'),
                ),
                use='cost',
            ),
            Out(
                kind='nit_sot',
                taps=(),
                shape=('K',),
                expr=E('sin', (E('leaf', (), 'n3', ('K',)),), None, ('K',)),
                use='none',
            ),
        ),
        non_seqs=(
            NonSeq(shape=('H', 'H')),
            NonSeq(shape=('H', 'H')),
            NonSeq(shape=('H',)),
            NonSeq(shape=('K',)),
        ),
        steps=2,
        until=(
            E('cast32', (E('sum', (E('leaf', (), 's2@3', ('K', 'K')),), None, ()),), None, ()),
            0.0,
        ),
        cost='cube',
        wrt=(0, 7, 4, 5, 1, 6, 2, 3),
        seed=6408,
    ),
    4: Program(
        seqs=(
            Seq(shape=('K', 'H'), taps=(-1, 1, 3), extra=2),
            Seq(shape=('H',), taps=(2, 1, -1)),
            Seq(shape=('K', 'H'), taps=(3, -2, 2)),
        ),
        outs=(
            Out(
                kind='sit_sot',
                taps=(-1,),
                shape=('H',),
                expr=E(
                    'tanh',
                    (
                        E(
                            'add',
                            (
                                E(
                                    'sum',
                                    (
                                        E(
                                            'transpose',
                                            (E('leaf', (), 's2@3', ('K', 'H')),),
                                            None,
                                            ('H', 'K'),
                                        ),
                                    ),
                                    1,
                                    ('H',),
                                ),
                                E('leaf', (), 'o0@-1', ('H',)),
                            ),
                            None,
                            ('H',),
                        ),
                    ),
                    None,
                    ('H',),
                ),
            ),
            Out(
                kind='nit_sot',
                taps=(),
                shape=('K',),
                expr=E('leaf', (), 'o2@-1', ('K',)),
                use='cost',
            ),
            Out(
                kind='sit_sot',
                taps=(-1,),
                shape=('K',),
                expr=E(
                    'tanh',
                    (
                        E(
                            'add',
                            (
                                E(
                                    'mul',
                                    (
                                        E('leaf', (), 'o2@-1', ('K',)),
                                        E('leaf', (), 'o2@-1', ('K',)),
                                    ),
                                    None,
                                    ('K',),
                                ),
                                E('leaf', (), 'o2@-1', ('K',)),
                            ),
                            None,
                            ('K',),
                        ),
                    ),
                    None,
                    ('K',),
                ),
                use='none',
            ),
        ),
        steps=0,
        go_backwards=True,
        twin=E(
            'maximum',
            (
                E('leaf', (), 's1@2', ('H',)),
                E('sum', (E('leaf', (), 's1@1', ('H',)),), None, ()),
            ),
            None,
            ('H',),
        ),
        sizes=(1, 2),
        seed=745653,
    ),
    6: Program(
        seqs=(
            Seq(shape=('K', 'H'), taps=(0,), extra=1),
            Seq(shape=('K', 'K'), taps=(1,), extra=1),
            Seq(shape=('K', 'K'), taps=(1, 0, 3)),
        ),
        outs=(
            Out(
                kind='sit_sot',
                taps=(-1,),
                shape=('K', 'H'),
                expr=E(
                    'tanh',
                    (
                        E(
                            'add',
                            (
                                E(
                                    'add',
                                    (
                                        E(
                                            'dot',
                                            (
                                                E('leaf', (), 's0@0', ('K', 'H')),
                                                E('leaf', (), 'n1', ('H', 'H')),
                                            ),
                                            None,
                                            ('K', 'H'),
                                        ),
                                        E(
                                            'dot',
                                            (
                                                E('leaf', (), 'o0@-1', ('K', 'H')),
                                                E('leaf', (), 'n0', ('H', 'H')),
                                            ),
                                            None,
                                            ('K', 'H'),
                                        ),
                                    ),
                                    None,
                                    ('K', 'H'),
                                ),
                                E('leaf', (), 'n2', ('H',)),
                            ),
                            None,
                            ('K', 'H'),
                        ),
                    ),
                    None,
                    ('K', 'H'),
                ),
                use='cost',
            ),
        ),
        non_seqs=(
            NonSeq(shape=('H', 'H')),
            NonSeq(shape=('H', 'H')),
            NonSeq(shape=('H',)),
            NonSeq(shape=('H', 'K'), passed=False, source='const'),
            NonSeq(shape=('K', 'H')),
            NonSeq(shape=('K',), passed=False),
        ),
        steps=1,
        truncate=2,
        cost='half_sq',
        twin=E('leaf', (), 'n0', ('H', 'H')),
        sizes=(3, 1),
        seed=51149,
    ),
    8: Program(
        seqs=(Seq(shape=('H',), taps=(-2, 0, 2), extra=2), Seq(shape=('H', 'K'), taps=(1, 3, -2))),
        outs=(
            Out(
                kind='nit_sot',
                taps=(),
                shape=('K',),
                expr=E(
                    'splice',
                    (
                        E('sum', (E('leaf', (), 's1@-2', ('H', 'K')),), 0, ('K',)),
                        E('sum', (E('leaf', (), 's1@-2', ('H', 'K')),), 0, ('K',)),
                    ),
                    None,
                    ('K',),
                ),
            ),
            Out(
                kind='mit_sot',
                taps=(-2, -3),
                shape=('H',),
                expr=E(
                    'tanh',
                    (
                        E(
                            'add',
                            (E('leaf', (), 'o1@-2', ('H',)), E('leaf', (), 'o1@-2', ('H',))),
                            None,
                            ('H',),
                        ),
                    ),
                    None,
                    ('H',),
                ),
                use='cost',
                init='const',
            ),
            Out(
                kind='nit_sot',
                taps=(),
                shape=('K',),
                expr=E('sum', (E('leaf', (), 's1@1', ('H', 'K')),), 0, ('K',)),
                use='last',
            ),
        ),
        sizes=(2, 2),
        seed=250,
    ),
    10: Program(
        seqs=(
            Seq(shape=('H', 'H'), taps=(-2, -1), extra=2),
            Seq(shape=(), taps=(-2, 2, -3), extra=2),
            Seq(shape=('K', 'H'), taps=(2, -2), extra=2),
        ),
        outs=(
            Out(
                kind='nit_sot',
                taps=(),
                shape=('H',),
                expr=E(
                    'sum',
                    (
                        E(
                            'dot',
                            (
                                E('leaf', (), 's0@-2', ('H', 'H')),
                                E('leaf', (), 's0@-1', ('H', 'H')),
                            ),
                            None,
                            ('H', 'H'),
                        ),
                    ),
                    1,
                    ('H',),
                ),
                use='none',
            ),
            Out(
                kind='mit_sot',
                taps=(-3,),
                shape=('K',),
                expr=E(
                    'tanh',
                    (
                        E(
                            'add',
                            (E('leaf', (), 'o1@-3', ('K',)), E('leaf', (), 'o1@-3', ('K',))),
                            None,
                            ('K',),
                        ),
                    ),
                    None,
                    ('K',),
                ),
            ),
            Out(
                kind='mit_sot',
                taps=(-2, -3),
                shape=('K', 'H'),
                expr=E(
                    'tanh',
                    (E('cast32', (E('leaf', (), 'o2@-2', ('K', 'H')),), None, ('K', 'H')),),
                    None,
                    ('K', 'H'),
                ),
                use='none',
            ),
        ),
        non_seqs=(
            NonSeq(shape=('K', 'K'), source='const'),
            NonSeq(shape=('K',), passed=False),
            NonSeq(shape=('H',), source='const'),
        ),
        go_backwards=True,
        cost='half_sq',
        sizes=(3, 1),
        seed=5479089,
    ),
    23: Program(
        seqs=(
            Seq(shape=('H',), taps=(-3,), extra=2),
            Seq(shape=('K', 'K'), taps=(3,)),
            Seq(shape=('H', 'K'), taps=(-3,), extra=2),
        ),
        outs=(
            Out(
                kind='nit_sot',
                taps=(),
                shape=('K',),
                expr=E(
                    'maximum',
                    (
                        E(
                            'dot',
                            (
                                E('leaf', (), 'n0', ('K', 'K')),
                                E('sum', (E('leaf', (), 's2@-3', ('H', 'K')),), 0, ('K',)),
                            ),
                            None,
                            ('K',),
                        ),
                        E('sum', (E('leaf', (), 's2@-3', ('H', 'K')),), 0, ('K',)),
                    ),
                    None,
                    ('K',),
                ),
            ),
            Out(
                kind='nit_sot',
                taps=(),
                shape=(),
                expr=E('sum', (E('leaf', (), 'o2@-1', ('H', 'H')),), None, ()),
            ),
            Out(
                kind='sit_sot',
                taps=(-1,),
                shape=('H', 'H'),
                expr=E(
                    'tanh',
                    (
                        E(
                            'add',
                            (
                                E('leaf', (), 'o2@-1', ('H', 'H')),
                                E('leaf', (), 'o2@-1', ('H', 'H')),
                            ),
                            None,
                            ('H', 'H'),
                        ),
                    ),
                    None,
                    ('H', 'H'),
                ),
                use='last',
            ),
        ),
        non_seqs=(NonSeq(shape=('K', 'K'), passed=False),),
        sizes=(1, 1),
        seed=16094181,
    ),
    29: Program(
        seqs=(Seq(shape=('K', 'H'), taps=(0,)), Seq(shape=('K',), taps=(-1,))),
        outs=(
            Out(
                kind='sit_sot',
                taps=(-1,),
                shape=('K', 'H'),
                expr=E(
                    'tanh',
                    (
                        E(
                            'add',
                            (
                                E(
                                    'add',
                                    (
                                        E(
                                            'add',
                                            (
                                                E(
                                                    'dot',
                                                    (
                                                        E('leaf', (), 's0@0', ('K', 'H')),
                                                        E('leaf', (), 'n1', ('H', 'H')),
                                                    ),
                                                    None,
                                                    ('K', 'H'),
                                                ),
                                                E(
                                                    'dot',
                                                    (
                                                        E('leaf', (), 'o0@-1', ('K', 'H')),
                                                        E('leaf', (), 'n0', ('H', 'H')),
                                                    ),
                                                    None,
                                                    ('K', 'H'),
                                                ),
                                            ),
                                            None,
                                            ('K', 'H'),
                                        ),
                                        E('leaf', (), 'n2', ('H',)),
                                    ),
                                    None,
                                    ('K', 'H'),
                                ),
                                E(
                                    'incsub',
                                    (
                                        E(
                                            'add',
                                            (
                                                E(
                                                    'splice',
                                                    (
                                                        E('leaf', (), 'o2@-1', ('K', 'H')),
                                                        E('leaf', (), 'o2@-2', ('K', 'H')),
                                                    ),
                                                    None,
                                                    ('K', 'H'),
                                                ),
                                                E(
                                                    'cast32',
                                                    (E('leaf', (), 'n2', ('H',)),),
                                                    None,
                                                    ('H',),
                                                ),
                                            ),
                                            None,
                                            ('K', 'H'),
                                        ),
                                        E(
                                            'incsub',
                                            (
                                                E('leaf', (), 'n2', ('H',)),
                                                E('leaf', (), 'n3', ()),
                                            ),
                                            -1,
                                            ('H',),
                                        ),
                                    ),
                                    -1,
                                    ('K', 'H'),
                                ),
                            ),
                            None,
                            ('K', 'H'),
                        ),
                    ),
                    None,
                    ('K', 'H'),
                ),
                use='cost',
            ),
            Out(
                kind='mit_sot',
                taps=(-2, -3),
                shape=('H', 'H'),
                expr=E('tanh', (E('leaf', (), 'o1@-3', ('H', 'H')),), None, ('H', 'H')),
            ),
            Out(
                kind='mit_sot',
                taps=(-1, -2),
                shape=('K', 'H'),
                expr=E(
                    'tanh',
                    (
                        E(
                            'add',
                            (
                                E(
                                    'maximum',
                                    (
                                        E('leaf', (), 'o0@-1', ('K', 'H')),
                                        E('leaf', (), 'o0@-1', ('K', 'H')),
                                    ),
                                    None,
                                    ('K', 'H'),
                                ),
                                E('leaf', (), 'o2@-2', ('K', 'H')),
                            ),
                            None,
                            ('K', 'H'),
                        ),
                    ),
                    None,
                    ('K', 'H'),
                ),
            ),
        ),
        non_seqs=(
            NonSeq(shape=('H', 'H')),
            NonSeq(shape=('H', 'H')),
            NonSeq(shape=('H',)),
            NonSeq(shape=(), passed=False),
            NonSeq(shape=('H',), passed=False),
        ),
        n_steps=('const', 0),
        steps=2,
        truncate=1,
        sizes=(3, 3),
        seed=12622,
    ),
    36: Program(
        seqs=(Seq(shape=('H',), taps=(2,), extra=1),),
        outs=(
            Out(
                kind='mit_sot',
                taps=(-1, -3),
                shape=(),
                expr=E(
                    'tanh',
                    (
                        E(
                            'add',
                            (E('leaf', (), 'o0@-3', ()), E('leaf', (), 'o0@-3', ())),
                            None,
                            (),
                        ),
                    ),
                    None,
                    (),
                ),
                use='none',
            ),
            Out(
                kind='nit_sot',
                taps=(),
                shape=(),
                expr=E(
                    'max',
                    (
                        E(
                            'add',
                            (
                                E(
                                    'dot',
                                    (
                                        E('leaf', (), 'n1', ('K', 'H')),
                                        E('leaf', (), 's0@2', ('H',)),
                                    ),
                                    None,
                                    ('K',),
                                ),
                                E(
                                    'transpose',
                                    (E('leaf', (), 'n1', ('K', 'H')),),
                                    None,
                                    ('H', 'K'),
                                ),
                            ),
                            None,
                            ('H', 'K'),
                        ),
                    ),
                    None,
                    (),
                ),
            ),
            Out(
                kind='sit_sot',
                taps=(-1,),
                shape=(),
                expr=E(
                    'tanh',
                    (
                        E(
                            'add',
                            (
                                E(
                                    'dot',
                                    (
                                        E('sum', (E('leaf', (), 'n0', ('K', 'K')),), 1, ('K',)),
                                        E('sum', (E('leaf', (), 'n1', ('K', 'H')),), 1, ('K',)),
                                    ),
                                    None,
                                    (),
                                ),
                                E('leaf', (), 'o2@-1', ()),
                            ),
                            None,
                            (),
                        ),
                    ),
                    None,
                    (),
                ),
            ),
        ),
        non_seqs=(NonSeq(shape=('K', 'K')), NonSeq(shape=('K', 'H'), passed=False)),
        n_steps=('sym', -2),
        steps=4,
        go_backwards=True,
        until=(E('leaf', (), 'o0@-1', ()), 0.5),
        cost='cube',
        sizes=(2, 1),
        seed=1946,
    ),
    59: Program(
        seqs=(
            Seq(shape=('K', 'H'), taps=(0,)),
            Seq(shape=('K',), taps=(3,), extra=1),
            Seq(shape=('H',), taps=(-2, 1, 2), extra=2),
        ),
        outs=(
            Out(
                kind='sit_sot',
                taps=(-1,),
                shape=('K', 'H'),
                expr=E(
                    'tanh',
                    (
                        E(
                            'add',
                            (
                                E(
                                    'add',
                                    (
                                        E(
                                            'dot',
                                            (
                                                E('leaf', (), 's0@0', ('K', 'H')),
                                                E('leaf', (), 'n1', ('H', 'H')),
                                            ),
                                            None,
                                            ('K', 'H'),
                                        ),
                                        E(
                                            'dot',
                                            (
                                                E('leaf', (), 'o0@-1', ('K', 'H')),
                                                E('leaf', (), 'n0', ('H', 'H')),
                                            ),
                                            None,
                                            ('K', 'H'),
                                        ),
                                    ),
                                    None,
                                    ('K', 'H'),
                                ),
                                E('leaf', (), 'n2', ('H',)),
                            ),
                            None,
                            ('K', 'H'),
                        ),
                    ),
                    None,
                    ('K', 'H'),
                ),
                use='cost',
            ),
            Out(
                kind='mit_sot',
                taps=(-3,),
                shape=('H', 'K'),
                expr=E(
                    'tanh',
                    (
                        E(
                            'add',
                            (
                                E(
                                    'sigmoid',
                                    (
                                        E(
                                            'splice',
                                            (
                                                E('leaf', (), 'o1@-3', ('H', 'K')),
                                                E(
                                                    'dot',
                                                    (
                                                        E('leaf', (), 'n0', ('H', 'H')),
                                                        E('leaf', (), 'o1@-3', ('H', 'K')),
                                                    ),
                                                    None,
                                                    ('H', 'K'),
                                                ),
                                            ),
                                            None,
                                            ('H', 'K'),
                                        ),
                                    ),
                                    None,
                                    ('H', 'K'),
                                ),
                                E('leaf', (), 'o1@-3', ('H', 'K')),
                            ),
                            None,
                            ('H', 'K'),
                        ),
                    ),
                    None,
                    ('H', 'K'),
                ),
            ),
            Out(
                kind='mit_sot',
                taps=(-2,),
                shape=('H', 'K'),
                expr=E(
                    'tanh',
                    (
                        E(
                            'add',
                            (
                                E(
                                    'dot',
                                    (
                                        E('leaf', (), 'n0', ('H', 'H')),
                                        E('leaf', (), 'o1@-3', ('H', 'K')),
                                    ),
                                    None,
                                    ('H', 'K'),
                                ),
                                E('leaf', (), 'o2@-2', ('H', 'K')),
                            ),
                            None,
                            ('H', 'K'),
                        ),
                    ),
                    None,
                    ('H', 'K'),
                ),
                use='cost',
            ),
        ),
        non_seqs=(NonSeq(shape=('H', 'H')), NonSeq(shape=('H', 'H')), NonSeq(shape=('H',))),
        n_steps=('sym', 0),
        cost='cube',
        sizes=(1, 1),
        seed=4125,
    ),
    60: Program(
        seqs=(
            Seq(shape=('K', 'H'), taps=(0,)),
            Seq(shape=('K',), taps=(3,), extra=1),
            Seq(shape=('H',), taps=(-2, 1, 2), extra=2),
        ),
        outs=(
            Out(
                kind='sit_sot',
                taps=(-1,),
                shape=('K', 'H'),
                expr=E(
                    'tanh',
                    (
                        E(
                            'add',
                            (
                                E(
                                    'add',
                                    (
                                        E(
                                            'dot',
                                            (
                                                E('leaf', (), 's0@0', ('K', 'H')),
                                                E('leaf', (), 'n1', ('H', 'H')),
                                            ),
                                            None,
                                            ('K', 'H'),
                                        ),
                                        E(
                                            'dot',
                                            (
                                                E('leaf', (), 'o0@-1', ('K', 'H')),
                                                E('leaf', (), 'n0', ('H', 'H')),
                                            ),
                                            None,
                                            ('K', 'H'),
                                        ),
                                    ),
                                    None,
                                    ('K', 'H'),
                                ),
                                E('leaf', (), 'n2', ('H',)),
                            ),
                            None,
                            ('K', 'H'),
                        ),
                    ),
                    None,
                    ('K', 'H'),
                ),
                use='cost',
                init='const',
            ),
            Out(
                kind='mit_sot',
                taps=(-3,),
                shape=('H', 'K'),
                expr=E('tanh', (E('leaf', (), 'o1@-3', ('H', 'K')),), None, ('H', 'K')),
            ),
            Out(
                kind='nit_sot',
                taps=(),
                shape=(),
                expr=E('sum', (E('leaf', (), 'n0', ('H', 'H')),), None, ()),
            ),
            Out(
                kind='nit_sot',
                taps=(),
                shape=(),
                expr=E('sum', (E('leaf', (), 'n0', ('H', 'H')),), None, ()),
            ),
        ),
        non_seqs=(NonSeq(shape=('H', 'H')), NonSeq(shape=('H', 'H')), NonSeq(shape=('H',))),
        steps=1,
        truncate=2,
        until=(E('tanh', (E('sum', (E('leaf', (), 'n0', ('H', 'H')),), None, ()),), None, ()), 0.5),
        wrt=(3,),
        sizes=(1, 1),
        seed=3,
    ),
    64: Program(
        seqs=(Seq(shape=('H',), taps=(1, 0), extra=2),),
        outs=(
            Out(
                kind='nit_sot',
                taps=(),
                shape=('K', 'K'),
                expr=E('transpose', (E('leaf', (), 'n2', ('K', 'K')),), None, ('K', 'K')),
                use='cost',
            ),
        ),
        non_seqs=(
            NonSeq(shape=(), passed=False, source='const'),
            NonSeq(shape=('H',), passed=False),
            NonSeq(shape=('K', 'K')),
        ),
        n_steps=('sym', -1),
        steps=0,
        go_backwards=True,
        truncate=1,
        cost='half_sq',
        sizes=(1, 1),
        seed=792456608,
    ),
    78: Program(
        seqs=(Seq(shape=(), taps=(3, -1)), Seq(shape=(), taps=(2,))),
        outs=(Out(kind='nit_sot', taps=(), shape=(), expr=E('leaf', (), 's0@-1', ()), use='cost'),),
        non_seqs=(NonSeq(shape=(), passed=False), NonSeq(shape=())),
        twin=E(
            'maximum',
            (
                E('leaf', (), 'n1', ()),
                E('add', (E('leaf', (), 's0@3', ()), E('leaf', (), 's0@3', ())), None, ()),
            ),
            None,
            (),
        ),
        sizes=(3, 3),
        seed=262899,
    ),
    89: Program(
        seqs=(Seq(shape=('K', 'H'), taps=(0,)), Seq(shape=('H', 'K'), taps=(-1, -3), extra=2)),
        outs=(
            Out(
                kind='sit_sot',
                taps=(-1,),
                shape=('K', 'H'),
                expr=E(
                    'tanh',
                    (
                        E(
                            'add',
                            (
                                E(
                                    'add',
                                    (
                                        E(
                                            'dot',
                                            (
                                                E('leaf', (), 's0@0', ('K', 'H')),
                                                E('leaf', (), 'n1', ('H', 'H')),
                                            ),
                                            None,
                                            ('K', 'H'),
                                        ),
                                        E(
                                            'dot',
                                            (
                                                E('leaf', (), 'o0@-1', ('K', 'H')),
                                                E('leaf', (), 'n0', ('H', 'H')),
                                            ),
                                            None,
                                            ('K', 'H'),
                                        ),
                                    ),
                                    None,
                                    ('K', 'H'),
                                ),
                                E('leaf', (), 'n2', ('H',)),
                            ),
                            None,
                            ('K', 'H'),
                        ),
                    ),
                    None,
                    ('K', 'H'),
                ),
                use='cost',
            ),
            Out(
                kind='sit_sot',
                taps=(-1,),
                shape=('K',),
                expr=E(
                    'tanh',
                    (
                        E(
                            'add',
                            (
                                E(
                                    'incsub',
                                    (
                                        E('leaf', (), 'o1@-1', ('K',)),
                                        E(
                                            'dot',
                                            (
                                                E('leaf', (), 'o1@-1', ('K',)),
                                                E('leaf', (), 'o1@-1', ('K',)),
                                            ),
                                            None,
                                            (),
                                        ),
                                    ),
                                    0,
                                    ('K',),
                                ),
                                E('leaf', (), 'o1@-1', ('K',)),
                            ),
                            None,
                            ('K',),
                        ),
                    ),
                    None,
                    ('K',),
                ),
                use='none',
            ),
            Out(
                kind='sit_sot',
                taps=(-1,),
                shape=('H', 'H'),
                expr=E(
                    'tanh',
                    (
                        E(
                            'add',
                            (
                                E('leaf', (), 'n0', ('H', 'H')),
                                E('leaf', (), 'o2@-1', ('H', 'H')),
                            ),
                            None,
                            ('H', 'H'),
                        ),
                    ),
                    None,
                    ('H', 'H'),
                ),
            ),
        ),
        non_seqs=(
            NonSeq(shape=('H', 'H')),
            NonSeq(shape=('H', 'H')),
            NonSeq(shape=('H',)),
            NonSeq(shape=('H', 'H')),
            NonSeq(shape=('H', 'K'), passed=False),
            NonSeq(shape=('K', 'H')),
        ),
        n_steps=('sym', -2),
        steps=1,
        cost='half_sq',
        twin=E('leaf', (), 'n5', ('K', 'H')),
        sizes=(2, 2),
        seed=607,
    ),
    93: Program(
        seqs=(Seq(shape=('K', 'H'), taps=(0,)), Seq(shape=('H', 'K'), taps=(-1, -3), extra=2)),
        outs=(
            Out(
                kind='sit_sot',
                taps=(-1,),
                shape=('K', 'H'),
                expr=E(
                    'tanh',
                    (
                        E(
                            'add',
                            (
                                E(
                                    'add',
                                    (
                                        E(
                                            'dot',
                                            (
                                                E('leaf', (), 's0@0', ('K', 'H')),
                                                E('leaf', (), 'n1', ('H', 'H')),
                                            ),
                                            None,
                                            ('K', 'H'),
                                        ),
                                        E(
                                            'dot',
                                            (
                                                E('leaf', (), 'o0@-1', ('K', 'H')),
                                                E('leaf', (), 'n0', ('H', 'H')),
                                            ),
                                            None,
                                            ('K', 'H'),
                                        ),
                                    ),
                                    None,
                                    ('K', 'H'),
                                ),
                                E('leaf', (), 'n2', ('H',)),
                            ),
                            None,
                            ('K', 'H'),
                        ),
                    ),
                    None,
                    ('K', 'H'),
                ),
                use='cost',
            ),
            Out(
                kind='sit_sot',
                taps=(-1,),
                shape=('K',),
                expr=E(
                    'tanh',
                    (
                        E(
                            'add',
                            (
                                E(
                                    'incsub',
                                    (
                                        E('leaf', (), 'o1@-1', ('K',)),
                                        E(
                                            'dot',
                                            (
                                                E('leaf', (), 'o1@-1', ('K',)),
                                                E('leaf', (), 'o1@-1', ('K',)),
                                            ),
                                            None,
                                            (),
                                        ),
                                    ),
                                    0,
                                    ('K',),
                                ),
                                E('leaf', (), 'o1@-1', ('K',)),
                            ),
                            None,
                            ('K',),
                        ),
                    ),
                    None,
                    ('K',),
                ),
            ),
            Out(
                kind='sit_sot',
                taps=(-1,),
                shape=('H', 'H'),
                expr=E(
                    'tanh',
                    (
                        E(
                            'add',
                            (
                                E('leaf', (), 'n0', ('H', 'H')),
                                E('leaf', (), 'o2@-1', ('H', 'H')),
                            ),
                            None,
                            ('H', 'H'),
                        ),
                    ),
                    None,
                    ('H', 'H'),
                ),
            ),
        ),
        non_seqs=(
            NonSeq(shape=('H', 'H')),
            NonSeq(shape=('H', 'H')),
            NonSeq(shape=('H',)),
            NonSeq(shape=('H', 'K')),
            NonSeq(shape=('H', 'K'), passed=False),
            NonSeq(shape=('K', 'H')),
        ),
        n_steps=('sym', -2),
        steps=1,
        cost='half_sq',
        twin=E('leaf', (), 'n5', ('K', 'H')),
        sizes=(2, 2),
        seed=607,
    ),
    118: Program(
        seqs=(
            Seq(shape=('K', 'H'), taps=(0,)),
            Seq(shape=(), taps=(1, -1, -3)),
            Seq(shape=(), taps=(3,), extra=2),
        ),
        outs=(
            Out(
                kind='sit_sot',
                taps=(-1,),
                shape=('K', 'H'),
                expr=E(
                    'tanh',
                    (
                        E(
                            'add',
                            (
                                E(
                                    'add',
                                    (
                                        E(
                                            'dot',
                                            (
                                                E('leaf', (), 's0@0', ('K', 'H')),
                                                E('leaf', (), 'n1', ('H', 'H')),
                                            ),
                                            None,
                                            ('K', 'H'),
                                        ),
                                        E(
                                            'dot',
                                            (
                                                E('leaf', (), 'o0@-1', ('K', 'H')),
                                                E('leaf', (), 'n0', ('H', 'H')),
                                            ),
                                            None,
                                            ('K', 'H'),
                                        ),
                                    ),
                                    None,
                                    ('K', 'H'),
                                ),
                                E('leaf', (), 'n2', ('H',)),
                            ),
                            None,
                            ('K', 'H'),
                        ),
                    ),
                    None,
                    ('K', 'H'),
                ),
                use='last',
            ),
            Out(
                kind='sit_sot',
                taps=(-1,),
                shape=(),
                expr=E(
                    'tanh',
                    (
                        E(
                            'add',
                            (
                                E(
                                    'sigmoid',
                                    (
                                        E(
                                            'dot',
                                            (
                                                E(
                                                    'sum',
                                                    (E('leaf', (), 's0@0', ('K', 'H')),),
                                                    1,
                                                    ('K',),
                                                ),
                                                E(
                                                    'sum',
                                                    (E('leaf', (), 'o2@-1', ('K', 'H')),),
                                                    1,
                                                    ('K',),
                                                ),
                                            ),
                                            None,
                                            (),
                                        ),
                                    ),
                                    None,
                                    (),
                                ),
                                E('leaf', (), 'o1@-1', ()),
                            ),
                            None,
                            (),
                        ),
                    ),
                    None,
                    (),
                ),
                use='cost',
            ),
            Out(
                kind='sit_sot',
                taps=(-1,),
                shape=('K', 'H'),
                expr=E('tanh', (E('leaf', (), 's0@0', ('K', 'H')),), None, ('K', 'H')),
                use='last',
                init='const',
            ),
        ),
        non_seqs=(
            NonSeq(shape=('H', 'H')),
            NonSeq(shape=('H', 'H')),
            NonSeq(shape=('H',)),
            NonSeq(shape=('H',)),
        ),
        steps=2,
        cost='cube',
        wrt=(1,),
        sizes=(3, 3),
        seed=11303,
    ),
    121: Program(
        seqs=(Seq(shape=('K',), taps=(-2,), extra=1), Seq(shape=('H', 'K'), taps=(-3,), extra=1)),
        outs=(
            Out(
                kind='nit_sot',
                taps=(),
                shape=('H', 'H'),
                expr=E(
                    'dot',
                    (
                        E(
                            'transpose',
                            (E('tanh', (E('leaf', (), 'n1', ('H', 'H')),), None, ('H', 'H')),),
                            None,
                            ('H', 'H'),
                        ),
                        E(
                            'setsub',
                            (
                                E(
                                    'dot',
                                    (
                                        E('leaf', (), 's1@-3', ('H', 'K')),
                                        E(
                                            'transpose',
                                            (E('leaf', (), 'n0', ('H', 'K')),),
                                            None,
                                            ('K', 'H'),
                                        ),
                                    ),
                                    None,
                                    ('H', 'H'),
                                ),
                                E(
                                    'index',
                                    (
                                        E(
                                            'transpose',
                                            (E('leaf', (), 'n0', ('H', 'K')),),
                                            None,
                                            ('K', 'H'),
                                        ),
                                    ),
                                    -1,
                                    ('H',),
                                ),
                            ),
                            -1,
                            ('H', 'H'),
                        ),
                    ),
                    None,
                    ('H', 'H'),
                ),
            ),
        ),
        non_seqs=(
            NonSeq(shape=('H', 'K'), passed=False),
            NonSeq(shape=('H', 'H')),
            NonSeq(shape=('K', 'K'), passed=False),
        ),
        n_steps=('const', 0),
        steps=2,
        truncate=2,
        until=(
            E(
                'index',
                (
                    E(
                        'setsub',
                        (E('leaf', (), 's1@-3', ('H', 'K')), E('leaf', (), 's0@-2', ('K',))),
                        0,
                        ('H', 'K'),
                    ),
                ),
                -1,
                ('K',),
            ),
            0.0,
        ),
        shared=(
            ('K',),
            E(
                'add',
                (
                    E('scale', (E('leaf', (), 'sh', ('K',)),), 0.5, ('K',)),
                    E(
                        'splice',
                        (E('leaf', (), 'sh', ('K',)), E('leaf', (), 's0@-2', ('K',))),
                        None,
                        ('K',),
                    ),
                ),
                None,
                ('K',),
            ),
        ),
        cost='half_sq',
        sizes=(3, 1),
        seed=253091,
    ),
    202: Program(
        seqs=(
            Seq(shape=('K', 'H'), taps=(0,), extra=1),
            Seq(shape=('K', 'K'), taps=(2, -1, 1), extra=1),
            Seq(shape=('K',), taps=(2, -1, 1), extra=1),
        ),
        outs=(
            Out(
                kind='sit_sot',
                taps=(-1,),
                shape=('K', 'H'),
                expr=E(
                    'tanh',
                    (
                        E(
                            'add',
                            (
                                E(
                                    'add',
                                    (
                                        E(
                                            'dot',
                                            (
                                                E('leaf', (), 's0@0', ('K', 'H')),
                                                E('leaf', (), 'n1', ('H', 'H')),
                                            ),
                                            None,
                                            ('K', 'H'),
                                        ),
                                        E(
                                            'dot',
                                            (
                                                E('leaf', (), 'o0@-1', ('K', 'H')),
                                                E('leaf', (), 'n0', ('H', 'H')),
                                            ),
                                            None,
                                            ('K', 'H'),
                                        ),
                                    ),
                                    None,
                                    ('K', 'H'),
                                ),
                                E('leaf', (), 'n2', ('H',)),
                            ),
                            None,
                            ('K', 'H'),
                        ),
                    ),
                    None,
                    ('K', 'H'),
                ),
                use='cost',
            ),
            Out(
                kind='sit_sot',
                taps=(-1,),
                shape=('K', 'H'),
                expr=E(
                    'tanh',
                    (
                        E(
                            'add',
                            (
                                E('leaf', (), 'o1@-1', ('K', 'H')),
                                E('leaf', (), 'o1@-1', ('K', 'H')),
                            ),
                            None,
                            ('K', 'H'),
                        ),
                    ),
                    None,
                    ('K', 'H'),
                ),
                init='const',
            ),
            Out(
                kind='nit_sot',
                taps=(),
                shape=('K', 'H'),
                expr=E('tanh', (E('leaf', (), 's0@0', ('K', 'H')),), None, ('K', 'H')),
                use='cost',
            ),
        ),
        non_seqs=(
            NonSeq(shape=('H', 'H')),
            NonSeq(shape=('H', 'H')),
            NonSeq(shape=('H',)),
            NonSeq(shape=()),
            NonSeq(shape=('K', 'K'), source='const'),
        ),
        steps=2,
        shared=(
            ('H',),
            E(
                'add',
                (
                    E('scale', (E('leaf', (), 'sh', ('H',)),), 0.5, ('H',)),
                    E('scale', (E('leaf', (), 'n2', ('H',)),), 0.5, ('H',)),
                ),
                None,
                ('H',),
            ),
        ),
        cost='half_sq',
        sizes=(1, 1),
    ),
}
