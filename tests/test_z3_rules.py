"""Every integer rule of stage 16 (symbolic) and stage 18 (decompositions), proven by z3.

A kernel graph is translated into z3 bit-vector terms with lazyarr's C semantics (wrap-around
arithmetic, truncating division and remainder, x/0 → 0, x%0 → 0, MIN/-1 → MIN, shifts by the
width or more → 0 or -1). For each rule, graphs matching its pattern are generated at random: the
pattern's variables become DEFINE_VARs over the full range of their dtype or over narrower
intervals (the bounds a rule may require: z3 assumes exactly those), its constants take values
from a list of edge cases (0, ±1, powers of two, the dtype's extremes, ...). Wherever the rule
rewrites an instance, z3 proves the rewrite equal to the original for every value of the
variables within their bounds. A counterexample is a bug in the rule. Every rule of both sets is
exercised, or is named in FLOAT_ONLY with the reason it has no integer instance.
"""
from __future__ import annotations

import random
import zlib

import z3

from lazyarr import dtypes
from lazyarr.compiler.patterns import UPat
from lazyarr.compiler.uop import GroupOp, Ops, UOp

Z3_OPS = {Ops.ADD, Ops.SUB, Ops.MUL, Ops.IDIV, Ops.MOD, Ops.NEG, Ops.NOT, Ops.ABS, Ops.MAX, Ops.MIN,
          Ops.AND, Ops.OR, Ops.XOR, Ops.SHL, Ops.SHR, Ops.CMPLT, Ops.CMPLE, Ops.CMPEQ, Ops.CMPNE,
          Ops.WHERE, Ops.CAST, Ops.MULACC, Ops.CONST, Ops.DEFINE_VAR, Ops.RANGE, Ops.GEP, Ops.VECTORIZE,
          Ops.CAT}


def _bv(d, v):
    return z3.BitVecVal(v, d.bits)


def _scalar(op: Ops, d, sd, a: list):
    """One lane of `op` with result dtype d and source dtype sd."""
    if op is Ops.WHERE:
        return z3.If(a[0], a[1], a[2])
    if op is Ops.CAST:
        if d.is_bool:
            return a[0] if sd.is_bool else a[0] != _bv(sd, 0)
        if sd.is_bool:
            return z3.If(a[0], _bv(d, 1), _bv(d, 0))
        if d.bits == sd.bits:
            return a[0]
        if d.bits < sd.bits:
            return z3.Extract(d.bits - 1, 0, a[0])
        return (z3.ZeroExt if sd.is_unsigned else z3.SignExt)(d.bits - sd.bits, a[0])
    if sd.is_bool:
        x = a
        return {Ops.AND: lambda: z3.And(x[0], x[1]), Ops.OR: lambda: z3.Or(x[0], x[1]),
                Ops.XOR: lambda: z3.Xor(x[0], x[1]), Ops.NOT: lambda: z3.Not(x[0]),
                Ops.CMPEQ: lambda: x[0] == x[1], Ops.CMPNE: lambda: x[0] != x[1],
                Ops.CMPLT: lambda: z3.And(z3.Not(x[0]), x[1]), Ops.CMPLE: lambda: z3.Or(z3.Not(x[0]), x[1]),
                Ops.MAX: lambda: z3.Or(x[0], x[1]), Ops.MIN: lambda: z3.And(x[0], x[1])}[op]()
    u = sd.is_unsigned
    zero, bits = _bv(sd, 0), sd.bits
    x, y = (a + [None])[:2]
    if op is Ops.ADD: return x + y
    if op is Ops.SUB: return x - y
    if op is Ops.MUL: return x * y
    if op is Ops.MULACC: return x * y + a[2]
    if op is Ops.NEG: return -x
    if op is Ops.NOT: return ~x
    if op is Ops.ABS: return x if u else z3.If(x < 0, -x, x)
    if op is Ops.AND: return x & y
    if op is Ops.OR: return x | y
    if op is Ops.XOR: return x ^ y
    lt = z3.ULT if u else (lambda p, q: p < q)
    le = z3.ULE if u else (lambda p, q: p <= q)
    if op is Ops.CMPLT: return lt(x, y)
    if op is Ops.CMPLE: return le(x, y)
    if op is Ops.CMPEQ: return x == y
    if op is Ops.CMPNE: return x != y
    if op is Ops.MAX: return z3.If(lt(x, y), y, x)
    if op is Ops.MIN: return z3.If(lt(y, x), y, x)
    if op is Ops.IDIV:
        if u: return z3.If(y == zero, zero, z3.UDiv(x, y))
        return z3.If(y == zero, zero, x / y)          # z3's signed / truncates; MIN/-1 wraps
    if op is Ops.MOD:
        if u: return z3.If(y == zero, zero, z3.URem(x, y))
        return z3.If(z3.Or(y == zero, y == _bv(sd, -1)), zero, z3.SRem(x, y))
    if op is Ops.SHL:
        bad = z3.UGE(y, bits) if u else z3.Or(y < 0, y >= bits)
        return z3.If(bad, zero, x << y)
    if op is Ops.SHR:
        if u: return z3.If(z3.UGE(y, bits), zero, z3.LShR(x, y))
        return z3.If(z3.Or(y < 0, y >= bits), z3.If(x < 0, _bv(sd, -1), zero), x >> y)
    raise NotImplementedError(op)


