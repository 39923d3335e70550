"""PoCL builds after a short header (lazyarr.runtime.pocl_header): every built-in it declares
resolves to the function the full header's declaration does (same bits out, float and double),
lazyarr's kernels of every kind build with it, and what it does not cover builds with the full
header. Runs wherever PoCL is installed (both passes of the suite)."""
import numpy as np
import pytest

import lazyarr as xp
from lazyarr.runtime import pocl_header
from lazyarr.runtime.errors import CompileError


def _pocl():
    from lazyarr import get_device
    from lazyarr.runtime.opencl import opencl_devices
    found = [i for i, d in enumerate(opencl_devices()) if "Portable Computing Language" in d.platform.name]
    return get_device(f"opencl:{found[0]}") if found else None


DEV = _pocl()
pytestmark = pytest.mark.skipif(DEV is None, reason="PoCL is not installed")
rng = np.random.default_rng(3)


def _run(source: str, short: bool, out_size: int, inputs: list[np.ndarray], n: int, local: int | None = None
         ) -> np.ndarray:
    """What kernel f of `source`, built after the short header or the full one, writes into an
    output of `out_size` elements (of the inputs' dtype) over n work-items (in groups of `local`)."""
    cl = DEV.cl
    header = pocl_header.short_header(source) if short else None
    assert not short or header is not None
    program = cl.Program(DEV.context, f"{header}\n{source}" if short else source)
    program = program.build(options=f"{DEV.build_options} {pocl_header.OPTION}" if short else DEV.build_options)
    mf = cl.mem_flags
    bufs = [cl.Buffer(DEV.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a) for a in inputs]
    out = np.empty(out_size, inputs[0].dtype)
    obuf = cl.Buffer(DEV.context, mf.WRITE_ONLY, out.nbytes)
    program.f(DEV.queue, (n,), None if local is None else (local,), obuf, *bufs)
    cl.enqueue_copy(DEV.queue, out, obuf)
    return out


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.tobytes() == b.tobytes()


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("t", ["float", "double"])
def test_every_math_builtin_is_the_full_headers(t):
    """Each declared function, over arguments with signs, zeros, infinities and NaN: the short
    header's build gives the full header's bits (a wrong signature would call another function,
    or fail to link)."""
    np_t = np.float32 if t == "float" else np.float64
    n = 64
    special = np.array([0.0, -0.0, 1.0, -1.0, 0.5, np.inf, -np.inf, np.nan, 1e-30, 3.0], np_t)
    args = [np.concatenate([special, rng.uniform(-4, 4, n - len(special)).astype(np_t)]) for _ in range(3)]
    args[1][:len(special)] = special[::-1]
    calls = {}
    for name in pocl_header._UNARY:
        calls[name] = f"{name}(a[i])"
    for name in pocl_header._BINARY:
        calls[name] = f"{name}(a[i], b[i])"
    for name in pocl_header._TERNARY:
        calls[name] = f"{name}(a[i], b[i], c[i])"
    for name in pocl_header._TESTS:
        calls[name] = f"({t})({name}(a[i]))"
    pragma = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" if t == "double" else ""
    k = len(calls)   # one kernel (a kernel costs PoCL a compile of its own): call j's value at i * k + j
    body = " ".join(f"out[i * {k} + {j}] = {call};" for j, call in enumerate(calls.values()))
    source = (f"{pragma}__kernel void f(__global {t}* out, __global const {t}* a, __global const {t}* b, "
              f"__global const {t}* c) {{ size_t i = get_global_id(0); {body} }}\n")
    short, full = (_run(source, s, n * k, args, n).reshape(n, k) for s in (True, False))
    for j, name in enumerate(calls):
        assert _same_bits(short[:, j], full[:, j]), name


@pytest.mark.filterwarnings("error")   # (a build whose log is not empty warns)
def test_work_items_and_barriers_are_the_full_headers():
    """A work-group sum through local memory: work-item numbers, group numbers and the barrier."""
    source = ("__kernel void f(__global float* out, __global const float* a) {\n"
              "  __local float part[64];\n"
              "  size_t l = get_local_id(0), g = get_group_id(0);\n"
              "  part[l] = a[get_global_id(0)] * (float)get_local_size(0) + (float)get_num_groups(0)"
              " + (float)(get_global_size(0) > 0);\n"
              "  barrier(CLK_LOCAL_MEM_FENCE);\n"
              "  for (int s = 32; s > 0; s >>= 1) {\n"
              "    if (l < s) part[l] += part[l + s];\n"
              "    barrier(CLK_LOCAL_MEM_FENCE); }\n"
              "  out[get_global_id(0)] = part[0] + (float)g; }\n")
    a = rng.standard_normal(256).astype(np.float32)
    outs = [_run(source, short, 256, [a], 256, local=64) for short in (True, False)]
    assert _same_bits(*outs)
    sums = (a.reshape(4, 64) * 64 + 4 + 1).sum(axis=1) + np.arange(4)
    np.testing.assert_allclose(outs[0].reshape(4, 64), np.repeat(sums[:, None], 64, 1), rtol=1e-5)


