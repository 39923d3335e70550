"""The lazy array's state: what every namespace function takes and returns.

An Array is a node of the graph (`uop`) and the device it lives on. Operations build new nodes
and never compute; a value is computed when something needs it on the host (`realize()`,
`numpy()`, and the conversions, printing and protocols of `lazyarr.tensor.Tensor`). After
realization the array's node is the view of its buffer, so its graph is freed and later graphs
read the buffer instead of recomputing.

Here: the leaves' identity (a tensor that requires grad reads its value through a marker of its
own), whether a graph requires gradients, metadata, realization, the read-only broadcast views,
and `wrap`, with which the namespace modules make results. `lazyarr.tensor.Tensor`, the class
users hold, is this class with the Python operators and NumPy's methods declared on it, each a
call into the namespace modules; every array `wrap` makes is a Tensor.
"""
from __future__ import annotations

import gc
import itertools
import math
import threading
import weakref
from functools import partial
from typing import Any

import numpy as np

from lazyarr.compiler.patterns import substitute
from lazyarr.compiler.buffer_views import is_buffer_view, realized_for, view_buffer
from lazyarr.compiler.schedule import create_schedule
from lazyarr.compiler.uop import Ops, UOp, native_module, realized
from lazyarr.dtypes import DType
from lazyarr.ops import source_index
from lazyarr.realize import replay, run, schedule_realize, stages_first, walk_for_realize
from lazyarr.runtime.device import Buffer, Device

Shape = tuple[int, ...]


class GradMode:
    disabled = 0   # > 0 inside no_grad()


grad_mode = GradMode()
# Leaf tensors that require gradients, by their leaf key. A leaf's node is always a marker of its own,
# NOOP(value, ("leaf", n)): equal values are one hash-consed node (`xp.ones(3)` twice is one graph),
# so the tensor's identity cannot be its value's node. The marker keeps its key while the value under
# it changes (computed, realized, updated in place), so graphs recorded before a realization still
# lead their gradients to the tensor.
_grad_leaves: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_leaf_numbers = itertools.count(1)


def grad_leaf_tensors() -> dict[tuple, Array]:
    """Leaf key → the live leaf tensor that requires gradients."""
    # items(), not dict(_grad_leaves): dict() lists the keys first and then looks each up, and a leaf
    # collected in between made that lookup a KeyError
    return dict(_grad_leaves.items())


# Computed tensors whose gradient backward() reports too (retain_grad), by their marker's key
_retained: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def retained_tensors() -> dict[tuple, Array]:
    return dict(_retained.items())


def is_grad_leaf(u: UOp) -> bool:
    """Whether u is the marker of a live leaf tensor that requires gradients."""
    return u.op is Ops.NOOP and u.arg in _grad_leaves


class _Memo:
    """Answers of graph_requires_grad are kept on the nodes (`UOp._grad`: generation·2 + answer),
    valid while `generation` is unchanged: a new leaf that requires grad makes them stale."""
    generation = 1


def graph_requires_grad(u: UOp) -> bool:
    """Whether `u` depends, through floating-point values and no DETACH, on a leaf that requires
    gradients."""
    gen = _Memo.generation
    known = u._grad
    if known is not None and known >> 1 == gen:
        return bool(known & 1)
    if u.op is Ops.DETACH or not u.dtype.is_inexact or not _grad_leaves.data:   # (.data: no Python __len__)
        return False
    stack, DETACH = [u], Ops.DETACH
    while stack:   # sources first; a node answered in this generation is not entered
        n = stack[-1]
        known = n._grad
        if known is not None and known >> 1 == gen:
            stack.pop()
            continue
        if n.op is DETACH or n.dtype.kind not in "fc":   # (not is_inexact)
            n._grad = gen << 1
            stack.pop()
            continue
        pending = False
        for s in n.src:
            known = s._grad
            if known is None or known >> 1 != gen:
                stack.append(s)
                pending = True
        if pending:
            continue
        stack.pop()
        needs = False
        for s in n.src:
            if s._grad & 1:
                needs = True
                break
        if not needs:
            needs = is_grad_leaf(n)
        n._grad = gen << 1 | needs
    return bool(u._grad & 1)


def forget_requires_grad() -> None:
    """Called when a tensor becomes a leaf that requires grad: earlier answers may be stale."""
    _Memo.generation += 1


def leaf_marker(value: UOp, key: tuple) -> UOp:
    """The node of the leaf `key` whose value is `value`."""
    return value if value.op is Ops.NOOP and value.arg == key else UOp(Ops.NOOP, value.dtype, (value,), key)


