"""Devices and their buffers.

A `Device` owns everything that differs between targets: how memory is allocated, how values
are copied in and out of it, which renderer writes its kernels and how they are compiled and
launched. `lazyarr.runtime.devices.get_device(name)` returns the one Device object for a name
("cpu", "opencl", "opencl:1"); users see these objects as `Tensor.device`.

A `Buffer` is a run of `size` elements of one dtype on one device. It is allocated on first use,
so that building a schedule costs no memory. A complex buffer of n elements also has a real view
(`real_view()`): a Buffer of 2n elements of the component type (float32 for complex64) over the
same storage, NumPy's layout of interleaved (real, imaginary) pairs. Kernels, which compute with
real types only, read and write complex values through it (`lazyarr.compiler.complex`).
"""
from __future__ import annotations

import weakref
from typing import Any, Callable

import numpy as np

from lazyarr import dtypes
from lazyarr.dtypes import DType, component

_BYTES = dtypes.uint8


class Device:
    """One place where arrays live and kernels run. Subclasses implement the hooks below and
    declare what they have: `fp64` (computes with float64), `host_memory` (its buffers are the
    host's memory: NumPy reads them in place, a precompiled routine runs on them), and
    `plans_kernels` (it compiles a schedule's kernels from their graphs, `plan_kernel`, which lets
    the executor know a kernel by its graph without generating its source), and `long_loops` (a
    few threads that each run a long loop in order do the work well, as a CPU's cores do; a GPU
    wants many short work-items instead: algorithms such as the sort choose by it)."""
    name: str
    fp64 = True
    host_memory = False
    plans_kernels = False
    long_loops = False

    def __repr__(self) -> str:
        return f"Device({self.name!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):   # "opencl" is the device named "opencl:0"
            return self.name == canonical_name(other)
        return self is other

    def __hash__(self) -> int:
        return hash(self.name)

    # hooks
    def allocate(self, size: int, dtype: DType) -> Any:
        raise NotImplementedError

    def to_numpy(self, storage: Any, size: int, dtype: DType) -> np.ndarray:
        """The buffer's contents as a 1-D NumPy array (a view where the memory is the host's)."""
        raise NotImplementedError

    def copyin(self, storage: Any, data: np.ndarray) -> None:
        raise NotImplementedError

    def allocate_into(self, b: Buffer) -> None:
        """Give buffer b storage of its own (a device that knows the storage's address caches it too)."""
        b.storage = self.allocate(b.size, b.dtype)

    def free(self, storage: Any, nbytes: int, address: int | None = None) -> None:
        """Storage no buffer owns anymore (a caching allocator may keep it for reuse); `address`:
        its address where the buffer had it cached."""

    def copy_storage(self, dst: Any, src: Any, nbytes: int) -> None:
        """Copy the first `nbytes` of storage `src` into `dst` (through the host unless the device
        copies itself)."""
        raw = np.empty(nbytes, np.uint8)
        raw[:] = self.to_numpy(src, nbytes, _BYTES)[:nbytes]
        self.copyin(dst, raw)

    def keep(self, storage: Any) -> None:
        """Storage a launch plan keeps for itself from now on: a caching allocator must not hand it
        out again (`lazyarr.runtime.launch_plan`)."""

    def plan_kernel(self, item: Any) -> Any:
        """The plan that compiles `item`'s kernel (devices that `plans_kernels`)."""
        raise NotImplementedError

    def compile(self, name: str, source: str) -> Any:
        """A callable program; calling it with a list of Buffers (and extra words, a call's
        scalars) runs the kernel."""
        raise NotImplementedError

    def compile_many(self, kernels: list[tuple[str, str]]) -> list[Any]:
        """The programs of several kernels, (name, source) each: a device whose compiler costs
        about the same for one kernel or many (OpenCL) builds them together."""
        return [self.compile(name, source) for name, source in kernels]

    @property
    def renderer(self) -> Any:
        raise NotImplementedError

    def synchronize(self) -> None:
        pass


