"""The graph: one immutable, hash-consed node type for every level of the compiler.

A `UOp` is (op, dtype, src, arg). Building a node that already exists returns the existing
object, so structural equality is identity: `a + b is a + b`. Rewrites, caches and schedule
reuse therefore compare and hash nodes in O(1). Nodes are kept alive only by their users; the
intern table holds them weakly. The table (the node's base class) and toposort are in C
(`uop_native.c`, see `lazyarr.compiler.native`), with these Python versions as the fallback.

The op set has three layers, all in `Ops`:
- tensor ops: leaves (BUFFER, CONST, IOTA), ALU ops, CAST/BITCAST, REDUCE_AXIS, the movement ops
  (RESHAPE, PERMUTE, EXPAND, PAD, SHRINK, FLIP), CONTIGUOUS, COPY, DETACH;
- rangeify ops: INDEX (a value at given indices) and REDUCE (a reduction over explicit RANGEs);
- kernel ops: DEFINE_GLOBAL, DEFINE_VAR, DEFINE_ACC, RANGE, LOAD, STORE, ASSIGN, END, AFTER, IF,
  ENDIF, SINK, DEFINE_LOCAL and BARRIER (work-group memory), DEFINE_REG (private arrays), and the vector ops VECTORIZE, GEP, CAT (vector dtypes: `DType.vec(n)`).
The semantics of each tensor op (shape, dtype, constant folding, local gradient) live in
`lazyarr.ops`.
"""
from __future__ import annotations

import hashlib
import math
import numbers
import secrets
import struct
import weakref
from _weakref import _remove_dead_weakref
from dataclasses import dataclass
from enum import Enum, auto
from typing import Any, Callable, Iterator

from lazyarr import dtypes
from lazyarr.compiler import native
from lazyarr.dtypes import DType


class Ops(Enum):
    # leaves
    BUFFER = auto(); CONST = auto(); IOTA = auto()
    # unary ALU
    NEG = auto(); NOT = auto(); ABS = auto(); SQRT = auto(); RECIP = auto()
    EXP = auto(); EXP2 = auto(); EXPM1 = auto(); LOG = auto(); LOG2 = auto(); LOG10 = auto()
    LOG1P = auto(); SIN = auto(); COS = auto(); TAN = auto(); ASIN = auto(); ACOS = auto()
    ATAN = auto(); SINH = auto(); COSH = auto(); TANH = auto(); ASINH = auto(); ACOSH = auto()
    ATANH = auto(); FLOOR = auto(); CEIL = auto(); TRUNC = auto(); RINT = auto(); ERF = auto()
    # binary ALU
    ADD = auto(); SUB = auto(); MUL = auto(); FDIV = auto(); IDIV = auto(); MOD = auto()
    MAX = auto(); MIN = auto(); POW = auto(); ATAN2 = auto(); HYPOT = auto(); COPYSIGN = auto()
    NEXTAFTER = auto(); FMOD = auto()
    CMPLT = auto(); CMPLE = auto(); CMPEQ = auto(); CMPNE = auto()
    AND = auto(); OR = auto(); XOR = auto(); SHL = auto(); SHR = auto()
    # ternary ALU
    WHERE = auto(); MULACC = auto()
    # type changes
    CAST = auto(); BITCAST = auto()
    # reduction over axes (tensor level)
    REDUCE_AXIS = auto()
    # movement
    RESHAPE = auto(); PERMUTE = auto(); EXPAND = auto(); PAD = auto(); SHRINK = auto(); FLIP = auto()
    # realization and markers
    CONTIGUOUS = auto(); COPY = auto(); DETACH = auto()
    # gather: src (x, i_0, ..., i_{n-1}), the value at out is x[i_0[out], ..., i_{n-1}[out]]
    GATHER = auto()
    # calls: PARAM is a traced function's parameter (arg (index, shape)); CALL runs a custom or
    # precompiled kernel on its sources (arg: the call's spec); CALL_RESULT is its i-th result
    PARAM = auto(); CALL = auto(); CALL_RESULT = auto()
    # rangeify
    INDEX = auto(); REDUCE = auto()
    # kernel level
    DEFINE_GLOBAL = auto(); DEFINE_VAR = auto(); DEFINE_ACC = auto(); RANGE = auto()
    LOAD = auto(); STORE = auto(); ASSIGN = auto(); END = auto(); AFTER = auto()
    # work-groups (group reductions): DEFINE_LOCAL is work-group memory (arg (number, size)),
    # BARRIER waits for every work-item of the group (src: what must be done before)
    DEFINE_LOCAL = auto(); BARRIER = auto()
    # DEFINE_REG: an array private to one thread or work-item (arg (number, size); src: the loops
    # it is defined inside, so each of their iterations has its own)
    DEFINE_REG = auto()
    # vectors: VECTORIZE builds a vector from scalars, GEP takes lanes (arg: tuple of lane
    # indices), CAT joins vectors
    VECTORIZE = auto(); GEP = auto(); CAT = auto()
    IF = auto(); ENDIF = auto(); SINK = auto(); NOOP = auto()

    def __repr__(self) -> str:
        return f"Ops.{self.name}"

    __hash__ = object.__hash__   # members are singletons: identity hashing, without a Python call


