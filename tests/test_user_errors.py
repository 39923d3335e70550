"""No internal error reaches a user: every public function of the namespace (and of
`lazyarr.nn.functional` and `lazyarr.random`), every Tensor method, operator and conversion, and
indexing and assignment are called with a battery of bad and edge arguments (strings, None,
lists of strings, floats where ints are needed, huge and negative ints, out-of-range axes,
negative shapes, shapes that do not broadcast, 0-d and empty arrays, bool/int/complex arrays
where others are needed, NaN and inf, float and out-of-range index arrays, too many indices).
Whatever a call raises must be an error a user can act on: TypeError, ValueError (NumPy's
AxisError is one), IndexError, OverflowError or ZeroDivisionError; RuntimeError only for misuse
of autograd, BufferError only from DLPack. Never an AssertionError, KeyError, AttributeError,
UnboundLocalError, RecursionError, a compiler error or anything else from inside.

Results of calls that succeed are realized (in one schedule per test, and one by one if that
fails), so errors at realization (kernels that do not compile, lowering passes that meet what
they did not expect) count too: the first result of each kind of inputs and output, up to
REALIZE_PER_TEST per test on the CPU. On other devices (OpenCL, where each new kernel is a slow
build) graphs are built and converted but only the namespace tests of a fixed sample of
functions realize a result; `LAZYARR_TEST_REALIZE=N` realizes up to N per test everywhere.

The battery is fixed (deterministic); each test collects every violation of one function and
reports them together with a reproducer each.
"""
from __future__ import annotations

import inspect
import math
import operator
import os
import signal
from typing import Any, Callable

import numpy as np
import pytest

import lazyarr as xp
import lazyarr.nn.functional as F
import lazyarr.random as R
from tests.conftest import DEVICE

ALLOWED = (TypeError, ValueError, IndexError, OverflowError, ZeroDivisionError)
AUTOGRAD_ALLOWED = ALLOWED + (RuntimeError,)
DLPACK_ALLOWED = ALLOWED + (BufferError,)
# results realized per test: the first of each kind (the dtypes, ranks and emptiness of the inputs
# and the output), up to this many. Every new kernel is a compile, on OpenCL a slow one (~0.7 s
# with PoCL): there only the namespace tests of every SAMPLE_OTHER_DEVICE-th function realize one
REALIZE_PER_TEST = int(os.environ.get("LAZYARR_TEST_REALIZE", "6" if DEVICE == "cpu" else "0"))
SAMPLE_OTHER_DEVICE = 16
# on another device every OTHER_DEVICE_CALLS-th call of a battery runs (set LAZYARR_TEST_REALIZE for
# all): calls that compute a host value (`in`, allclose, percentile, unique) compile as they go,
# ~0.15 s a kernel with PoCL (this file took 100 s of the OpenCL pass), and what the battery checks
# before any kernel runs is device-independent Python, which the CPU pass calls in full
OTHER_DEVICE_CALLS = 1 if DEVICE == "cpu" or "LAZYARR_TEST_REALIZE" in os.environ else 3
CALL_SECONDS = 20   # a call that runs longer than this (a Python-level hang) is a violation


@pytest.fixture(autouse=True)
def _in_a_scratch_directory(tmp_path, monkeypatch):
    """A function that takes a file name and is given 'abc' writes there, not into the checkout."""
    monkeypatch.chdir(tmp_path)


# ---- the battery -------------------------------------------------------------------------------

