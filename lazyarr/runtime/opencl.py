"""The OpenCL device: buffers in device memory, kernels rendered as OpenCL C and built by the
platform's compiler (PoCL on a CPU, a GPU vendor's driver), launched on an in-order queue.

Device names are "opencl:N" for the N-th device over all platforms ("opencl" is "opencl:0").
Built program binaries are cached on disk keyed by source, device, driver version and build
options; a binary that the driver refuses is built again from source. PoCL builds a program
after a short header of the built-ins it names (`pocl_header`: ~25 ms instead of ~140 ms), and
then compiles each of its kernels (~70 ms a kernel, when the binary is read for the cache).
PoCL's own cache goes inside lazyarr's (POCL_CACHE_DIR, unless set), where the cache's size limit
counts it. Device memory is pooled (`allocate`, `free`): a buffer's memory,
rounded up to its size class, goes back to the pool when the buffer dies and serves the next
buffer of that class (a loop allocates the same sizes every iteration; creating a buffer costs the
driver a call each time), which is sound on an in-order queue: the next kernel to use it runs
after the last one that did. Reading a buffer on the host copies it (`to_numpy`);
`synchronize` waits for the queue. float64 is available only where the device
reports double precision; elsewhere allocating it raises TypeError naming the device. What the
device has (`Capabilities`: float64, work-group and local-memory limits, parameter space, ...) is
read once, and the renderer's choices follow from it.

Raises CompileError (with the source and the build log) when a kernel fails to build, and
RuntimeError saying how to install one when no OpenCL platform is found.
"""
from __future__ import annotations

import dataclasses
import functools
import os
import re
import warnings
from typing import Any

import numpy as np

from lazyarr import dtypes, settings
from lazyarr.compiler.render_opencl import GROUP_SIZE, MAX_WORK_ITEMS, OpenCLRenderer
from lazyarr.dtypes import DType
from lazyarr.runtime.cache import cache_key, load_cached, pocl_cache_dir
from lazyarr.runtime.device import Buffer, Device, recording_launches
from lazyarr.runtime import pocl_header
from lazyarr.runtime.errors import CompileError

GROUP_ITEMS = 256   # work-items of a work-group along dimension 0, where the kernel has no groups of its own
POOL_SHARE = 4      # the pool keeps at most a quarter of the device's memory


