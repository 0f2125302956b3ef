"""`StoragePlan` (bptt/scan/plan.py): where a Scan node's rows live, beside its `ScanInfo`.

The plan is part of the op's identity (equality, hash, the disk cache's graph key). A
ScanArgs edit carries the fields that say what an output is (summed nit_sots, rings) with
their loop variables and drops the homes, and the rewrites that set a home
(tests/scan/test_inplace.py, test_seq_buffer.py) leave the node's interface as it was.
"""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import bptt.tensor as T
from bptt.compile.graph_key import graph_key
from bptt.graph.fg import FunctionGraph
from bptt.scan import Scan, ScanArgs, ScanInfo
from bptt.scan.plan import NO_PLAN, ROW_SUM, StoragePlan

HOME = StoragePlan(nit_sot_into_seq=(0,))


def _doubling(plan=NO_PLAN):
    """A scan of one sequence and one nit_sot 2 * x_t; the nit_sot may live in x's rows."""
    x_t = T.dvector("x_t")
    info = ScanInfo(n_seqs=1, mit_mot_in_slices=(), mit_mot_out_slices=(), mit_sot_in_slices=(),
                    n_sit_sot=0, n_nit_sot=1, n_shared_outs=0, n_non_seqs=0, name="double")
    return Scan([x_t], [2.0 * x_t], info, plan=plan)


def _node(op):
    X, n = T.dmatrix("X"), T.lscalar("n")
    return op.make_node(n, X, n)


def test_the_plan_is_part_of_the_op_identity():
    plain, homed = _doubling(), _doubling(HOME)
    assert plain != homed and hash(plain) != hash(homed)
    assert homed == _doubling(StoragePlan(nit_sot_into_seq=(0,)))
    assert plain == _doubling(StoragePlan(nit_sot_into_seq=(None,)))   # all None: no plan
    assert str(homed) == "Scan{double, nit_sot 0 into seq 0}" and str(plain) == "Scan{double}"
    assert pickle.loads(pickle.dumps(homed)).plan == HOME


def test_the_disk_cache_key_tells_plans_apart():
    keys = set()
    for op in (_doubling(), _doubling(HOME)):
        node = _node(op)
        keys.add(graph_key(FunctionGraph(node.inputs, node.outputs), "PY"))
    assert None not in keys and len(keys) == 2


def test_a_scan_args_edit_drops_the_plan():
    node = _node(_doubling(HOME))
    rebuilt = ScanArgs.from_node(node).make_node()
    assert rebuilt.op.plan == NO_PLAN and rebuilt.op == _doubling()
    assert rebuilt.outputs[0].type == node.outputs[0].type


def _stacked_and_summed(plan):
    """Two nit_sots of a 3-d sequence: 2 * x_t stacked, 3 * x_t stacked or summed over rows."""
    x_t = T.dmatrix("x_t")
    info = ScanInfo(n_seqs=1, mit_mot_in_slices=(), mit_mot_out_slices=(), mit_sot_in_slices=(),
                    n_sit_sot=0, n_nit_sot=2, n_shared_outs=0, n_non_seqs=0, name="two")
    op = Scan([x_t], [2.0 * x_t, 3.0 * x_t], info, plan=plan)
    X, n = T.dtensor3("X"), T.lscalar("n")
    return op.make_node(n, X, n, n)


def test_a_scan_args_edit_keeps_sums_with_their_nit_sots():
    plan = StoragePlan(nit_sot_sums=(None, (ROW_SUM, 4)), nit_sot_into_seq=(0, None))
    node = _stacked_and_summed(plan)
    assert str(node.op) == "Scan{two, nit_sot 0 into seq 0, nit_sot 1 summed over rows " \
                           "(chunks of 4 rows)}"
    args = ScanArgs.from_node(node)
    assert args.plan == StoragePlan(nit_sot_sums=(None, (ROW_SUM, 4)))    # no home
    args.remove("nit_sot", 0)
    args.add_nit_sot(args.inner_out_nit_sot[0] * 2.0, node.inputs[0])
    rebuilt = args.make_node()
    assert rebuilt.op.plan == StoragePlan(nit_sot_sums=((ROW_SUM, 4), None))
    assert [v.type.ndim for v in rebuilt.outputs] == [1, 3]
    x = np.arange(12.0).reshape(3, 2, 2)
    out = [[None], [None]]
    rebuilt.op.perform(rebuilt, [np.int64(3), x, np.int64(3), np.int64(3)], out)
    np.testing.assert_array_equal(out[0][0], 3.0 * x.sum(axis=(0, 1)))
    np.testing.assert_array_equal(out[1][0], 6.0 * x)


def _two_states(plan):
    """Two sit_sots h1 + x_t and 2 * h2 over one sequence."""
    x_t, h1, h2 = T.dvector("x_t"), T.dvector("h1"), T.dvector("h2")
    info = ScanInfo(n_seqs=1, mit_mot_in_slices=(), mit_mot_out_slices=(), mit_sot_in_slices=(),
                    n_sit_sot=2, n_nit_sot=0, n_shared_outs=0, n_non_seqs=0, name="states")
    op = Scan([x_t, h1, h2], [h1 + x_t, 2.0 * h2], info, plan=plan)
    X, n = T.dmatrix("X"), T.lscalar("n")
    return op.make_node(n, X, T.dmatrix("H1"), T.dmatrix("H2"))


def test_a_scan_args_edit_keeps_rings_with_their_states():
    plan = StoragePlan(buffer_rows=(None, 3), seq_into_buffer=(0, None))
    node = _two_states(plan)
    assert node.op != _two_states(StoragePlan(seq_into_buffer=(0, None))).op
    args = ScanArgs.from_node(node)
    assert args.plan == StoragePlan(buffer_rows=(None, 3))    # no home
    args.remove("sit_sot", 0)
    rebuilt = args.make_node()
    assert rebuilt.op.plan == StoragePlan(buffer_rows=(3,))
    h2 = np.ones((1, 2))
    out = [[None]]
    rebuilt.op.perform(rebuilt, [np.int64(4), np.zeros((4, 2)), h2], out)
    np.testing.assert_array_equal(out[0][0], [[4.0, 4.0], [8.0, 8.0], [16.0, 16.0]])


def test_the_plan_does_not_change_the_values():
    x = np.arange(6.0).reshape(3, 2)
    results = []
    for plan in (NO_PLAN, HOME):
        op = _doubling(plan)
        out = [[None]]
        op.perform(_node(op), [np.int64(3), x.copy(), np.int64(3)], out)
        results.append(out[0][0])
    np.testing.assert_array_equal(results[0], 2.0 * x)
    np.testing.assert_array_equal(results[1], 2.0 * x)


def test_the_op_checks_its_plan():
    with pytest.raises(TypeError, match="plan must be a StoragePlan"):
        _doubling(plan=(0,))
    with pytest.raises(ValueError, match="StoragePlan: nit_sot_into_seq"):
        _doubling(StoragePlan(nit_sot_into_seq=(1,)))
