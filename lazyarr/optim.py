"""Optimizers: SGD (momentum, Nesterov, weight decay), Adam and AdamW, as in PyTorch.

`step()` computes every parameter's update (and the optimizer's state) from detached values and
realizes them together in one schedule, so an update is a few fused kernels and the previous step's
graph is not kept alive. `zero_grad()` clears the gradients.
"""
from __future__ import annotations

from typing import Iterable

from lazyarr.autograd import pending_outputs
from lazyarr.creation import asarray, zeros_like
from lazyarr.elementwise import sqrt
from lazyarr.tensor import Tensor, realize


class Optimizer:
    def __init__(self, params: Iterable[Tensor], lr: float):
        self.params = list(params)
        if not self.params:
            raise ValueError("optimizer got an empty parameter list")
        for p in self.params:
            if not isinstance(p, Tensor) or not p.is_leaf or not p.requires_grad:
                raise ValueError("optimizer parameters must be leaf tensors with requires_grad=True")
        if lr < 0:
            raise ValueError(f"invalid learning rate: {lr}")
        self.lr = lr
        self.steps = 0

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            p.grad = None if set_to_none or p.grad is None else zeros_like(p)

    def step(self) -> None:
        """Update the parameters. One schedule computes the updates, the new state, the gradients
        and the outputs whose backward() produced them (a loss printed after the step is not
        computed again), and the graphs are let go of, so the updates run in place."""
        self.steps += 1
        with_grad = [p for p in self.params if p.grad is not None]
        grads = [p.grad for p in with_grad]
        # on detached values the update records no gradients, without no_grad()'s DETACH on each result
        state = [t for p in with_grad for t in self._update(p, p.detach(), p.grad.detach())]
        outputs = list(pending_outputs)
        pending_outputs.clear()
        for g in grads:   # used by the step: no further gradients through them, keep only values
            g._released = True
        for t in state:   # computed from detached values: only their values matter (realize need not ask)
            t._released = True
        # readers of the old parameters first, so that the updates can take over their storage
        realize(*outputs, *grads, *state, *with_grad)

    def _update(self, p: Tensor, value: Tensor, g: Tensor) -> list[Tensor]:
        """Rebind p to its updated value, computed from `value` (p's, detached) and the detached
        gradient g; return the state tensors that changed."""
        raise NotImplementedError


class SGD(Optimizer):
    def __init__(self, params: Iterable[Tensor], lr: float = 1e-3, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False):
        super().__init__(params, lr)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum needs a momentum and zero dampening")
        self.momentum, self.dampening, self.weight_decay, self.nesterov = momentum, dampening, weight_decay, nesterov
        self.buffers: dict[int, Tensor] = {}

    def _update(self, p: Tensor, value: Tensor, g: Tensor) -> list[Tensor]:
        if self.weight_decay:
            g = g + value * self.weight_decay
        state = []
        if self.momentum:
            buf = self.buffers.get(id(p))
            buf = g if buf is None else buf * self.momentum + g * (1 - self.dampening)
            self.buffers[id(p)] = buf
            state.append(buf)
            g = g + buf * self.momentum if self.nesterov else buf
        p.uop = (value - g * self.lr).uop
        return state


class Adam(Optimizer):
    """Adam; with `decoupled=True` (AdamW) the weight decay shrinks the parameters directly."""

    def __init__(self, params: Iterable[Tensor], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, decoupled: bool = False):
        super().__init__(params, lr)
        if not (0 <= betas[0] < 1 and 0 <= betas[1] < 1):
            raise ValueError(f"invalid betas: {betas}")
        self.betas, self.eps, self.weight_decay, self.decoupled = betas, eps, weight_decay, decoupled
        self.m: dict[int, Tensor] = {}
        self.v: dict[int, Tensor] = {}
        self._scale_cache: dict[tuple, tuple[Tensor, Tensor]] = {}

    def _update(self, p: Tensor, value: Tensor, g: Tensor) -> list[Tensor]:
        b1, b2 = self.betas
        if self.weight_decay and not self.decoupled:
            g = g + value * self.weight_decay
        m = self.m.get(id(p))
        v = self.v.get(id(p))
        m = g * (1 - b1) if m is None else m * b1 + g * (1 - b1)
        v = g * g * (1 - b2) if v is None else v * b2 + g * g * (1 - b2)
        self.m[id(p)], self.v[id(p)] = m, v
        s1, s2 = self._scales(p)
        new = value * (1 - self.lr * self.weight_decay) if self.decoupled and self.weight_decay else value
        p.uop = (new - m * s1 / (sqrt(v * s2) + self.eps)).uop
        return [m, v]

    def _scales(self, p: Tensor) -> tuple[Tensor, Tensor]:
        """This step's bias corrections, one array for every parameter of p's dtype and device: they
        change every step, so they reach the kernels as data, not as constants, and the update
        compiles once."""
        key = (self.steps, p.dtype, p.device)
        if key not in self._scale_cache:
            b1, b2 = self.betas
            scales = asarray([self.lr / (1 - b1 ** self.steps), 1 / (1 - b2 ** self.steps)], dtype=p.dtype,
                             device=p.device)
            self._scale_cache = {key: (scales[0], scales[1]), **{k: v for k, v in self._scale_cache.items()
                                                                 if k[0] == self.steps}}
        return self._scale_cache[key]


class AdamW(Adam):
    def __init__(self, params: Iterable[Tensor], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2):
        super().__init__(params, lr, betas, eps, weight_decay, decoupled=True)
