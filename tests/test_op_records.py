"""The op records (`lazyarr.ops.ALU_DEFS`) against what the targets compute: every elementwise op
runs on the test's device for each real dtype kind its record declares, with the record's dtype
rule (`uop.alu_dtype`) and, where the record folds constants, the very values the kernel computes
(folding must agree with the generated code, or a constant folded at compile time would differ
from the same value computed at run time); a kind the record does not declare is refused with
TypeError. (Complex values: tests/test_complex.py's test of every op taking them.)"""
import math

import numpy as np
import pytest

import lazyarr as xp
from lazyarr import dtypes
from lazyarr.arrays import wrap
from lazyarr.compiler.decompositions import TRANSCENDENTAL
from lazyarr.compiler.uop import FUNCTION_COST, GroupOp, Ops, UOp, alu_dtype
from lazyarr.ops import ALU_DEFS

KIND_DTYPES = {"b": [dtypes.bool_], "i": [dtypes.int8, dtypes.int32, dtypes.int64], "u": [dtypes.uint8, dtypes.uint32],
               "f": [dtypes.float32, dtypes.float64]}
N = 64


def _values(op: Ops, d, rng, position: int) -> np.ndarray:
    """Source `position`'s values of dtype d: the dtype's edges and random ones (shift amounts
    within the width; divisors include 0, whose quotient the records define)."""
    if d.is_bool:
        return rng.integers(0, 2, N).astype(bool)
    if d.is_int:
        info = np.iinfo(d.np)
        if op in (Ops.SHL, Ops.SHR) and position == 1:
            return rng.integers(0, d.bits, N).astype(d.np)
        edges = np.array([info.min, info.max, 0, 1, -1 if info.min < 0 else 2, 7], dtype=d.np)
        return np.concatenate([edges, rng.integers(info.min, info.max, N - len(edges), dtype=d.np, endpoint=True)])
    edges = np.array([0.0, -0.0, 1.0, -1.0, 0.5, np.inf, -np.inf, np.nan], dtype=d.np)
    return np.concatenate([edges, (rng.standard_normal(N - len(edges)) * 3).astype(d.np)])


def _sources(op: Ops, d, rng) -> list[np.ndarray]:
    n = 1 if op in GroupOp.Unary else 3 if op in GroupOp.Ternary else 2
    if op is Ops.WHERE:
        return [rng.integers(0, 2, N).astype(bool), _values(op, d, rng, 1), _values(op, d, rng, 2)]
    return [_values(op, d, rng, i) for i in range(n)]


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    return a == b


CASES = [(op, d) for op, rec in sorted(ALU_DEFS.items(), key=lambda kv: kv[0].name)
         for kind in rec.kinds if kind in KIND_DTYPES for d in KIND_DTYPES[kind]]


@pytest.mark.parametrize("op,d", CASES, ids=[f"{op.name.lower()}-{d}" for op, d in CASES])
def test_each_op_computes_each_kind_its_record_declares_as_its_folding_does(op, d):
    rng = np.random.default_rng(list(f"{op.name}/{d.name}".encode()))   # (str hashes change between processes)
    rec = ALU_DEFS[op]
    values = _sources(op, d, rng)
    arrays = [xp.asarray(v) for v in values]
    out_dtype = alu_dtype(op, d)
    with np.errstate(all="ignore"):
        got = wrap(UOp(op, out_dtype, tuple(a.uop for a in arrays)), arrays[0].device).numpy()
    assert got.dtype == out_dtype.np and got.shape == (N,)
    folded = 0
    for i in range(N):
        args = [v[i].item() for v in values]
        want = rec.fold(out_dtype, *args)
        if want is None:
            continue
        folded += 1
        have = got[i].item()
        assert _same(have, type(have)(want)), (f"{op.name} {d} of {args}: the kernel computes {have!r}, the record "
                                               f"folds {want!r}")
    if (rec.int_fold is not None and not d.is_float) or (rec.float_fold is not None and d.is_float):
        assert folded == N   # (a record that folds this kind folds every value)


REFUSED = [(op, d) for op, rec in sorted(ALU_DEFS.items(), key=lambda kv: kv[0].name)
           for kind in "biuf" if kind not in rec.kinds for d in KIND_DTYPES[kind][:1]]


@pytest.mark.parametrize("op,d", REFUSED, ids=[f"{op.name.lower()}-{d}" for op, d in REFUSED])
def test_a_kind_the_record_does_not_declare_is_refused(op, d):
    values = _sources(op, d, np.random.default_rng(0))
    srcs = tuple(xp.asarray(v).uop for v in values)
    with pytest.raises(TypeError, match=op.name):
        UOp(op, alu_dtype(op, d), srcs).shape


def test_the_approximated_functions_cost_a_functions_work():
    """The records say what a function costs (fusion and the CPU's work estimates read it): every
    function the decompositions approximate costs FUNCTION_COST, and no op of plain arithmetic does."""
    assert all(ALU_DEFS[op].cost == FUNCTION_COST for op in TRANSCENDENTAL)
    assert all(ALU_DEFS[op].cost == 1 for op in (Ops.ADD, Ops.MUL, Ops.SUB, Ops.MAX, Ops.WHERE, Ops.CMPLT, Ops.SQRT))
