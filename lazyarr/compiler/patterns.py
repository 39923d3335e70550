"""The rewrite engine: `UPat` patterns, a `PatternMatcher` of (pattern, rewrite) rules, and
`graph_rewrite`, which applies a matcher to a whole graph until no rule fires.

Every compiler pass is a matcher plus a little glue. A rule is one line: a pattern and a function
of the pattern's named parts that returns the replacement node, or None to decline.

    P = UPat
    symbolic = PatternMatcher([
        (P.var("x") + 0, lambda x: x),                    # x+0 → x
        (P.var("x") * P.cvar("c"), fold_mul_const),
    ])

Patterns on commutative ops written with operators (`+`, `*`, ...) match both source orders.
A rule function that takes a parameter named `ctx` receives the rewrite's context object.
"""
from __future__ import annotations

import functools
import inspect
import itertools
from typing import Any, Callable, Iterable, Sequence

from lazyarr.compiler.uop import GroupOp, Ops, UOp
from lazyarr.dtypes import DType

Store = dict[str, UOp]


class UPat:
    """A pattern over UOps. `op`, `dtype`: one value or a set to accept. `src`: a tuple (sources in
    order), a list (sources in any order), a single UPat (every source matches it), or None (any
    sources). `arg`: the exact arg, if given. `name`: the match binds the node to this name; a name
    used twice must bind the same node. `allow_any_len`: the tuple only constrains the first
    sources."""
    __slots__ = ("op", "dtype", "src", "arg", "name", "allow_any_len", "_orders")

    def __init__(self, op: Ops | Iterable[Ops] | None = None, dtype: DType | Iterable[DType] | None = None,
                 src: tuple[UPat, ...] | list[UPat] | UPat | None = None, arg: Any = None,
                 name: str | None = None, allow_any_len: bool = False):
        self.op = None if op is None else frozenset([op] if isinstance(op, Ops) else op)
        self.dtype = None if dtype is None else frozenset([dtype] if isinstance(dtype, DType) else dtype)
        self.src, self.arg, self.name, self.allow_any_len = src, arg, name, allow_any_len
        if isinstance(src, list):
            self._orders = list(itertools.permutations(src))
        elif isinstance(src, tuple):
            self._orders = [src]
        else:
            self._orders = None

    @staticmethod
    def var(name: str | None = None, dtype: DType | Iterable[DType] | None = None) -> UPat:
        """Any node."""
        return UPat(dtype=dtype, name=name)

    @staticmethod
    def cvar(name: str | None = None, dtype: DType | Iterable[DType] | None = None) -> UPat:
        """Any constant."""
        return UPat(Ops.CONST, dtype=dtype, name=name)

    @staticmethod
    def const(value: Any, dtype: DType | Iterable[DType] | None = None) -> UPat:
        """The constant `value` (of the dtypes given)."""
        return UPat(Ops.CONST, dtype=dtype, arg=value)

    # operators build ALU patterns; commutative ops accept both orders
    def _alu(self, op: Ops, *others: Any) -> UPat:
        srcs = [self] + [o if isinstance(o, UPat) else UPat.const(o) for o in others]
        return UPat(op, src=srcs if op in GroupOp.Commutative else tuple(srcs))

    def __add__(self, x): return self._alu(Ops.ADD, x)
    def __radd__(self, x): return self._alu(Ops.ADD, x)
    def __mul__(self, x): return self._alu(Ops.MUL, x)
    def __rmul__(self, x): return self._alu(Ops.MUL, x)
    def __sub__(self, x): return self._alu(Ops.SUB, x)
    def __floordiv__(self, x): return self._alu(Ops.IDIV, x)
    def __mod__(self, x): return self._alu(Ops.MOD, x)
    def __and__(self, x): return self._alu(Ops.AND, x)
    def __or__(self, x): return self._alu(Ops.OR, x)
    def __xor__(self, x): return self._alu(Ops.XOR, x)
    def __neg__(self): return UPat(Ops.NEG, src=(self,))
    def lt(self, x) -> UPat: return self._alu(Ops.CMPLT, x)
    def le(self, x) -> UPat: return self._alu(Ops.CMPLE, x)
    def eq(self, x) -> UPat: return self._alu(Ops.CMPEQ, x)
    def ne(self, x) -> UPat: return self._alu(Ops.CMPNE, x)
    def maximum(self, x) -> UPat: return self._alu(Ops.MAX, x)
    def minimum(self, x) -> UPat: return self._alu(Ops.MIN, x)
    def where(self, a, b) -> UPat:
        return UPat(Ops.WHERE, src=(self, a if isinstance(a, UPat) else UPat.const(a),
                                    b if isinstance(b, UPat) else UPat.const(b)))
    def named(self, name: str) -> UPat:
        return UPat(self.op, self.dtype, self.src, self.arg, name, self.allow_any_len)

    def __repr__(self) -> str:
        ops = "*" if self.op is None else "|".join(sorted(o.name for o in self.op))
        return f"UPat({ops}{'' if self.name is None else ' ' + self.name})"

    def match(self, u: UOp, store: Store) -> list[Store]:
        """Every way `u` matches, each as the bindings added to `store`."""
        if self.op is not None and u.op not in self.op:
            return []
        if self.dtype is not None and u.dtype not in self.dtype:
            return []
        if self.arg is not None and not (u.arg == self.arg and type(u.arg) is type(self.arg)):
            return []
        if self.name is not None:
            bound = store.get(self.name)
            if bound is not None and bound is not u:
                return []
            store = {**store, self.name: u}
        if self.src is None:
            return [store]
        if isinstance(self.src, UPat):
            stores = [store]
            for s in u.src:
                stores = [m for st in stores for m in self.src.match(s, st)]
                if not stores:
                    return []
            return stores
        out: list[Store] = []
        for order in self._orders:
            if len(u.src) != len(order) and not (self.allow_any_len and len(u.src) >= len(order)):
                continue
            stores = [store]
            for pat, s in zip(order, u.src):
                stores = [m for st in stores for m in pat.match(s, st)]
                if not stores:
                    break
            out.extend(stores)
        return out