def size_class(nbytes: int) -> int:
    """The bytes a buffer of `nbytes` is given: a multiple of 256 up to 4 KiB, then the next of
    four steps between powers of two (at most a quarter more than asked), so that sizes which
    differ a little share memory."""
    if nbytes <= 4096:
        return max(256, -(-nbytes // 256) * 256)
    step = 1 << (nbytes.bit_length() - 3)
    return -(-nbytes // step) * step

INSTALL_HINT = ("no OpenCL platform is available: install one, e.g. PoCL for the CPU (Debian/Ubuntu: "
                "apt-get install -y pocl-opencl-icd) and pyopencl (pip install pyopencl)")


@functools.lru_cache(maxsize=None)
def opencl_devices() -> tuple[Any, ...]:
    """Every OpenCL device of every platform, in a stable order (empty without pyopencl)."""
    try:
        cl = _import_pyopencl()
    except ImportError:
        return ()
    try:
        platforms = cl.get_platforms()
    except cl.Error:
        return ()
    return tuple(d for p in platforms for d in p.get_devices())


def _import_pyopencl() -> Any:
    """pyopencl, with PoCL's kernel cache pointed into lazyarr's first (PoCL reads POCL_CACHE_DIR
    when its platform starts), so that the cache's size limit covers it."""
    if settings.cache and "POCL_CACHE_DIR" not in os.environ:
        os.environ["POCL_CACHE_DIR"] = pocl_cache_dir()
    import pyopencl
    return pyopencl


class OpenCLProgram:
    """A built kernel; calling it with the kernel's buffers launches it (without waiting)."""
    # a call only enqueues on the device's in-order queue: prepared launches (lazyarr.runtime.prepared)
    # call it directly, releasing a buffer past its last use before the kernels that read it have run
    enqueues = True

    def __init__(self, device: OpenCLDevice, name: str, source: str, program: Any):
        self.device, self.name, self.source = device, name, source
        self.kernel = getattr(program, name)
        match = re.match(r"// lazyarr launch ([\w ]+?)(?: local ([\d ]+))?\n", source)
        # the work-items per dimension: numbers, or names of size arguments (nK: the K-th size)
        self.launch_sizes = match.group(1).split() if match else ["1"]
        self.own_groups = tuple(int(v) for v in match.group(2).split()) if match and match.group(2) else None
        self.global_size, self.local_size = self.grid(())
        # the buffers the kernel takes: a buffer the kernel no longer reads (folded away) is not a
        # parameter, while the schedule still lists it
        signature = re.search(rf"__kernel void {re.escape(name)}\(([^)]*)\)", source)
        taken = [int(i) for i in re.findall(r"\bdata(\d+)\b", signature.group(1))] if signature else []
        self.args = taken or None   # a custom kernel's own parameter names: every buffer, in order
        self.sizes_in_buffer = bool(signature) and "lz_sizes" in signature.group(1)   # see OpenCLRenderer.signature
        # the scalar arguments' types, in order (see OpenCLRenderer.render)
        self.scalar_types = [_SCALAR_TYPES[t] for t in re.findall(r"const (\w+) s\d+\b", signature.group(1))] \
            if signature else []

    def grid(self, sizes: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The global and local sizes of a launch with size arguments `sizes`."""
        n = [int(v) if v.isdigit() else (min(sizes[int(v[1:])], MAX_WORK_ITEMS) if sizes else 1)
             for v in self.launch_sizes]
        # the kernel's own work-groups (group reductions), else up to GROUP_ITEMS along dimension 0;
        # the grid rounds up (the loops are grid-stride). A length that is a size argument gets
        # GROUP_ITEMS whatever its value: PoCL compiles a kernel again (~70 ms) for every work-group
        # size it is launched with, and a shape-generic kernel's many small shapes would each cost one
        first = n[0] if self.launch_sizes[0].isdigit() else GROUP_ITEMS
        local = self.own_groups or (min(GROUP_ITEMS, first),) + (1,) * (len(n) - 1)
        return tuple(-(-k // g) * g for k, g in zip(n, local)), local

    def __call__(self, buffers: list[Buffer], extra: tuple[int, ...] = (), scalars: tuple = ()) -> None:
        """Launch with the kernel's buffers, the values of its size arguments (`extra`) and of its
        scalar arguments."""
        used = buffers if self.args is None else [buffers[i] for i in self.args]
        global_size, local_size = self.grid(extra) if extra else (self.global_size, self.local_size)
        values = [_scalar_value(t, v) for t, v in zip(self.scalar_types, scalars)]
        if self.sizes_in_buffer:
            cl = self.device.cl
            sizes = cl.Buffer(self.device.context, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                              hostbuf=np.array(extra, dtype=np.int64))
            self.kernel(self.device.queue, global_size, local_size, *(b.storage for b in used), sizes, *values)
            return
        self.kernel(self.device.queue, global_size, local_size, *(b.storage for b in used), *map(np.int64, extra),
                    *values)

    def launch(self, buffers: list[Buffer], global_size: tuple[int, ...], scalars: list[Any]) -> None:
        """A custom kernel's launch: every buffer, then the scalars (NumPy scalars: long, double),
        over `global_size` work-items in work-groups the driver picks, or of the size the kernel
        declares (`reqd_work_group_size`; the global size then rounded up to whole groups)."""
        local = self.declared_group_size()
        if local is not None:
            local = local[:len(global_size)]
            global_size = tuple(-(-g // l) * l for g, l in zip(global_size, local))
        self.kernel(self.device.queue, global_size, local, *(b.storage for b in buffers), *scalars)

    def declared_group_size(self) -> tuple[int, ...] | None:
        """The work-group size the kernel's `reqd_work_group_size` attribute declares (None: none)."""
        if not hasattr(self, "_declared"):
            cl = self.device.cl
            size = tuple(self.kernel.get_work_group_info(cl.kernel_work_group_info.COMPILE_WORK_GROUP_SIZE,
                                                         self.device.cl_device))
            self._declared = size if any(size) else None
        return self._declared


# the C types of scalar kernel parameters (OpenCLRenderer) → the NumPy types a launch passes
_SCALAR_TYPES = {"float": np.float32, "double": np.float64, "int32_t": np.int32, "int64_t": np.int64,
                 "uint32_t": np.uint32, "uint64_t": np.uint64, "long": np.int64}


def _scalar_value(t: type, v: Any) -> Any:
    """v as a kernel parameter of NumPy type t: an integer wrapped to t's width (a constant of an
    integer dtype may hold its bits as an unsigned value, as the C launch's words do)."""
    if type(v) is float:
        return t(v)
    bits = 8 * np.dtype(t).itemsize
    v &= (1 << bits) - 1
    return t(v - (1 << bits) if np.dtype(t).kind == "i" and v >> (bits - 1) else v)


@dataclasses.dataclass(frozen=True)
class Capabilities:
    """What lazyarr reads from an OpenCL device, in one place: the renderer's and the algorithms'
    choices follow from these (the same code is right on PoCL and on a GPU's driver)."""
    cpu: bool                    # a CPU's cores (PoCL): long loops in order run well
    fp64: bool                   # double precision
    rounded_divide_sqrt: bool    # float32 division and sqrt can be asked to round correctly
    max_work_group_size: int
    compute_units: int           # the device's compute units (a GPU's multiprocessors)
    local_mem_size: int          # bytes of work-group memory
    max_parameter_size: int      # bytes of kernel parameters (1024 at least)
    subgroups: bool              # cl_khr_subgroups or cl_intel_subgroups (not used yet)
    pocl: bool                   # PoCL, whose builds take a short header (lazyarr.runtime.pocl_header)

    @staticmethod
    def read(cl: Any, d: Any) -> Capabilities:
        extensions = d.extensions.split()
        return Capabilities(
            cpu=bool(d.type & cl.device_type.CPU), fp64=d.double_fp_config != 0,
            rounded_divide_sqrt=bool(d.single_fp_config & cl.device_fp_config.CORRECTLY_ROUNDED_DIVIDE_SQRT),
            max_work_group_size=d.max_work_group_size, compute_units=d.max_compute_units,
            local_mem_size=d.local_mem_size,
            max_parameter_size=d.max_parameter_size,
            subgroups=any(e in extensions for e in ("cl_khr_subgroups", "cl_intel_subgroups")),
            pocl="Portable Computing Language" in d.platform.name)


class OpenCLDevice(Device):
    def __init__(self, index: int):
        cl = _import_pyopencl()
        devices = opencl_devices()
        if not devices:
            raise RuntimeError(INSTALL_HINT)
        if not 0 <= index < len(devices):
            raise ValueError(f"there is no OpenCL device {index}: {len(devices)} found")
        self.cl = cl
        self.name = f"opencl:{index}"
        self.cl_device = devices[index]
        self.context = cl.Context([self.cl_device])
        self.queue = cl.CommandQueue(self.context)
        self.capabilities = caps = Capabilities.read(cl, self.cl_device)
        self.fp64 = caps.fp64
        self.long_loops = caps.cpu   # PoCL: a CPU's cores
        # the largest power of two up to 256 that the device's work-groups and local memory take
        # (a group reduction keeps 1.5 elements of 8 bytes per work-item, per reduction)
        limit = min(GROUP_SIZE, caps.max_work_group_size, caps.local_mem_size // 64)
        group = 1 << (limit.bit_length() - 1) if limit > 0 else 0
        self._renderer = OpenCLRenderer(self.fp64, group if group >= 32 else 0, caps.max_parameter_size)
        # float32 division and sqrt rounded correctly, as NumPy's (OpenCL allows a few ulp otherwise)
        self.build_options = "-cl-fp32-correctly-rounded-divide-sqrt" if caps.rounded_divide_sqrt else ""
        self._free_memory: dict[int, list[Any]] = {}   # size class → memory no buffer owns (not `_pool`: the C buffer pass takes that for the CPU's)
        self._pooled_bytes = 0
        self._pool_limit = self.cl_device.global_mem_size // POOL_SHARE
        self._kept: set[int] = set()   # the handles of memory launch plans keep (`keep`)
        self.header_builds = {"short": 0, "full": 0}   # builds from source by header (pocl_header)

    def __repr__(self) -> str:
        return f"Device({self.name!r}: {self.cl_device.name.strip()})"

    @property
    def renderer(self) -> Any:
        return self._renderer

    def _check_dtype(self, dtype: DType) -> None:
        if dtype.scalar in (dtypes.float64, dtypes.complex128) and not self.fp64:
            raise TypeError(f"{dtype} needs double precision, which {self.name} ({self.cl_device.name.strip()}) "
                            f"does not support")

    def allocate(self, size: int, dtype: DType) -> Any:
        self._check_dtype(dtype)
        nbytes = size_class(size * dtype.itemsize)
        pooled = self._free_memory.get(nbytes)
        if pooled:
            self._pooled_bytes -= nbytes
            return pooled.pop()
        try:
            return self.cl.Buffer(self.context, self.cl.mem_flags.READ_WRITE, nbytes)
        except self.cl.MemoryError:   # the pool's memory back to the driver, then once more
            self._free_memory.clear()
            self._pooled_bytes = 0
            return self.cl.Buffer(self.context, self.cl.mem_flags.READ_WRITE, nbytes)

    def free(self, storage: Any, nbytes: int, address: int | None = None) -> None:
        """Keep the device memory for the next buffer of its size class, unless the pool is full."""
        size = storage.size
        if recording_launches:   # (the recording may hold it: see runtime.device)
            return
        if storage.int_ptr in self._kept:   # a launch plan's from now on (`keep`): never handed out
            self._kept.discard(storage.int_ptr)
            return
        if size != size_class(size) or self._pooled_bytes + size > self._pool_limit:
            return   # (not the allocator's, or no room: the driver frees it with its last reference)
        self._free_memory.setdefault(size, []).append(storage)
        self._pooled_bytes += size

    def keep(self, storage: Any) -> None:
        self._kept.add(storage.int_ptr)   # (by handle: pyopencl's buffers take no weak references)
        pooled = self._free_memory.get(storage.size, [])
        if any(b is storage for b in pooled):
            pooled[:] = [b for b in pooled if b is not storage]
            self._pooled_bytes -= storage.size

    def to_numpy(self, storage: Any, size: int, dtype: DType) -> np.ndarray:
        out = np.empty(size, dtype=dtype.np)
        if size:
            self.cl.enqueue_copy(self.queue, out, storage, is_blocking=True)
        return out

    def copyin(self, storage: Any, data: np.ndarray) -> None:
        if data.size:
            self.cl.enqueue_copy(self.queue, storage, np.ascontiguousarray(data), is_blocking=True)

    def copy_storage(self, dst: Any, src: Any, nbytes: int) -> None:
        if nbytes:
            self.cl.enqueue_copy(self.queue, dst, src, byte_count=nbytes)

    def synchronize(self) -> None:
        self.queue.finish()

    def compile(self, name: str, source: str) -> OpenCLProgram:
        return OpenCLProgram(self, name, source, self._program(name, source))

    def compile_many(self, kernels: list[tuple[str, str]]) -> list[OpenCLProgram]:
        """Several kernels (name, source) built as one program: a build costs the driver about the
        same for one kernel or thirty (PoCL: ~0.2 s either way), so a schedule's new kernels are
        built together. Each kernel is renamed `<name>_<k>` in the program, and its source with it."""
        if len(kernels) == 1:
            return [self.compile(*kernels[0])]
        renamed = [(f"{name}_{k}", source.replace(f"__kernel void {name}(", f"__kernel void {name}_{k}(", 1))
                   for k, (name, source) in enumerate(kernels)]
        head: dict[str, None] = {}   # the sources' lines before their kernel, each once, in order
        bodies = []
        for _, source in renamed:
            lines = source.splitlines()
            start = next(i for i, line in enumerate(lines) if line.startswith("__kernel void "))
            head.update(dict.fromkeys(line for line in lines[:start] if not line.startswith("// lazyarr launch")))
            bodies.append("\n".join(lines[start:]))
        program = self._program(", ".join(name for name, _ in kernels), "\n".join([*head, *bodies]) + "\n")
        return [OpenCLProgram(self, name, source, program) for name, source in renamed]

    def _program(self, name: str, source: str) -> Any:
        """The built program of `source` (from the disk cache when it was built before)."""
        cl = self.cl
        key = cache_key("opencl", self.cl_device.name, self.cl_device.driver_version,
                        self.cl_device.platform.version, self.build_options, source)

        def build(path: str) -> None:
            program = self._build(name, source)
            with open(path, "wb") as f:
                f.write(program.get_info(cl.program_info.BINARIES)[0])

        def load(binary: bytes) -> Any:
            return self._built(cl.Program(self.context, [self.cl_device], [binary]), self.build_options)
        # a cached binary the driver refuses is built again from source (a fresh one's error is raised)
        return load_cached("opencl", key, ".bin", build, load, (cl.Error,), as_bytes=True)

    def _built(self, program: Any, options: str) -> Any:
        """program.build(options) without pyopencl's CompilerWarning: a driver's notes on the code
        lazyarr generated (NVIDIA's "overriding noinline" for every kernel, Clang's "self-comparison"
        of a NaN test) are nothing a user can act on; a failed build still raises."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", self.cl.CompilerWarning)
            return program.build(options=options)

    def _build(self, name: str, source: str) -> Any:
        """`source` built by the driver: on PoCL first after the short header of the built-ins it
        names, and after the full one where that fails (the error raised is the full build's)."""
        cl = self.cl
        header = pocl_header.short_header(source) if self.capabilities.pocl else None
        if header is not None:
            try:
                program = self._built(cl.Program(self.context, f"{header}\n{source}"),
                                      f"{self.build_options} {pocl_header.OPTION}")
                self.header_builds["short"] += 1
                return program
            except cl.RuntimeError:
                pass
        self.header_builds["full"] += 1
        try:
            return self._built(cl.Program(self.context, source), self.build_options)
        except cl.RuntimeError as e:
            raise CompileError(f"the OpenCL compiler of {self.name} failed on kernel {name}", source,
                               str(e)) from None