MAKERS: dict[str, Callable[[], Any]] = {
    "f64(2,3)": lambda: xp.asarray(np.arange(6.0).reshape(2, 3)),
    "f32 0-d": lambda: xp.asarray(np.float32(1.5)),
    "i64(3,)": lambda: xp.asarray(np.array([1, -2, 3])),
    "u8(3,)": lambda: xp.asarray(np.array([1, 2, 3], np.uint8)),
    "bool(3,)": lambda: xp.asarray(np.array([True, False, True])),
    "c128(3,)": lambda: xp.asarray(np.array([1 + 2j, 0, -1j])),
    "empty(0,)": lambda: xp.asarray(np.zeros((0,))),
    "empty(2,0)": lambda: xp.asarray(np.zeros((2, 0))),
    "nan/inf(4,)": lambda: xp.asarray(np.array([np.nan, np.inf, -np.inf, 0.0])),
    "i64 0-d": lambda: xp.asarray(np.int64(2)),
    "broadcast(2,3)": lambda: xp.broadcast_to(xp.asarray([1.0, 2.0, 3.0]), (2, 3)),
}


def arrays() -> dict[str, Any]:
    """Fresh edge arrays (fresh: some calls store into or mark their arguments)."""
    return {name: make() for name, make in MAKERS.items()}


PAIR_ARRAYS = ["f64(2,3)", "f32 0-d", "i64(3,)", "u8(3,)", "bool(3,)", "c128(3,)", "empty(0,)", "i64 0-d"]


def bad_values() -> dict[str, Any]:
    """Arguments of the wrong type or value, and (fresh) edge arrays."""
    values = {
        "'abc'": "abc", "None": None, "['a', 'b']": ["a", "b"], "1.5": 1.5, "-1": -1, "10**30": 10 ** 30,
        "-10**30": -10 ** 30, "(2, 3)": (2, 3), "[1, 2]": [1, 2], "ragged": [[1], [1, 2]], "nan": math.nan,
        "inf": math.inf, "2j": 2j, "object()": object(), "np str array": np.array(["a"]), "{}": {}, "True": True,
        "0": 0, "7": 7, "(-2, 3)": (-2, 3), "(1.5, 2)": (1.5, 2), "np float array": np.array([0.5, 1.5]),
        "np.int64(1)": np.int64(1), "np float16 array": np.array([1], np.float16),
        "np object array": np.array([object()]), "slice(1, 2)": slice(1, 2), "...": Ellipsis, "b'ab'": b"ab",
        "(None,)": (None,), "{1}": {1}, "lambda": (lambda: 1), "xp.float32": xp.float32, "np.float64": np.float64,
        "'float32'": "float32", "float index array": xp.asarray([0.5, 1.0]), "index array [0, 7]": xp.asarray([0, 7]),
    }
    values.update(arrays())
    return values


AXES = {"0": 0, "-1": -1, "2": 2, "-3": -3, "(0, 0)": (0, 0), "(0, 'a')": (0, "a"), "[0]": [0],
        "np.int64(0)": np.int64(0), "0-d array": xp.asarray(0), "True": True, "1.0": 1.0, "()": (),
        "(0, 1)": (0, 1), "None": None, "10**30": 10 ** 30}

DTYPES = {"bool": xp.bool, "int8": xp.int8, "uint64": xp.uint64, "float32": xp.float32, "complex64": xp.complex64,
          "'abc'": "abc", "np.float16": np.float16, "object": object, "5": 5, "None": None}


# ---- calling and checking ----------------------------------------------------------------------

class _Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _Timeout()


