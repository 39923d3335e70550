"""NumPy's functions that lazyarr lacks, computed by NumPy on host copies (as cuPyNumeric falls
back), so that a NumPy program calling one still runs.

The package and its `linalg`, `fft` and `random` modules answer a name they do not define through
`resolve` (their module `__getattr__`, PEP 562): for a public function of NumPy's matching
namespace, a wrapper (made once a name) that realizes lazyarr array arguments to NumPy arrays (in
lists, tuples and keywords too), calls NumPy's function, and returns its arrays as lazyarr arrays
on the device of the first lazyarr argument (the default device, the CPU unless
set, without one). Its first call warns, once a
process: RuntimeWarning "lazyarr.<name> is not implemented in lazyarr; computed by NumPy on the
host". An argument that requires gradients is a TypeError: NumPy's value has no gradient.

Not served: private names, NumPy's classes and submodules (AttributeError, so `hasattr` answers
False), NumPy's constants (their values are returned), and the names in EXCLUDED. `fallbacks()`
lists the names served so far, or every name that would be.
"""
from __future__ import annotations

import functools
import types
import warnings
from typing import Any, Callable

import numpy as np

from lazyarr import dtypes
from lazyarr.arrays import Array
from lazyarr.creation import asarray
from lazyarr.runtime.devices import get_device

# lazyarr's module → NumPy's namespace it stands for, and the prefix its names take in messages
NAMESPACES: dict[str, tuple[Any, str]] = {
    "lazyarr": (np, ""),
    "lazyarr.linalg": (np.linalg, "linalg."),
    "lazyarr.fft": (np.fft, "fft."),
    "lazyarr.random": (np.random, "random."),
}

# Names never served, by why. A consumer probing with hasattr(xp, name) must not be told yes:
EXCLUDED: dict[str, frozenset[str]] = {
    # NumPy's functions that write into their first argument: the write would land in a host copy
    # and be lost (SciPy's stats, for one, calls xp.put_along_axis when hasattr finds it, and reads
    # its argument back); put, put_along_axis, place and putmask are lazyarr's own (numpy_writes)
    "lazyarr": frozenset({"copyto", "fill_diagonal", "test"}),   # (test: NumPy's own test runner)
    "lazyarr.linalg": frozenset({"test"}),
    "lazyarr.fft": frozenset({"test"}),
    # the state of NumPy's generator: lazyarr's stream is its own (counter-based), which a NumPy
    # state can neither hold nor restore
    "lazyarr.random": frozenset({"test", "get_state", "set_state", "get_bit_generator", "set_bit_generator"}),
}

# The NumPy generator random fallbacks draw from: lazyarr.random.seed seeds it too (`reseed`), so
# a seeded program draws the same numbers every run, and NumPy's own global state is left alone
_random_state = np.random.RandomState()

_wrappers: dict[str, Callable[..., Any]] = {}   # qualified name → its wrapper, made once
_served: set[str] = set()                      # qualified names called (and warned about) so far


def reseed(seed: int | None) -> None:
    """Seed the NumPy generator random fallbacks draw from (None: from the system's entropy)."""
    _random_state.seed(seed)


def _numpy_object(module_name: str, name: str) -> Any:
    """What NumPy's namespace for `module_name` has under `name` that may be served, else None."""
    namespace, _ = NAMESPACES[module_name]
    if name.startswith("_") or name in EXCLUDED[module_name]:
        return None
    value = getattr(namespace, name, None)
    if value is None or isinstance(value, (type, types.ModuleType)):
        return None
    if module_name == "lazyarr.random" and callable(getattr(_random_state, name, None)):
        return getattr(_random_state, name)   # (the legacy functions are this generator's methods)
    return value


def resolve(module_name: str, name: str) -> Any:
    """The value of a name module `module_name` lacks: NumPy's function wrapped, NumPy's constant,
    or AttributeError (the message Python gives for a missing module attribute)."""
    value = _numpy_object(module_name, name)
    if value is None:
        raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
    if not callable(value):
        return value
    qualified = NAMESPACES[module_name][1] + name
    wrapper = _wrappers.get(qualified)
    if wrapper is None:
        wrapper = _wrappers[qualified] = _wrap(qualified, value)
    return wrapper


def is_fallback(value: Any) -> bool:
    """Whether `value` is a wrapper this module made (not lazyarr's own function)."""
    return getattr(value, "__lazyarr_fallback__", False)


def fallbacks(possible: bool = False) -> list[str]:
    """The sorted names of NumPy's functions that NumPy has computed for lazyarr in this process
    (`linalg.`, `fft.` and `random.` prefixed for those modules' names); with `possible=True`,
    every name that would be served so (NumPy's functions that lazyarr lacks)."""
    if not possible:
        return sorted(_served)
    import importlib
    names = []
    for module_name, (namespace, prefix) in NAMESPACES.items():
        module = importlib.import_module(module_name)
        names += [prefix + n for n in dir(namespace) if n not in vars(module) and n not in _LAZY_ATTRIBUTES and
                  callable(_numpy_object(module_name, n))]
    return sorted(names)


_LAZY_ATTRIBUTES = ("optim", "random", "nn")   # the package's own, imported on first use


def _walk(value: Any):
    """The lazyarr arrays in an argument: itself, or those in its lists and tuples."""
    if isinstance(value, Array):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _walk(v)


def to_host(value: Any) -> Any:
    """An argument with its lazyarr arrays realized as NumPy arrays (lists and tuples rebuilt)."""
    if isinstance(value, Array):
        return np.asarray(value)
    if isinstance(value, (list, tuple)) and any(True for _ in _walk(value)):
        items = [to_host(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    return value


def _to_lazy(value: Any, device: Any) -> Any:
    """A result with NumPy's arrays made lazyarr arrays on `device` (in tuples and lists too);
    arrays of a dtype lazyarr lacks (strings, objects, dates) stay NumPy's, and scalars stay."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biufc":
            return value
        try:
            dtypes.as_dtype(value.dtype)
        except TypeError:   # (float128 and the like)
            return value
        return asarray(np.asarray(value), device=device)
    if isinstance(value, (list, tuple)):
        items = [_to_lazy(v, device) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    return value


def _wrap(qualified: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """NumPy's `fn` taking and giving lazyarr arrays, named lazyarr.<qualified>."""
    @functools.wraps(fn)
    def fallback(*args: Any, **kwargs: Any) -> Any:
        arrays = [a for v in (*args, *kwargs.values()) for a in _walk(v)]
        if any(a.requires_grad for a in arrays):
            raise TypeError(f"lazyarr.{qualified} computes with NumPy on the host and cannot propagate "
                            f"gradients; detach the input first")
        if qualified not in _served:
            _served.add(qualified)
            warnings.warn(f"lazyarr.{qualified} is not implemented in lazyarr; computed by NumPy on the host",
                          RuntimeWarning, stacklevel=2)
        device = arrays[0].device if arrays else get_device()   # (the default device: the CPU unless set)
        result = fn(*(to_host(a) for a in args), **{k: to_host(v) for k, v in kwargs.items()})
        return _to_lazy(result, device)
    fallback.__lazyarr_fallback__ = True
    fallback.__qualname__ = fallback.__name__ = qualified.rpartition(".")[2]
    fallback.__module__ = "lazyarr" + ("." + qualified.rpartition(".")[0] if "." in qualified else "")
    return fallback
