"""Data types: the dtype objects users see, their promotion rules, and their limits.

A `DType` is an interned, immutable description of one element type. It compares equal to itself
and to NumPy's dtype of the same name (so `x.dtype == np.float32` works as users expect), hashes
like its name, and prints as NumPy prints it (`float32`). Pointer types (`PtrDType`) only exist
inside kernels.

Promotion follows the array API's table; where the table leaves mixed kinds open (an integer with
a float, signed with unsigned 64-bit, bool with a number) it follows NumPy 2. Python scalars are
weak: they take the array's dtype when their kind fits it.
"""
from __future__ import annotations

import functools
import math
import struct
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True, eq=False)
class DType:
    """One element type. `kind` is 'b' (bool), 'i' (signed), 'u' (unsigned), 'f' (real float), 'c'
    (complex); `priority` orders types of one kind by size."""
    name: str
    itemsize: int
    kind: str
    priority: int

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DType):
            return self is other
        if not isinstance(other, (str, np.dtype, type)):
            return NotImplemented   # a tuple, a number, None...: not a dtype (and no exception to pay for)
        try:
            return as_dtype(other) is self
        except TypeError:
            return False

    def __hash__(self) -> int:
        return hash(self.name)

    def __reduce__(self):
        return (as_dtype, (self.name,))

    @functools.cached_property
    def np(self) -> np.dtype:
        """The NumPy dtype with the same layout (kept in the instance: every allocation asks)."""
        return _NP_BY_ID[id(self)]   # dtypes are interned; hashing one is a Python call

    @property
    def bits(self) -> int:
        return self.itemsize * 8

    # the kind's tests, is_float, is_complex, is_int, is_unsigned, is_bool and is_inexact, are plain
    # attributes (__post_init__): every tensor operation and compiler pass asks them, and a property
    # is a Python call
    is_float: bool = field(init=False, repr=False)
    is_complex: bool = field(init=False, repr=False)
    is_int: bool = field(init=False, repr=False)
    is_unsigned: bool = field(init=False, repr=False)
    is_bool: bool = field(init=False, repr=False)
    is_inexact: bool = field(init=False, repr=False)

    def __post_init__(self) -> None:
        k = self.kind
        for name, value in (("is_float", k == "f"), ("is_complex", k == "c"), ("is_int", k in ("i", "u")),
                            ("is_unsigned", k == "u"), ("is_bool", k == "b"), ("is_inexact", k in ("f", "c"))):
            object.__setattr__(self, name, value)

    @property
    def count(self) -> int:
        """Lanes: 1 for scalars, n for a vector of n (kernel level only)."""
        return 1

    @property
    def scalar(self) -> DType:
        return self

    def vec(self, n: int) -> DType:
        """The vector of `n` lanes of this scalar type (n == 1 is the scalar itself)."""
        return self if n == 1 else vector(self, n)

    # NumPy-style names some user code reads
    @property
    def type(self):
        return self.np.type

    def __call__(self, value: Any = 0) -> Any:
        """NumPy's scalar constructor (np.float32(1.5), np.uint8(10)): a NumPy scalar of this dtype,
        which combines with lazyarr's arrays as NumPy's scalars do."""
        return self.np.type(value)

    @property
    def dtype(self) -> np.dtype:
        """NumPy's dtype: NumPy reads an object's `dtype`, so np.dtype(d), np.zeros(2, dtype=d) and
        np.asarray(a, dtype=d) accept lazyarr's dtypes."""
        return self.np

    @property
    def char(self) -> str:
        return self.np.char

    @property
    def str(self) -> str:
        return self.np.str


@dataclass(frozen=True, eq=False)
class PtrDType(DType):
    """A pointer to elements of `base`: the type of a kernel's buffer arguments and registers."""
    base: DType = None  # type: ignore[assignment]
    space: str = "global"  # "global" (a kernel argument) or "reg" (an accumulator)

    def __repr__(self) -> str:
        return f"{self.base.name}*" if self.space == "global" else f"{self.base.name}[reg]"

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return hash((self.base.name, self.space))


@dataclass(frozen=True, eq=False)
class VecDType(DType):
    """`lanes` elements of `base` handled as one value (SIMD registers), inside kernels only."""
    base: DType = None  # type: ignore[assignment]
    lanes: int = 1

    def __repr__(self) -> str:
        return f"{self.base.name}x{self.lanes}"

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return hash((self.base.name, self.lanes))

    @property
    def count(self) -> int:
        return self.lanes

    @property
    def scalar(self) -> DType:
        return self.base


bool_ = DType("bool", 1, "b", 0)
int8 = DType("int8", 1, "i", 1)
int16 = DType("int16", 2, "i", 2)
int32 = DType("int32", 4, "i", 3)
int64 = DType("int64", 8, "i", 4)
uint8 = DType("uint8", 1, "u", 1)
uint16 = DType("uint16", 2, "u", 2)
uint32 = DType("uint32", 4, "u", 3)
uint64 = DType("uint64", 8, "u", 4)
float16 = DType("float16", 2, "f", 0)   # stored as half; computed in float32 (`compiler.prepare`)
float32 = DType("float32", 4, "f", 1)
float64 = DType("float64", 8, "f", 2)
complex64 = DType("complex64", 8, "c", 1)
complex128 = DType("complex128", 16, "c", 2)
# the dtype of index arithmetic inside kernels, and of statements (never user-visible dtypes)
index = int64
void = DType("void", 0, "v", 0)