class Array:
    """An n-dimensional array whose value is computed lazily by fused, compiled kernels."""
    # _leaf_grad: False, or the leaf key of a leaf tensor that requires gradients (see `leaf_marker`)
    # _viewof: None, or what this array is a view of (`ViewOf`); _views: None, or weak references
    # to the views of this array (it is their root; dead ones are dropped now and then)
    __slots__ = ("_uop", "device", "_leaf_grad", "grad", "_released", "_viewof", "_views", "__weakref__")
    __array_priority__ = 1000  # NumPy defers binary operators on (ndarray, Tensor) to us
    made: type = None   # the class of the arrays _from_uop makes: the subclass users hold (Tensor)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        Array.made = cls

    @staticmethod
    def _from_uop(uop: UOp, device: Device) -> Array:
        if grad_mode.disabled and uop.op is not Ops.DETACH and uop.dtype.is_inexact:
            uop = UOp(Ops.DETACH, uop.dtype, (uop,))   # cheaper than asking whether it needs one
        t = object.__new__(Array.made)
        t._uop, t.device, t._leaf_grad, t.grad, t._released = uop, device, False, None, False
        t._viewof = t._views = None
        ref = uop._holder   # (hold(t), inline: every operation makes an array)
        if ref is None or (other := ref()) is None or other._uop is not uop:
            uop._holder = weakref.ref(t)
        return t

    # ---- gradients ---------------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        if self._leaf_grad:
            return True
        return graph_requires_grad(self._uop)

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    @property
    def is_leaf(self) -> bool:
        return self._leaf_grad or not self.requires_grad

    def requires_grad_(self, flag: bool = True) -> Array:
        """Mark this tensor as a leaf whose gradient backward() accumulates into `.grad` (real
        floating-point tensors only: autograd does not differentiate through complex values)."""
        if flag and self.dtype.is_complex:
            raise TypeError(f"only real floating-point tensors can require gradients, not {self.dtype}: "
                            f"lazyarr's autograd does not differentiate complex values")
        if flag and not self.dtype.is_inexact:
            raise TypeError(f"only floating-point tensors can require gradients, not {self.dtype}")
        if flag and not self._leaf_grad and self.requires_grad:
            raise RuntimeError("requires_grad_() is for leaf tensors; this tensor is computed from tensors "
                               "that require grad (use detach() first)")
        if flag and not self._leaf_grad:
            key = ("leaf", next(_leaf_numbers))
            value = self._uop
            self._leaf_grad, self._uop = key, leaf_marker(value, key)
            hold(self)
            if value in realized:   # already computed: the marker reads the same buffer
                realized[self._uop] = realized[value]
            _grad_leaves[key] = self
        elif not flag and self._leaf_grad:
            _grad_leaves.pop(self._leaf_grad, None)
            self._uop, self._leaf_grad = self._uop.src[0], False
            hold(self)
        forget_requires_grad()
        return self

    def retain_grad(self) -> Array:
        """Have backward() fill `.grad` of this computed tensor too, for the uses recorded after this
        call (PyTorch's retain_grad; a leaf's is filled anyway). The tensor reads its value through a
        marker, which gradients flow through."""
        if not self.requires_grad:
            raise RuntimeError("retain_grad(): this tensor does not require grad")
        if self._leaf_grad or (self._uop.op is Ops.NOOP and self._uop.arg in _retained):
            return self
        key = ("retained", next(_leaf_numbers))
        value = self._uop
        self._uop = UOp(Ops.NOOP, value.dtype, (value,), key)
        hold(self)
        if value in realized:
            realized[self._uop] = realized[value]
        _retained[key] = self
        return self

    def rebind(self, value: UOp) -> None:
        """Give this tensor the value `value` (a node of its shape and dtype): in-place updates,
        assignment, an optimizer's step. A leaf that requires grad keeps its identity (its marker).
        Its views read the new value from then on (a view's own writes go through its root:
        `lazyarr.views`, which Tensor's rebind calls)."""
        self._uop = leaf_marker(value, self._leaf_grad) if self._leaf_grad else value
        hold(self)
        if self._views:
            for ref in list(self._views):
                v = ref()
                if v is not None:
                    v._uop = v._viewof.replay(self._uop)
                    hold(v)

    # ---- metadata, known without computing ---------------------------------------------------
    @property
    def shape(self) -> Shape:
        return self.uop.shape

    @property
    def dtype(self) -> DType:
        return self.uop.dtype

    @property
    def ndim(self) -> int:
        return len(self.uop.shape)

    @property
    def size(self) -> int:
        return math.prod(self.uop.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    __hash__ = object.__hash__

    # ---- realization -----------------------------------------------------------------------
    def realize(self) -> Array:
        """Compute the value now (blocking) and return self."""
        realize(self)
        return self

    def schedule(self) -> list:
        """The kernels `realize()` would run, each with `.name`, `.device` and `.source`."""
        return create_schedule([(self.uop, self.device)]).items

    @property
    def is_realized(self) -> bool:
        return is_buffer_view(self.uop) or self.uop in realized

    def _buffer(self) -> Buffer:
        self.realize()
        return view_buffer(self.uop if is_buffer_view(self.uop) else realized[self.uop])

    def numpy(self) -> np.ndarray:
        """The value as a NumPy array: a read-only view of the buffer where the device's memory is
        the host's (the CPU), else a copy of its own (writable: nothing else sees it)."""
        for hook in host_read_hooks:
            hook("numpy(), np.asarray() or tolist()")
        with realization_lock:
            buf = self._buffer()
            self.device.synchronize()
            arr = buf.numpy().reshape(self.shape).view()
        if self.device.host_memory:
            arr.flags.writeable = False
        return arr

# ---- views --------------------------------------------------------------------------------------

class ViewOf:
    """What a view is of (NumPy's views: basic indexing, transposes, reshapes that need no copy,
    flips, squeezes, complex parts). `root`: the array that is no view whose elements the view
    shows; `root_at`: the root's node when the view was made; `template`: the view's node then, a
    chain of movement ops (and complex parts) of root_at; `key`: the basic index key, when the view
    is root[key]. The view's value is always the template replayed on the root's current node."""
    __slots__ = ("root", "root_at", "template", "key")

    def __init__(self, root: Array, root_at: UOp, template: UOp, key: Any):
        self.root, self.root_at, self.template, self.key = root, root_at, template, key

    def replay(self, root_value: UOp) -> UOp:
        return self.template if root_value is self.root_at else substitute(self.template, {self.root_at: root_value})

    def byte_offset(self, idx: list[int]) -> int:
        """Where the view's element at idx starts in its root's row-major memory, in bytes (the
        movement ops mapped on the host; a bitcast to a narrower type lands inside an element)."""
        u, within = self.template, 0
        while u is not self.root_at:
            if u.op is Ops.BITCAST:   # the last axis counted in the source's elements
                start = idx[-1] * u.dtype.itemsize
                idx = idx[:-1] + [start // u.src[0].dtype.itemsize]
                within += start % u.src[0].dtype.itemsize
            elif u.op not in (Ops.GEP, Ops.DETACH, Ops.NOOP, Ops.CONTIGUOUS):
                idx, _ = source_index(u, idx)
            u = u.src[0]
        flat = 0
        for v, n in zip(idx, self.root.shape):
            flat = flat * n + v
        return flat * self.root.dtype.itemsize + within


def make_view(result: Array, source: Any, key: Any = None) -> Array:
    """result, made from the array source by movement ops (or as a complex part), as a view of
    source's root: a write through either reaches the other (`key`: the basic index key, when
    result is source[key])."""
    if not isinstance(source, Array) or result is source or result.device is not source.device:
        return result
    of = source._viewof
    if of is not None:   # a view of a view: of the same root, its template from the source's
        template = result._uop if source._uop is of.template else substitute(result._uop, {source._uop: of.template})
        root, root_at, key = of.root, of.root_at, None
    else:
        root, root_at, template = source, source._uop, result._uop
    result._viewof = ViewOf(root, root_at, template, key)
    views = root._views
    if views is None:   # weak references, not a WeakSet (which compares arrays with ==) or a
        root._views = [weakref.ref(result)]   # WeakValueDictionary (microseconds to make: `M.T` in a loop)
    else:
        views.append(weakref.ref(result))
        if len(views) >= 32 and len(views) & (len(views) - 1) == 0:   # (dead ones dropped now and then)
            views[:] = [r for r in views if r() is not None]
    return result


def layout_strides(x: Array) -> tuple[int, ...]:
    """The bytes between neighbours along each axis of x in its root's row-major memory (NumPy's
    strides): C-contiguous for an array that is no view."""
    size = x.dtype.itemsize
    contiguous = []
    for n in reversed(x.shape):
        contiguous.append(size)
        size *= max(n, 1)
    contiguous = tuple(reversed(contiguous))
    of = x._viewof
    if of is None or x.size == 0:
        return contiguous
    origin = of.byte_offset([0] * x.ndim)
    return tuple(of.byte_offset([int(a == k) for a in range(x.ndim)]) - origin if n > 1 else c
                 for k, (n, c) in enumerate(zip(x.shape, contiguous)))


def reshape_needs_no_copy(x: Array, shape: tuple[int, ...]) -> bool:
    """Whether x's elements in row-major order can be reshaped to `shape` as a view (NumPy's rule:
    the axes merged or split are evenly spaced in memory)."""
    if x._viewof is None or x.size == 0:
        return True
    old = [(n, s) for n, s in zip(x.shape, layout_strides(x)) if n != 1]
    new = [n for n in shape if n != 1]
    oi = ni = 0
    while oi < len(old) and ni < len(new):
        oj, nj = oi + 1, ni + 1
        op, np_ = old[oi][0], new[ni]
        while op != np_:
            if np_ < op:
                np_ *= new[nj]
                nj += 1
            else:
                op *= old[oj][0]
                oj += 1
        if any(old[k][1] != old[k + 1][0] * old[k + 1][1] for k in range(oi, oj - 1)):
            return False
        oi, ni = oj, nj
    return True


# the arrays broadcast_to (and broadcast_arrays, where it stretches an axis) returned, by id: read-
# only, as NumPy's broadcast views are (several of their elements are one element of their source).
# Keyed by id, not a WeakSet: a set's lookup would compare tensors with ==, which is elementwise
_broadcast_views: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def mark_broadcast_view(x: Array) -> None:
    _broadcast_views[id(x)] = x


def is_broadcast_view(x: Array) -> bool:
    """Whether x is an array that broadcast_to or broadcast_arrays returned, or a basic-index view
    of one (read-only, as in NumPy). Arrays computed from it and its copies are not."""
    ref = _broadcast_views.data.get(id(x))   # (the weak references themselves: WeakValueDictionary.get is Python)
    return ref is not None and ref() is x


def check_writable(x: Array, what: str = "assignment destination") -> None:
    """NumPy's ValueError for storing into a read-only array: one that broadcast_to or
    broadcast_arrays returned (several of its elements are one element of its source). `what`
    names the store ("output array" for in-place operators)."""
    if is_broadcast_view(x):
        raise ValueError(f"{what} is read-only: this array of shape {x.shape} is a broadcast (from broadcast_to "
                         f"or broadcast_arrays), several of whose elements are one element of its source; store "
                         f"into a copy instead (xp.asarray(x, copy=True))")


# `uop`, the graph node this tensor's value is, is the `_uop` slot under a public name (a property
# would cost a Python call on every read, and tensor operations read it hundreds of times a step)
Array.uop = Array.__dict__["_uop"]


# called with what reads a value on the host (a captured step refuses it: `lazyarr.capture`)
host_read_hooks: list = []
# called with the tensors about to be realized (a traced function refuses values of its parameters)
realize_hooks: list = []
# non-empty while a function's graph is built to be traced or differentiated (lazyarr.function,
# grad): checks NumPy makes at the call (linalg's LinAlgError) then wait for the value's
# computation, since computing at the call would replace graphs in between with their values
building_graphs: list = []
# Held while a thread realizes, reads a value back (`numpy()`), or fills a new buffer from host data
# (`creation.from_numpy`): the schedule and kernel caches, the prepared launches and the walks'
# marks are shared, and the memory pool hands out storage that a realization in flight (its kernels
# run without the GIL) may still use. Without it, two threads realizing at once computed wrong
# values (3 in 400 small realizations from 4 threads) or failed inside the launches, a thread
# copying a NumPy array in while another's kernels ran gave wrong sums in half of 40 realizations,
# and on PoCL reads back beside another thread's realization gave wrong sums in 6 of 10 runs.
realization_lock = threading.RLock()


def realize(*tensors: Array) -> None:
    """Compute several tensors in one schedule, so shared work runs once. The values that other
    live arrays hold and the schedule computes are stored too (`lazyarr.compiler.schedule.held_values`), and
    those arrays read their buffers from then on."""
    for t in tensors:
        if not isinstance(t, Array):
            raise TypeError(f"realize: expected Tensors, got {type(t).__name__}")
    with realization_lock:
        _realize_unique(tensors)


def _realize_unique(tensors: tuple[Array, ...]) -> None:
    for hook in realize_hooks:
        hook(tensors)
    unique = list({id(t): t for t in tensors}.values()) if len(tensors) > 1 else tensors
    todo = [t for t in unique if not is_buffer_view(t._uop) and
            not ((view := realized.get(t._uop)) is not None and realized_for(t._uop, view, {t.device.name}))]
    if not todo:
        return
    # Python's collector paused while realizing: a realization makes thousands of objects (nodes,
    # buffers, items) while a loop's whole graph is alive, and each full collection walks that
    # graph (a k-means loop of 400 iterations: 52 -> 41 ms); what it would free waits until after
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        _realize(todo)
    finally:
        if paused:
            gc.enable()


def _realize(todo: list[Array]) -> None:
    roots, devices = [t._uop for t in todo], [t.device for t in todo]
    walked, staged = walk_for_realize(roots, devices), []
    bound = None if walked.stopped else replay(roots, walked)   # (a cached structure is never staged)
    if bound is None:
        first, (walked, staged) = walked, stages_first(roots, devices, walked)
        if walked is not first:   # (the stages' buffers read now, or a stopped walk finished)
            bound = replay(roots, walked)
        del first
    if bound is not None:   # a structure that keeps coming back: its prepared launches, no schedule built
        views, stored, launch = bound
        marked: list[UOp] = []
    else:
        found, items, programs, marked, stored = schedule_realize(list(zip(roots, devices)), walked)
        views = [found[u] for u in roots]
        launch = partial(run, items, programs, marked)
        del found   # (its keys are the roots)
    done = [*zip(todo, views), *_holders(staged + stored)] if staged or stored else list(zip(todo, views))
    # a library routine may raise on its data (a singular matrix): the graphs are kept until it ran,
    # so that the tensors can go back to them and nothing counts as computed (otherwise they are
    # let go of, see below, so that the kernels may reuse storage no graph can read anymore)
    before = [(t, t._uop) for t, _ in done] if marked else []
    _take_buffers(done)
    # the graphs are let go of before the kernels run: their buffers may be reused
    del roots, walked, bound, views, done, stored, staged
    try:
        launch()
    except BaseException:   # a kernel failed: the tensors keep their graphs, nothing reads the buffers
        for t, u in before:
            t._uop = u
        raise


def _holders(stored: list[UOp]) -> list[tuple[Array, UOp]]:
    """The arrays that still hold the held values a schedule stored (a view's value has none), with
    their views."""
    found = []
    for n in stored:
        t = n._holder() if n._holder is not None else None
        if t is not None and t._uop is n:
            found.append((t, realized[n]))
    return found


def _take_buffers(done: list[tuple[Array, UOp]]) -> None:
    """Give each computed tensor the view of its buffer. A tensor that gradients may still flow
    through keeps its computation (its value is found through `realized`); any other drops it,
    freeing the graph."""
    for t, view in done:
        if t._leaf_grad:   # the leaf's marker, now over its buffer
            t._uop = leaf_marker(view, t._leaf_grad)
            realized[t._uop] = view
            hold(t)
        elif not _grad_leaves.data or t._released or not t.requires_grad:
            t._uop = view


def release(t: Array) -> None:
    """Gradients will not flow through array t any more (its backward ran, or an optimizer's step
    used it): a realization keeps only its value and lets its graph go."""
    t._released = True


def set_state(t: Array, value: UOp) -> None:
    """Give array t, an optimizer's state (no leaf, no view), its next value `value`, through which
    gradients may flow again."""
    t._uop, t._released = value, False
    hold(t)


def hold(t: Array) -> None:
    """Record that array t holds its node (`UOp._holder`): a realization stores the values of the
    nodes live arrays hold. Called wherever an array is given a new node after it was made (an
    in-place update, a leaf's marker): the array given the node last is the one that keeps it,
    while the result a function returned to build it goes away."""
    t._uop._holder = weakref.ref(t)


# ---- graph-building helpers used by the namespace modules ------------------------------------

_record_array = getattr(native_module, "record_array", None)   # (compiler/record_native.c: _from_uop in C)


def wrap(uop: UOp, device: Device) -> Array:
    if _record_array is not None and not grad_mode.disabled:
        t = _record_array(uop, device)
        if t is not NotImplemented:   # (before lazyarr.elementwise set the C recorder up)
            return t
    return Array._from_uop(uop, device)


