"""Calls: functions traced once into graphs, kernels given as source, and precompiled routines.

`function` (the decorator `lazyarr.function`) traces a Python function of tensors once per
signature (shapes, dtypes and devices of its tensor arguments, and its other arguments) into a
graph over PARAM nodes. Calling it again with tensors of that signature binds the parameters to
the arguments (the body is inlined: its graph fuses with the caller's) instead of running the
Python function again. With `compile=True` a call is compiled on its own: its results are
computed when the call returns, in kernels of their own. `Function.trace(*args)` pins one
signature; a pinned function raises ValueError, naming the parameter, for an argument that does
not fit it (its size, shape or dtype).

`custom_kernel` and `precompiled` make graph nodes of code lazyarr did not generate: a C kernel
given as source, or a Python-callable routine (a library's). They declare their inputs, the
new results they write, and the inputs they write through (`writes`). An input that the call
only reads and that is a buffer's elements in order from its start (the whole buffer, a reshape,
a leading slice: `contiguous_view` at offset 0, `schedule.call_run`) is passed as the buffer
itself; any other view (at an offset, reordered, computed) is first copied into new storage of
its own. An input written through gets storage of its own, initialised with its value, unless nothing can read the
input anymore, in which case the call writes into the input's storage. Results of calls carry no
gradient.

Raises ValueError for a misfit argument of a pinned function, and TypeError for arguments that
are neither tensors nor hashable.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from lazyarr import dtypes
from lazyarr.compiler.patterns import substitute
from lazyarr.graph import call_results
from lazyarr.compiler.uop import CallSpec, Ops, UOp
from lazyarr.runtime.devices import get_device
from lazyarr.arrays import Array, building_graphs, realize, realize_hooks, wrap
from lazyarr.creation import as_tensor


# ---- traced functions ------------------------------------------------------------------------

def _flatten(x: Any) -> tuple[list[Array], Any]:
    """The tensors in a (nested) tuple/list result, and a description to rebuild it."""
    if isinstance(x, Array):
        return [x], "T"
    if isinstance(x, (tuple, list)):
        parts = [_flatten(v) for v in x]
        return [t for ts, _ in parts for t in ts], (type(x), tuple(spec for _, spec in parts))
    raise TypeError(f"a traced function must return tensors (or tuples/lists of them), got {type(x).__name__}")


def _unflatten(spec: Any, tensors: Sequence[Array]) -> Any:
    it = iter(tensors)

    def build(s: Any) -> Any:
        if s == "T":
            return next(it)
        kind, parts = s
        return kind(build(p) for p in parts)
    return build(spec)


def signature(args: tuple, name: str) -> tuple:
    """What a traced or captured function is specialised to: each tensor argument's shape, dtype and
    device, each other argument's value. Raises TypeError (naming `name`) for an unhashable one."""
    sig = []
    for a in args:
        if isinstance(a, Array):
            sig.append(("tensor", a.shape, a.dtype, a.device.name))
        else:
            try:
                hash(a)
            except TypeError:
                raise TypeError(f"{name}: arguments must be tensors or hashable values, "
                                f"got {type(a).__name__}") from None
            sig.append(("value", type(a), a))
    return tuple(sig)


@dataclass
class _Trace:
    params: tuple[UOp, ...]
    outputs: tuple[UOp, ...]
    devices: tuple[Any, ...]
    structure: Any


class Function:
    """A Python function of tensors, traced once per signature (see the module's docs)."""

    def __init__(self, fn: Callable[..., Any], compile: bool = False):
        functools.update_wrapper(self, fn)
        self.fn, self.compile = fn, compile
        self.traces: dict[tuple, _Trace] = {}
        self.pinned: tuple | None = None
        self._names = list(getattr(fn, "__code__", None).co_varnames[:fn.__code__.co_argcount])\
            if hasattr(fn, "__code__") else []

    def _param_name(self, i: int) -> str:
        return f"'{self._names[i]}' (parameter {i})" if i < len(self._names) else f"parameter {i}"

    def trace(self, *args: Any) -> Function:
        """Trace for the signature of `args` and pin it: later calls must fit it."""
        self._trace(signature(args, self.__name__), args)
        self.pinned = signature(args, self.__name__)
        return self

    def _trace(self, sig: tuple, args: tuple) -> _Trace:
        params, traced_args = [], []
        for i, (a, s) in enumerate(zip(args, sig)):
            if s[0] == "tensor":
                p = UOp(Ops.PARAM, a.dtype, (), (i, a.shape))
                params.append(p)
                traced_args.append(wrap(p, a.device))
            else:
                traced_args.append(a)
        realize_hooks.append(self._refuse_values)
        building_graphs.append(self)
        try:
            tensors, structure = _flatten(self.fn(*traced_args))
        finally:
            realize_hooks.remove(self._refuse_values)
            building_graphs.pop()
        tr = _Trace(tuple(params), tuple(t.uop for t in tensors), tuple(t.device for t in tensors), structure)
        self.traces[sig] = tr
        return tr

    def _refuse_values(self, tensors: tuple) -> None:
        """Tracing: a value computed from the parameters has none yet (only a graph)."""
        for t in tensors:
            if any(u.op is Ops.PARAM for u in t.uop.toposort()):
                raise TypeError(f"{self.__name__}: lazyarr.function traces pure functions into graphs, and this "
                                f"one needs the value of a tensor computed from its arguments (a host read such "
                                f"as float(), or a realization such as backward() with an optimizer's step()); "
                                f"a training step that updates parameters is captured with lazyarr.compile_step")

    def _check_fit(self, sig: tuple) -> None:
        assert self.pinned is not None
        if len(sig) != len(self.pinned):
            raise ValueError(f"{self.__name__} takes {len(self.pinned)} arguments, got {len(sig)}")
        for i, (got, want) in enumerate(zip(sig, self.pinned)):
            if got == want:
                continue
            what = (f"a tensor of shape {want[1]} and dtype {want[2]} on {want[3]}" if want[0] == "tensor"
                    else f"the value {want[2]!r}")
            have = (f"shape {got[1]}, dtype {got[2]} on {got[3]}" if got[0] == "tensor" else repr(got[2]))
            raise ValueError(f"{self.__name__}: argument {self._param_name(i)} does not fit: expected {what}, "
                             f"got {have}")

    def __call__(self, *args: Any) -> Any:
        sig = signature(args, self.__name__)
        if self.pinned is not None:
            self._check_fit(sig)
        tr = self.traces.get(sig) or self._trace(sig, args)
        binding = {p: args[p.arg[0]].uop for p in tr.params}
        sink = substitute(UOp(Ops.SINK, dtypes.void, tr.outputs), binding) if binding else\
            UOp(Ops.SINK, dtypes.void, tr.outputs)
        results = [wrap(u, d) for u, d in zip(sink.src, tr.devices)]
        if self.compile:
            realize(*results)
        return _unflatten(tr.structure, results)