class GroupOp:
    Unary = frozenset({Ops.NEG, Ops.NOT, Ops.ABS, Ops.SQRT, Ops.RECIP, Ops.EXP, Ops.EXP2, Ops.EXPM1,
                       Ops.LOG, Ops.LOG2, Ops.LOG10, Ops.LOG1P, Ops.SIN, Ops.COS, Ops.TAN, Ops.ASIN,
                       Ops.ACOS, Ops.ATAN, Ops.SINH, Ops.COSH, Ops.TANH, Ops.ASINH, Ops.ACOSH,
                       Ops.ATANH, Ops.FLOOR, Ops.CEIL, Ops.TRUNC, Ops.RINT, Ops.ERF})
    Binary = frozenset({Ops.ADD, Ops.SUB, Ops.MUL, Ops.FDIV, Ops.IDIV, Ops.MOD, Ops.MAX, Ops.MIN,
                        Ops.POW, Ops.ATAN2, Ops.HYPOT, Ops.COPYSIGN, Ops.NEXTAFTER, Ops.FMOD,
                        Ops.CMPLT, Ops.CMPLE, Ops.CMPEQ, Ops.CMPNE, Ops.AND, Ops.OR, Ops.XOR,
                        Ops.SHL, Ops.SHR})
    Ternary = frozenset({Ops.WHERE, Ops.MULACC})
    ALU = Unary | Binary | Ternary
    Comparison = frozenset({Ops.CMPLT, Ops.CMPLE, Ops.CMPEQ, Ops.CMPNE})
    Commutative = frozenset({Ops.ADD, Ops.MUL, Ops.MAX, Ops.MIN, Ops.CMPEQ, Ops.CMPNE, Ops.AND,
                             Ops.OR, Ops.XOR, Ops.HYPOT})
    Movement = frozenset({Ops.RESHAPE, Ops.PERMUTE, Ops.EXPAND, Ops.PAD, Ops.SHRINK, Ops.FLIP})
    Elementwise = ALU | {Ops.CAST, Ops.BITCAST}
    Leaf = frozenset({Ops.BUFFER, Ops.CONST, Ops.IOTA, Ops.PARAM, Ops.DEFINE_GLOBAL, Ops.DEFINE_VAR})


def under_reshapes(u: UOp) -> UOp:
    """The node u reshapes (u itself if it is no RESHAPE)."""
    while u.op is Ops.RESHAPE:
        u = u.src[0]
    return u


def value_sources(op: Ops, src: tuple) -> tuple:
    """An ALU op's value sources: all of them but WHERE's condition (its source 0, a bool)."""
    return src[1:] if op is Ops.WHERE else src


def alu_dtype(op: Ops, value_dtype: DType) -> DType:
    """The dtype rule of an ALU op whose value sources have `value_dtype`: a comparison gives bool,
    |z| of a complex z its parts' type, any other op the values' dtype."""
    if op in GroupOp.Comparison:
        return dtypes.bool_
    return dtypes.component(value_dtype) if op is Ops.ABS and value_dtype.is_complex else value_dtype


def arg_key(arg: Any) -> Any:
    # floats compare equal across signs of zero (0.0 == -0.0) but are different constants
    if isinstance(arg, float):
        return ("f", struct.pack("<d", arg) if arg == arg else "nan")
    if isinstance(arg, complex):
        return ("c", arg_key(arg.real), arg_key(arg.imag))
    return arg


