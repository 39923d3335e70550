"""NumPy's einsum: Einstein summation, lowered to broadcast multiplies and sums, so that it fuses.

The subscripts follow NumPy's grammar: comma-separated labels per operand, `...` for broadcast
axes, an explicit output after `->` or the implicit one (the labels that appear once, in
alphabetical order, after the broadcast axes); or NumPy's sublist form, einsum(a, [0, 1], b,
[1, 2], [0, 2]). A label repeated within one operand takes its diagonal. The operands are then
contracted two at a time, each time the pair whose result is smallest (a greedy order, as
NumPy's optimize='greedy'; `optimize` is accepted and the order is always chosen so): each
contraction is one broadcast multiply and sum, a kernel like matmul's. Labels of one operand
that nothing else needs are summed first. Gradients flow, as through any multiply and sum.

Raises ValueError for malformed subscripts (naming them), a count of operands or labels that does
not match, or labels whose lengths differ (and are not 1)."""
from __future__ import annotations

import math
from typing import Any

from lazyarr import dtypes
from lazyarr.arrays import Array
from lazyarr.creation import as_tensor
from lazyarr.elementwise import multiply, not_equal
from lazyarr.linalg import diagonal
from lazyarr.manipulation import broadcast_to, moveaxis, permute_dims, reshape
from lazyarr.statistics import sum as total

