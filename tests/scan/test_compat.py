"""bptt.compat.theano: Theano's names for the scan API."""
import sys

import numpy as np
import pytest

import bptt
import bptt.compat.theano as theano
from bptt.scan import ScanInfo


def test_theano_names_map_to_bptt():
    import bptt.compat.theano.tensor as T

    assert T is theano.tensor and T.dot is bptt.tensor.dot
    assert theano.scan is theano.scan_module.scan and theano.scan_module.until is bptt.until
    # theano.scan is bptt.scan with Theano's meaning of strict (tests/compat)
    x = T.dvector("x")
    out, _ = theano.scan(lambda a, h: a + h, sequences=x, outputs_info=T.zeros(()))
    np.testing.assert_array_equal(out.eval({x: np.arange(4.0)}), [0, 1, 3, 6])
    w = theano.shared(np.ones(2), name="w")      # bptt.shared, with Theano's broadcastable=
    assert isinstance(w, bptt.tensor.sharedvar.SharedVariable) and w.name == "w"
    assert theano.config.floatX == bptt.config.floatX
    assert T.shared_randomstreams.RandomStreams is bptt.RandomStreams
    assert theano.gradient.Rop is bptt.Rop


def test_install_makes_import_theano_work():
    saved = {k: sys.modules.pop(k) for k in list(sys.modules) if k.split(".")[0] == "theano"}
    try:
        theano.install()
        import theano as th
        import theano.tensor as TT

        assert th is theano and TT is theano.tensor
        out, _ = th.scan(lambda v: v + 1, sequences=TT.dvector("x"))
        f = th.function([_input(out)], out, mode="PY")
        np.testing.assert_array_equal(f([1.0, 2.0]), [2.0, 3.0])
    finally:
        for k in [k for k in sys.modules if k.split(".")[0] == "theano"]:
            del sys.modules[k]
        sys.modules.update(saved)


def _input(v):
    from bptt.graph.basic import Constant
    from bptt.graph.traversal import graph_inputs

    return next(x for x in graph_inputs([v]) if not isinstance(x, Constant))


def test_unknown_theano_attribute_says_so():
    with pytest.raises(AttributeError, match="docs/theano.md"):
        theano.sparse   # noqa: B018


@pytest.mark.parametrize("bad", [dict(mit_sot_in_slices=((0,),)),
                                 dict(mit_sot_in_slices=((-1, -1),)),
                                 dict(mit_mot_in_slices=((0,),), mit_mot_out_slices=((),)),
                                 dict(truncate_gradient=0)])
def test_scan_info_rejects_inconsistent_layouts(bad):
    base = dict(n_seqs=0, mit_mot_in_slices=(), mit_mot_out_slices=(), mit_sot_in_slices=(),
                n_sit_sot=0, n_nit_sot=0, n_shared_outs=0, n_non_seqs=0)
    base.update(bad)
    with pytest.raises(ValueError, match="ScanInfo"):
        ScanInfo(**base)