@dataclass(frozen=True)
class CallSpec:
    """What a CALL node runs: `source` (C) with entry `name`, `routine` (a Python callable), or
    `kernel` (a kernel graph written in the IR, which the device's renderer turns into source and
    which runs as any generated kernel does: its buffers the outputs, then the inputs);
    `outputs` the new results' (shape, dtype); `writes` the inputs it writes through; `scalars`
    extra arguments (ints and floats) passed after the buffers; `input_specs` the inputs'
    (shape, dtype)."""
    name: str
    source: str | None
    routine: Callable[..., Any] | None
    input_specs: tuple[tuple[tuple[int, ...], DType], ...]
    outputs: tuple[tuple[tuple[int, ...], DType], ...]
    writes: tuple[int, ...]
    scalars: tuple[Any, ...]
    global_size: tuple[int, ...] | None = None   # OpenCL: the work-items to launch
    device: Any = None                             # where it runs: its inputs' device
    kernel: UOp | None = None                      # an IR kernel's graph (a SINK)
    # the local gradient: grad(call, i, adjoint of result i) → one adjoint per input (None: none)
    grad: Callable[[UOp, int, UOp], list[UOp | None]] | None = None
    grad_complex: bool = False                     # whether `grad` is written for complex values too

    @property
    def result_shapes(self) -> tuple[tuple[int, ...], ...]:
        return tuple(s for s, _ in self.outputs) + tuple(self.input_specs[i][0] for i in self.writes)

    @property
    def result_dtypes(self) -> tuple[DType, ...]:
        return tuple(d for _, d in self.outputs) + tuple(self.input_specs[i][1] for i in self.writes)


# Each tensor-level op's definition (`lazyarr.ops.OpDef`: its shape rule, constant folding and
# local gradient), by op. The IR owns the table; lazyarr.ops, which builds gradients from nodes,
# fills it when it is imported (lazyarr's package init imports it before any node is built).
OP_DEFS: dict[Ops, Any] = {}


FUNCTION_COST = 30   # operations a transcendental function costs once decomposed (`OpDef.cost`)


def op_cost(op: Ops) -> int:
    """The operations one evaluation of `op` costs in work estimates: its definition's `cost`
    (1 for an op of no definition: kernel-level nodes)."""
    d = OP_DEFS.get(op)
    return 1 if d is None else d.cost


def fold_alu(op: Ops, dtype: DType, args: list[Any]) -> Any:
    """The constant `op(*args)` of `dtype`, or None when it is not folded."""
    return OP_DEFS[op].fold(dtype, *args)


# ---- identities of the reductions -------------------------------------------------------------

def reduce_identity(op: Ops, d: DType) -> Any:
    """The value a reduction of no elements gives (NumPy: 0 for sum, 1 for prod)."""
    if op is Ops.ADD:
        return dtypes.python_value(0, d)
    if op is Ops.MUL:
        return dtypes.python_value(1, d)
    if op is Ops.MAX:
        return dtypes.min_value(d)
    if op is Ops.MIN:
        return dtypes.max_value(d)
    raise ValueError(f"{op} is not a reduction")


_shape_depth = [0]   # how many shape_of calls are under way (one thread's count is enough to bound it)


def shape_of(u: UOp) -> tuple[int, ...]:
    """u's shape by its op's rule (`OP_DEFS`). Raises TypeError for an op of no shape (a
    kernel-level node), ValueError for sources whose shapes the rule rejects."""
    d = OP_DEFS.get(u.op)
    if d is None:
        raise TypeError(f"{u.op.name} nodes have no shape")
    depth = _shape_depth
    if depth[0] > 32 and any(s._shape is None for s in u.src):
        # deep in a graph built without shapes (a gradient's): the sources of unknown shape get
        # theirs first, sources first, instead of a recursion one level per node
        for n in u.toposort(lambda x: x._shape is not None)[:-1]:
            if n._shape is None and n.op in OP_DEFS:
                n._shape = OP_DEFS[n.op].shape(n)
    depth[0] += 1
    try:
        return d.shape(u)
    finally:
        depth[0] -= 1