__all__ = ["einsum"]

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _from_sublists(args: tuple) -> tuple[str, list[Any]]:
    """NumPy's interleaved form (op, sublist, op, sublist, ..., [output sublist]) as subscripts."""
    def letters(sub: Any) -> str:
        out = ""
        for v in sub:
            if v is Ellipsis:
                out += "..."
            elif isinstance(v, int) and 0 <= v < len(_LETTERS):
                out += _LETTERS[v]
            else:
                raise ValueError(f"einsum: sublist labels must be integers in [0, {len(_LETTERS)}) or ..., got {v!r}")
        return out
    operands = list(args[0::2][:len(args) // 2])
    subs = [letters(s) for s in args[1::2][:len(args) // 2]]
    spec = ",".join(subs)
    if len(args) % 2:
        spec += "->" + letters(args[-1])
    return spec, operands


def _parse(subscripts: str, ndims: list[int]) -> tuple[list[list[str]], list[str]]:
    """Each operand's labels and the output's; the broadcast axes of `...` are labels "…0", "…1",
    ... counted from the last, so that operands with fewer of them broadcast on the left."""
    spec = subscripts.replace(" ", "")
    if spec.count("->") > 1 or ("-" in spec.replace("->", "")) or (">" in spec.replace("->", "")):
        raise ValueError(f"einsum: malformed subscripts {subscripts!r}: '->' at most once")
    inputs, arrow, output = spec.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(ndims):
        raise ValueError(f"einsum: subscripts {subscripts!r} name {len(terms)} operands, {len(ndims)} were given")
    parsed, widest = [], 0
    for term, nd in zip(terms, ndims):
        labels = _labels(term, subscripts)
        if "..." in labels:
            k = nd - (len(labels) - 1)
            if k < 0:
                raise ValueError(f"einsum: operand of {nd} dimensions has more labels than axes in {term!r}")
            at = labels.index("...")
            labels = labels[:at] + [f"…{k - 1 - i}" for i in range(k)] + labels[at + 1:]
            widest = max(widest, k)
        elif len(labels) != nd:
            raise ValueError(f"einsum: {term!r} labels {len(labels)} axes, its operand has {nd}")
        parsed.append(labels)
    broadcast = [f"…{widest - 1 - i}" for i in range(widest)]
    if arrow:
        out = _labels(output, subscripts)
        if "..." in out:
            at = out.index("...")
            out = out[:at] + broadcast + out[at + 1:]
        seen = [lab for labs in parsed for lab in labs]
        for lab in out:
            if lab not in seen:
                raise ValueError(f"einsum: output label {lab!r} of {subscripts!r} is not among the inputs'")
        if len(set(out)) != len(out):
            raise ValueError(f"einsum: an output label repeats in {subscripts!r}")
    else:
        counts: dict[str, int] = {}
        for labs in parsed:
            for lab in labs:
                counts[lab] = counts.get(lab, 0) + 1
        out = broadcast + sorted(lab for lab, c in counts.items() if c == 1 and not lab.startswith("…"))
    return parsed, out


def _labels(term: str, subscripts: str) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(term):
        if term.startswith("...", i):
            if "..." in out:
                raise ValueError(f"einsum: '...' twice in one term of {subscripts!r}")
            out.append("...")
            i += 3
        elif term[i] in _LETTERS:
            out.append(term[i])
            i += 1
        else:
            raise ValueError(f"einsum: invalid character {term[i]!r} in subscripts {subscripts!r}")
    return out


def _diagonals(x: Array, labels: list[str]) -> tuple[Array, list[str]]:
    """x with each repeated label's axes reduced to their diagonal (one axis, the label once)."""
    while True:
        repeated = next((lab for lab in labels if labels.count(lab) > 1), None)
        if repeated is None:
            return x, labels
        a = labels.index(repeated)
        b = labels.index(repeated, a + 1)
        if x.shape[a] != x.shape[b]:
            raise ValueError(f"einsum: label {repeated!r} has lengths {x.shape[a]} and {x.shape[b]} in one operand")
        x = diagonal(moveaxis(x, (a, b), (-2, -1)))
        labels = [lab for i, lab in enumerate(labels) if i not in (a, b)] + [repeated]


def _sum_out(x: Array, labels: list[str], keep: set[str]) -> tuple[Array, list[str]]:
    axes = tuple(i for i, lab in enumerate(labels) if lab not in keep)
    if not axes:
        return x, labels
    return total(x, axis=axes, dtype=x.dtype), [lab for lab in labels if lab in keep]


def _contract(a: tuple[Array, list[str]], b: tuple[Array, list[str]], keep: set[str]) -> tuple[Array, list[str]]:
    """The product of two terms over the union of their labels, summed over those not in `keep`."""
    (x, lx), (y, ly) = a, b
    union = lx + [lab for lab in ly if lab not in lx]

    def aligned(t: Array, labels: list[str]) -> Array:
        t = permute_dims(t, [labels.index(lab) for lab in union if lab in labels])
        lengths = iter(t.shape)
        return reshape(t, tuple(next(lengths) if lab in labels else 1 for lab in union))
    return _sum_out(multiply(aligned(x, lx), aligned(y, ly)), union, keep)


def einsum(subscripts: Any, /, *operands: Any, out: Any = None, dtype: Any = None, order: str = "K",
           casting: str = "safe", optimize: Any = False) -> Array:
    """Einstein summation over the operands as `subscripts` says (see the module's docs)."""
    if out is not None:
        raise TypeError("einsum: out= is not supported (lazyarr's arrays are values: assign the result)")
    if not isinstance(subscripts, str):
        subscripts, ops = _from_sublists((subscripts,) + operands)
    else:
        ops = list(operands)
    if not ops:
        raise ValueError("einsum: at least one operand is needed")
    ts = [as_tensor(o) for o in ops]
    inputs, output = _parse(subscripts, [t.ndim for t in ts])
    d = dtypes.as_dtype(dtype) if dtype is not None else dtypes.promote_types(*(t.dtype for t in ts))
    boolean = d.is_bool
    work = dtypes.default_int if boolean else d
    terms = [_diagonals(t.astype(work), labels) for t, labels in zip(ts, inputs)]
    sizes: dict[str, int] = {}
    for t, labels in terms:
        for n, lab in zip(t.shape, labels):
            if sizes.get(lab, 1) not in (1, n) and n != 1:
                raise ValueError(f"einsum: label {lab.replace('…', '...')!r} has lengths {sizes[lab]} and {n} "
                                 f"in {subscripts!r}")
            sizes[lab] = max(sizes.get(lab, 1), n)

    def needed(skip: tuple[int, ...]) -> set[str]:
        return set(output).union(*(set(labels) for i, (_, labels) in enumerate(terms) if i not in skip))
    terms = [_sum_out(t, labels, needed((i,))) for i, (t, labels) in enumerate(terms)]
    while len(terms) > 1:   # the pair whose result is smallest, contracted first
        best = None
        for i in range(len(terms)):
            for j in range(i + 1, len(terms)):
                keep = needed((i, j))
                result = set(terms[i][1]) | set(terms[j][1])
                cost = math.prod(sizes[lab] for lab in result if lab in keep)
                if best is None or cost < best[0]:
                    best = (cost, i, j, keep)
        _, i, j, keep = best
        merged = _contract(terms[i], terms[j], keep)
        terms = [t for k, t in enumerate(terms) if k not in (i, j)] + [merged]
    x, labels = _sum_out(*terms[0], set(output))
    x = permute_dims(x, [labels.index(lab) for lab in output])
    x = broadcast_to(x, tuple(sizes[lab] for lab in output))
    return not_equal(x, 0) if boolean else x