ALL: tuple[DType, ...] = (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
                          float16, float32, float64, complex64, complex128)
INTS = tuple(d for d in ALL if d.is_int)
FLOATS = (float32, float64)
COMPLEX = (complex64, complex128)
_BY_NAME = {d.name: d for d in ALL}
_NP = {d: np.dtype(d.name) for d in ALL}
_NP_BY_ID = {id(d): n for d, n in _NP.items()}
_FROM_NP = {v: k for k, v in _NP.items()}
_PTRS: dict[tuple[DType, str], PtrDType] = {}

default_float, default_int, default_complex = float64, int64, complex128


_VECS: dict[tuple[DType, int], VecDType] = {}


def component(d: DType) -> DType:
    """The real type of a complex type's parts (float32 for complex64); real types are their own."""
    return float32 if d is complex64 else float64 if d is complex128 else d


def complex_of(d: DType) -> DType:
    """The complex type whose parts are of float type `d` (complex64 for float32)."""
    return complex64 if d.itemsize <= 4 else complex128


def vector(base: DType, lanes: int) -> VecDType:
    """The interned vector type of `lanes` elements of the scalar type `base`."""
    assert lanes > 1 and not isinstance(base, (VecDType, PtrDType)), (base, lanes)
    key = (base, lanes)
    if key not in _VECS:
        _VECS[key] = VecDType(f"{base.name}x{lanes}", base.itemsize * lanes, base.kind, base.priority, base, lanes)
    return _VECS[key]


def ptr(base: DType, space: str = "global") -> PtrDType:
    """The interned pointer type to `base` elements in `space`."""
    key = (base, space)
    if key not in _PTRS:
        _PTRS[key] = PtrDType(f"{base.name}*", 8, "p", 0, base, space)
    return _PTRS[key]


def as_dtype(x: Any) -> DType:
    """`x` as a lazyarr dtype: a DType, a NumPy dtype or scalar type, a name, or a Python type.
    Raises TypeError for anything else."""
    if isinstance(x, DType):
        return x
    if x is None:
        raise TypeError("dtype None is not a data type here; pass a dtype such as xp.float32")
    if x is bool:
        return bool_
    if x is int:
        return default_int
    if x is float:
        return default_float
    if x is complex:
        return default_complex
    if isinstance(x, str) and x in _BY_NAME:
        return _BY_NAME[x]
    try:
        d = np.dtype(x)
    except Exception:
        raise TypeError(f"data type {x!r} not understood") from None
    if d.byteorder == ">":
        d = d.newbyteorder("=")
    if d in _FROM_NP:
        return _FROM_NP[d]
    raise TypeError(f"data type {d} is not supported by lazyarr (supported: "
                    f"{', '.join(t.name for t in ALL)})")


# ---- promotion -------------------------------------------------------------------------------

def _promote_pair(a: DType, b: DType) -> DType:
    if a is b:
        return a
    if a.kind == b.kind:
        return a if a.priority >= b.priority else b
    if a.is_bool:
        return b
    if b.is_bool:
        return a
    # mixed kinds, by NumPy 2's rules (the array API table agrees wherever it defines the pair)
    return _FROM_NP[np.promote_types(a.np, b.np)]


def promote_types(*dtypes: DType) -> DType:
    """The dtype that holds every one of `dtypes` (array API table; NumPy where it is silent)."""
    out = dtypes[0]
    for d in dtypes[1:]:
        out = _promote_pair(out, d)
    return out


def scalar_kind(x: Any) -> str | None:
    """'b', 'i', 'f', 'c' for a Python bool, int, float or complex; None otherwise."""
    if isinstance(x, bool):
        return "b"
    if isinstance(x, int):
        return "i"
    if isinstance(x, float):
        return "f"
    if isinstance(x, complex):
        return "c"
    return None


def default_for_kind(kind: str) -> DType:
    return {"b": bool_, "i": default_int, "f": default_float, "c": default_complex}[kind]


def weak_result(array_dtype: DType, scalar: Any) -> DType:
    """The dtype of an operation between an array of `array_dtype` and a Python scalar: the
    array's dtype when the scalar's kind fits it, otherwise the default dtype of the scalar's kind
    promoted with the array's (an int array with a float scalar gives the default float)."""
    k = scalar_kind(scalar)
    order = "biufc"
    ak = array_dtype.kind
    if k is None:
        raise TypeError(f"unsupported operand type {type(scalar).__name__}")
    if order.index(k) <= order.index(ak if ak != "u" else "i") or (k == "f" and ak == "c"):
        return array_dtype
    if k == "c" and ak == "f":
        return complex64 if array_dtype.itemsize <= 4 else complex128
    return default_for_kind(k)


