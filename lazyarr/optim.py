"""Optimizers: SGD (momentum, Nesterov, weight decay), Adam and AdamW, as in PyTorch.

`step()` computes every parameter's update (and the optimizer's state) from the values of the
parameters and gradients and realizes them together in one schedule, so an update is a few fused
kernels (Adam's: one per parameter, storing the moments and the parameter) and the previous step's
graph is not kept alive. `zero_grad()` clears the gradients. The learning rate (and Adam's bias
corrections) reach the kernels as data, not as constants: changing `opt.lr` between steps, as a
schedule does, compiles nothing new.
"""
from __future__ import annotations

import math
from typing import Callable, Iterable

import numpy as np

from lazyarr.autograd import take_pending_outputs
from lazyarr.capture import on_replay
from lazyarr.compiler.uop import Ops, UOp
from lazyarr.creation import asarray, zeros_like
from lazyarr.graph import const, expand_uop, reshape_uop, shrink_uop
from lazyarr.arrays import Array, realize, release, set_state, wrap

# The updates are written with graph nodes directly rather than with Tensor operators: every step
# records them again, and the operators' checks, promotion and broadcasting (which these operands of
# one shape and dtype do not need) cost several times what the nodes do.


def _alu(op: Ops, a: UOp, b: UOp) -> UOp:
    return UOp(op, a.dtype, (a, b))


def _scale(u: UOp, factor: float) -> UOp:
    """u times a Python float (a constant of u's dtype and shape)."""
    return UOp(Ops.MUL, u.dtype, (u, const(factor, u.dtype, u.shape)))


def _keep(state: dict, key: int, value: UOp, p: Array) -> Array:
    """Set the state array `state[key]` to `value`: the same array object from step to step (a
    captured step, `lazyarr.capture`, finds the optimizer's state by its arrays)."""
    t = state.get(key)
    if t is None:
        t = state[key] = wrap(value, p.device)
    else:
        set_state(t, value)
    return t


class Optimizer:
    def __init__(self, params: Iterable[Array], lr: float):
        self.params = list(params)
        if not self.params:
            raise ValueError("optimizer got an empty parameter list")
        for p in self.params:
            if not isinstance(p, Array) or not p.is_leaf or not p.requires_grad:
                raise ValueError("optimizer parameters must be leaf tensors with requires_grad=True")
        if lr < 0:
            raise ValueError(f"invalid learning rate: {lr}")
        self.lr = lr
        self.steps = 0
        self._step_arrays: dict[tuple, list] = {}   # (dtype, device) → [step written, array, {shape: nodes}]

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            p.grad = None if set_to_none or p.grad is None else zeros_like(p)

    def step(self) -> None:
        """Update the parameters. One schedule computes the updates, the new state, the gradients
        and the outputs whose backward() produced them (a loss printed after the step is not
        computed again), and the graphs are let go of, so the updates run in place."""
        self.steps += 1
        on_replay(self._advance)
        with_grad = [p for p in self.params if p.grad is not None]
        grads = [p.grad for p in with_grad]
        # no DETACH is needed on the values the update reads: the results are realized below and only
        # their values are kept (the parameters are leaves, the state and the gradients are released)
        state = [t for p in with_grad for t in self._update(p, p.uop, p.grad.uop)]
        outputs = take_pending_outputs()
        for t in grads + state:   # used by the step / only their values matter: no further gradients through them
            release(t)
        # readers of the old parameters first, so that the updates can take over their storage
        realize(*outputs, *grads, *state, *with_grad)

    def _advance(self) -> None:
        """A replayed step's Python part (`lazyarr.capture`): count it, and write its per-step values."""
        self.steps += 1
        for found in self._step_arrays.values():
            found[1].arg.copyin(np.array(found[3]()))
            found[0] = self.steps

    def _update(self, p: Array, value: UOp, g: UOp) -> list[Array]:
        """Rebind p to its updated value, computed from `value` (p's node) and the gradient's node g;
        return the state tensors that changed."""
        raise NotImplementedError

    def _per_step(self, p: Array, values: Callable[[], list[float]]) -> tuple[UOp, ...]:
        """This step's `values()` (a learning rate a user may change between steps, Adam's bias
        corrections), as nodes of p's shape reading one array shared by the parameters of p's dtype
        and device: they reach the kernels as data, not as constants, so the update compiles once.
        The array is written anew each step (the previous step's kernels, which read it, have run),
        so that the nodes are the same from step to step."""
        key = (p.dtype, p.device)
        found = self._step_arrays.get(key)
        if found is None:
            found = self._step_arrays[key] = [0, asarray(values(), dtype=p.dtype, device=p.device).uop, {}, values]
        elif found[0] != self.steps:
            found[1].arg.copyin(np.array(values()))
        found[0], found[3] = self.steps, values
        nodes = found[2].get(p.shape)
        if nodes is None:   # each value broadcast to p's shape
            nodes = found[2][p.shape] = tuple(expand_uop(reshape_uop(shrink_uop(found[1], [(i, i + 1)]), ()), p.shape)
                                              for i in range(found[1].arg.size))
        return nodes