class Z3Graph:
    """z3 terms of UOps: a value is a list of lanes; DEFINE_VARs and RANGEs are free variables
    whose bounds are collected in `constraints`."""

    def __init__(self) -> None:
        self.vars: dict[UOp, list] = {}
        self.constraints: list = []
        self.divisions: dict = {}

    def divide(self, x, c: int, d):
        """(quotient, remainder) of x by the constant c ∉ {0, -1}, as fresh variables defined by
        x = q·c + r, |r| < |c|, r of x's sign (C's truncation): linear, so z3 decides it fast."""
        key = (x.sexpr(), c, d)
        if key not in self.divisions:
            n = len(self.divisions)
            q, r = z3.BitVec(f"q{n}", d.bits), z3.BitVec(f"r{n}", d.bits)
            extra = abs(c).bit_length() + 2          # q·c stays within x's magnitude: no wrap
            w = d.bits + extra
            ext = (lambda v: z3.ZeroExt(extra, v)) if d.is_unsigned else (lambda v: z3.SignExt(extra, v))
            X, Q, R, C = ext(x), ext(q), ext(r), z3.BitVecVal(c, w)
            self.constraints.append(X == Q * C + R)
            if d.is_unsigned:
                self.constraints.append(z3.ULT(R, C))
            else:
                self.constraints += [z3.Or(R == 0, (R < 0) == (X < 0)), z3.If(R < 0, -R, R) < abs(c)]
            self.divisions[key] = (q, r)
        return self.divisions[key]

    def _leaf(self, u: UOp) -> list:
        if u not in self.vars:
            d = u.dtype.scalar
            lanes = []
            for i in range(u.dtype.count):
                name = f"v{len(self.vars)}_{i}"
                v = z3.Bool(name) if d.is_bool else z3.BitVec(name, d.bits)
                lanes.append(v)
                if not d.is_bool:
                    lo, hi = u.vmin, u.vmax
                    if d.is_unsigned:
                        self.constraints += [z3.ULE(_bv(d, lo), v), z3.ULE(v, _bv(d, hi))]
                    else:
                        self.constraints += [_bv(d, lo) <= v, v <= _bv(d, hi)]
                elif u.op is Ops.DEFINE_VAR and u.arg[1] == u.arg[2]:
                    self.constraints.append(v == bool(u.arg[1]))
            self.vars[u] = lanes
        return self.vars[u]

    def term(self, root: UOp) -> list:
        memo: dict[UOp, list] = {}
        for u in root.toposort():
            if u.op in (Ops.DEFINE_VAR, Ops.RANGE):
                memo[u] = self._leaf(u)
            elif u.op is Ops.CONST:
                d = u.dtype.scalar
                memo[u] = [z3.BoolVal(bool(u.arg)) if d.is_bool else _bv(d, u.arg)] * u.dtype.count
            elif u.op is Ops.GEP:
                memo[u] = [memo[u.src[0]][i] for i in u.arg]
            elif u.op in (Ops.VECTORIZE, Ops.CAT):
                memo[u] = [lane for s in u.src for lane in memo[s]]
            elif u.op in GroupOp.ALU or u.op is Ops.CAST:
                n = u.dtype.count
                srcs = [memo[s] if len(memo[s]) == n else memo[s] * n for s in u.src]
                sd = u.src[-1].dtype.scalar if u.op is Ops.WHERE else u.src[0].dtype.scalar
                c = u.src[1] if len(u.src) == 2 else None
                if u.op in (Ops.IDIV, Ops.MOD) and c.op is Ops.CONST and c.arg not in (0, -1) and sd.is_int:
                    pairs = [self.divide(a, c.arg, sd) for a in srcs[0]]
                    memo[u] = [p[0] if u.op is Ops.IDIV else p[1] for p in pairs]
                    continue
                memo[u] = [_scalar(u.op, u.dtype.scalar, sd, [s[i] for s in srcs]) for i in range(n)]
            else:
                raise NotImplementedError(u.op)
        return memo[root]