class _Ref(weakref.ref):
    """The intern table's weak reference to a node, knowing its key (a WeakValueDictionary's
    Python-level get and set cost more than the rest of building a node)."""
    __slots__ = ("key",)


_interned: dict[tuple, _Ref] = {}


def _forget(ref: _Ref, remove: Callable = _remove_dead_weakref, table: dict = _interned) -> None:
    remove(table, ref.key)   # atomic: only if the entry is still this dead reference


class _PyNode:
    """The node table in Python: the reference for, and the fallback of, uop_native.c's Node (see
    lazyarr.compiler.native), which is the same table without a weak reference per node."""
    __slots__ = ("op", "dtype", "src", "arg", "_shape", "_ranges", "_bounds", "_view", "_grad", "_holder",
                 "__weakref__")

    def __new__(cls, op: Ops, dtype: DType, src: tuple[UOp, ...] = (), arg: Any = None) -> UOp:
        # dtypes are interned (never freed): keyed by identity, as hashing one is a Python call
        key = (op, id(dtype), src, arg if type(arg) is not float and type(arg) is not complex else arg_key(arg))
        ref = _interned.get(key)
        if ref is not None:
            found = ref()
            if found is not None:
                return found
        self = object.__new__(cls)
        self.op, self.dtype, self.src, self.arg = op, dtype, src, arg
        self._shape = self._ranges = self._bounds = self._view = self._grad = self._holder = None
        ref = _Ref(self, _forget)
        ref.key = key
        _interned[key] = ref
        return self

    @property
    def shape(self) -> tuple[int, ...]:
        """The tensor-level shape (lazyarr.ops' rule, computed once)."""
        s = self._shape
        if s is None:
            s = self._shape = shape_of(self)
        return s


# the node table's C module (`lazyarr.compiler.native`: the intern table, the walks, recording in C), or
# None where it could not be built (the Python fallbacks then)
native_module = native.load()