class Checker:
    """Calls functions, keeps their results for realization, and records violations."""

    def __init__(self, allowed: tuple = ALLOWED, realize_limit: int | None = None):
        self.allowed = allowed
        self.realize_limit = REALIZE_PER_TEST if realize_limit is None else realize_limit
        self.violations: list[str] = []
        self.pending: list[tuple[str, Any]] = []
        self.seen: set[tuple] = set()
        self.calls = 0

    def call(self, label: str, fn: Callable, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        if (self.calls - 1) % OTHER_DEVICE_CALLS:   # (a sample, on another device: the first call, the 4th, ...)
            return None
        previous = signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(CALL_SECONDS)
        try:
            out = fn(*args, **kwargs)
        except self.allowed:
            return None
        except _Timeout:
            self.violations.append(f"{label}: ran longer than {CALL_SECONDS} s")
            return None
        except BaseException as e:  # noqa: BLE001
            if isinstance(e, KeyboardInterrupt):
                raise
            self.violations.append(f"{label}: {type(e).__name__}: {str(e)[:200]}")
            return None
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)
        inputs = tuple(_kind(a) for a in (*args, *kwargs.values()))
        self._keep(label, out, inputs)
        return out

    def _keep(self, label: str, out: Any, inputs: tuple) -> None:
        """Keep `out` for realization, unless a result of the same kinds of inputs and output was
        kept already (calls that differ in a Python scalar compute alike)."""
        if isinstance(out, xp.Tensor):
            key = (inputs, _kind(out))
            if key in self.seen:
                return
            self.seen.add(key)
            if len(self.seen) <= self.realize_limit:
                self.pending.append((label, out))
        elif isinstance(out, (tuple, list)) and len(out) < 16:
            for o in out:
                self._keep(label, o, inputs)

    def realize(self) -> None:
        """Realize the kept results: all in one schedule, and one by one when that raises."""
        todo, self.pending = self.pending, []
        if not todo:
            return
        try:
            xp.realize(*(t for _, t in todo))
            return
        except Exception:  # noqa: BLE001  (found again below, result by result)
            pass
        for label, t in todo:
            try:
                t.realize()
            except ALLOWED:
                pass
            except Exception as e:  # noqa: BLE001
                self.violations.append(f"{label} (realized): {type(e).__name__}: {str(e)[:200]}")

    def check(self) -> None:
        self.realize()
        found = self.violations
        assert not found, f"{len(found)} internal errors reached the user:\n  " + "\n  ".join(found[:40])


def _kind(v: Any) -> Any:
    """What realization depends on: an array's dtype, rank and emptiness; a scalar's type."""
    if isinstance(v, xp.Tensor):
        return (v.dtype.name, v.ndim, v.size == 0)
    if isinstance(v, (tuple, list)):
        return tuple(_kind(e) for e in v[:4])
    return type(v).__name__


def _show(v: Any) -> str:
    if isinstance(v, xp.Tensor):
        return f"<{v.dtype} array {v.shape}>"
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def reproducer(name: str, args: tuple, kwargs: dict) -> str:
    return f"{name}({', '.join([_show(a) for a in args] + [f'{k}={_show(v)}' for k, v in kwargs.items()])})"


# ---- the functions -----------------------------------------------------------------------------

# functions that run user code or compile user source: their own tests below; NumPy's print
# options, error state and text files (global state, files): tests/test_numpy_functions.py;
# graph (writes files): tests/test_debug.py; NumPy's files through NumPy (a missing file is
# NumPy's OSError): tests/test_numpy_names.py
SEPARATE = {"custom_kernel", "precompiled", "function", "grad", "value_and_grad", "no_grad",
            "set_printoptions", "get_printoptions", "printoptions", "errstate", "savetxt", "loadtxt", "graph",
            "save", "load", "savez", "savez_compressed", "genfromtxt", "fromfile"}


def namespace_functions() -> dict[str, Callable]:
    out = {}
    for name in dir(xp):
        obj = getattr(xp, name)
        if name.startswith("_") or name in SEPARATE or inspect.ismodule(obj) or isinstance(obj, type) \
                or not callable(obj):
            continue
        out[name] = obj
    for module, prefix in ((F, "nn.functional."), (R, "random.")):
        for name in dir(module):
            obj = getattr(module, name)
            if not name.startswith("_") and inspect.isfunction(obj) and obj.__module__ == module.__name__:
                out[prefix + name] = obj
    return out


FUNCTIONS = namespace_functions()