def function(fn: Callable[..., Any] | None = None, *, compile: bool = False) -> Any:
    """Decorator: trace `fn` once per signature and reuse its graph (see the module's docs)."""
    if fn is None:
        return lambda f: Function(f, compile=compile)
    return Function(fn, compile=compile)


# ---- custom kernels and precompiled calls ----------------------------------------------------

def _call(name: str, source: str | None, routine: Callable | None, inputs: Sequence[Any],
          outputs: Sequence[tuple[Any, Any]], writes: Sequence[int], scalars: Sequence[Any],
          global_size: Sequence[int] | None = None) -> Any:
    ts = [as_tensor(x) for x in inputs]
    device = ts[0].device if ts else get_device(None)
    for t in ts:
        if t.device is not device:
            raise ValueError(f"{name}: inputs are on different devices: {device.name} and {t.device.name}")
    outs = tuple((tuple(int(n) for n in shape), dtypes.as_dtype(dt)) for shape, dt in outputs)
    writes = tuple(int(i) for i in writes)
    for i in writes:
        if not 0 <= i < len(ts):
            raise ValueError(f"{name}: writes names input {i}, but there are {len(ts)} inputs")
    for v in scalars:
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            raise TypeError(f"{name}: scalars must be Python ints or floats, got {type(v).__name__}")
    if global_size is not None:
        global_size = tuple(int(n) for n in global_size)
        if not 1 <= len(global_size) <= 3 or any(n < 0 for n in global_size):
            raise ValueError(f"{name}: global_size must be 1 to 3 sizes >= 0, got {global_size}")
    spec = CallSpec(name, source, routine, tuple((t.shape, t.dtype) for t in ts), outs, writes, tuple(scalars),
                    global_size, device)
    results = tuple(wrap(u, device) for u in call_results(spec, [t.uop for t in ts]))
    return results[0] if len(results) == 1 else results


def custom_kernel(source: str, name: str, inputs: Sequence[Any], outputs: Sequence[tuple[Any, Any]] = (),
                  writes: Sequence[int] = (), scalars: Sequence[Any] = (),
                  global_size: Sequence[int] | None = None) -> Any:
    """A kernel given as source, in the language of the inputs' device. On the CPU, C:
    `void name(T0* out0, ..., const U0* in0, ..., scalars...)`, the new results first, then the
    inputs (an input in `writes` as `U*`), then ints (`int64_t`) and floats (`double`). On OpenCL,
    OpenCL C with the same arguments: `__kernel void name(__global T0* out0, ..., __global const
    U0* in0, ..., long or double scalars)`, launched over `global_size` work-items (default: the
    first result's element count; the driver picks the work-group size). Returns the results: the
    new outputs, then the written inputs' new values (one tensor, or a tuple)."""
    if not isinstance(source, str):
        raise TypeError(f"custom_kernel: the source must be a str, got {type(source).__name__}")
    if not isinstance(name, str):
        raise TypeError(f"custom_kernel: the name must be a str, got {type(name).__name__}")
    if not name.isidentifier():
        raise ValueError(f"custom_kernel: {name!r} is not a C identifier")
    return _call(name, source, None, inputs, outputs, writes, scalars, global_size)


def precompiled(routine: Callable[..., Any], inputs: Sequence[Any], outputs: Sequence[tuple[Any, Any]] = (),
                writes: Sequence[int] = (), scalars: Sequence[Any] = (), name: str | None = None) -> Any:
    """A precompiled routine called as `routine(out0, ..., in0, ..., *scalars)` with NumPy arrays
    over the buffers' memory (CPU): it fills the outputs and the written inputs."""
    return _call(name or getattr(routine, "__name__", "routine"), None, routine, inputs, outputs, writes, scalars)
