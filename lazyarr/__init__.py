"""lazyarr: lazy arrays compiled into fused kernels, with the Python array API (2025.12) and
NumPy's names.

    import lazyarr as xp
    x = xp.asarray([[1., 2.], [3., 4.]])
    y = (xp.exp(x) * 2).sum()      # nothing has run yet
    print(y)                       # realizes: one fused kernel compiles, runs and is cached
"""
from __future__ import annotations

import math as _math

from lazyarr import dtypes as _dtypes
from lazyarr import ops as _ops  # noqa: F401  (first: it fills the IR's table of op definitions)
from lazyarr.arrays import realize
from lazyarr.tensor import Tensor  # (above every namespace module: the class the arrays they make have)
from lazyarr.dtypes import (bool_ as bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64,  # noqa: A001
                            float16, float32, float64, complex64, complex128, DType, finfo, iinfo)
from lazyarr.creation import (arange, asarray, empty, empty_like, eye, from_dlpack, full, full_like, linspace,
                              meshgrid, ones, ones_like, tril, triu, zeros, zeros_like)
from lazyarr.elementwise import *  # noqa: F401,F403
from lazyarr.elementwise import abs, pow, round  # noqa: A001  (shadow builtins on purpose)
from lazyarr.manipulation import (broadcast_arrays, broadcast_shapes, broadcast_to, concat, expand_dims, flip,
                                  matrix_transpose, moveaxis, permute_dims, repeat, reshape, roll, squeeze, stack,
                                  tile, transpose, unstack, array_split, atleast_1d, atleast_2d, atleast_3d,
                                  column_stack, dsplit, dstack, hsplit, hstack, ravel, row_stack, split, swapaxes,
                                  vsplit, vstack)
from lazyarr.statistics import (all, any, cumprod, cumsum, cumulative_prod, cumulative_sum, diff,  # noqa: A001
                                max, mean, min, prod, std, sum, var)
from lazyarr.searching import (argmax, argmin, argwhere, count_nonzero, digitize, flatnonzero, nonzero, searchsorted,
                               where)
from lazyarr.linear_algebra import dot, inner, kron, matmul, outer, tensordot, vdot, vecdot
from lazyarr import fft, linalg
from lazyarr.einsum import einsum
from lazyarr.numpy_functions import *  # noqa: F401,F403
from lazyarr.numpy_functions import array, copy, shape, size  # noqa: F811  (NumPy's names, on purpose)
from lazyarr.numpy_elementwise import *  # noqa: F401,F403
from lazyarr.numpy_elementwise import divmod  # noqa: A001  (NumPy's name, on purpose)
from lazyarr.numpy_indexing import *  # noqa: F401,F403
from lazyarr.numpy_sets import *  # noqa: F401,F403
from lazyarr.numpy_statistics import *  # noqa: F401,F403
from lazyarr.polynomials import *  # noqa: F401,F403
from lazyarr.numpy_names import *  # noqa: F401,F403
from lazyarr.numpy_io import *  # noqa: F401,F403
from lazyarr.numpy_writes import *  # noqa: F401,F403
# (after the star imports: the elementwise names above become ufunc objects wrapping those functions)
from lazyarr.ufuncs import *  # noqa: F401,F403
from lazyarr.ufuncs import abs, divmod, pow, ufunc  # noqa: A001  (NumPy's names, on purpose)
from lazyarr.sorting import argpartition, argsort, partition, sort
from lazyarr.padding import pad
from lazyarr.histograms import bincount, histogram
from lazyarr.sets import isin, unique_all, unique_counts, unique_inverse, unique_values
from lazyarr.data_types import astype, can_cast, isdtype, result_type
from lazyarr.inspection import __array_namespace_info__
from lazyarr.runtime.device import Device
from lazyarr.runtime.devices import get_device
from lazyarr.runtime.errors import CompileError
from lazyarr import settings
from lazyarr.autograd import grad, no_grad, value_and_grad
from lazyarr.gathering import take, take_along_axis
from lazyarr.calls import custom_kernel, function, precompiled
from lazyarr.capture import CaptureError, compile_step
from lazyarr import debug
from lazyarr.debug import profile
from lazyarr import numpy_fallback as _numpy_fallback
from lazyarr.numpy_fallback import fallbacks

__version__ = "0.1.0"
__array_api_version__ = "2025.12"

e = _math.e
pi = _math.pi
inf = _math.inf
nan = _math.nan
newaxis = None

bool_ = bool
concatenate = concat
ndarray = Tensor


def __getattr__(name: str):
    """The subpackages users reach as attributes (xp.optim.SGD, xp.nn.functional, xp.random),
    imported on first use; NumPy's functions lazyarr lacks, computed by NumPy on the host with a
    warning (lazyarr.numpy_fallback); AttributeError for any other name."""
    if name in ("optim", "random", "nn"):
        import importlib
        return importlib.import_module(f"lazyarr.{name}")
    return _numpy_fallback.resolve(__name__, name)
