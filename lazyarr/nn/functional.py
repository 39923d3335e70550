"""A small set of neural-network functions, as compositions of array functions (so their
gradients come from the primitives' local gradients)."""
from __future__ import annotations

import math
from typing import Any

from lazyarr import dtypes
from lazyarr import elementwise as ew
from lazyarr import random
from lazyarr import statistics as st
from lazyarr.compiler.uop import Ops, UOp
from lazyarr.graph import alu, cast_uop, const, expand_uop, non_negative_int, reshape_uop
from lazyarr.linear_algebra import matmul
from lazyarr.arrays import Array, wrap
from lazyarr.creation import as_tensor


def relu(x: Array) -> Array:
    """max(x, 0); the gradient at 0 is 0, as PyTorch's."""
    x = as_tensor(x)
    if x.dtype.is_float:   # the nodes where(x > 0, x, 0.0) records, built directly (every training step has them)
        u = x.uop
        zero = const(0.0, u.dtype, u.shape)
        return wrap(UOp(Ops.WHERE, u.dtype, (UOp(Ops.CMPLT, dtypes.bool_, (zero, u)), u, zero)), x.device)
    return ew.where(x > 0, x, 0.0)


def gelu(x: Array, approximate: str = "none") -> Array:
    """x·Φ(x) with the exact normal CDF (erf), or its tanh approximation (approximate="tanh").
    Real arrays only (TypeError for complex ones: erf has no complex version here)."""
    x = as_tensor(x)
    if x.dtype.is_complex:
        raise TypeError(f"gelu: arrays of dtype {x.dtype} are not supported (expected real dtypes)")
    if approximate == "tanh":
        inner = (x + x * x * x * 0.044715) * math.sqrt(2 / math.pi)
        return x * 0.5 * (ew.tanh(inner) + 1)
    if approximate != "none":
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return x * 0.5 * (wrap(alu(Ops.ERF, (x * (1 / math.sqrt(2))).uop), x.device) + 1)


def softmax(x: Array, axis: int = -1) -> Array:
    """exp(x) / sum(exp(x)) along `axis`, computed as exp(x - max) for range."""
    x = as_tensor(x)
    e = ew.exp(x - st.max(x, axis=axis, keepdims=True).detach())
    return e / st.sum(e, axis=axis, keepdims=True)


def log_softmax(x: Array, axis: int = -1) -> Array:
    """x - logsumexp(x) along `axis`."""
    x = as_tensor(x)
    shifted = x - st.max(x, axis=axis, keepdims=True).detach()
    return shifted - ew.log(st.sum(ew.exp(shifted), axis=axis, keepdims=True))


def one_hot(labels: Array, num_classes: int) -> Array:
    """An int64 array with a 1 at each label's position along a new last axis."""
    labels = as_tensor(labels)
    if not labels.dtype.is_int:
        raise TypeError(f"one_hot: labels must be integers, not {labels.dtype}")
    return _one_hot(labels, _num_classes(num_classes), dtypes.int64)


def _num_classes(n: Any) -> int:
    """`n` as a number of classes: TypeError unless an integer, ValueError if negative."""
    return non_negative_int("one_hot", "num_classes", n)


def _one_hot(labels: Array, num_classes: int, dtype: dtypes.DType) -> Array:
    """one_hot of `dtype`: labels[..., None] == arange(num_classes), built directly (every training
    step records it) and converted once."""
    d = dtypes.promote_types(labels.dtype, dtypes.default_int)
    shape = labels.shape + (num_classes,)
    lab = expand_uop(reshape_uop(cast_uop(labels.uop, d), labels.shape + (1,)), shape)
    classes = expand_uop(cast_uop(UOp(Ops.IOTA, dtypes.index, (), num_classes), d), shape)
    return wrap(cast_uop(UOp(Ops.CMPEQ, dtypes.bool_, (lab, classes)), dtype), labels.device)


def cross_entropy(logits: Array, target: Array, reduction: str = "mean", label_smoothing: float = 0.0) -> Array:
    """The cross entropy of logits (N, C) against class indices (N,) or class probabilities (N, C)."""
    logits, target = as_tensor(logits), as_tensor(target)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"cross_entropy: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    if logits.ndim == 0:
        raise ValueError("cross_entropy: logits must have a class axis (at least 1 dimension), got a 0-d array")
    n_classes = logits.shape[-1]
    if target.dtype.is_int:
        if target.shape != logits.shape[:-1]:
            raise ValueError(f"cross_entropy: target of shape {target.shape} does not match logits {logits.shape}")
        probs = _one_hot(target, n_classes, logits.dtype)
    else:
        if target.shape != logits.shape:
            raise ValueError(f"cross_entropy: probabilities of shape {target.shape} do not match logits {logits.shape}")
        probs = target
    if label_smoothing:
        probs = probs * (1 - label_smoothing) + label_smoothing / n_classes
    if target.dtype.is_int:
        # the rows of probs sum to one, so -Σ p·log_softmax(x) is logsumexp(x) - Σ p·x (x shifted by
        # its row max): the log-sum-exp's gradient then needs no sum of probs over the classes
        shifted = logits - st.max(logits, axis=-1, keepdims=True).detach()
        loss = ew.log(st.sum(ew.exp(shifted), axis=-1)) - st.sum(probs * shifted, axis=-1)
    else:
        loss = -st.sum(probs * log_softmax(logits, axis=-1), axis=-1)
    return st.mean(loss) if reduction == "mean" else st.sum(loss) if reduction == "sum" else loss


def dropout(x: Array, p: float = 0.5, training: bool = True) -> Array:
    """Zero each element with probability p and scale the rest by 1/(1-p) (when training)."""
    if not 0 <= p <= 1:
        raise ValueError(f"dropout: p must be in [0, 1], got {p}")
    x = as_tensor(x)
    if not training or p == 0:
        return x
    if p == 1:
        return x * 0.0
    keep = random.uniform(shape=x.shape, dtype=x.dtype if x.dtype.is_float else None, device=x.device) >= p
    return ew.where(keep, x * (1 / (1 - p)), 0.0)


def linear(x: Array, weight: Array, bias: Array | None = None) -> Array:
    """x @ weight.T + bias, weight of shape (out_features, in_features)."""
    x, weight = as_tensor(x), as_tensor(weight)
    if x.ndim == 2 and weight.ndim == 2 and x.dtype is weight.dtype and x.device is weight.device\
            and x.shape[1] == weight.shape[1] and x.dtype.is_float:
        # x (n, k) and weight (m, k) both broadcast to (n, m, k) and summed over k: the product without
        # the transpose (and its gradient's transpose), which every training step records
        (n, k), m = x.shape, weight.shape[0]
        xs = expand_uop(reshape_uop(x.uop, (n, 1, k)), (n, m, k))
        ws = expand_uop(reshape_uop(weight.uop, (1, m, k)), (n, m, k))
        prod = UOp(Ops.REDUCE_AXIS, x.dtype, (UOp(Ops.MUL, x.dtype, (xs, ws)),), (Ops.ADD, (2,)))
        out = wrap(reshape_uop(prod, (n, m)), x.device)
    else:
        out = matmul(x, weight.mT)
    return out if bias is None else out + bias


def mse_loss(input: Array, target: Array, reduction: str = "mean") -> Array:
    """The squared error, averaged (or summed, or per element)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"mse_loss: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    d = as_tensor(input) - as_tensor(target)
    sq = d * d
    return st.mean(sq) if reduction == "mean" else st.sum(sq) if reduction == "sum" else sq