def good_arguments(name: str, a: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """Arguments for which `name` works (or nearly): the battery replaces one at a time."""
    x, v3 = a["f64(2,3)"], xp.asarray([0.5, 1.0, 2.0])
    by_name = {
        "arange": [5], "linspace": [0.0, 1.0, 5], "eye": [3], "full": [(2, 3), 1.0], "empty": [(2, 3)],
        "zeros": [(2, 3)], "ones": [(2, 3)], "full_like": [x, 1.0], "asarray": [[1.0, 2.0]], "array": [[1.0, 2.0]],
        "from_dlpack": [np.arange(3.0)], "concat": [[x, x]], "concatenate": [[x, x]], "stack": [[x, x]],
        "broadcast_arrays": [x, v3], "meshgrid": [v3, v3], "broadcast_shapes": [(2, 3), (3,)],
        "broadcast_to": [v3, (2, 3)], "reshape": [x, (3, 2)], "permute_dims": [x, (1, 0)], "moveaxis": [x, 0, 1],
        "tile": [x, (2, 1)], "repeat": [x, 2], "roll": [x, 1], "take": [x, xp.asarray([0, 1])],
        "take_along_axis": [x, xp.zeros((2, 3), dtype=xp.int64)], "matmul": [x, x.mT], "tensordot": [x, x],
        "vecdot": [x, x], "where": [a["bool(3,)"], x, x], "astype": [x, xp.float32],
        "can_cast": [xp.float32, xp.float64],
        "isdtype": [xp.float32, "real floating"], "result_type": [x, xp.float32], "finfo": [xp.float32],
        "iinfo": [xp.int32], "get_device": ["cpu"], "realize": [x], "clip": [x, 0.5, 3.0],
        "nn.functional.one_hot": [xp.asarray([0, 2]), 3], "nn.functional.cross_entropy": [x, xp.asarray([0, 2])],
        "nn.functional.linear": [x, x], "nn.functional.mse_loss": [x, x], "random.seed": [1],
        "random.integers": [0, 5, (2, 3)], "random.permutation": [5],
    }
    if name in by_name:
        return list(by_name[name]), {}
    params = _positional(FUNCTIONS[name])
    values = {"x": x, "x1": x, "x2": x, "a": x, "z": x, "logits": x, "input": x, "target": x, "weight": x}
    return [values.get(p.name, x) for p in params], {}


def _positional(fn: Callable) -> list[inspect.Parameter]:
    params = inspect.signature(fn).parameters.values()
    return [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]


def _keywords(fn: Callable) -> list[str]:
    params = inspect.signature(fn).parameters.values()
    return [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.default is not p.empty]


def calls_of(name: str) -> list[tuple[tuple, dict]]:
    """Every call the battery makes of function `name`."""
    fn = FUNCTIONS[name]
    a = arrays()
    base, base_kw = good_arguments(name, a)
    calls = [(tuple(base), dict(base_kw))]
    for i in range(len(base)):
        for v in bad_values().values():
            args = list(base)
            args[i] = v
            calls.append((tuple(args), dict(base_kw)))
    keywords = _keywords(fn)
    for k in keywords:
        for v in bad_values().values():
            calls.append((tuple(base), {**base_kw, k: v}))
    if len(base) >= 2 and all(isinstance(b, xp.Tensor) for b in base[:2]):
        pairs = arrays()
        for p in PAIR_ARRAYS:
            for q in PAIR_ARRAYS:
                calls.append(((pairs[p], pairs[q], *base[2:]), dict(base_kw)))
    if base and isinstance(base[0], xp.Tensor):
        for arr in arrays().values():   # the function on every edge array
            calls.append(((arr, *base[1:]), dict(base_kw)))
        if "axis" in keywords:
            for arr in (a["f64(2,3)"], a["f32 0-d"], a["empty(2,0)"], a["i64(3,)"]):
                for ax in AXES.values():
                    calls.append(((arr, *base[1:]), {**base_kw, "axis": ax}))
        if "dtype" in keywords:
            for arr in (a["f64(2,3)"], a["i64(3,)"], a["bool(3,)"], a["c128(3,)"]):
                for d in DTYPES.values():
                    calls.append(((arr, *base[1:]), {**base_kw, "dtype": d}))
    return calls


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_namespace_functions_raise_only_user_errors(name):
    fn = FUNCTIONS[name]
    sampled = DEVICE != "cpu" and "LAZYARR_TEST_REALIZE" not in os.environ and \
        sorted(FUNCTIONS).index(name) % SAMPLE_OTHER_DEVICE == 0
    checker = Checker(DLPACK_ALLOWED if name == "from_dlpack" else ALLOWED, realize_limit=1 if sampled else None)
    for args, kwargs in calls_of(name):
        checker.call(reproducer(name, args, kwargs), fn, *args, **kwargs)
    checker.check()


# ---- Tensor methods, properties, operators, conversions -----------------------------------------

SKIP_METHODS = {"rebind", "uop",   # the graph-level hooks the namespace modules write through
                "to_dot",           # writes files (test_debug tests its errors)
                "tofile"}           # writes files through NumPy (tests/test_numpy_names.py)
AUTOGRAD_METHODS = {"backward", "requires_grad_", "assign", "requires_grad", "retain_grad"}
OPERATOR_NAMES = {"add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor", "lshift",
                  "rshift"}
# binary and in-place operators have their own test (test_operators_...)
COVERED = ({f"__{p}{n}__" for n in OPERATOR_NAMES for p in ("", "r", "i")} | {"__divmod__", "__rdivmod__"} |
           {f"__{n}__" for n in ("lt", "le", "gt", "ge", "eq", "ne")})
PLUMBING = {"__init_subclass__", "__subclasshook__", "__class__", "__doc__", "__module__", "__slots__", "__weakref__",
            "__new__", "__init__", "__reduce__", "__reduce_ex__", "__sizeof__", "__dir__", "__getattribute__",
            "__setattr__", "__delattr__", "__array_priority__", "__hash__", "__setstate__", "__getstate__"}
REDUCING = {"sum", "prod", "mean", "max", "min", "all", "any", "argmax", "argmin", "cumsum", "cumprod", "var", "std",
            "squeeze", "flip"}


def tensor_members() -> list[str]:
    return [n for n in dir(xp.Tensor) if n not in SKIP_METHODS | COVERED | PLUMBING
            and (not n.startswith("_") or (n.startswith("__") and n.endswith("__")))]


@pytest.mark.parametrize("member", tensor_members())
def test_tensor_members_raise_only_user_errors(member):
    """Each method with no argument and with each bad value; each property read (and set, where
    it can be), on each edge array (a fresh one each call: methods may store or mark)."""
    allowed = AUTOGRAD_ALLOWED if member in AUTOGRAD_METHODS else DLPACK_ALLOWED if "dlpack" in member else ALLOWED
    checker = Checker(allowed)
    attr = inspect.getattr_static(xp.Tensor, member)
    bad = bad_values()
    for an, make in MAKERS.items():
        if isinstance(attr, property) or not callable(getattr(make(), member)):
            checker.call(f"<{an}>.{member}", lambda: getattr(make(), member))
            if getattr(attr, "fset", None) is not None or type(attr).__name__ == "member_descriptor":
                for vn, v in bad.items():
                    checker.call(f"<{an}>.{member} = {vn}", lambda v=v: setattr(make(), member, v))
            continue
        checker.call(f"<{an}>.{member}()", lambda: getattr(make(), member)())
        for vn, v in bad.items():
            checker.call(f"<{an}>.{member}({vn})", lambda v=v: getattr(make(), member)(v))
        if member in REDUCING:
            for axn, ax in AXES.items():
                checker.call(f"<{an}>.{member}(axis={axn})", lambda ax=ax: getattr(make(), member)(axis=ax))
            checker.call(f"<{an}>.{member}(keepdims='abc')", lambda: getattr(make(), member)(keepdims="abc"))
    checker.check()


BINARY = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod, operator.pow,
          operator.matmul, operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift, operator.lt,
          operator.le, operator.gt, operator.ge, operator.eq, operator.ne, divmod]
