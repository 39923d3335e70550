"""Random array programs, evaluated by NumPy, lazyarr and PyTorch through the same code.

A program is a list of nodes (SSA: node i reads earlier nodes). `generate(seed, ...)` draws one,
deterministically per seed, from a small expression language:

- inputs made every way a user makes them: `xp.asarray` of NumPy arrays, of nested lists and of
  Python scalars, `ones`/`zeros`/`full`/`arange`/`linspace`/`eye`, `*_like`, `lazyarr.random`,
  slices, transposes and broadcasts of other arrays (views), 0-d arrays; realized or lazy; in
  gradient programs some are parameters (`requires_grad=True`, `.requires_grad = True`,
  `.requires_grad_()`), often equal in value to other inputs or to the program's constants;
- element-wise operations (operators and functions, Python scalars on either side), with
  broadcasting over shapes such as (), (3,), (2, 3), (4, 1); comparisons and `where`;
- reductions (sum, mean, max, min, prod; axis None, an int or a tuple; keepdims), matmul,
  reshape, transposes, basic indexing (negative steps, integer indices, None, Ellipsis), flip,
  broadcast_to, expand_dims, squeeze, concat and stack, casts, `realize()` in the middle;
- loops: a body applied k times (k up to 50) to a state without realizing inside, as a
  recurrence `s = a*s + b*tanh(f(s, params))` or a normalisation, so that values stay bounded;
- integer programs: wrapping arithmetic, floor_divide and remainder with negative operands (never
  by zero or by -1), shifts, bitwise operations, integer powers (negative ones raise ValueError).

Every float value has a static bound on its magnitude; an operation that would pass a limit is
preceded by a squashing one (tanh), so programs neither overflow nor lose all precision.

`evaluate(program, backend)` runs a program with NumPy (`NumpyBackend`, optionally in another float
dtype, recording how close each comparison / kink came to a tie), lazyarr (`LazyBackend`) or
PyTorch (`TorchBackend`), calling the same code with the backend's namespace. `source(program)`
renders it as a Python script for lazyarr: the reproducer printed with every failure.

The checks the tests and `scripts/differential.py` share are at the end: `check_forward` (against
NumPy), `check_gradients` (against torch.autograd, optionally also finite differences) and
`check_optimizer` (lazyarr.optim against torch.optim over a few steps). A program whose NumPy value
in float32 and float64 disagree by more than the tested tolerance allows (ill-conditioned), or
whose comparisons / kinks come within a rounding error of a tie without being exact ties, is
discarded and the next attempt of the same seed is drawn: the tests compare arithmetic, not luck.

Modules, from the bottom: `model` (the language's constants, nodes, shapes and inputs), `backends`
(NumPy, lazyarr, PyTorch), `evaluate` (running and rendering a program), `generator_ops` and
`generator` (drawing one), `checks` (drawing, comparing and reporting).
"""
from tests.random_programs.checks import (OPTIMIZERS, Result, check_forward, check_gradients,
                                          check_optimizer, generate)
from tests.random_programs.model import INTS

__all__ = ["OPTIMIZERS", "INTS", "Result", "check_forward", "check_gradients", "check_optimizer", "generate"]