class SGD(Optimizer):
    def __init__(self, params: Iterable[Array], lr: float = 1e-3, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False):
        super().__init__(params, lr)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum needs a momentum and zero dampening")
        self.momentum, self.dampening, self.weight_decay, self.nesterov = momentum, dampening, weight_decay, nesterov
        self.buffers: dict[int, Array] = {}

    def _update(self, p: Array, value: UOp, g: UOp) -> list[Array]:
        if self.weight_decay:
            g = _alu(Ops.ADD, g, _scale(value, self.weight_decay))
        state = []
        if self.momentum:
            old = self.buffers.get(id(p))
            buf = g if old is None else _alu(Ops.ADD, _scale(old.uop, self.momentum), _scale(g, 1 - self.dampening))
            state.append(_keep(self.buffers, id(p), buf, p))
            g = _alu(Ops.ADD, g, _scale(buf, self.momentum)) if self.nesterov else buf
        lr, = self._per_step(p, lambda: [self.lr])
        p.rebind(_alu(Ops.SUB, value, _alu(Ops.MUL, g, lr)))
        return state


class Adam(Optimizer):
    """Adam; with `decoupled=True` (AdamW) the weight decay shrinks the parameters directly."""

    def __init__(self, params: Iterable[Array], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, decoupled: bool = False):
        super().__init__(params, lr)
        if not (0 <= betas[0] < 1 and 0 <= betas[1] < 1):
            raise ValueError(f"invalid betas: {betas}")
        self.betas, self.eps, self.weight_decay, self.decoupled = betas, eps, weight_decay, decoupled
        self.m: dict[int, Array] = {}
        self.v: dict[int, Array] = {}

    def _update(self, p: Array, value: UOp, g: UOp) -> list[Array]:
        b1, b2 = self.betas
        if self.weight_decay and not self.decoupled:
            g = _alu(Ops.ADD, g, _scale(value, self.weight_decay))
        old_m, old_v = self.m.get(id(p)), self.v.get(id(p))
        g2 = _alu(Ops.MUL, g, g)
        # the moments move towards g and g² by (1 - beta): m + (g - m)(1 - b1) is m·b1 + g(1 - b1) with
        # one constant fewer (PyTorch's lerp)
        m = _scale(g, 1 - b1) if old_m is None else\
            _alu(Ops.ADD, old_m.uop, _scale(_alu(Ops.SUB, g, old_m.uop), 1 - b1))
        v = _scale(g2, 1 - b2) if old_v is None else\
            _alu(Ops.ADD, old_v.uop, _scale(_alu(Ops.SUB, g2, old_v.uop), 1 - b2))
        _keep(self.m, id(p), m, p)
        _keep(self.v, id(p), v, p)
        step, eps, shrink = self._scales(p)
        new = _alu(Ops.MUL, value, shrink) if self.decoupled and self.weight_decay else value
        # p - lr/bc1 · m / (sqrt(v/bc2) + eps), written as p - step · m / (sqrt(v) + eps·sqrt(bc2))
        update = _alu(Ops.FDIV, _alu(Ops.MUL, m, step), _alu(Ops.ADD, UOp(Ops.SQRT, v.dtype, (v,)), eps))
        p.rebind(_alu(Ops.SUB, new, update))
        return [self.m[id(p)], self.v[id(p)]]

    def _scales(self, p: Array) -> tuple[UOp, UOp, UOp]:
        """This step's step size lr·sqrt(bc2)/bc1, eps·sqrt(bc2) (bc: the bias corrections) and
        AdamW's decay factor 1 - lr·weight_decay."""
        def values() -> list[float]:
            b1, b2 = self.betas
            root = math.sqrt(1 - b2 ** self.steps)
            return [self.lr * root / (1 - b1 ** self.steps), self.eps * root, 1 - self.lr * self.weight_decay]
        return self._per_step(p, values)


class AdamW(Adam):
    def __init__(self, params: Iterable[Array], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2):
        super().__init__(params, lr, betas, eps, weight_decay, decoupled=True)