IN_PLACE = [operator.iadd, operator.isub, operator.imul, operator.itruediv, operator.ifloordiv, operator.imod,
            operator.ipow, operator.imatmul, operator.iand, operator.ior, operator.ixor, operator.ilshift,
            operator.irshift]


@pytest.mark.parametrize("op", BINARY + IN_PLACE, ids=lambda f: f.__name__)
def test_operators_raise_only_user_errors(op):
    """Each edge array with each bad value, on both sides (in-place: on the left, a fresh array)."""
    checker = Checker()
    bad, edge = bad_values(), arrays()
    for an, make in MAKERS.items():
        for vn, v in bad.items():
            if op in IN_PLACE:
                checker.call(f"{op.__name__}(<{an}>, {vn})", lambda v=v: op(make(), v))
            else:
                checker.call(f"{op.__name__}(<{an}>, {vn})", op, edge[an], v)
                checker.call(f"{op.__name__}({vn}, <{an}>)", op, v, edge[an])
    checker.check()


CONVERSIONS = {"bool": bool, "int": int, "float": float, "complex": complex, "index": operator.index, "len": len,
               "iter": lambda t: list(iter(t)), "repr": repr, "str": str, "format": lambda t: format(t, ".2f"),
               "hash": hash, "np.asarray": np.asarray, "np.exp": np.exp, "np.sum": np.sum,
               "np.add.reduce": np.add.reduce, "np.concatenate": lambda t: np.concatenate([t, t]),
               "np.maximum.accumulate": np.maximum.accumulate, "np.sort": np.sort,
               "np.array(dtype=int)": lambda t: np.array(t, dtype=np.int32),
               "xp.asarray(copy=False)": lambda t: xp.asarray(t, copy=False, dtype=xp.float32),
               "dlpack": lambda t: np.from_dlpack(t), "to_device": lambda t: t.to_device("cpu"),
               "__array_namespace__": lambda t: t.__array_namespace__(api_version="1999.12"),
               "view(int8)": lambda t: t.view(xp.int8), "view(complex128)": lambda t: t.view(xp.complex128),
               "view(complex64)": lambda t: t.view(xp.complex64), "view(bool)": lambda t: t.view(xp.bool)}


