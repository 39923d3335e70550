"""Reverse-mode automatic differentiation by local gradients.

Each primitive op's local gradient lives with its other semantics (`lazyarr.ops`). `gradients`
walks the graph from the output in reverse topological order and, for every node on a path to a
target, adds each input's share of the node's adjoint (`OpDef.local_gradient`). Broadcasting is
undone by EXPAND's own local gradient (a sum over the stretched axes); nothing here knows about
particular ops. Gradients are graph nodes like any other, so the backward pass is lazy, fuses
and caches, and gradients of gradients work.

The user-facing API: `Tensor.requires_grad_()`, `.grad`, `.backward(gradient=None)`,
`.detach()`, `no_grad()` (a context manager and decorator), and the functional `grad(f)` and
`value_and_grad(f)`.
"""
from __future__ import annotations

import functools
import itertools
import operator
import weakref
from typing import Any, Callable, Sequence

from lazyarr import arrays as _array
from lazyarr.compiler.uop import Ops, UOp
from lazyarr.graph import const
from lazyarr.ops import OP_DEFS
from lazyarr.arrays import Array, building_graphs, is_grad_leaf, wrap
from lazyarr.creation import as_tensor

_markers = itertools.count()


def _on_path(order: list[UOp], wanted: Callable[[UOp], bool], only: Ops | None = None) -> tuple[set[UOp], list[UOp]]:
    """The nodes of `order` (sources first) that are targets (`wanted`; if `only` is given, only
    nodes of that op are asked) or read one through floating-point values and no DETACH: those a
    gradient flows through; and the targets, in order."""
    on_path: set[UOp] = set()
    targets: list[UOp] = []
    DETACH = Ops.DETACH
    for u in order:
        if (only is None or u.op is only) and wanted(u):
            on_path.add(u)
            targets.append(u)
        elif u.op is not DETACH and u.dtype.kind in "fc" and not on_path.isdisjoint(u.src):
            on_path.add(u)
    return on_path, targets


def gradients(root: UOp, targets: Sequence[UOp], root_adjoint: UOp, order: list[UOp] | None = None,
              on_path: set[UOp] | None = None, passing: dict[UOp, UOp | None] | None = None) -> list[UOp | None]:
    """The gradient of `root` with respect to each target node (None where it does not depend
    on it), for the output adjoint `root_adjoint`; `order`: root.toposort() and `on_path`: the
    nodes gradients flow through (`_on_path` for the targets or more), if the caller has them.
    `passing`: nodes whose adjoints to report there, which the adjoint flows on through."""
    if order is None:
        order = root.toposort()
    wanted = set(targets)
    if on_path is None:
        on_path = _on_path(order, wanted.__contains__)[0]
    adjoints: dict[UOp, UOp] = {root: root_adjoint}
    for u in reversed(order):
        g = adjoints.get(u)
        if passing is not None and u in passing:
            passing[u] = g
        # a target is a variable of its own: its adjoint does not flow on into what it was computed from
        if g is None or u in wanted or on_path.isdisjoint(u.src):
            continue
        opdef = OP_DEFS.get(u.op)
        if opdef is None:
            continue
        for i, s in enumerate(u.src):
            if s not in on_path:
                continue
            share = opdef.local_gradient(u, i, g)
            if share is None:
                continue
            known = adjoints.get(s)
            adjoints[s] = share if known is None else UOp(Ops.ADD, share.dtype, (known, share))
    return [adjoints.get(t) for t in targets]


