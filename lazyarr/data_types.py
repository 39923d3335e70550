"""Data type functions (array API section "Data Type Functions")."""
from __future__ import annotations

import numpy as np

from typing import Any

from lazyarr import dtypes
from lazyarr.dtypes import DType, finfo, iinfo  # noqa: F401  (re-exported)
from lazyarr.runtime.devices import get_device
from lazyarr.arrays import Array, wrap
from lazyarr.creation import as_tensor
from lazyarr.graph import cast_uop

def astype(x: Array, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Array:
    """x converted to `dtype` (C casts: floats truncate toward zero, bool is x != 0; a complex value
    is True unless it is 0 + 0j). Complex to real or integer raises TypeError, as the standard asks:
    take real() or imag() first."""
    x = as_tensor(x)
    d = dtypes.as_dtype(dtype)
    if x.dtype.is_complex and not d.is_complex and not d.is_bool:
        raise TypeError(f"astype: cannot cast complex {x.dtype} to real {d} (take real() or imag() first)")
    out = x if d is x.dtype and not copy else wrap(cast_uop(x.uop, d), x.device)
    if device is not None and get_device(device) is not out.device:
        out = out.to_device(device)
    return out


def can_cast(from_: Any, to: Any, /) -> bool:
    """Whether `from_` (a dtype or an array) promotes to `to`: the array API's table within a kind,
    NumPy's safe casting across kinds, where the standard is silent (bool to any, int8 to float32)."""
    f = from_.dtype if isinstance(from_, Array) else dtypes.as_dtype(from_)
    t = dtypes.as_dtype(to)
    return dtypes.promote_types(f, t) is t


def isdtype(dtype: Any, kind: Any) -> bool:
    """Whether `dtype` is of `kind`: a dtype, a kind name ('bool', 'signed integer', 'unsigned
    integer', 'integral', 'real floating', 'complex floating', 'numeric') or a tuple of these."""
    if not isinstance(dtype, DType):
        if not isinstance(dtype, (np.dtype, type, str)):   # NumPy's dtypes and scalar types, and names, are dtypes too
            raise TypeError(f"isdtype: expected a dtype, got {type(dtype).__name__}")
        dtype = dtypes.as_dtype(dtype)
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, str):
        if kind not in dtypes.KINDS:
            raise ValueError(f"isdtype: unknown kind {kind!r}; expected one of {', '.join(dtypes.KINDS)}")
        return dtypes.KINDS[kind](dtype)
    return dtype == dtypes.as_dtype(kind)


def result_type(*arrays_and_dtypes: Any) -> DType:
    """The dtype of an operation on these arrays, dtypes and Python scalars (scalars are weak)."""
    found = [a.dtype if isinstance(a, Array) else a for a in arrays_and_dtypes
             if not (isinstance(a, (bool, int, float, complex)))]
    scalars = [a for a in arrays_and_dtypes if isinstance(a, (bool, int, float, complex))]
    if not found:
        if not scalars:
            raise ValueError("result_type needs at least one array or dtype")
        kinds = [dtypes.default_for_kind(dtypes.scalar_kind(s)) for s in scalars]
        return dtypes.promote_types(*kinds)
    d = dtypes.promote_types(*(dtypes.as_dtype(x) for x in found))
    for s in scalars:
        d = dtypes.weak_result(d, s)
    return d
