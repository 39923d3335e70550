"""Stage 22, cleanup: the last changes, made on the linear instruction list (not the graph).

On a target without predicated stores (`renderer.has_predicated_store` false), a STORE through a
gated INDEX, STORE(INDEX(buf, i, gate), v), becomes IF(gate) / STORE(INDEX(buf, i, True), v) /
ENDIF: the store runs only where the gate holds. The ungated INDEX is placed just before the IF
(once, if several stores share it). Stores through ungated INDEXes, and every other instruction,
are left where they are. Targets with predicated stores skip the stage.
"""
from __future__ import annotations

from lazyarr import dtypes
from lazyarr.compiler.uop import Ops, UOp


def cleanup_gated_stores(program: list[UOp]) -> list[UOp]:
    """STORE(INDEX(buf, i, gate), v) → IF(gate) STORE(INDEX(buf, i), v) ENDIF."""
    out: list[UOp] = []
    for u in program:
        if u.op is Ops.STORE and not u.src[0].src[-1].is_const(True):
            ix = u.src[0]
            cond = UOp(Ops.IF, dtypes.void, (ix.src[-1],))
            ungated = ix.replace(src=(*ix.src[:-1], UOp.const(dtypes.bool_, True)))
            if ungated not in out:
                out.append(ungated)
            out += [cond, u.replace(src=(ungated, *u.src[1:])), UOp(Ops.ENDIF, dtypes.void, (cond,))]
        else:
            out.append(u)
    return out


def cleanup(program: list[UOp], renderer) -> list[UOp]:
    """Stage 22 for `renderer`."""
    return program if renderer.has_predicated_store else cleanup_gated_stores(program)
