"""Stage 22, cleanup: instruction lists before and after, per target."""
import numpy as np

from lazyarr import dtypes
from lazyarr.compiler.cleanup import cleanup, cleanup_gated_stores
from lazyarr.compiler.render_c import CRenderer
from lazyarr.compiler.uop import Ops, UOp

f32, idx = dtypes.float32, dtypes.index
TRUE = UOp.const(dtypes.bool_, True)


def test_cleanup_wraps_gated_stores_on_targets_without_predicated_stores():
    g = UOp(Ops.DEFINE_GLOBAL, dtypes.ptr(f32), (), 0)
    gate = UOp(Ops.DEFINE_VAR, dtypes.bool_, (), ("g", 0, 1))
    ix = UOp(Ops.INDEX, g.dtype, (g, UOp.const(idx, 0), gate))
    st = UOp(Ops.STORE, dtypes.void, (ix, UOp.const(f32, 1.0)))
    before = [g, gate, ix, st]
    after = cleanup(before, CRenderer())
    assert [u.op for u in after] == [Ops.DEFINE_GLOBAL, Ops.DEFINE_VAR, Ops.INDEX, Ops.INDEX, Ops.IF, Ops.STORE,
                                     Ops.ENDIF]
    assert after[4].src[0] is gate and after[5].src[0].src[-1].is_const(True)
    assert after == cleanup_gated_stores(before)


class PredicatedC(CRenderer):
    has_predicated_store = True


def test_cleanup_leaves_ungated_stores_and_predicated_targets_alone():
    g = UOp(Ops.DEFINE_GLOBAL, dtypes.ptr(f32), (), 0)
    ix = UOp(Ops.INDEX, g.dtype, (g, UOp.const(idx, 0), TRUE))
    plain = [g, ix, UOp(Ops.STORE, dtypes.void, (ix, UOp.const(f32, 1.0)))]
    assert cleanup(plain, CRenderer()) == plain
    gate = UOp(Ops.DEFINE_VAR, dtypes.bool_, (), ("g", 0, 1))
    gated = [g, gate, UOp(Ops.STORE, dtypes.void, (UOp(Ops.INDEX, g.dtype, (g, UOp.const(idx, 0), gate)),
                                                   UOp.const(f32, 1.0)))]
    assert cleanup(gated, PredicatedC()) == gated
    assert np.all([u.op is not Ops.IF for u in cleanup(gated, PredicatedC())])