def backward(self: Array, gradient: Any = None) -> None:
    """Accumulate d(self)/d(leaf) into `.grad` of every leaf tensor that requires gradients.
    `gradient` (the adjoint of self) may be omitted only for a tensor of one element."""
    graph = self.uop
    if not self.dtype.is_inexact:
        raise TypeError(f"backward() needs a floating-point tensor, not {self.dtype}: gradients do not flow "
                        f"through integer or boolean values")
    # one walk answers both which leaves the graph reads and whether gradients reach it from them
    order = graph.toposort()
    # the leaves' markers the graph reads, in graph order (the same every step; a leaf realized or
    # updated since the graph was recorded has several)
    on_path, markers = _on_path(order, is_grad_leaf, Ops.NOOP)
    if graph not in on_path:
        raise RuntimeError("backward(): this tensor does not require grad: none of the tensors it was "
                           "computed from was created with requires_grad=True (or it was computed under "
                           "no_grad() or from detach())")
    if gradient is None:
        if self.size != 1:
            raise ValueError(f"backward() without a gradient needs a tensor of one element; this one has shape "
                             f"{self.shape}: pass gradient= (the adjoint, of the same shape)")
        adjoint = const(1.0, self.dtype, self.shape)
    else:
        g = as_tensor(gradient, self.device)
        if g.shape != self.shape:
            raise ValueError(f"backward(): gradient of shape {g.shape} does not match the tensor's shape {self.shape}")
        adjoint = g.astype(self.dtype).uop
    live = _array.grad_leaf_tensors()
    retained = _array.retained_tensors()
    passing = {u: None for u in order if u.op is Ops.NOOP and u.arg in retained} if retained else None
    shares: dict[tuple, list[UOp]] = {}
    for m, g in zip(markers, gradients(graph, markers, adjoint, order, on_path, passing)):
        if g is not None:
            shares.setdefault(m.arg, []).append(g)
    for key in dict.fromkeys(m.arg for m in markers):
        t = live[key]
        parts = shares.get(key) or [const(0.0, t.dtype, t.shape)]
        g = parts[0]
        for more in parts[1:]:
            g = UOp(Ops.ADD, g.dtype, (g, more))
        grad = wrap(g, t.device)
        t.grad = grad if t.grad is None else t.grad + grad
    for u, g in (passing or {}).items():   # retain_grad's tensors
        t = retained.get(u.arg)
        if t is not None and g is not None:
            grad = wrap(g, t.device)
            t.grad = grad if t.grad is None else t.grad + grad
    # as in PyTorch, the graph is not kept for a second backward: once realized, self keeps only its
    # value; an optimizer's step realizes it with the update, so that it need not be recomputed
    _array.release(self)
    if not self.is_realized:
        _pending_outputs.add(self)


_pending_outputs: weakref.WeakSet = weakref.WeakSet()


def take_pending_outputs() -> list[Array]:
    """The tensors whose backward() ran since the last call and that are not realized yet (an
    optimizer's step realizes them with its updates), forgotten here."""
    outputs = list(_pending_outputs)
    _pending_outputs.clear()
    return outputs


class no_grad:
    """Within `with no_grad():` (or a function decorated with `@no_grad()`), results do not
    require gradients and gradients do not flow through them."""

    def __init__(self, fn: Callable | None = None):
        self._fn = fn
        if fn is not None:
            functools.update_wrapper(self, fn)

    def __enter__(self) -> no_grad:
        _array.grad_mode.disabled += 1
        return self

    def __exit__(self, *exc: Any) -> None:
        _array.grad_mode.disabled -= 1

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._fn is None:   # used as @no_grad(): decorate the function
            return no_grad(args[0])
        with no_grad():
            return self._fn(*args, **kwargs)


def value_and_grad(f: Callable[..., Array], argnums: int | Sequence[int] = 0) -> Callable[..., tuple[Array, Any]]:
    """f's value and its gradient with respect to the arguments `argnums` (one Tensor, or a tuple
    for a sequence). f must return a floating-point tensor of one element."""
    try:
        nums = (operator.index(argnums),) if not isinstance(argnums, Sequence) else tuple(map(operator.index, argnums))
    except TypeError:
        raise TypeError(f"grad: argnums must be an int or a sequence of ints, got {argnums!r}") from None

    def wrapper(*args: Any, **kwargs: Any) -> tuple[Array, Any]:
        if any(not -len(args) <= i < len(args) for i in nums):
            raise TypeError(f"grad: differentiating with respect to argnums={argnums!r} needs that many positional "
                            f"arguments, got {len(args)}")
        # an argument listed twice is one input (and gets its gradient in each place)
        where = [i % len(args) for i in nums]
        distinct = list(dict.fromkeys(where))
        marked, markers = list(args), []
        for i in distinct:
            t = as_tensor(args[i])
            if not t.dtype.is_inexact:
                raise TypeError(f"grad: argument {i} has dtype {t.dtype}; gradients need floating-point inputs")
            m = UOp(Ops.NOOP, t.dtype, (t.uop,), ("grad input", next(_markers)))
            markers.append(m)
            marked[i] = wrap(m, t.device)
        building_graphs.append(f)
        try:
            out = f(*marked, **kwargs)
        finally:
            building_graphs.pop()
        if not isinstance(out, Array) or out.size != 1 or not out.dtype.is_inexact:
            raise ValueError("grad: the function must return a floating-point tensor of one element, got "
                             + (f"shape {out.shape}, dtype {out.dtype}" if isinstance(out, Array) else type(out).__name__))
        grads = gradients(out.uop, markers, const(1.0, out.dtype, out.shape))
        results = {i: wrap(g if g is not None else const(0.0, m.dtype, m.shape), out.device)
                   for i, g, m in zip(distinct, grads, markers)}
        return out, results[where[0]] if not isinstance(argnums, Sequence) else tuple(results[i] for i in where)
    return wrapper


def grad(f: Callable[..., Array], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """The function computing f's gradient with respect to the arguments `argnums`."""
    vg = value_and_grad(f, argnums)
    return functools.wraps(f)(lambda *args, **kwargs: vg(*args, **kwargs)[1])