def check_scalar_fits(scalar: Any, dtype: DType) -> None:
    """Raise OverflowError, as NumPy 2 does, when a Python int does not fit an integer dtype."""
    if dtype.is_int and isinstance(scalar, int) and not isinstance(scalar, bool):
        info = iinfo(dtype)
        if not info.min <= scalar <= info.max:
            raise OverflowError(f"Python integer {scalar} out of bounds for {dtype.name}")


def cast_scalar(value: Any, dtype: DType) -> Any:
    """A Python (or NumPy) scalar as a value of `dtype`, cast as NumPy's full and its reductions'
    `initial` cast one (unsafely): a float truncated into an integer type, any number into bool as
    its truth, a complex losing its imaginary part (NumPy's ComplexWarning), with NumPy's warnings;
    a Python int that does not fit an integer type is an OverflowError, as in NumPy 2."""
    if isinstance(value, np.generic):
        value = value.item()
    check_scalar_fits(value, dtype)
    return np.asarray(value).astype(dtype.np).item()


def scalar_needs_cast(value: Any, dtype: DType) -> bool:
    """Whether a Python scalar's kind differs from `dtype`'s, so that cast_scalar changes it."""
    if isinstance(value, complex):
        return not dtype.is_complex
    if isinstance(value, float):
        return not dtype.is_inexact
    return dtype.is_bool and not isinstance(value, bool)


# ---- limits ----------------------------------------------------------------------------------

# iinfo of each integer dtype, made once (creation functions check their ints at every call)
_int_limits: dict[DType, Any] = {}


@dataclass(frozen=True)
class iinfo_object:
    bits: int
    max: int
    min: int
    dtype: DType


@dataclass(frozen=True)
class finfo_object:
    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: DType
    tiny: float
    resolution: float


def _dtype_of(t: Any) -> DType:
    """A dtype, a NumPy dtype, scalar type or name, or an array: its dtype."""
    if isinstance(t, (DType, np.dtype, str, type)):
        return as_dtype(t)
    return as_dtype(getattr(t, "dtype", t))


def iinfo(t: Any) -> iinfo_object:
    """Machine limits of an integer dtype (or of an array's dtype)."""
    d = _dtype_of(t)
    info = _int_limits.get(d)
    if info is None:
        if not d.is_int:
            raise ValueError(f"iinfo needs an integer dtype, got {d}")
        i = np.iinfo(d.np)
        info = _int_limits[d] = iinfo_object(int(i.bits), int(i.max), int(i.min), d)
    return info


def finfo(t: Any) -> finfo_object:
    """Machine limits of a floating-point dtype (or of an array's dtype); complex dtypes report
    the limits of their real part, with their own dtype."""
    d = _dtype_of(t)
    if not d.is_inexact:
        raise ValueError(f"finfo needs a floating-point dtype, got {d}")
    real = d if d.is_float else float32 if d is complex64 else float64
    f = np.finfo(real.np)
    return finfo_object(int(f.bits), float(f.eps), float(f.max), float(f.min),
                        float(f.smallest_normal), real, float(f.tiny),
                        float(f.resolution))


def min_value(d: DType) -> Any:
    """The smallest value of `d` (-inf for floats): the identity of a max reduction."""
    if d.is_bool:
        return False
    if d.is_int:
        return iinfo(d).min
    return -math.inf


def max_value(d: DType) -> Any:
    """The largest value of `d` (+inf for floats): the identity of a min reduction."""
    if d.is_bool:
        return True
    if d.is_int:
        return iinfo(d).max
    return math.inf


_f32 = struct.Struct("<f")


def python_value(x: Any, d: DType) -> Any:
    """`x` as the Python value a constant of dtype `d` holds: wrapped like C for integers,
    rounded to float32 for float32."""
    if d.is_bool:
        return bool(x)
    if d.is_int:
        v = int(x)
        v &= (1 << d.bits) - 1
        if d.kind == "i" and v >= 1 << (d.bits - 1):
            v -= 1 << d.bits
        return v
    if d.is_complex:
        c = complex(x)
        if d is complex64:
            c = complex(float(np.float32(c.real)), float(np.float32(c.imag)))
        return c
    f = float(x)
    if d is float32:
        try:   # C's double-to-float rounding, as np.float32 (whose errstate costs microseconds)
            f = _f32.unpack(_f32.pack(f))[0]
        except OverflowError:
            with np.errstate(over="ignore"):
                f = float(np.float32(f))
    elif d is float16:
        with np.errstate(over="ignore"):
            f = float(np.float16(f))
    return f


# the array API's dtype kinds (isdtype, __array_namespace_info__().dtypes(kind=...)): each a test of a dtype
KINDS = {
    "bool": lambda d: d.is_bool,
    "signed integer": lambda d: d.kind == "i",
    "unsigned integer": lambda d: d.kind == "u",
    "integral": lambda d: d.is_int,
    "real floating": lambda d: d.is_float,
    "complex floating": lambda d: d.is_complex,
    "numeric": lambda d: d.kind in "iufc",
}