@pytest.mark.parametrize("name", sorted(CONVERSIONS))
def test_conversions_raise_only_user_errors(name):
    checker = Checker(DLPACK_ALLOWED)
    for an, t in arrays().items():
        checker.call(f"{name}(<{an}>)", CONVERSIONS[name], t)
    checker.check()


# ---- indexing and assignment -------------------------------------------------------------------

def keys() -> dict[str, Any]:
    out = {"0": 0, "-1": -1, "5": 5, "10**30": 10 ** 30, "(0, 0)": (0, 0), "(0, 0, 0)": (0, 0, 0),
           "(..., ...)": (Ellipsis, Ellipsis), "(None, 0)": (None, 0), "slice(None, None, 0)": slice(None, None, 0),
           "slice('a', 1)": slice("a", 1), "slice(0.5, 1)": slice(0.5, 1), "slice(10**30, None)": slice(10 ** 30, None),
           "slice(None, None, -10**30)": slice(None, None, -10 ** 30), "[0, 1]": [0, 1], "[[0], [1]]": [[0], [1]],
           "[]": [], "[0.5]": [0.5], "[10**30]": [10 ** 30], "[True, False]": [True, False],
           "np.array([0, 1])": np.array([0, 1]), "np.array([0.5])": np.array([0.5]),
           "np.array(1)": np.array(1), "np bool mask": np.array([True, False]),
           "mask (2,)": xp.asarray([True, False]), "mask (3,)": xp.asarray([True, False, True]),
           "mask (2, 3)": xp.ones((2, 3), dtype=xp.bool), "0-d bool": xp.asarray(True),
           "0-d float": xp.asarray(1.0), "0-d int": xp.asarray(1), "([0, 1], [0])": ([0, 1], [0]),
           "([0, 1], [0, 1, 2])": ([0, 1], [0, 1, 2]), "(slice(None), [5])": (slice(None), [5]),
           "([0], ..., [0])": ([0], Ellipsis, [0]), "(0, 'a')": (0, "a")}
    out.update(bad_values())
    return out