class Z3IntGraph(Z3Graph):
    """The same semantics over z3's mathematical integers, each result wrapped into its dtype
    (v mod 2^bits): linear arithmetic, which z3 decides quickly where 64-bit division bit-blasts
    slowly. Bitwise ops and shifts are not translated (NotImplementedError)."""

    def _leaf(self, u: UOp) -> list:
        if u not in self.vars:
            d = u.dtype.scalar
            lanes = []
            for i in range(u.dtype.count):
                v = z3.Bool(f"v{len(self.vars)}_{i}") if d.is_bool else z3.Int(f"v{len(self.vars)}_{i}")
                if not d.is_bool:
                    self.constraints += [u.vmin <= v, v <= u.vmax]
                lanes.append(v)
            self.vars[u] = lanes
        return self.vars[u]

    @staticmethod
    def wrap(v, d):
        m = v % (2 ** d.bits)
        return m if d.is_unsigned else z3.If(m >= 2 ** (d.bits - 1), m - 2 ** d.bits, m)

    def term(self, root: UOp) -> list:
        memo: dict[UOp, list] = {}
        for u in root.toposort():
            d = u.dtype.scalar
            if u.op in (Ops.DEFINE_VAR, Ops.RANGE):
                memo[u] = self._leaf(u)
            elif u.op is Ops.CONST:
                memo[u] = [z3.BoolVal(bool(u.arg)) if d.is_bool else z3.IntVal(u.arg)] * u.dtype.count
            elif u.op is Ops.GEP:
                memo[u] = [memo[u.src[0]][i] for i in u.arg]
            elif u.op in (Ops.VECTORIZE, Ops.CAT):
                memo[u] = [lane for s in u.src for lane in memo[s]]
            elif u.op in GroupOp.ALU or u.op is Ops.CAST:
                n = u.dtype.count
                srcs = [memo[s] if len(memo[s]) == n else memo[s] * n for s in u.src]
                memo[u] = [self._lane(u, [s[i] for s in srcs]) for i in range(n)]
            else:
                raise NotImplementedError(u.op)
        return memo[root]

    def _lane(self, u: UOp, a: list):
        op, d = u.op, u.dtype.scalar
        sd = u.src[-1].dtype.scalar if op is Ops.WHERE else u.src[0].dtype.scalar
        x, y = (a + [None])[:2]
        if op is Ops.WHERE:
            return z3.If(a[0], a[1], a[2])
        if op is Ops.CAST:
            if d.is_bool:
                return x if sd.is_bool else x != 0
            return self.wrap(x, d) if not sd.is_bool else z3.If(x, 1, 0)
        if sd.is_bool:
            return _bool_lane(a, op)
        if len(u.src) == 1 and op not in (Ops.NEG, Ops.ABS):
            raise NotImplementedError(op)
        simple = {Ops.ADD: lambda: x + y, Ops.SUB: lambda: x - y, Ops.MUL: lambda: x * y, Ops.NEG: lambda: -x,
                  Ops.MULACC: lambda: x * y + a[2]}
        if op in simple:
            return self.wrap(simple[op](), d)
        if op is Ops.ABS:
            return x if sd.is_unsigned else self.wrap(z3.If(x < 0, -x, x), d)
        cmp = {Ops.CMPLT: lambda: x < y, Ops.CMPLE: lambda: x <= y, Ops.CMPEQ: lambda: x == y,
               Ops.CMPNE: lambda: x != y, Ops.MAX: lambda: z3.If(x < y, y, x), Ops.MIN: lambda: z3.If(y < x, y, x)}
        if op in cmp:
            return cmp[op]()
        c = u.src[1]
        if op in (Ops.SHL, Ops.SHR) and c.op is Ops.CONST and 0 <= c.arg < sd.bits:
            # two's complement: x<<k is x·2^k wrapped, x>>k (arithmetic or logical) is ⌊x/2^k⌋
            return self.wrap(x * 2 ** c.arg, d) if op is Ops.SHL else x / 2 ** c.arg
        if op is Ops.AND and c.op is Ops.CONST and c.arg >= 0 and c.arg & (c.arg + 1) == 0:
            return x % (c.arg + 1)                # x & (2^k−1) is x mod 2^k, for either sign
        if op in (Ops.IDIV, Ops.MOD) and c.op is Ops.CONST and c.arg not in (0, -1):
            q, r = z3.FreshInt("q"), z3.FreshInt("r")
            self.constraints += [x == q * c.arg + r, z3.If(r < 0, -r, r) < abs(c.arg), z3.Or(r == 0, (r < 0) == (x < 0))]
            return q if op is Ops.IDIV else r
        raise NotImplementedError(op)


