"""Custom kernels and precompiled routines as the runtime sees them: the C entry point that adapts
a user's kernel to lazyarr's convention (`c_wrapper`), the scalar words it receives
(`scalar_bits`) and the arrays a precompiled routine is called with (`as_numpy_args`). The
`CallSpec` a CALL node carries is the IR's (`lazyarr.compiler.uop`); `lazyarr.calls` builds the
CALL nodes from tensors."""
from __future__ import annotations

import math
import struct
from typing import Any, Sequence

import numpy as np

from lazyarr.compiler.render_c import c_type
from lazyarr.compiler.uop import CallSpec


def as_numpy_args(spec: CallSpec, buffers: Sequence[Any]) -> list[np.ndarray]:
    """The arrays a precompiled routine receives: outputs, then inputs (buffers in that order)."""
    shapes = [s for s, _ in spec.outputs] + [s for s, _ in spec.input_specs]
    # an input may be the start of a longer buffer (a run of its storage)
    arrays = [b.numpy()[:math.prod(s)].reshape(s) for b, s in zip(buffers, shapes)]
    for i, a in enumerate(arrays):
        if i >= len(spec.outputs) and (i - len(spec.outputs)) not in spec.writes:
            a.flags.writeable = False
    return arrays


def c_wrapper(spec: CallSpec) -> tuple[str, str]:
    """The user's C source with an entry point of lazyarr's kernel convention (an array of
    addresses; scalars travel as their bits), and the entry's name."""
    entry = f"lazyarr_call_{spec.name}"
    args = [f"({c_type(d)}*)args[{i}]" for i, (_, d) in enumerate(spec.outputs)]
    for j, (_, d) in enumerate(spec.input_specs):
        const = "" if j in spec.writes else "const "
        args.append(f"({const}{c_type(d)}*)args[{len(spec.outputs) + j}]")
    first = len(spec.outputs) + len(spec.input_specs)
    for k, v in enumerate(spec.scalars):
        i = first + k
        args.append(f"(int64_t)args[{i}]" if isinstance(v, int) else f"lz_as_double(args[{i}])")
    helper = ("static inline double lz_as_double(uintptr_t bits) { union { uint64_t u; double d; } x; "
              "x.u = (uint64_t)bits; return x.d; }")
    return f"#include <stdint.h>\n{spec.source}\n{helper}\nvoid {entry}(const uintptr_t* args) {{ {spec.name}({', '.join(args)}); }}\n", entry


def scalar_bits(v: Any) -> int:
    """A scalar argument as the unsigned word the kernel receives."""
    if isinstance(v, int):
        return v & ((1 << 64) - 1)
    return struct.unpack("<Q", struct.pack("<d", float(v)))[0]
