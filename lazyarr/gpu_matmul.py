"""Matrix products on a GPU through work-group memory: a tiled kernel written as OpenCL source.

The generated product (a broadcast multiply and a sum, `lazyarr.linear_algebra.matmul`) gives each
work-item a register tile but reads both operands from global memory at every step of the sum; on
an H100 it ran 4096² float32 at a fifth of cuBLAS's speed (this kernel: about half, 24 TFLOP/s;
batches of products 30-300x faster than the generated ones). Here a work-group of 16×16 work-items
computes a TILE×TILE block of the product: at each step of BK along the sum it copies the A and B
blocks it needs into work-group memory (each global element read once per work-group, in
coalesced loads), then each work-item accumulates an R×R register tile (R = TILE / 16) from it with
explicit multiply-adds, reading 4-wide vectors. Its rows are ty*4 + i + 64*h and its columns
tx*4 + j + 64*h: the vector reads of one step then fall in consecutive banks.

Used for large float32/float64 products (and smaller batches of them: see MIN_WORK) on devices
that are not CPUs (`Device.long_loops` false) whose operands are 2-D or batched alike (or one of
them 2-D); the operands are realized into
contiguous buffers first (a transposed operand is copied once: O(n²) against the product's O(n³)),
and what the product feeds runs as a kernel of its own (the epilogue is not fused). Sizes are
kernel arguments: one build per dtype and tile. TILE is 128, or 64 where 128 would leave the
device's compute units with fewer than one work-group each. Gradients are products again."""
from __future__ import annotations

import math
from typing import Any

from lazyarr import dtypes
from lazyarr.arrays import wrap
from lazyarr.compiler.uop import CallSpec, UOp
from lazyarr.dtypes import DType
from lazyarr.graph import call_results, reshape_uop

BK = 8             # the step along the sum: the blocks of A and B in work-group memory are TILE × BK
GROUP = 16         # work-items along each side of a work-group (256 in all)
# Which products take it, measured on an H100 (float32, against the generated product): 256² and
# 512² ran 1.4-2x slower tiled, 1024² alike, 2048² and 3000x1000x2500 2x faster; a batch of eight
# 1024² 300x faster (the generated batched product ran at 0.1 TFLOP/s)
MIN_SIDE = 128           # the smallest n and m a tiled product takes (at least 64: record_matmul's test)
MIN_WORK = 1 << 30       # ... and the fewest multiply-adds (n·k·m) of a single product
MIN_WORK_BATCHED = 1 << 22   # ... of a batch of products, in all


def applies(device: Any, sa: tuple[int, ...], sb: tuple[int, ...], batch: tuple[int, ...], dtype: DType) -> bool:
    """Whether the product of operands of shapes sa (..., n, k) and sb (..., k, m), of batch shape
    `batch`, in `dtype`, runs as the tiled kernel on `device`."""
    if device.host_memory or device.long_loops or dtype not in (dtypes.float32, dtypes.float64):
        return False
    (n, k), m = sa[-2:], sb[-1]
    total, ba, bb = _batches(sa, sb, batch)
    least = MIN_WORK if total == 1 else MIN_WORK_BATCHED
    return min(n, m) >= MIN_SIDE and k >= 1 and total * n * k * m >= least and ba in (1, total) and bb in (1, total)


def product(a: UOp, b: UOp, batch: tuple[int, ...], dtype: DType, device: Any) -> UOp:
    """The product of a (..., n, k) and b (..., k, m), both of `dtype`, for which `applies`, as a
    node of shape batch + (n, m)."""
    (n, k), m = a.shape[-2:], b.shape[-1]
    total, ba, bb = _batches(a.shape, b.shape, batch)
    tile = 128 if math.ceil(n / 128) * math.ceil(m / 128) * total >= device.capabilities.compute_units else 64
    spec = CallSpec(f"lz_gemm_{dtype.name}_{tile}", source(dtype, tile), None, ((a.shape, dtype), (b.shape, dtype)),
                    ((batch + (n, m), dtype),), (), (n, m, k, 0 if ba == 1 else n * k, 0 if bb == 1 else k * m),
                    (math.ceil(m / tile) * GROUP, math.ceil(n / tile) * GROUP, total), device, grad=_adjoints)
    result, = call_results(spec, [a, b])
    return result


def _batches(sa: tuple[int, ...], sb: tuple[int, ...], batch: tuple[int, ...]) -> tuple[int, int, int]:
    """The product's count of matrices and each operand's (1 for a 2-D operand: its stride is 0)."""
    return math.prod(batch), math.prod(sa[:-2]), math.prod(sb[:-2])


def _adjoints(call: UOp, i: int, g: UOp) -> list[UOp | None]:
    """The local gradient: for C = A @ B (batched), dA = dC @ Bᵀ and dB = Aᵀ @ dC, each summed
    over the batch where its operand had none."""
    device = call.arg.device
    a, b, dc = wrap(call.src[0], device), wrap(call.src[1], device), wrap(g, device)
    return [_to_shape(dc @ b.mT, a.shape).uop, _to_shape(a.mT @ dc, b.shape).uop]


def _to_shape(x: Any, shape: tuple[int, ...]) -> Any:
    """An operand's adjoint x (of the product's batch) in the operand's shape: summed over the
    batch where the operand had none (its batch elements are one), else reshaped."""
    if x.shape == shape:
        return x
    if math.prod(shape[:-2]) == 1 and x.ndim > 2:
        x = x.sum(axis=tuple(range(x.ndim - 2)))
    return x.reshape(shape)