def _bool_lane(a, op):
    x, y = (a + [None])[:2]
    return {Ops.AND: lambda: z3.And(x, y), Ops.OR: lambda: z3.Or(x, y), Ops.XOR: lambda: z3.Xor(x, y),
            Ops.NOT: lambda: z3.Not(x), Ops.CMPEQ: lambda: x == y, Ops.CMPNE: lambda: x != y,
            Ops.CMPLT: lambda: z3.And(z3.Not(x), y), Ops.CMPLE: lambda: z3.Or(z3.Not(x), y),
            Ops.MAX: lambda: z3.Or(x, y), Ops.MIN: lambda: z3.And(x, y)}[op]()



def _check(graph: Z3Graph, a: UOp, b: UOp, timeout_ms: int):
    ta, tb = graph.term(a), graph.term(b)
    if len(ta) != len(tb):
        return f"lane counts differ: {len(ta)} vs {len(tb)}"
    s = z3.Solver()
    s.set("timeout", timeout_ms)
    s.add(*graph.constraints)
    s.add(z3.Or(*[p != q for p, q in zip(ta, tb)]))
    r = s.check()
    if r == z3.unsat:
        return None
    return "unknown (timeout)" if r == z3.unknown else str(s.model())


def prove_equal(a: UOp, b: UOp, timeout_ms: int = 60000):
    """None when a == b for every value of the variables within their bounds, else a
    counterexample (or 'unknown'). Both z3 models are exact models of the C semantics: wrapped
    integer arithmetic first (linear arithmetic decides division by constants quickly, where
    64-bit division bit-blasts slowly), bit-vectors where the integers time out or cannot
    express an op (bitwise ops of variables)."""
    nonlinear = any(u.op in (Ops.MUL, Ops.IDIV, Ops.MOD, Ops.MULACC) and u.src[1].op is not Ops.CONST
                    and u.src[0].op is not Ops.CONST for x in (a, b) for u in x.toposort())
    try:
        if nonlinear:
            raise NotImplementedError("nonlinear integer arithmetic: bit-vectors decide it")
        out = _check(Z3IntGraph(), a, b, 4000)
        if out != "unknown (timeout)":
            return out
    except NotImplementedError:
        pass
    return _check(Z3Graph(), a, b, timeout_ms)


# ---- instances of patterns ------------------------------------------------------------------