def _programs():
    """Kernels of every kind lazyarr makes: elementwise functions in both float types, integer
    arithmetic, reductions (group ones among them), matmul, scans, arg reductions, sorts."""
    x32 = xp.asarray(rng.standard_normal((40, 300)).astype(np.float32), device=DEV)
    x64 = xp.asarray(rng.standard_normal((40, 300)), device=DEV)
    i32 = xp.asarray(rng.integers(-50, 50, (40, 300)).astype(np.int32), device=DEV)
    ys = []
    for x in (x32, x64):
        ys += [xp.sin(x) * xp.exp(x) - xp.tanh(x), xp.log1p(xp.abs(x)) + xp.sqrt(xp.abs(x)) ** 1.5,
               xp.atan2(x, x + 1), xp.where(xp.isnan(x), 0, xp.floor(x)), xp.sum(x, axis=1),
               xp.max(x, axis=0), xp.sum(x), x @ x.T, xp.cumulative_sum(x, axis=1), xp.argmax(x, axis=1),
               xp.sort(x, axis=1), xp.mean(xp.exp(x - xp.max(x, axis=1, keepdims=True)), axis=1)]
    ys += [i32 // 7 + i32 % 5, i32 << 2, xp.sum(i32, axis=1), xp.max(i32), i32 * i32 - 3]
    return ys


@pytest.mark.filterwarnings("error")
def test_lazyarr_kernels_build_with_the_short_header():
    sources = {k.source for y in _programs() for k in y.schedule()}
    assert len(sources) >= 20
    before = dict(DEV.header_builds)
    for source in sorted(sources):
        DEV._build(source.split("__kernel void ", 1)[1].split("(", 1)[0], source)
    assert DEV.header_builds["full"] == before["full"], "a kernel needed the full header"
    assert DEV.header_builds["short"] == before["short"] + len(sources)


def test_lazyarr_values_on_pocl_match_numpy():
    """The kernels built this way compute NumPy's values (built-ins, group reductions, sorts)."""
    x = rng.standard_normal((40, 300))
    cases = [lambda m, v: m.sin(v) * m.exp(v) - m.tanh(v),
             lambda m, v: m.log1p(m.abs(v)) + m.sqrt(m.abs(v)) ** 1.5,
             lambda m, v: m.atan2(v, v + 1),
             lambda m, v: m.floor(v * 3) + m.sum(v, axis=1)[:, None],
             lambda m, v: m.mean(m.exp(v - m.max(v, axis=1, keepdims=True)), axis=1),
             lambda m, v: m.sort(v, axis=1)]
    for case in cases:
        np.testing.assert_allclose(np.asarray(case(xp, xp.asarray(x, device=DEV))), case(np, x), rtol=1e-12, atol=1e-12)


def test_what_the_short_header_lacks_builds_with_the_full_one():
    source = "__kernel void f(__global float* out) { out[get_global_id(0)] = clamp(1.5f, 0.0f, 1.0f); }\n"
    before = dict(DEV.header_builds)
    DEV._build("f", source)   # clamp: not declared by the short header, an error there
    assert DEV.header_builds["short"] == before["short"] and DEV.header_builds["full"] == before["full"] + 1
    assert pocl_header.short_header("__kernel void f(__global half* p) { vstore_half(1.0f, 0, p); }") is None


def test_a_broken_kernel_reports_the_full_headers_error():
    source = "__kernel void f(__global float* out) { out[0] = undefined_thing(1.0f); }\n"
    with pytest.raises(CompileError) as e:
        DEV._build("f", source)
    assert "undefined_thing" in str(e.value) and "cl_mem_fence_flags" not in str(e.value)


@pytest.mark.filterwarnings("error")
def test_a_drivers_notes_on_a_kernel_are_not_the_users_warnings():
    """A build whose log is not empty (here Clang's "self-comparison" note, which lazyarr's NaN
    tests of integers and booleans draw) warns nothing: a user cannot act on it."""
    source = "__kernel void f(__global int* out) { int a = out[0]; out[0] = (a != a) ? 1 : 2; }\n"
    for short in (True, False):
        DEV._build("f", source) if short else DEV._built(DEV.cl.Program(DEV.context, source), DEV.build_options)
    x = xp.asarray(np.array([True, False, True]), device=DEV)
    assert np.asarray(xp.unique_values(x)).tolist() == [False, True]