class UOp(_PyNode if native_module is None else native_module.Node):
    """One node of the graph. Build with `UOp(op, dtype, src, arg)`; equal nodes are identical.
    Its fields are op, dtype, src, arg and the caches _shape, _ranges, _bounds, _view, _grad, _holder;
    its tensor-level `shape` is the base's."""
    # _view: the view of the buffer holding the node's value once computed (`realized`, below);
    # _grad: whether it depends on a tensor that requires gradients (`array.graph_requires_grad`);
    # _holder: a weak reference to an array whose value the node is (`arrays.hold`), so that a
    # realization stores the values that live arrays still hold (`lazyarr.realize.held_values`)
    __slots__ = ()
    op: Ops
    dtype: DType
    src: tuple[UOp, ...]
    arg: Any

    def __reduce__(self):
        return (UOp, (self.op, self.dtype, self.src, self.arg))

    def __repr__(self) -> str:
        arg = "" if self.arg is None else f", {self.arg!r}"
        return f"UOp({self.op.name}, {self.dtype}{arg}, {len(self.src)} src)"

    def replace(self, **kwargs: Any) -> UOp:
        get = kwargs.get
        return UOp(get("op", self.op), get("dtype", self.dtype), tuple(get("src", self.src)), get("arg", self.arg))

    # ---- shape (tensor level; `shape` itself is the base's) ---------------------------------
    @property
    def size(self) -> int:
        return math.prod(self.shape)

    # ---- traversal ------------------------------------------------------------------------
    def toposort(self, stop: Callable[[UOp], bool] | None = None) -> list[UOp]:
        """Every node reachable from self, sources before users. `stop(u)` true: u is included
        but its sources are not visited."""
        return _toposort(self, stop)

    def walk(self) -> Iterator[UOp]:
        return iter(self.toposort())

    @property
    def ranges(self) -> frozenset[UOp]:
        """The RANGEs this node runs inside of: those it reads, less those its ENDs close."""
        if self._ranges is None:
            for u in self.toposort(lambda x: x._ranges is not None):
                if u._ranges is not None:
                    continue
                r = frozenset().union(*(s.ranges for s in u.src))
                if u.op is Ops.RANGE:
                    r = r | {u}
                elif u.op in (Ops.END, Ops.REDUCE):   # both close the ranges they list
                    r = r - frozenset(u.src[1:])
                u._ranges = r
        return self._ranges

    # ---- constants and index arithmetic (kernel level) -------------------------------------
    @staticmethod
    def const(dtype: DType, value: Any) -> UOp:
        return UOp(Ops.CONST, dtype, (), dtypes.python_value(value, dtype))

    def const_like(self, value: Any) -> UOp:
        return UOp.const(self.dtype, value)

    def alu(self, op: Ops, *src: UOp, dtype: DType | None = None) -> UOp:
        if dtype is None:
            dtype = alu_dtype(op, self.dtype)
        return UOp(op, dtype, (self, *src))

    def _operand(self, x: UOp | int | float | bool) -> UOp:
        return x if isinstance(x, UOp) else self.const_like(x)

    def __add__(self, x): return self.alu(Ops.ADD, self._operand(x))
    def __radd__(self, x): return self._operand(x).alu(Ops.ADD, self)
    def __sub__(self, x): return self.alu(Ops.SUB, self._operand(x))
    def __rsub__(self, x): return self._operand(x).alu(Ops.SUB, self)
    def __mul__(self, x): return self.alu(Ops.MUL, self._operand(x))
    def __rmul__(self, x): return self._operand(x).alu(Ops.MUL, self)
    def __floordiv__(self, x): return self.alu(Ops.IDIV, self._operand(x))
    def __mod__(self, x): return self.alu(Ops.MOD, self._operand(x))
    def __neg__(self): return self.alu(Ops.NEG)
    def __and__(self, x): return self.alu(Ops.AND, self._operand(x))
    def __or__(self, x): return self.alu(Ops.OR, self._operand(x))
    def lt(self, x) -> UOp: return self.alu(Ops.CMPLT, self._operand(x))
    def le(self, x) -> UOp: return self.alu(Ops.CMPLE, self._operand(x))
    def eq(self, x) -> UOp: return self.alu(Ops.CMPEQ, self._operand(x))
    def ne(self, x) -> UOp: return self.alu(Ops.CMPNE, self._operand(x))
    def where(self, a: UOp, b: UOp) -> UOp: return UOp(Ops.WHERE, a.dtype, (self, a, b))
    def cast(self, dtype: DType) -> UOp:
        return self if dtype is self.dtype else UOp(Ops.CAST, dtype, (self,))
    def maximum(self, x) -> UOp: return self.alu(Ops.MAX, self._operand(x))
    def minimum(self, x) -> UOp: return self.alu(Ops.MIN, self._operand(x))

    # ---- value bounds (kernel level, integers and bools) -----------------------------------
    @property
    def vmin(self) -> int | float:
        return self.bounds[0]

    @property
    def vmax(self) -> int | float:
        return self.bounds[1]

    @property
    def bounds(self) -> tuple[Any, Any]:
        if self._bounds is None:
            for u in self.toposort(lambda x: x._bounds is not None):
                if u._bounds is None:
                    u._bounds = compute_bounds(u)
        return self._bounds

    def is_const(self, value: Any = None) -> bool:
        return self.op is Ops.CONST and (value is None or self.arg == value)


def _py_toposort(root: UOp, stop: Callable[[UOp], bool] | None = None) -> list[UOp]:
    """UOp.toposort in Python (uop_native.c's toposort is the same walk)."""
    order: list[UOp] = []
    seen: set[UOp] = set()   # nodes hash by identity (no id() call per test)
    stack: list[tuple[UOp, bool]] = [(root, False)]
    push, pop, visit, add = stack.append, stack.pop, order.append, seen.add
    while stack:
        u, expanded = pop()
        if expanded:
            visit(u)
            continue
        if u in seen:
            continue
        add(u)
        push((u, True))
        if stop is None or not stop(u):
            for s in reversed(u.src):
                if s not in seen:
                    push((s, False))
    return order


_toposort = _py_toposort if native_module is None else native_module.toposort


def is_size_var(u: UOp) -> bool:
    """Whether u is a shape-generic kernel's size argument (DEFINE_VAR "n0", "n1", ...; see rangeify)."""
    return u.op is Ops.DEFINE_VAR and u.arg[0][0] == "n"


def is_escape(u: UOp) -> bool:
    """Whether u calls the target's own math function for the arguments an approximation leaves
    to it (`transcendentals.escape`: its arg is ("escape", magnitude))."""
    return type(u.arg) is tuple and u.arg[:1] == ("escape",)