def interesting(d, rng: random.Random) -> int:
    lo, hi = dtypes.min_value(d), dtypes.max_value(d)
    pool = [0, 1, 2, 3, 4, 5, 7, 8, 12, 16, 100, hi, hi - 1, 2 ** (d.bits // 2)]
    if not d.is_unsigned:
        pool += [-1, -2, -3, -4, -8, -100, lo, lo + 1, -(2 ** (d.bits // 2))]
    v = rng.choice(pool)
    return min(max(v, lo), hi)


def bounded_var(d, rng: random.Random, n: int) -> UOp:
    lo, hi = dtypes.min_value(d), dtypes.max_value(d)
    if d.is_bool:
        return UOp(Ops.DEFINE_VAR, d, (), (f"b{n}", False, True))
    choices = [(lo, hi), (0, hi), (0, 100), (1, 100), (-100, 100), (0, 2 ** (d.bits // 2)), (0, 7), (-5, 3), (100, 120), (-120, -101)]
    choices = [(max(a, lo), min(b, hi)) for a, b in choices if max(a, lo) <= min(b, hi)]
    a, b = rng.choice(choices)
    return UOp(Ops.DEFINE_VAR, d, (), (f"v{n}", a, b))


ARITY = {**{op: 1 for op in GroupOp.Unary}, **{op: 2 for op in GroupOp.Binary},
         **{op: 3 for op in GroupOp.Ternary}, Ops.CAST: 1}


class Generator:
    """Random graphs matching a pattern, of integer and bool dtypes (vectors where asked)."""

    def __init__(self, rng: random.Random, int_dtypes):
        self.rng, self.int_dtypes = rng, list(int_dtypes)

    def build(self, pat: UPat, d) -> UOp | None:
        self.store: dict[str, UOp] = {}
        self.n = 0
        try:
            return self._build(pat, d)
        except _Skip:
            return None

    def _pick_dtype(self, pat: UPat, d):
        if pat.dtype is None:
            return d
        ok = [x for x in pat.dtype if x.scalar in set(self.int_dtypes) | {dtypes.bool_} and x.count == d.count]
        if d in ok:
            return d
        if not ok:
            raise _Skip
        return self.rng.choice(sorted(ok, key=str))

    def _build(self, pat: UPat, d) -> UOp:
        if pat.name is not None and pat.name in self.store:
            return self.store[pat.name]
        d = self._pick_dtype(pat, d)
        ops = [o for o in (pat.op or {Ops.DEFINE_VAR}) if o in Z3_OPS]
        if not ops:
            raise _Skip
        op = self.rng.choice(sorted(ops, key=lambda o: o.value))
        if op is Ops.CONST or (op is Ops.DEFINE_VAR and pat.op is not None and Ops.CONST in pat.op):
            v = pat.arg if pat.arg is not None else (self.rng.random() < .5 if d.scalar.is_bool else interesting(d.scalar, self.rng))
            if isinstance(pat.arg, (int, bool)) and not (d.scalar.is_bool == isinstance(pat.arg, bool)):
                raise _Skip
            u = UOp(Ops.CONST, d, (), dtypes.python_value(v, d.scalar))
        elif op is Ops.DEFINE_VAR:
            self.n += 1
            u = bounded_var(d.scalar, self.rng, self.n) if d.count == 1 else \
                UOp(Ops.VECTORIZE, d, tuple(bounded_var(d.scalar, self.rng, self.n * 100 + i) for i in range(d.count)))
        elif op is Ops.RANGE:
            u = UOp(Ops.RANGE, dtypes.index, (UOp.const(dtypes.index, self.rng.choice([1, 3, 8, 100])),), self.n)
            self.n += 1
        elif op in (Ops.GEP, Ops.VECTORIZE, Ops.CAT):
            u = self._vector(op, pat, d)
        else:
            u = self._alu(op, pat, d)
        if pat.name is not None:
            self.store[pat.name] = u
        return u

    def _src_pats(self, pat: UPat, n: int) -> list[UPat]:
        if isinstance(pat.src, tuple):
            return list(pat.src) + [UPat()] * (n - len(pat.src))
        if isinstance(pat.src, list):
            order = list(pat.src)
            self.rng.shuffle(order)
            return order
        if isinstance(pat.src, UPat):
            return [pat.src] * n
        return [UPat(Ops.CONST) if self.rng.random() < 0.4 else UPat()] * n

    def _alu(self, op: Ops, pat: UPat, d) -> UOp:
        n = ARITY[op]
        pats = self._src_pats(pat, n)
        if len(pats) != n:
            raise _Skip
        if op in GroupOp.Comparison:
            if not d.scalar.is_bool:
                raise _Skip
            sd = self.rng.choice(self.int_dtypes + [dtypes.bool_]).vec(d.count)
            if pats[0].op is not None and pats[0].op <= {Ops.CONST}:
                b = self._build(pats[1], sd)
                a = self._build(pats[0], b.dtype)
            else:
                a = self._build(pats[0], sd)
                b = self._build(pats[1], a.dtype)
            if a.dtype is not b.dtype:
                raise _Skip
            return UOp(op, d, (a, b))
        if op is Ops.WHERE:
            cnd = self._build(pats[0], dtypes.bool_.vec(d.count))
            a = self._build(pats[1], d)
            return UOp(op, a.dtype, (cnd, a, self._build(pats[2], a.dtype)))
        if op is Ops.CAST:
            sd = self.rng.choice(self.int_dtypes + [dtypes.bool_]).vec(d.count)
            return UOp(op, d, (self._build(pats[0], sd),))
        if d.scalar.is_bool and op not in (Ops.AND, Ops.OR, Ops.XOR, Ops.NOT, Ops.MAX, Ops.MIN):
            raise _Skip
        if op in (Ops.SHL, Ops.SHR) and not pat.src:
            srcs = [self._build(pats[0], d), UOp.const(d, self.rng.randrange(d.scalar.bits))]
            return UOp(op, d, tuple(srcs))
        srcs = []
        for p in pats:
            s = self._build(p, srcs[0].dtype if srcs else d)
            if s.dtype is not (srcs[0].dtype if srcs else s.dtype):
                raise _Skip
            srcs.append(s)
        return UOp(op, srcs[0].dtype, tuple(srcs))

    def _vector(self, op: Ops, pat: UPat, d) -> UOp:
        lanes = self.rng.choice([2, 4])
        vd = d.scalar.vec(lanes)
        if op is Ops.GEP:
            idx = tuple(self.rng.randrange(lanes) for _ in range(d.count))
            if self.rng.random() < 0.3 and d.count == 1:
                idx = (0,)
            src = self._build(self._src_pats(pat, 1)[0], vd)
            if src.dtype.count < 2:
                raise _Skip
            idx = tuple(i % src.dtype.count for i in idx)
            if self.rng.random() < 0.3:
                idx = tuple(range(src.dtype.count))
            return UOp(Ops.GEP, src.dtype.scalar.vec(len(idx)), (src,), idx)
        if op is Ops.VECTORIZE:
            n = d.count if d.count > 1 else lanes
            pats = self._src_pats(pat, n)
            srcs = [self._build(p, d.scalar) for p in pats]
            return UOp(Ops.VECTORIZE, d.scalar.vec(len(srcs)), tuple(srcs))
        parts = [self._build(p, d.scalar.vec(2)) for p in self._src_pats(pat, 2)]
        return UOp(Ops.CAT, d.scalar.vec(sum(p.dtype.count for p in parts)), tuple(parts))


class _Skip(Exception):
    pass


# ---- the proofs -----------------------------------------------------------------------------

import pytest  # noqa: E402

from lazyarr.compiler import symbolic as sym  # noqa: E402

PROOF_DTYPES = [dtypes.int8, dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.uint32, dtypes.uint64]


def _root_dtypes(pat: UPat):
    yield dtypes.bool_
    if pat.op is not None and (pat.op <= GroupOp.Comparison or pat.op <= {Ops.AND, Ops.OR, Ops.XOR, Ops.NOT}):
        yield dtypes.bool_
    if pat.op is not None and pat.op <= {Ops.GEP, Ops.VECTORIZE, Ops.CAT}:
        for d in (dtypes.int32, dtypes.int8, dtypes.bool_):
            yield d
            yield d.vec(2)
        return
    yield from PROOF_DTYPES


def prove_rule(pat: UPat, fn, ctx=None, tries: int = 40, seed: int = 0, max_proofs: int = 3) -> int:
    """Prove `fn` on random instances of `pat`; the number of instances it rewrote (all proven)."""
    import inspect
    takes_ctx = "ctx" in inspect.signature(fn).parameters
    proven = 0
    seen: set = set()
    for inst in HINTS.get(getattr(fn, "__name__", ""), lambda: [])():
        for store in pat.match(inst, {}):
            out = fn(ctx=ctx, **store) if takes_ctx else fn(**store)
            if out is not None and out is not inst:
                assert prove_equal(inst, out) is None, (pretty_uop(inst), pretty_uop(out))
                proven += 1
    for d in _root_dtypes(pat):
        gen = Generator(random.Random(zlib.crc32(f"{seed} {d} {pat}".encode())), PROOF_DTYPES)
        done_here = 0
        for _ in range(tries):
            inst = gen.build(pat, d)
            if inst is None or inst in seen:
                continue
            seen.add(inst)
            for store in pat.match(inst, {}):
                out = fn(ctx=ctx, **store) if takes_ctx else fn(**store)
                if out is None or out is inst:
                    continue
                cex = prove_equal(inst, out)
                assert cex is None, f"rule {pat} refuted: {inst.op} → {out.op}\nbefore: {pretty_uop(inst)}\n" \
                                    f"after: {pretty_uop(out)}\ncounterexample: {cex}"
                proven += 1
                done_here += 1
            if done_here >= max_proofs:
                break
    return proven


def pretty_uop(u: UOp) -> str:
    from lazyarr.compiler.uop import pretty
    return pretty(u)


def _var(name, d=dtypes.int32, lo=None, hi=None):
    lo = dtypes.min_value(d) if lo is None else lo
    hi = dtypes.max_value(d) if hi is None else hi
    return UOp(Ops.DEFINE_VAR, d, (), (name, lo, hi))


def _vector_var(d=dtypes.int32, n=4):
    return UOp(Ops.VECTORIZE, d.vec(n), tuple(_var(f"l{i}", d) for i in range(n)))


def _vectorize_hints():
    v = UOp(Ops.ADD, dtypes.int32.vec(4), (_vector_var(), _vector_var(n=4)))
    return [UOp(Ops.VECTORIZE, v.dtype, tuple(UOp(Ops.GEP, dtypes.int32, (v,), (i,)) for i in range(4)))]


def _sum_hints():
    x, y = _var("x", dtypes.int64, 0, 1000), _var("y", dtypes.int64, -50, 50)
    r = UOp(Ops.RANGE, dtypes.index, (UOp.const(dtypes.index, 16),), 0)
    return [x * 3 + y * 2 + x + 5 - y, (x // 8) * 8 + x % 8, (x // 8) * 16 + (x % 8) * 2 + 1,
            x * 4 + r - x * 4, (x + 1) * 4 - 4, x - x + y, (_var("s", dtypes.int8) + 100) + 100]


def _div_mod_hints():
    x = _var("x", dtypes.int64, 0, 10 ** 6)
    r0 = UOp(Ops.RANGE, dtypes.index, (UOp.const(dtypes.index, 4),), 0)
    r1 = UOp(Ops.RANGE, dtypes.index, (UOp.const(dtypes.index, 8),), 1)
    flat = r0 * 8 + r1
    return [flat // 8, flat % 8, (x * 6 + 4) // 4, (x * 6 + 4) % 4, (x % 24) // 8, (x * 8 + r1) // 8,
            (x * 8 + r1 + 3) % 8, (x * 4 + 2) % 6, (x * 4 + 2) // 6]


HINTS = {"vectorize_of_geps": _vectorize_hints, "normalize_sum": _sum_hints, "fold_div_mod": _div_mod_hints}


def _is_float_only(pat: UPat) -> bool:
    def dts(p: UPat):
        out = set()
        if p.dtype is not None:
            out |= set(p.dtype)
        for s in (p.src if isinstance(p.src, (tuple, list)) else [p.src] if isinstance(p.src, UPat) else []):
            out |= dts(s)
        return out
    def float_consts(p: UPat) -> bool:
        srcs = p.src if isinstance(p.src, (tuple, list)) else [p.src] if isinstance(p.src, UPat) else []
        return isinstance(p.arg, float) or (p.op is not None and p.op <= {Ops.FDIV}) or any(map(float_consts, srcs))
    d = dts(pat)
    return (bool(d) and all(x.is_float for x in d)) or float_consts(pat)


SYMBOLIC_RULES = list(enumerate(sym.symbolic.rules))


@pytest.mark.parametrize("i", [i for i, _ in SYMBOLIC_RULES])
def test_symbolic_rule_is_proven(i):
    pat, fn = sym.symbolic.rules[i]
    if _is_float_only(pat):
        pytest.skip("a floating-point rule: exact in IEEE arithmetic, not an integer rule")
    n = prove_rule(pat, fn)
    assert n > 0, f"rule {i} ({pat}) was never exercised by an integer instance"


from lazyarr.compiler import decompositions as dec  # noqa: E402

TARGETS = [dec.Target(frozenset(GroupOp.ALU - {Ops.MOD, Ops.MUL, Ops.IDIV, Ops.OR, Ops.FDIV, Ops.MULACC})),
           dec.Target(frozenset(GroupOp.ALU - {Ops.AND})),
           dec.Target(frozenset(GroupOp.ALU), has_fma=True)]


@pytest.mark.parametrize("i", range(len(dec.pm_decompositions.rules)))
def test_decomposition_rule_is_proven(i):
    pat, fn = dec.pm_decompositions.rules[i]
    if _is_float_only(pat):
        pytest.skip("a floating-point rule: exact in IEEE arithmetic, not an integer rule")
    n = sum(prove_rule(pat, fn, ctx=t, seed=k) for k, t in enumerate(TARGETS))
    assert n > 0, f"decomposition rule {i} ({pat}) was never exercised by an integer instance"