Rule = tuple[UPat, Callable[..., UOp | None]]


class PatternMatcher:
    """An ordered list of rules, indexed by the op each pattern starts with."""

    def __init__(self, rules: Sequence[Rule]):
        self.rules = list(rules)
        self._by_op: dict[Ops, list[tuple[UPat, Callable, bool, frozenset[Ops] | None]]] = {op: [] for op in Ops}
        for pat, fn in self.rules:
            takes_ctx = _takes_ctx(fn)
            for op in (pat.op if pat.op is not None else Ops):
                self._by_op[op].append((pat, fn, takes_ctx, _first_source_ops(pat)))

    def __add__(self, other: PatternMatcher) -> PatternMatcher:
        return PatternMatcher(self.rules + other.rules)

    def __len__(self) -> int:
        return len(self.rules)

    def rewrite(self, u: UOp, ctx: Any = None) -> UOp | None:
        """The first rule's replacement of `u` that is not None and not `u` itself."""
        for pat, fn, takes_ctx, first in self._by_op[u.op]:
            if first is not None and (not u.src or u.src[0].op not in first):
                continue   # a cheap test before the full match: most rules fail on the first source's op
            for store in pat.match(u, {}):
                ret = fn(ctx=ctx, **store) if takes_ctx else fn(**store)
                if ret is not None and ret is not u:
                    return ret
        return None


@functools.lru_cache(maxsize=4096)
def _takes_ctx(fn: Callable) -> bool:
    """Whether a rule's function takes the rewrite's context (asked once per function: matchers
    are combined with +, which makes a new one)."""
    return "ctx" in inspect.signature(fn).parameters


def _first_source_ops(pat: UPat) -> frozenset[Ops] | None:
    """The ops a node's first source must have for `pat` to match it (None: any)."""
    if not pat._orders or any(not order or order[0].op is None for order in pat._orders):
        return None
    return frozenset().union(*(order[0].op for order in pat._orders))


class RewriteNotConverging(RuntimeError):
    pass


def graph_rewrite(root: UOp, pm: PatternMatcher, ctx: Any = None, bottom_up: bool = True,
                  max_steps: int = 1_000_000) -> UOp:
    """Apply `pm` to every node under `root` until no rule fires, and return the new root.

    bottom_up=True (from the leaves up): a node is matched once its sources are rewritten.
    bottom_up=False (from the root down): a node is matched before its sources, then again
    after they are rewritten. In both, a replacement is itself rewritten to a fixed point.
    """
    done: dict[UOp, UOp] = {}
    # stack entries: (node, stage, pending replacement)
    stack: list[tuple[UOp, int, UOp | None]] = [(root, 0, None)]
    steps = 0
    while stack:
        n, stage, repl = stack.pop()
        if stage == 0:
            if n in done:
                continue
            steps += 1
            if steps > max_steps:
                raise RewriteNotConverging(f"graph_rewrite did not reach a fixed point in {max_steps} steps")
            if not bottom_up:
                r = pm.rewrite(n, ctx)
                if r is not None:
                    stack.append((n, 2, r))
                    stack.append((r, 0, None))
                    continue
            stack.append((n, 1, None))
            for s in reversed(n.src):
                if s not in done:
                    stack.append((s, 0, None))
        elif stage == 1:
            new_src = tuple(done[s] for s in n.src)
            nn = n if new_src == n.src else n.replace(src=new_src)
            if bottom_up:
                r = pm.rewrite(nn, ctx)
            else:
                r = None if nn is n else nn
            if r is None:
                done[n] = nn
                done[nn] = nn
            else:
                stack.append((n, 2, r))
                stack.append((r, 0, None))
        else:
            done[n] = done[repl]
    return done[root]


def substitute(root: UOp, mapping: dict[UOp, UOp], done: dict[UOp, UOp] | None = None) -> UOp:
    """`root` with every node in `mapping` replaced (not looking inside the replacements). `done`:
    the nodes already rebuilt by earlier calls over the same graph (their new nodes), extended."""
    if not mapping and not done:
        return root
    done = {} if done is None else done
    for n in root.toposort(lambda x: x in mapping or x in done):
        if n in done:
            continue
        if n in mapping:
            done[n] = mapping[n]
        else:
            new_src = tuple(done[s] for s in n.src)
            done[n] = n if new_src == n.src else n.replace(src=new_src)
    return done[root]