def values() -> dict[str, Any]:
    return {"1.5": 1.5, "1j": 1j, "300": 300, "10**30": 10 ** 30, "nan": math.nan, "'abc'": "abc", "None": None,
            "[1, 2]": [1, 2], "(2, 3) array": xp.ones((2, 3)), "(4,) array": xp.ones(4), "c128 array": xp.ones(3) * 1j,
            "0-d bool": xp.asarray(True), "empty": xp.zeros((0,)), "object()": object()}


@pytest.mark.parametrize("array", list(MAKERS))
def test_getitem_raises_only_user_errors(array):
    checker = Checker()
    t = MAKERS[array]()
    for kn, k in keys().items():
        checker.call(f"<{array}>[{kn}]", operator.getitem, t, k)
    checker.check()


@pytest.mark.parametrize("array", list(MAKERS))
def test_setitem_raises_only_user_errors(array):
    checker = Checker()
    make = MAKERS[array]
    stored = values()
    for kn, k in keys().items():
        for vn, v in stored.items():
            def store(k=k, v=v):
                t = make()
                t[k] = v
                return t
            checker.call(f"<{array}>[{kn}] = {vn}", store)
    checker.check()


# ---- autograd and calls -------------------------------------------------------------------------

def test_autograd_misuse_raises_only_user_errors():
    checker = Checker(AUTOGRAD_ALLOWED)
    for vn, v in bad_values().items():
        checker.call(f"backward(gradient={vn})",
                     lambda v=v: (xp.asarray([1.0, 2.0], requires_grad=True) * 2).backward(v))
        checker.call(f"sum().backward(gradient={vn})",
                     lambda v=v: (xp.asarray([1.0, 2.0], requires_grad=True) * 2).sum().backward(v))
        checker.call(f"grad(f, argnums={vn})", lambda v=v: xp.grad(lambda t: (t * t).sum(), v)(xp.ones(2)))
        checker.call(f"grad(f)({vn})", lambda v=v: xp.grad(lambda t: (t * t).sum())(v))
        checker.call(f"value_and_grad(f)({vn})", lambda v=v: xp.value_and_grad(lambda t: (t * t).sum())(v))
        checker.call(f"grad({vn})", lambda v=v: xp.grad(v)(xp.ones(2)))
        checker.call(f"asarray(requires_grad=True) of {vn}", lambda v=v: xp.asarray(v, requires_grad=True))
    checker.call("grad of a non-scalar", lambda: xp.grad(lambda t: t * t)(xp.ones(2)))
    checker.call("grad of a function returning a non-tensor", lambda: xp.grad(lambda t: 1.0)(xp.ones(2)))
    checker.call("grad of an int argument", lambda: xp.grad(lambda t: (t * t).sum())(xp.ones(2, dtype=xp.int64)))
    checker.check()


def test_inspection_raises_only_user_errors():
    info = xp.__array_namespace_info__()
    checker = Checker()
    for vn, v in bad_values().items():
        for method in ("default_dtypes", "dtypes"):
            checker.call(f"info.{method}(device={vn})", getattr(info, method), device=v)
        checker.call(f"info.dtypes(kind={vn})", info.dtypes, kind=v)
        checker.call(f"info.dtypes(kind=({vn},))", info.dtypes, kind=(v,))
        checker.call(f"info.capabilities({vn})", info.capabilities, v)
    checker.check()