def source(dtype: DType, tile: int) -> str:
    """The kernel: C = A @ B for A (n, k) and B (k, m) row-major, a batch of them along dimension 2
    of the grid, C's block (group 1, group 0) per work-group."""
    t = "float" if dtype is dtypes.float32 else "double"
    r = tile // GROUP                 # the register tile's side
    halves = r // 4                   # 4-wide vectors a side
    chunks = tile * BK // 4               # 4-element chunks of each operand's block
    per_item = -(-chunks // (GROUP * GROUP))   # ... that each work-item copies (the last ones may have none)
    fp64 = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" if t == "double" else ""
    acc = "\n".join(f"  {t} c{i}_{j} = 0;" for i in range(r) for j in range(r))
    fma = "\n".join(f"      c{i}_{j} = fma(a[{i}], b[{j}], c{i}_{j});" for i in range(r) for j in range(r))
    reads = "\n".join(f"      {{ {t}4 v = As[kk][ty + {16 * h}]; a[{4 * h}] = v.x; a[{4 * h + 1}] = v.y; a[{4 * h + 2}] = v.z; "
                      f"a[{4 * h + 3}] = v.w; }}\n"
                      f"      {{ {t}4 v = Bs[kk][tx + {16 * h}]; b[{4 * h}] = v.x; b[{4 * h + 1}] = v.y; b[{4 * h + 2}] = v.z; "
                      f"b[{4 * h + 3}] = v.w; }}" for h in range(halves))

    def four(start: str, flag: str, test: str, first: str, end: str) -> str:
        """`v`: the 4 elements from address `start` on, where `test` (named `flag`) holds and index
        `first` + i is under `end`, else 0 (a block's edge)."""
        lanes = "".join(f"\n      v.{c} = {flag} && {first}{f' + {i}' if i else ''} < {end} ? at[{i}] : 0;"
                        for i, c in enumerate("xyzw"))
        return f"      const bool {flag} = {test};\n      __global const {t}* at = {start};\n      {t}4 v;{lanes}"

    def at(i: int) -> int:   # register i's row (column) within the block, less ty*4 (tx*4)
        return 64 * (i // 4) + i % 4
    stores = "\n".join(
        f"  if (row0 + {at(i)} + ty * 4 < n) {{\n" +
        "\n".join(f"    if (col0 + {at(j)} + tx * 4 < m) "
                  f"C[(row0 + {at(i)} + ty * 4) * m + col0 + {at(j)} + tx * 4] = c{i}_{j};" for j in range(r)) +
        "\n  }" for i in range(r))
    return f"""{fp64}// lazyarr's tiled matrix product: {tile}x{tile} blocks, {r}x{r} per work-item
__kernel __attribute__((reqd_work_group_size({GROUP}, {GROUP}, 1)))
void lz_gemm_{dtype.name}_{tile}(__global {t}* restrict C, __global const {t}* restrict A, __global const {t}* restrict B,
    const long n, const long m, const long k, const long stride_a, const long stride_b) {{
  const int tx = get_local_id(0), ty = get_local_id(1), tid = ty * {GROUP} + tx;
  const long row0 = get_group_id(1) * {tile}, col0 = get_group_id(0) * {tile}, batch = get_global_id(2);
  A += batch * stride_a;
  B += batch * stride_b;
  C += batch * n * m;
  __local {t}4 As[{BK}][{tile // 4}];   /* A's block, k-major: As[kk] holds rows row0 .. row0 + {tile - 1} */
  __local {t}4 Bs[{BK}][{tile // 4}];   /* B's block: Bs[kk] holds columns col0 .. col0 + {tile - 1} */
  __local {t}* a_elems = (__local {t}*)As;
{acc}
  {t} a[{r}], b[{r}];
  for (long k0 = 0; k0 < k; k0 += {BK}) {{
    /* A's block: 4 consecutive elements along k per chunk (rows apart by k), stored transposed */
    for (int p = 0; p < {per_item}; p++) {{
      const int e = tid + p * {GROUP * GROUP}, row = e % {tile}, kq = (e / {tile}) * 4;
      if (e >= {chunks}) break;
      const long gr = row0 + row, gk = k0 + kq;
{four("A + gr * k + gk", "in_rows", "gr < n", "gk", "k")}
      a_elems[(kq + 0) * {tile} + row] = v.x;
      a_elems[(kq + 1) * {tile} + row] = v.y;
      a_elems[(kq + 2) * {tile} + row] = v.z;
      a_elems[(kq + 3) * {tile} + row] = v.w;
    }}
    /* B's block: 4 consecutive columns per chunk, rows of B along k */
    for (int p = 0; p < {per_item}; p++) {{
      const int e = tid + p * {GROUP * GROUP}, cq = e % {tile // 4}, kk = e / {tile // 4};
      if (e >= {chunks}) break;
      const long gk = k0 + kk, gc = col0 + cq * 4;
{four("B + gk * m + gc", "in_k", "gk < k", "gc", "m")}
      Bs[kk][cq] = v;
    }}
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int kk = 0; kk < {BK}; kk++) {{
{reads}
{fma}
    }}
    barrier(CLK_LOCAL_MEM_FENCE);
  }}
{stores}
}}
"""
