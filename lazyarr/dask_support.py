"""lazyarr tensors as the chunks of dask.array (README: "Scaling out with dask").

    import dask.array as da, lazyarr as xp
    x = da.from_array(xp.asarray(data), chunks=(1024, 4096))   # or numpy_backed.map_blocks(xp.asarray)
    (xp.exp(x) * 2 + 1).sum(axis=0).compute()                  # a lazyarr tensor, NumPy's answer

What this module adds to dask (none of it imports dask at `import lazyarr`):

- **One realization a task.** dask's array optimization (blockwise fusion) leaves each task one
  function of its input chunks; `optimize` runs it and then wraps every task so that the tensors it
  returns are realized before the task ends: the task's whole expression becomes one schedule of
  fused kernels, run on the worker that owns the task (without it, tasks would only record graphs
  and every value would be computed at the end, by whoever reads the result). A task that touches
  tensors runs under one lock a process (`TASK_LOCK`: its recording and its realization, which
  alone takes `arrays.realization_lock`): on the threaded scheduler lazyarr tasks take turns,
  each kernel using every core (OpenMP), while NumPy-only tasks never take the lock.
- **Sizes for the scheduler.** `sizeof_tensor` (the bytes of the value, computed or not: a tensor
  is realized before it leaves its task or its worker) is registered with `dask.sizeof`, so that
  the distributed scheduler balances memory and spills by real sizes (dask's default would be
  `sys.getsizeof`, a hundred bytes).

`register` does both. dask calls it when `dask.sizeof` is first imported, through the entry point
that lazyarr declares in the `dask.sizeof` group (pyproject.toml), in the client and in every
worker; from a source tree that is not installed, call `lazyarr.dask_support.register()` yourself
(workers only need it for the sizes: `client.run(register)`). The optimization is installed as
dask's `array_optimize` setting only where none is set; `dask.config.set(array_optimize=...)`
replaces it (`lazyarr.dask_support.optimize` then does the same thing by hand).

How tensors cross processes is `Tensor.__getstate__`'s: the realized value (buffer, dtype, shape)
and the device's name; an OpenCL tensor comes back on the receiving process's default device, or
on the CPU where it has no OpenCL.
"""
from __future__ import annotations

import functools
import threading
import types
from typing import Any, Callable

from lazyarr.arrays import Array, realize

# lazyarr's realizations, read-backs and host copies take `arrays.realization_lock`; a task takes
# this one for its recording too, so that tasks of several threads never interleave (recording
# from several threads at once is not tested)
TASK_LOCK = threading.RLock()

# the bytes of a Python object holding the value: what `sys.getsizeof` gives for a tensor
_OBJECT_BYTES = 128


def sizeof_tensor(t: Array) -> int:
    """The bytes a tensor holds, as dask's `sizeof` reports them: its value's (realized or not: it is
    realized before it leaves its task) and the object's."""
    if not isinstance(t, Array):
        raise TypeError(f"sizeof_tensor: expected a lazyarr tensor, got {type(t).__name__}")
    return int(t.nbytes) + _OBJECT_BYTES


def register(sizeof: Any = None) -> None:
    """Register `sizeof_tensor` with dask's `sizeof` dispatch (`sizeof`, the dispatch dask's entry
    point passes; None: `dask.sizeof.sizeof`) and install `optimize` as dask's array optimization
    where none is set. Idempotent; TypeError for a `sizeof` that is not a dask dispatch."""
    if sizeof is None:
        from dask.sizeof import sizeof
    if not callable(getattr(sizeof, "register", None)):
        raise TypeError(f"register: expected dask's sizeof dispatch, got {type(sizeof).__name__}")
    sizeof.register(Array, sizeof_tensor)
    import dask
    if dask.config.get("array_optimize", None) is None:
        # (global, as dask's own settings are: every array computed from now on gets it; graphs
        # without tensors only pass through the wrapper, which then does nothing)
        dask.config.set(array_optimize=optimize)


# ---- one realization a task ---------------------------------------------------------------------

def optimize(dsk: Any, keys: Any, **kwargs: Any) -> dict:
    """dask's array optimization (`dask.array.optimization.optimize`: blockwise fusion, culling,
    linear fusion), then every task wrapped so that the tensors it returns are realized before it
    ends, under `TASK_LOCK` (`run_task`). A graph in which no tensor and no function of lazyarr's
    is found (`_mentions_lazyarr`) is dask's, unwrapped: dask users' NumPy graphs pay only the
    search (a function reaching lazyarr other ways gives unrealized tensors: right, not fused per
    task). The signature of dask's `array_optimize`."""
    from dask._task_spec import Task, convert_legacy_graph
    from dask.array.optimization import optimize as dask_optimize
    from dask.utils import ensure_dict
    graph = dask_optimize(dsk, keys, **kwargs)
    if not isinstance(graph, dict) or not all(isinstance(v, (Task, *_nodes())) for v in graph.values()):
        graph = convert_legacy_graph(ensure_dict(graph))   # (with fusion off, dask leaves its layers)
    # only plain tasks: data, aliases and containers (a tuple of keys) compute nothing themselves
    found = {key: _mentions_lazyarr(node) for key, node in graph.items()
             if type(node) is Task and node.func is not run_task}
    if not any(found.values()) and not any(_mentions_lazyarr(node) for key, node in graph.items() if key not in found):
        return graph   # (no tensor nor lazyarr function in it: a graph of NumPy chunks, left as dask made it)
    out = {}
    for key, node in graph.items():
        if key in found:
            node = Task(key, run_task, found[key], node.func, *node.args, _data_producer=node.data_producer,
                        **node.kwargs)
        out[key] = node
    return out