def test_calls_with_wrong_types_raise_only_user_errors():
    checker = Checker()
    for vn, v in bad_values().items():
        if isinstance(v, str):
            continue   # a string is a kernel's source: compiling it is the documented CompileError
        checker.call(f"custom_kernel({vn}, ...)", xp.custom_kernel, v, "k", [xp.ones(3)], [((3,), xp.float32)])
        checker.call(f"custom_kernel(src, 'k', {vn})", xp.custom_kernel, "void k(){}", "k", v)
        checker.call(f"precompiled({vn}, ...)", xp.precompiled, v, [xp.ones(3)])
        checker.call(f"function({vn})", xp.function, v)
        checker.call(f"function(f)({vn})", lambda v=v: xp.function(lambda t: t * 2)(v))
    checker.check()


# ---- violations the battery found, as small cases ----------------------------------------------

def test_realize_of_a_non_tensor_raises_typeerror():
    with pytest.raises(TypeError, match="expected Tensors"):
        xp.realize(1)


@pytest.mark.parametrize("kind", [(None,), ([1],), ("bool", "floats")])
def test_inspection_dtypes_of_a_bad_kind_in_a_tuple_raises_valueerror(kind):
    with pytest.raises(ValueError, match="unknown dtype kind"):
        xp.__array_namespace_info__().dtypes(kind=kind)


def test_custom_kernel_with_a_non_string_source_or_name_raises_typeerror():
    with pytest.raises(TypeError, match="source must be a str"):
        xp.custom_kernel(1.5, "k", [xp.ones(3)], [((3,), xp.float32)])
    with pytest.raises(TypeError, match="name must be a str"):
        xp.custom_kernel("void k() {}", 3, [xp.ones(3)], [((3,), xp.float32)])


def test_grad_argnums_out_of_range_or_not_ints_raise_typeerror():
    f = lambda x, y: xp.sum(x * y)   # noqa: E731
    with pytest.raises(TypeError, match="argnums=5"):
        xp.grad(f, argnums=5)(xp.ones(3), xp.ones(3))
    for bad in ("a", (0, 1.5)):
        with pytest.raises(TypeError, match="argnums must be"):
            xp.grad(f, argnums=bad)


def test_grad_with_an_argument_listed_twice_gives_its_gradient_twice():
    """argnums=(0, 0) (or 1 and -1 for two arguments) is one input: both places get its whole
    gradient (the second marker hid the first, which got zeros)."""
    x, y = xp.asarray([1.0, 2.0, 3.0]), xp.asarray([0.5, -1.0, 2.0])
    f = lambda x, y: xp.sum(x * x * y)   # noqa: E731
    gx = 2 * np.asarray(x) * np.asarray(y)
    for nums in ((0, 0), (0, -2)):
        g0, g1 = xp.grad(f, argnums=nums)(x, y)
        np.testing.assert_allclose(np.asarray(g0), gx)
        np.testing.assert_allclose(np.asarray(g1), gx)
    gy1, gx1, gy2 = xp.grad(f, argnums=(1, 0, -1))(x, y)
    np.testing.assert_allclose(np.asarray(gx1), gx)
    np.testing.assert_allclose(np.asarray(gy1), np.asarray(x) ** 2)
    np.testing.assert_allclose(np.asarray(gy2), np.asarray(x) ** 2)


@pytest.mark.parametrize("shapes, message", [(((-1,),), "negative dimensions"), (((3, -2), (1,)), "negative dimensions"),
                                             (((2 ** 40,), (2 ** 40, 1)), "too big")])
def test_broadcast_shapes_rejects_negative_sizes_and_results_too_big(shapes, message):
    with pytest.raises(ValueError, match=message):
        xp.broadcast_shapes(*shapes)