class Buffer:
    """`size` elements of `dtype` on `device`, allocated when first needed."""
    __slots__ = ("device", "size", "dtype", "storage", "base", "owns", "_real", "_addr", "__weakref__")

    def __init__(self, device: Device, size: int, dtype: DType, storage: Any = None, base: Any = None):
        # base: memory this buffer wraps but does not own (given storage, e.g. asarray(copy=False)):
        # never handed to another buffer. owns: the storage was allocated for this buffer (or
        # handed to it) and goes back to the device when the buffer dies.
        self.device, self.size, self.dtype, self.storage = device, size, dtype, storage
        self.base = storage if base is None else base
        self.owns = False
        self._real = self._addr = None   # _addr: (storage, its address), cached by the CPU device

    def __del__(self) -> None:
        if self.owns and self.storage is not None:   # (most buffers that die own nothing any more)
            try:
                release_storage(self)
            except Exception:   # interpreter shutdown: modules are already gone
                pass

    def release(self) -> None:
        """Give the storage this buffer owns back to the device (nothing will read it again)."""
        if self.owns and self.storage is not None:
            cached = self._addr   # (storage, address), where the device cached it
            self.device.free(self.storage, self.nbytes, cached[1] if cached is not None and cached[0] is self.storage else None)
            self.storage, self._addr, self.owns = None, None, False

    def __repr__(self) -> str:
        state = "allocated" if self.storage is not None else "unallocated"
        return f"<Buffer {self.device.name} {self.dtype}[{self.size}] {state}>"

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def ensure_allocated(self) -> Buffer:
        if self.storage is None:
            self.device.allocate_into(self)
            self.owns = True
        return self

    def take_storage(self, other: Buffer) -> None:
        """Use `other`'s storage (of the same size): the kernel about to run reads `other` there
        and nothing reads it afterwards. The storage's ownership moves along."""
        self.storage, self._addr = other.storage, other._addr
        self.owns, other.owns = other.owns, False

    def numpy(self) -> np.ndarray:
        self.ensure_allocated()
        return self.device.to_numpy(self.storage, self.size, self.dtype)

    def real_view(self) -> RealView:
        """This complex buffer as 2·size elements of its component type, over the same storage
        (one object per buffer, so that the executor follows its uses)."""
        assert self.dtype.is_complex, self.dtype
        view = self._real() if self._real is not None else None
        if view is None:   # held weakly: the view holds this buffer, and a cycle would delay freeing
            view = RealView(self)
            self._real = weakref.ref(view)
        return view

    def copyin(self, data: np.ndarray) -> Buffer:
        self.ensure_allocated()
        self.device.copyin(self.storage, np.ascontiguousarray(data, dtype=self.dtype.np).reshape(-1))
        return self


# how a dying buffer gives its storage back: Buffer.release, or the same in C where the node
# table's module is built (`lazyarr.runtime.prepared` installs it: a loop frees buffers every step)
release_storage: Callable[[Buffer], None] = Buffer.release
# non-empty while launches are recorded (lazyarr.capture): memory given back meanwhile must not serve
# another buffer of the recording, whose plan would then share it (a pool that cannot count the
# recording's references to it, OpenCL's, keeps nothing then)
recording_launches: list = []


class RealView(Buffer):
    """A complex buffer's storage read as (real, imaginary) pairs of its component type. The
    storage, its ownership and its base are the complex buffer's: allocating the view allocates
    the complex buffer, and handing storage to the view (in-place reuse) hands it to the complex
    buffer."""
    __slots__ = ("parent",)

    def __init__(self, parent: Buffer):
        self.parent, self.device, self.size, self.dtype = parent, parent.device, 2 * parent.size, component(parent.dtype)
        self._real = self._addr = None

    def __del__(self) -> None:
        pass   # the complex buffer owns the storage

    def __repr__(self) -> str:
        return f"<RealView {self.dtype}[{self.size}] of {self.parent!r}>"

    storage = property(lambda self: self.parent.storage, lambda self, v: setattr(self.parent, "storage", v))
    owns = property(lambda self: self.parent.owns, lambda self, v: setattr(self.parent, "owns", v))
    base = property(lambda self: self.parent.base, lambda self, v: setattr(self.parent, "base", v))

    def ensure_allocated(self) -> Buffer:
        self.parent.ensure_allocated()
        return self

    def copyin(self, data: np.ndarray) -> Buffer:
        pairs = np.ascontiguousarray(data, dtype=self.dtype.np).reshape(-1)
        self.parent.copyin(pairs.view(self.parent.dtype.np))
        return self


def canonical_name(name: str) -> str:
    """The name of the device `name` stands for: "opencl" is "opencl:0"."""
    name = name.lower()
    return "opencl:0" if name == "opencl" else name
