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
    ('constant_folding', 'corrupt', 2, 297),
    ('canonicalize', 'corrupt', 0, 300),
    ('scan_inline_constants', 'corrupt', 34, 54),
    ('scan_merge_inputs', 'corrupt', 208, 2),
    ('scan_merge_inputs', 'targeted', 208, 2),
    ('scan_remove_unused', 'corrupt', 2, 273),
    ('scan_inner', 'corrupt', 208, 88),
    ('scan_pushout_last_step', 'corrupt', 49, 29),
    ('scan_reuse_forward', 'corrupt', 49, 27),
    ('scan_pushout_non_seqs', 'corrupt', 0, 132),
    ('scan_pushout_invariant_nit_sots', 'corrupt', 27, 48),
    ('scan_pushout_invariant_nit_sots', 'targeted', 64, 48),
    ('scan_pushout_rows', 'corrupt', 8, 30),
    ('scan_pushout_rows', 'targeted', 8, 30),
    ('scan_state_rows', 'corrupt', 19, 2),
    ('scan_state_rows', 'targeted', 156, 2),
    ('scan_pushout_seqs', 'corrupt', 27, 66),
    ('scan_pushout_accumulators', 'corrupt', 160, 7),
    ('scan_merge', 'corrupt', 19, 33),
    ('scan_merge_outputs', 'corrupt', 84, 17),
    ('scan_merge_outputs', 'targeted', 84, 17),
    ('scan_step_shapes', 'corrupt', 2, 166),
    ('scan_save_mem', 'corrupt', 2, 215),
    ('scan_fill_sequences', 'corrupt', 107, 11),
    ('scan_fill_sequences', 'targeted', 107, 11),
    ('sequence_memory', 'corrupt', 27, 49),
    ('scan_chunk_accumulators', 'corrupt', 2, 69),
    ('scan_read_through_join', 'corrupt', 160, 16),
    ('scan_read_through_join', 'targeted', 160, 16),
    ('gemm', 'corrupt', 2, 77),
    ('fuse_elemwise', 'corrupt', 2, 288),
    ('reduce_of_elemwise', 'corrupt', 0, 256),
    ('gemm_inplace', 'corrupt', 2, 75),
    ('scan_inner_gemm', 'corrupt', 0, 264),
    ('scan_nit_sot_into_seq', 'corrupt', 2, 127),
    ('scan_chunk_seq_products', 'corrupt', 160, 18),
    ('scan_seq_into_buffer', 'corrupt', 27, 48),
    ('inplace_elemwise', 'corrupt', 2, 216),
    ('inplace_inc_subtensor', 'corrupt', 2, 248),
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
    8: Program(
        seqs=(
            Seq(shape=('K',), taps=(-3,), extra=2),
            Seq(shape=(), taps=(2, 1, 0), extra=2),
            Seq(shape=('H',), taps=(-1, -2, 3), extra=2),
        ),
        outs=(
            Out(
                kind='nit_sot',
                taps=(),
                shape=('K',),
                expr=E('leaf', (), 's0@-3', ('K',)),
                use='cost',
            ),
        ),
        truncate=1,
        sizes=(1, 2),
        seed=5660344,
    ),
    19: Program(
        seqs=(Seq(shape=('K', 'H'), taps=(3, -2, -3)),),
        outs=(
            Out(
                kind='sit_sot',
                taps=(-1,),
                shape=('H', 'K'),
                expr=E(
                    'tanh',
                    (E('transpose', (E('leaf', (), 's0@3', ('K', 'H')),), None, ('H', 'K')),),
                    None,
                    ('H', 'K'),
                ),
            ),
            Out(
                kind='mit_sot',
                taps=(-2, -3),
                shape=('K',),
                expr=E(
                    'tanh',
                    (
                        E(
                            'add',
                            (E('leaf', (), 'o1@-2', ('K',)), E('leaf', (), 'o1@-3', ('K',))),
                            None,
                            ('K',),
                        ),
                    ),
                    None,
                    ('K',),
                ),
            ),
        ),
        non_seqs=(NonSeq(shape=('H', 'H'), passed=False),),
        steps=1,
        wrt=(0,),
        sizes=(1, 3),
        seed=3,
    ),
    27: Program(
        seqs=(
            Seq(shape=('K', 'H'), taps=(0,)),
            Seq(shape=('K',), taps=(2, -1, -2), extra=1),
            Seq(shape=(), taps=(1, -3)),
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
        ),
        non_seqs=(
            NonSeq(shape=('H', 'H')),
            NonSeq(shape=('H', 'H')),
            NonSeq(shape=('H',)),
            NonSeq(shape=('K',), passed=False, source='const'),
            NonSeq(shape=('H',)),
        ),
        n_steps=('const', -3),
        steps=4,
        go_backwards=True,
        twin=E(
            'dot',
            (
                E('leaf', (), 'n0', ('H', 'H')),
                E(
                    'splice',
                    (E('leaf', (), 'n4', ('H',)), E('leaf', (), 'n4', ('H',))),
                    None,
                    ('H',),
                ),
            ),
            None,
            ('H',),
        ),
        sizes=(1, 2),
        seed=67016,
    ),
    34: Program(
        seqs=(
            Seq(shape=(), taps=(2,)),
            Seq(shape=('K', 'K'), taps=(1,), extra=2),
            Seq(shape=('K', 'K'), taps=(-2, -1), extra=1),
        ),
        outs=(
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
                                E(
                                    'reverse',
                                    (
                                        E(
                                            'transpose',
                                            (E('leaf', (), 'o0@-1', ('H', 'H')),),
                                            None,
                                            ('H', 'H'),
                                        ),
                                    ),
                                    None,
                                    ('H', 'H'),
                                ),
                                E('leaf', (), 'o0@-1', ('H', 'H')),
                            ),
                            None,
                            ('H', 'H'),
                        ),
                    ),
                    None,
                    ('H', 'H'),
                ),
            ),
            Out(
                kind='mit_sot',
                taps=(-2,),
                shape=('K', 'H'),
                expr=E('tanh', (E('leaf', (), 'o1@-2', ('K', 'H')),), None, ('K', 'H')),
                use='none',
            ),
        ),
        non_seqs=(NonSeq(shape=('H',), source='const'), NonSeq(shape=(), passed=False)),
        n_steps=('const', -4),
        steps=4,
        truncate=2,
        cost='half_sq',
        sizes=(2, 2),
        seed=70900,
    ),
    49: Program(
        seqs=(Seq(shape=('H', 'H'), taps=(-3,)),),
        outs=(
            Out(
                kind='nit_sot',
                taps=(),
                shape=('H', 'H'),
                expr=E(
                    'sub',
                    (E('leaf', (), 'o1@-1', ('H',)), E('leaf', (), 's0@-3', ('H', 'H'))),
                    None,
                    ('H', 'H'),
                ),
                use='last',
            ),
            Out(
                kind='mit_sot',
                taps=(-3, -1),
                shape=('H',),
                expr=E(
                    'tanh',
                    (
                        E(
                            'add',
                            (
                                E(
                                    'reverse',
                                    (
                                        E(
                                            'incsub',
                                            (
                                                E('leaf', (), 'o1@-1', ('H',)),
                                                E(
                                                    'sum',
                                                    (E('leaf', (), 's0@-3', ('H', 'H')),),
                                                    None,
                                                    (),
                                                ),
                                            ),
                                            -1,
                                            ('H',),
                                        ),
                                    ),
                                    None,
                                    ('H',),
                                ),
                                E('leaf', (), 'o1@-1', ('H',)),
                            ),
                            None,
                            ('H',),
                        ),
                    ),
                    None,
                    ('H',),
                ),
                use='none',
            ),
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
                                    'mul',
                                    (
                                        E(
                                            'add',
                                            (
                                                E('leaf', (), 'o2@-1', ('H',)),
                                                E(
                                                    'index',
                                                    (E('leaf', (), 's0@-3', ('H', 'H')),),
                                                    -1,
                                                    ('H',),
                                                ),
                                            ),
                                            None,
                                            ('H',),
                                        ),
                                        E(
                                            'dot',
                                            (
                                                E(
                                                    'dot',
                                                    (
                                                        E('leaf', (), 's0@-3', ('H', 'H')),
                                                        E('leaf', (), 's0@-3', ('H', 'H')),
                                                    ),
                                                    None,
                                                    ('H', 'H'),
                                                ),
                                                E(
                                                    'dot',
                                                    (
                                                        E('leaf', (), 's0@-3', ('H', 'H')),
                                                        E('leaf', (), 'o1@-1', ('H',)),
                                                    ),
                                                    None,
                                                    ('H',),
                                                ),
                                            ),
                                            None,
                                            ('H',),
                                        ),
                                    ),
                                    None,
                                    ('H',),
                                ),
                                E('leaf', (), 'o2@-1', ('H',)),
                            ),
                            None,
                            ('H',),
                        ),
                    ),
                    None,
                    ('H',),
                ),
                use='last',
            ),
        ),
        n_steps=('const', -4),
        steps=0,
        go_backwards=True,
        seed=309,
    ),
    64: Program(
        seqs=(
            Seq(shape=('H', 'H'), taps=(3,), extra=1),
            Seq(shape=(), taps=(-1, 1, 3)),
            Seq(shape=('K', 'H'), taps=(3,), extra=2),
        ),
        outs=(
            Out(
                kind='mit_sot',
                taps=(-3, -1),
                shape=('H', 'H'),
                expr=E(
                    'tanh',
                    (
                        E(
                            'add',
                            (
                                E(
                                    'sub',
                                    (
                                        E('leaf', (), 'o0@-1', ('H', 'H')),
                                        E(
                                            'add',
                                            (
                                                E(
                                                    'nest',
                                                    (
                                                        E(
                                                            'sum',
                                                            (E('leaf', (), 's2@3', ('K', 'H')),),
                                                            0,
                                                            ('H',),
                                                        ),
                                                        E('leaf', (), 's1@1', ()),
                                                        E('leaf', (), 's1@-1', ()),
                                                    ),
                                                    'sum',
                                                    (),
                                                ),
                                                E(
                                                    'incsub',
                                                    (
                                                        E('leaf', (), 'o0@-1', ('H', 'H')),
                                                        E(
                                                            'sum',
                                                            (E('leaf', (), 's0@3', ('H', 'H')),),
                                                            1,
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
                                    None,
                                    ('H', 'H'),
                                ),
                                E('leaf', (), 'o0@-1', ('H', 'H')),
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
        non_seqs=(
            NonSeq(shape=('K', 'H'), source='const'),
            NonSeq(shape=('H', 'K'), passed=False),
            NonSeq(shape=('K', 'K')),
        ),
        steps=2,
        go_backwards=True,
        truncate=1,
        cost='half_sq',
        wrt=(5, 1, 2, 0, 3, 4),
        twin=E('leaf', (), 'n2', ('K', 'K')),
        sizes=(1, 3),
        seed=3098142,
    ),
    84: Program(
        seqs=(
            Seq(shape=('H', 'K'), taps=(-1, 2, -2), extra=1),
            Seq(shape=('K', 'H'), taps=(-2,), extra=2),
        ),
        outs=(
            Out(
                kind='mit_sot',
                taps=(-1, -3),
                shape=('K', 'K'),
                expr=E(
                    'tanh',
                    (
                        E(
                            'add',
                            (
                                E(
                                    'incsub',
                                    (
                                        E(
                                            'sub',
                                            (
                                                E('leaf', (), 'o0@-1', ('K', 'K')),
                                                E('leaf', (), 'o0@-1', ('K', 'K')),
                                            ),
                                            None,
                                            ('K', 'K'),
                                        ),
                                        E(
                                            'sum',
                                            (E('leaf', (), 's1@-2', ('K', 'H')),),
                                            1,
                                            ('K',),
                                        ),
                                    ),
                                    0,
                                    ('K', 'K'),
                                ),
                                E('leaf', (), 'o0@-3', ('K', 'K')),
                            ),
                            None,
                            ('K', 'K'),
                        ),
                    ),
                    None,
                    ('K', 'K'),
                ),
                use='cost',
            ),
            Out(
                kind='mit_sot',
                taps=(-2,),
                shape=('K', 'H'),
                expr=E(
                    'tanh',
                    (
                        E(
                            'add',
                            (
                                E('leaf', (), 'o1@-2', ('K', 'H')),
                                E('leaf', (), 'o1@-2', ('K', 'H')),
                            ),
                            None,
                            ('K', 'H'),
                        ),
                    ),
                    None,
                    ('K', 'H'),
                ),
            ),
            Out(
                kind='nit_sot',
                taps=(),
                shape=(),
                expr=E(
                    'sub',
                    (
                        E('sum', (E('leaf', (), 's0@-1', ('H', 'K')),), None, ()),
                        E('sum', (E('leaf', (), 's0@-2', ('H', 'K')),), None, ()),
                    ),
                    None,
                    (),
                ),
                use='cost',
            ),
            Out(
                kind='nit_sot',
                taps=(),
                shape=(),
                expr=E(
                    'sub',
                    (
                        E('sum', (E('leaf', (), 's0@-1', ('H', 'K')),), None, ()),
                        E('sum', (E('leaf', (), 's0@-2', ('H', 'K')),), None, ()),
                    ),
                    None,
                    (),
                ),
            ),
        ),
        non_seqs=(NonSeq(shape=('K', 'H')),),
        steps=1,
        go_backwards=True,
        until=(
            E('index', (E('index', (E('leaf', (), 'o0@-1', ('K', 'K')),), -1, ('K',)),), -1, ()),
            0.0,
        ),
        cost='half_sq',
        sizes=(3, 2),
        seed=5715,
    ),
    107: Program(
        seqs=(Seq(shape=(), taps=(0,)),),
        outs=(
            Out(
                kind='nit_sot',
                taps=(),
                shape=(),
                expr=E('tanh', (E('leaf', (), 'n0', ()),), None, ()),
                use='last',
            ),
        ),
        non_seqs=(NonSeq(shape=()),),
        n_steps=('const', 2),
        steps=0,
        truncate=1,
        sizes=(1, 1),
        seed=2,
    ),
    156: Program(
        seqs=(Seq(shape=('H', 'H'), taps=(1,)), Seq(shape=('H', 'K'), taps=(2, -1), extra=2)),
        outs=(
            Out(
                kind='nit_sot',
                taps=(),
                shape=(),
                expr=E('tanh', (E('sum', (E('leaf', (), 's1@2', ('H', 'K')),), None, ()),), None, ()),
            ),
            Out(
                kind='mit_sot',
                taps=(-2, -3),
                shape=('K', 'H'),
                expr=E(
                    'tanh',
                    (
                        E(
                            'transpose',
                            (E('sin', (E('leaf', (), 's1@-1', ('H', 'K')),), None, ('H', 'K')),),
                            None,
                            ('K', 'H'),
                        ),
                    ),
                    None,
                    ('K', 'H'),
                ),
            ),
            Out(
                kind='nit_sot',
                taps=(),
                shape=('K', 'H'),
                expr=E(
                    'incsub',
                    (
                        E(
                            'sigmoid',
                            (
                                E(
                                    'sub',
                                    (
                                        E(
                                            'sum',
                                            (E('leaf', (), 's1@2', ('H', 'K')),),
                                            1,
                                            ('H',),
                                        ),
                                        E('leaf', (), 'o1@-3', ('K', 'H')),
                                    ),
                                    None,
                                    ('K', 'H'),
                                ),
                            ),
                            None,
                            ('K', 'H'),
                        ),
                        E(
                            'dot',
                            (
                                E(
                                    'incsub',
                                    (
                                        E(
                                            'sum',
                                            (E('leaf', (), 'o1@-3', ('K', 'H')),),
                                            1,
                                            ('K',),
                                        ),
                                        E(
                                            'sum',
                                            (E('leaf', (), 's1@-1', ('H', 'K')),),
                                            None,
                                            (),
                                        ),
                                    ),
                                    0,
                                    ('K',),
                                ),
                                E('leaf', (), 'o1@-3', ('K', 'H')),
                            ),
                            None,
                            ('H',),
                        ),
                    ),
                    0,
                    ('K', 'H'),
                ),
            ),
        ),
        n_steps=('const', 0),
        steps=1,
        go_backwards=True,
        wrt=(2, 0),
        sizes=(3, 3),
        seed=1953,
    ),
    160: Program(
        seqs=(Seq(shape=('K', 'H'), taps=(0,)), Seq(shape=('K', 'H'), taps=(1, 3, 0))),
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
            ),
            Out(
                kind='mit_sot',
                taps=(-3, -2),
                shape=('K', 'K'),
                expr=E(
                    'tanh',
                    (
                        E(
                            'splice',
                            (
                                E(
                                    'dot',
                                    (
                                        E('leaf', (), 's1@3', ('K', 'H')),
                                        E(
                                            'dot',
                                            (
                                                E('leaf', (), 'n0', ('H', 'H')),
                                                E(
                                                    'transpose',
                                                    (E('leaf', (), 's0@0', ('K', 'H')),),
                                                    None,
                                                    ('H', 'K'),
                                                ),
                                            ),
                                            None,
                                            ('H', 'K'),
                                        ),
                                    ),
                                    None,
                                    ('K', 'K'),
                                ),
                                E(
                                    'splice',
                                    (
                                        E('leaf', (), 'o1@-2', ('K', 'K')),
                                        E(
                                            'dot',
                                            (
                                                E('leaf', (), 'o1@-2', ('K', 'K')),
                                                E('leaf', (), 'o1@-2', ('K', 'K')),
                                            ),
                                            None,
                                            ('K', 'K'),
                                        ),
                                    ),
                                    None,
                                    ('K', 'K'),
                                ),
                            ),
                            None,
                            ('K', 'K'),
                        ),
                    ),
                    None,
                    ('K', 'K'),
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
                            'index',
                            (
                                E(
                                    'sub',
                                    (
                                        E(
                                            'mul',
                                            (
                                                E('leaf', (), 'n2', ('H',)),
                                                E('leaf', (), 'o2@-1', ()),
                                            ),
                                            None,
                                            ('H',),
                                        ),
                                        E('leaf', (), 'n2', ('H',)),
                                    ),
                                    None,
                                    ('H',),
                                ),
                            ),
                            0,
                            (),
                        ),
                    ),
                    None,
                    (),
                ),
                use='cost',
            ),
        ),
        non_seqs=(
            NonSeq(shape=('H', 'H')),
            NonSeq(shape=('H', 'H')),
            NonSeq(shape=('H',)),
            NonSeq(shape=('H',)),
            NonSeq(shape=('K',), passed=False),
        ),
        steps=4,
        cost='half_sq',
        twin=E(
            'splice',
            (
                E(
                    'max',
                    (E('transpose', (E('leaf', (), 's0@0', ('K', 'H')),), None, ('H', 'K')),),
                    1,
                    ('H',),
                ),
                E('leaf', (), 'n3', ('H',)),
            ),
            None,
            ('H',),
        ),
        sizes=(1, 1),
        seed=2,
    ),
    208: Program(
        seqs=(
            Seq(shape=('K', 'H'), taps=(0,), extra=1),
            Seq(shape=('K', 'K'), taps=(-3, 3, 1)),
            Seq(shape=('K', 'K'), taps=(-1,)),
            Seq(shape=('H',), taps=(-3,), extra=2),
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
                shape=(),
                expr=E('max', (E('leaf', (), 's2@-1', ('K', 'K')),), None, ()),
            ),
            Out(
                kind='mit_sot',
                taps=(-2, -3),
                shape=('K', 'K'),
                expr=E(
                    'tanh',
                    (
                        E(
                            'add',
                            (
                                E(
                                    'sub',
                                    (
                                        E('leaf', (), 'o2@-2', ('K', 'K')),
                                        E('leaf', (), 'o2@-3', ('K', 'K')),
                                    ),
                                    None,
                                    ('K', 'K'),
                                ),
                                E('leaf', (), 'o2@-3', ('K', 'K')),
                            ),
                            None,
                            ('K', 'K'),
                        ),
                    ),
                    None,
                    ('K', 'K'),
                ),
                use='cost',
            ),
        ),
        non_seqs=(
            NonSeq(shape=('H', 'H')),
            NonSeq(shape=('H', 'H')),
            NonSeq(shape=('H',)),
            NonSeq(shape=('H',)),
            NonSeq(shape=('K',)),
        ),
        steps=2,
        truncate=1,
        until=(
            E(
                'maximum',
                (
                    E(
                        'mul',
                        (
                            E('sum', (E('leaf', (), 'n3', ('H',)),), None, ()),
                            E('sum', (E('leaf', (), 'n1', ('H', 'H')),), None, ()),
                        ),
                        None,
                        (),
                    ),
                    E(
                        'max',
                        (
                            E(
                                'transpose',
                                (E('leaf', (), 'o0@-1', ('K', 'H')),),
                                None,
                                ('H', 'K'),
                            ),
                        ),
                        0,
                        ('K',),
                    ),
                ),
                None,
                ('K',),
            ),
            -0.5,
        ),
        cost='half_sq',
        sizes=(3, 3),
        seed=2147483646,
    ),
}