def _nodes() -> tuple:
    from dask._task_spec import Alias, DataNode
    return Alias, DataNode


def run_task(uses_lazyarr: bool, func: Callable, *args: Any, **kwargs: Any) -> Any:
    """Run a task's function; the tensors it returns (also in a tuple, list or dict) realized in one
    schedule before it returns. A task that touches tensors (`uses_lazyarr`, found in the graph, or
    tensors among its inputs) runs under `TASK_LOCK`; another one runs freely, and is locked only to
    realize tensors it made after all (a function lazyarr could not see in the graph)."""
    if uses_lazyarr or _tensors(args, 1) or _tensors(kwargs.values(), 1):
        with TASK_LOCK:
            out = func(*args, **kwargs)
            _realize_outputs(out)
        return out
    out = func(*args, **kwargs)
    if _tensors((out,), 3):
        with TASK_LOCK:
            _realize_outputs(out)
    return out


def _realize_outputs(out: Any) -> None:
    found: list[Array] = []
    _collect(out, found, 3)
    if found:
        realize(*found)


def _collect(obj: Any, found: list, depth: int) -> None:
    if isinstance(obj, Array):
        found.append(obj)
    elif depth and isinstance(obj, (tuple, list)):
        for o in obj:
            _collect(o, found, depth - 1)
    elif depth and isinstance(obj, dict):   # (dask's mean and var pass dicts of partial results)
        for o in obj.values():
            _collect(o, found, depth - 1)


def _tensors(objs: Any, depth: int) -> bool:
    for o in objs:
        if isinstance(o, Array):
            return True
        if depth and isinstance(o, (tuple, list)) and _tensors(o, depth - 1):
            return True
    return False


def _is_lazyarr(obj: Any) -> bool:
    """An object of lazyarr's: a tensor, a function or ufunc, or the package and its modules."""
    if isinstance(obj, (Array, types.ModuleType)):
        return isinstance(obj, Array) or obj.__name__.split(".")[0] == "lazyarr"
    try:
        module = getattr(obj, "__module__", None) or getattr(type(obj), "__module__", None)
    except Exception:   # (an object whose attributes raise: not lazyarr's)
        return False
    return isinstance(module, str) and module.split(".")[0] == "lazyarr"


def _mentions_lazyarr(obj: Any, depth: int = 6) -> bool:
    """Whether a task's function or data is lazyarr's, looked for where dask puts them: fused
    subgraphs (dicts of tasks), tasks' functions and arguments, partials, and the globals and
    closures of Python functions (a lambda calling `xp.exp`), so that such a task takes the lock
    before it records anything."""
    from dask._task_spec import DataNode, Task
    if depth < 0:
        return False
    if _is_lazyarr(obj):
        return True
    if isinstance(obj, Task):
        return (_mentions_lazyarr(obj.func, depth - 1) or any(_mentions_lazyarr(a, depth - 1) for a in obj.args)
                or any(_mentions_lazyarr(a, depth - 1) for a in obj.kwargs.values()))
    if isinstance(obj, DataNode):
        return _mentions_lazyarr(obj.value, depth - 1)
    if isinstance(obj, dict):
        return any(_mentions_lazyarr(v, depth - 1) for v in obj.values())
    if isinstance(obj, (tuple, list)):
        return any(_mentions_lazyarr(v, depth - 1) for v in obj[:64])
    if isinstance(obj, functools.partial):
        return (_mentions_lazyarr(obj.func, depth - 1) or any(_mentions_lazyarr(a, depth - 1) for a in obj.args)
                or any(_mentions_lazyarr(a, depth - 1) for a in obj.keywords.values()))
    if isinstance(obj, types.FunctionType):
        names = obj.__code__.co_names
        if any(_is_lazyarr(obj.__globals__.get(n)) for n in names):
            return True
        cells = obj.__closure__ or ()
        return any(_mentions_lazyarr(c.cell_contents, depth - 1) for c in cells if _cell_full(c))
    return False


def _cell_full(cell: Any) -> bool:
    try:
        cell.cell_contents
    except ValueError:   # (a cell not yet filled)
        return False
    return True