def is_scalar_var(u: UOp) -> bool:
    """Whether u is a kernel's scalar argument (DEFINE_VAR "s0", "s1", ...: a Python scalar's value,
    passed at launch; see rangeify), or at tensor level a schedule's scalar (DEFINE_VAR ("scalar", k):
    the k-th liftable constant its graph's walk met, `liftable`)."""
    return u.op is Ops.DEFINE_VAR and u.arg[0][0] == "s"


def scalar_var_index(u: UOp) -> int:
    """Which of the kernel's scalar arguments u is (k for "sk")."""
    return int(u.arg[0][1:])


def scalar_var(dtype: DType, k: int) -> UOp:
    """The tensor-level node standing for the k-th scalar of a schedule (shape ())."""
    return UOp(Ops.DEFINE_VAR, dtype, (), ("scalar", k))


# the dtypes whose constants travel as kernel arguments, and the values kept in the code instead
# because they make it better (x*1, x+0, x*-1, x*x for a power of 2, a halving; powers of two in
# integer arithmetic become shifts and masks)
LIFTED_DTYPES = frozenset({dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64, dtypes.uint32,
                           dtypes.uint64})
BAKED_FLOATS = frozenset({0.0, 1.0, -1.0, 2.0, 0.5})


def liftable(u: UOp) -> bool:
    """Whether constant node u reaches its kernels as an argument rather than in their code: a
    finite value of a lifted dtype, not one that changes the code for the better (`BAKED_FLOATS`;
    integers -1, 0 and the powers of two). -0.0 is kept (its sign is the code's)."""
    if u.op is not Ops.CONST or u.dtype not in LIFTED_DTYPES:
        return False
    v = u.arg
    if type(v) is float:
        return v == v and v not in (math.inf, -math.inf) and (v not in BAKED_FLOATS or
                                                                (v == 0.0 and math.copysign(1.0, v) < 0))
    return type(v) is int and v != -1 and not (v >= 0 and v & (v - 1) == 0)


# what the schedule cache's keys number: ops, dtypes, argument keys and device names, each by
# `atom_number` when first met (`walk._walk`; the C walk adds to the same dict)
ATOMS: dict[Any, int] = {}
_UNSTABLE_ATOMS = iter(range((1 << 62) + secrets.randbits(56), 1 << 63))


def atom_number(x: Any) -> int:
    """An atom's number in structure keys: a 62-bit hash of its text (`stable_text`), so that a key
    means the same graph structure in every process (the schedule cache on disk, `schedule_disk`);
    an atom without one (an object of any other type) gets a number of this process alone, from a
    random start above every hash, which no other process's key will have."""
    text = stable_text(x)
    if text is None:
        return next(_UNSTABLE_ATOMS)
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little") >> 2


def stable_text(x: Any) -> str | None:
    """x as text that is the same in every process, equal for values a dict takes as one key (1,
    1.0 and True; a dtype and its name), for atoms: None, bools, numbers, strings, bytes, enums,
    dtypes and tuples of them. None for anything else."""
    if x is None:
        return "N"
    if isinstance(x, numbers.Integral):
        return f"I{int(x)}"
    if isinstance(x, numbers.Real):
        x = float(x)
        return f"I{int(x)}" if x.is_integer() else f"F{x.hex()}"
    if isinstance(x, str):   # (quoted: a tuple's text is unambiguous, whatever its strings hold)
        return "S" + repr(str(x))
    if isinstance(x, bytes):
        return "B" + x.hex()
    if type(x) is DType:   # (as its name: a dtype and its name are equal, one key of a dict)
        return "S" + repr(x.name)
    if isinstance(x, DType):   # (a kernel's pointer and vector types: equal to themselves alone)
        return f"D{x!r}"
    if isinstance(x, Enum):
        return f"E{type(x).__name__}.{x.name}"
    if type(x) is tuple:
        parts = [stable_text(e) for e in x]
        return None if None in parts else "(" + ",".join(parts) + ")"
    return None


if native_module is not None:
    native_module.setup(arg_key, Ops.BUFFER, lambda u: shape_of(u), Ops.CONST, liftable, LIFTED_DTYPES, BAKED_FLOATS,
                        ATOMS, (Ops, DType), Ops.RANGE, atom_number)


def is_generic(sink: UOp) -> bool:
    """Whether a rangeified kernel is shape-generic: its SINK counts size arguments (see rangeify)."""
    return bool(sink.arg and sink.arg[1])


def is_written_by_hand(sink: UOp) -> bool:
    """Whether a kernel was written in the IR (`lazyarr.compiler.ir_kernels`): its SINK names it
    (arg (buffers, 0, 0, name, independent loops)), and its loops stay as written."""
    return sink.arg is not None and len(sink.arg) > 3


def size_var_index(u: UOp) -> int:
    """Which of the kernel's size arguments u is (k for "nk")."""
    return int(u.arg[0][1:])


def node_exists(op: Ops, dtype: DType, src: tuple[UOp, ...] = (), arg: Any = None) -> bool:
    """Whether the node (op, dtype, src, arg) is alive: something can still read it."""
    ref = _interned.get((op, id(dtype), src, arg_key(arg)))
    return ref is not None and ref() is not None


if native_module is not None:   # (asked for each buffer of each realization)
    node_exists = native_module.node_exists   # noqa: F811


class Realized:
    """Computed node → the view of the buffer holding its value (`realized`, the one instance).
    Kept on the node (its `_view` slot, which only this class reads and writes; the native walks
    stop at nodes that have one), so an entry lives as long as the node does and a lookup is an
    attribute read. A node's value is a function of the node alone (nodes are immutable and
    interned), so the memo is sound for every array holding it; a write into an array gives that
    array a new node. Realization (`lazyarr.realize`, `schedule.bind_and_mark`) writes it; the
    scheduler's walks, the stages and the arrays read it."""

    def get(self, u: UOp, default: Any = None) -> Any:
        v = u._view
        return default if v is None else v

    def __contains__(self, u: UOp) -> bool:
        return u._view is not None

    def __getitem__(self, u: UOp) -> UOp:
        v = u._view
        if v is None:
            raise KeyError(u)
        return v

    def __setitem__(self, u: UOp, view: UOp) -> None:
        u._view = view

    def forget(self, u: UOp) -> None:
        """u counts as not computed again (its buffer is freed, or was never filled)."""
        u._view = None


realized = Realized()


def pretty(u: UOp, limit: int = 60) -> str:
    """A readable listing of the graph under `u`, one node per line, shared nodes named once."""
    order = u.toposort()
    if len(order) > limit:
        order = order[-limit:]
        head = [f"... ({len(u.toposort()) - limit} earlier nodes)"]
    else:
        head = []
    names = {id(x): f"%{i}" for i, x in enumerate(order)}
    lines = []
    for x in order:
        srcs = ", ".join(names.get(id(s), "…") for s in x.src)
        arg = "" if x.arg is None else f" {x.arg!r}"
        lines.append(f"{names[id(x)]} = {x.op.name}:{x.dtype}{arg} ({srcs})")
    return "\n".join(head + lines)


# ---- bounds --------------------------------------------------------------------------------

def _dtype_bounds(u: UOp) -> tuple[Any, Any]:
    d = u.dtype
    if isinstance(d, dtypes.PtrDType) or d.is_complex or d.kind == "v":
        return (-math.inf, math.inf)
    return (dtypes.min_value(d.scalar), dtypes.max_value(d.scalar))


def c_idiv(a: int, b: int) -> int:
    """C's integer division (truncating toward zero) of Python ints; 0 for b = 0, as the
    generated code's division helpers give."""
    if b == 0:
        return 0
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _compare_bounds(u: UOp) -> tuple[bool, bool]:
    a, b = u.src
    if not a.dtype.is_float or (a.op is Ops.CONST and b.op is Ops.CONST):
        if u.op is Ops.CMPLT:
            if a.vmax < b.vmin: return (True, True)
            if a.vmin >= b.vmax: return (False, False)
        elif u.op is Ops.CMPLE:
            if a.vmax <= b.vmin: return (True, True)
            if a.vmin > b.vmax: return (False, False)
        elif u.op in (Ops.CMPEQ, Ops.CMPNE):
            differ = a.vmax < b.vmin or b.vmax < a.vmin
            same = a.vmin == a.vmax == b.vmin == b.vmax
            if differ or same:
                v = same if u.op is Ops.CMPEQ else differ
                return (v, v)
    return (False, True)


def compute_bounds(u: UOp) -> tuple[Any, Any]:
    """The least and greatest value `u` can take (its sources' bounds already computed)."""
    full = _dtype_bounds(u)
    if u.op is Ops.CONST:
        return (u.arg, u.arg)
    if u.op is Ops.RANGE:
        return (0, u.src[0].vmax - 1)
    if u.op is Ops.DEFINE_VAR:
        return (u.arg[1], u.arg[2])
    if u.op in (Ops.VECTORIZE, Ops.CAT) and u.src and not isinstance(u.dtype, dtypes.PtrDType):
        return (min(s.vmin for s in u.src), max(s.vmax for s in u.src))
    if u.op is Ops.GEP and not isinstance(u.dtype, dtypes.PtrDType):
        return u.src[0].bounds
    if u.dtype.scalar.is_bool and u.op in GroupOp.Comparison:
        return _compare_bounds(u)
    if not (u.dtype.is_int or u.dtype.is_bool) or u.op not in GroupOp.ALU | {Ops.CAST}:
        return full
    s = [x.bounds for x in u.src]
    lo, hi = full
    out: tuple[Any, Any] = full
    if u.op is Ops.ADD:
        out = (s[0][0] + s[1][0], s[0][1] + s[1][1])
    elif u.op is Ops.SUB:
        out = (s[0][0] - s[1][1], s[0][1] - s[1][0])
    elif u.op is Ops.MUL:
        corners = [a * b for a in s[0] for b in s[1]]
        out = (min(corners), max(corners))
    elif u.op is Ops.NEG:
        out = (-s[0][1], -s[0][0])
    elif u.op is Ops.ABS:
        a, b = s[0]
        out = (a, b) if a >= 0 else (-b, -a) if b <= 0 else (0, max(-a, b))
    elif u.op is Ops.IDIV and u.src[1].op is Ops.CONST and u.src[1].arg != 0:
        c = u.src[1].arg
        corners = [c_idiv(a, c) for a in s[0]]
        out = (min(corners), max(corners))
    elif u.op is Ops.MOD and u.src[1].op is Ops.CONST and u.src[1].arg != 0:
        c = abs(u.src[1].arg)
        if s[0][0] >= 0:
            out = (0, c - 1) if s[0][1] >= c else s[0]
        else:
            out = (-(c - 1), c - 1) if s[0][1] > 0 else (-(c - 1), 0)
    elif u.op is Ops.MAX:
        out = (max(s[0][0], s[1][0]), max(s[0][1], s[1][1]))
    elif u.op is Ops.MIN:
        out = (min(s[0][0], s[1][0]), min(s[0][1], s[1][1]))
    elif u.op is Ops.WHERE:
        out = (min(s[1][0], s[2][0]), max(s[1][1], s[2][1]))
    elif u.op is Ops.CAST and u.dtype.is_bool:
        lo_src, hi_src = s[0]
        out = (False, False) if lo_src == hi_src == 0 else (True, True) if not lo_src <= 0 <= hi_src else (False, True)
    elif u.op is Ops.CAST and (u.src[0].dtype.is_int or u.src[0].dtype.is_bool):
        out = (int(s[0][0]), int(s[0][1]))
    elif u.op is Ops.AND and u.dtype.is_int and s[1][0] >= 0 and s[0][0] >= 0:
        out = (0, min(s[0][1], s[1][1]))
    elif u.op is Ops.SHR and u.dtype.is_int and u.src[1].op is Ops.CONST and 0 <= u.src[1].arg < u.dtype.bits:
        out = (s[0][0] >> u.src[1].arg, s[0][1] >> u.src[1].arg)
    elif u.op is Ops.AND and u.dtype.is_bool:
        out = (s[0][0] and s[1][0], s[0][1] and s[1][1])
    elif u.op is Ops.OR and u.dtype.is_bool:
        out = (s[0][0] or s[1][0], s[0][1] or s[1][1])
    elif u.op is Ops.NOT and u.dtype.is_bool:
        out = (not s[0][1], not s[0][0])
    if u.dtype.is_bool:
        return (bool(out[0]), bool(out[1]))
    # values that may wrap around have the dtype's full range
    if out[0] < lo or out[1] > hi:
        return full
    return out
