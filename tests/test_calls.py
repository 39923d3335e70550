"""Calls: traced functions, custom kernels, precompiled routines."""
import numpy as np
import pytest

import lazyarr as xp
from lazyarr.calls import custom_kernel, function, precompiled
from lazyarr.runtime import executor
from tests.helpers import assert_close


def test_a_function_is_traced_once_per_signature_and_inlined():
    runs = []

    @function
    def f(a, b, k):
        runs.append(1)
        return xp.exp(a) * b + k

    x, y = np.random.default_rng(0).standard_normal((2, 3, 4))
    r1 = f(xp.asarray(x), xp.asarray(y), 2.0)
    r2 = f(xp.asarray(y), xp.asarray(x), 2.0)
    assert len(runs) == 1
    assert_close(r1, np.exp(x) * y + 2, rtol=1e-12)
    assert_close(r2, np.exp(y) * x + 2, rtol=1e-12)
    f(xp.asarray(x), xp.asarray(y), 3.0)          # another non-tensor argument: another trace
    f(xp.ones((2, 2)), xp.ones((2, 2)), 2.0)       # another shape: another trace
    assert len(runs) == 3
    assert len((f(xp.asarray(x), xp.asarray(y), 2.0) * 2).schedule()) == 1   # inlined: fuses with the caller


def test_a_function_returns_nested_results_and_gradients_flow_through_it():
    @function
    def f(a):
        return a * 2, (xp.sum(a * a), [a + 1])

    x = xp.asarray([1.0, 2.0], requires_grad=True)
    double, (total, [plus]) = f(x)
    assert_close(plus, np.array([2.0, 3.0]))
    total.backward()
    assert_close(x.grad, np.array([2.0, 4.0]))


def test_a_pinned_function_rejects_misfit_arguments_naming_the_parameter():
    f = function(lambda a, b: a + b).trace(xp.ones((3,)), xp.ones((3,), dtype=xp.float32))
    assert_close(f(xp.zeros(3), xp.ones(3, dtype=xp.float32)), np.ones(3))
    with pytest.raises(ValueError, match="'a' .parameter 0.*shape \\(3,\\)"):
        f(xp.ones(4), xp.ones(3, dtype=xp.float32))
    with pytest.raises(ValueError, match="'b' .parameter 1.*float32"):
        f(xp.ones(3), xp.ones(3))
    with pytest.raises(TypeError):
        function(lambda a: a)([1, 2])


def test_compile_mode_computes_results_when_the_call_returns():
    @function(compile=True)
    def f(a):
        return a * 3

    out = f(xp.arange(4.0))
    assert out.is_realized
    assert_close(out, np.arange(4.0) * 3)


C_AXPY = """
void axpy(float* out, const float* x, const float* y, int64_t n, double a) {
  for (int64_t i = 0; i < n; i++) out[i] = (float)a * x[i] + y[i];
}
"""


@pytest.mark.cpu_only
def test_custom_c_kernel_with_scalars_and_computed_inputs():
    a, b = np.arange(6, dtype=np.float32), np.ones(6, np.float32)
    out = custom_kernel(C_AXPY, "axpy", [xp.asarray(a)[::-1] * 2, xp.asarray(b)], outputs=[((6,), xp.float32)],
                        scalars=[6, 0.5])
    assert out.shape == (6,) and out.dtype == xp.float32
    assert_close(out * 1, 0.5 * (a[::-1] * 2) + b)


@pytest.mark.cpu_only
def test_a_written_input_is_copied_while_it_can_still_be_read():
    incr = "void incr(int64_t* x, int64_t n) { for (int64_t i = 0; i < n; i++) x[i] += 1; }"
    v = xp.arange(4).realize()
    w = custom_kernel(incr, "incr", [v], writes=[0], scalars=[4])
    assert_close(w, np.arange(4) + 1)
    assert_close(v, np.arange(4))          # v is still readable: the call wrote a copy
    u = custom_kernel(incr, "incr", [xp.arange(3) * 10], writes=[0], scalars=[3])
    assert_close(u, np.arange(3) * 10 + 1)


@pytest.mark.cpu_only
def test_precompiled_routine():
    def reverse_sort(out, x):
        out[...] = np.sort(x)[::-1]
    got = precompiled(reverse_sort, [xp.asarray([3.0, 1.0, 2.0])], outputs=[((3,), xp.float64)]) * 2
    assert_close(got, np.array([6.0, 4.0, 2.0]))


def test_precompiled_routines_take_and_give_complex_arrays():
    def fft(out, a):
        out[...] = np.fft.fft(a)
    x = np.random.default_rng(1).standard_normal((3, 8)) + 1j
    got = precompiled(fft, [xp.asarray(x) * 2], outputs=[((3, 8), xp.complex128)])
    assert_close(got.real + got, 2 * np.fft.fft(x).real + 2 * np.fft.fft(x))


def test_a_routine_that_raises_leaves_every_tensor_of_the_schedule_recomputable():
    def inverse(out, a):
        out[...] = np.linalg.inv(a)
    x = xp.arange(4.0) * 3          # computed in the same schedule as the failing call
    y = precompiled(inverse, [xp.reshape(x, (2, 2)) * 0], outputs=[((2, 2), xp.float64)])
    for _ in range(2):   # the error each time, never a buffer no routine filled
        with pytest.raises(np.linalg.LinAlgError):
            xp.realize(x, y + 1)
    assert_close(x + 1, np.arange(4.0) * 3 + 1)


def test_a_routine_on_a_device_without_host_memory_runs_on_the_host_and_says_so(capsys, monkeypatch):
    dev = _opencl()
    monkeypatch.setattr(xp.settings, "debug", 1)

    def double(out, a):
        out[...] = 2 * a
    got = precompiled(double, [xp.asarray([1.0, 2.0], device=dev) + 1], outputs=[((2,), xp.float64)])
    assert got.device == dev
    assert_close(got, [4.0, 6.0])
    assert "host round trip: double on opencl" in capsys.readouterr().out


@pytest.mark.cpu_only
def test_a_custom_kernel_compiles_once():
    a = xp.ones(6, dtype=xp.float32)
    assert_close(custom_kernel(C_AXPY, "axpy", [a, a], outputs=[((6,), xp.float32)], scalars=[6, 1.0]), np.full(6, 2.0, np.float32))
    n = len(executor._programs)
    # the same code with other scalars: no compile, and the new scalars reach the kernel
    assert_close(custom_kernel(C_AXPY, "axpy", [a, a], outputs=[((6,), xp.float32)], scalars=[6, 2.0]), np.full(6, 3.0, np.float32))
    assert len(executor._programs) == n


@pytest.mark.cpu_only
def test_call_errors():
    with pytest.raises(ValueError):
        custom_kernel(C_AXPY, "not an identifier", [xp.ones(2)], outputs=[((2,), xp.float32)])
    with pytest.raises(ValueError):
        custom_kernel(C_AXPY, "axpy", [xp.ones(2)], writes=[3])
    with pytest.raises(TypeError):
        custom_kernel(C_AXPY, "axpy", [xp.ones(2)], outputs=[((2,), xp.float32)], scalars=["x"])
    broken = custom_kernel("void oops(float* o) { this is not C; }", "oops", [], outputs=[((2,), xp.float32)])
    with pytest.raises(xp.CompileError, match="this is not C"):
        broken.realize()


@pytest.mark.cpu_only
def test_a_failed_compile_leaves_the_inputs_uncomputed_and_correct():
    x = xp.arange(4.0) * 3          # computed in the same schedule as the broken call
    broken = custom_kernel("void oops(double* o, const double* x) { nope; }", "oops", [x],
                           outputs=[((4,), xp.float64)])
    with pytest.raises(xp.CompileError):
        broken.realize()
    assert_close(x + 1, np.arange(4.0) * 3 + 1)   # not a buffer that no kernel filled


OPENCL_AXPY = """
__kernel void axpy(__global double* out, __global const double* x, __global const double* y, double a, long n) {
  size_t i = get_global_id(0);
  if (i < n) out[i] = a * x[i] + y[i];
}
"""


def _opencl():
    devices = [d for d in xp.__array_namespace_info__().devices() if d.name.startswith("opencl")]
    if not devices:
        pytest.skip("no OpenCL device")
    return devices[0]


def test_custom_opencl_kernel_with_scalars_written_inputs_and_a_global_size():
    dev = _opencl()
    x, y = xp.arange(6.0, device=dev), xp.ones(6, device=dev)
    out = custom_kernel(OPENCL_AXPY, "axpy", [x * 2, y], outputs=[((6,), xp.float64)], scalars=[3.0, 6])
    assert out.device == dev and "__kernel void axpy" in out.schedule()[-1].source
    assert_close(out + 1, 6 * np.arange(6.0) + 2)
    scale = "__kernel void scale(__global double* v, double a) { v[get_global_id(0)] *= a; }"
    v = x + 1
    scaled = custom_kernel(scale, "scale", [v], writes=[0], scalars=[2.0])
    assert_close(scaled, 2 * (np.arange(6.0) + 1))
    assert_close(v, np.arange(6.0) + 1)      # read later: the call wrote into a copy
    half = custom_kernel(scale, "scale", [x + 1], writes=[0], scalars=[2.0], global_size=(3,))
    assert_close(half, np.r_[2 * (np.arange(3.0) + 1), np.arange(3.0, 6.0) + 1])
    with pytest.raises(ValueError, match="global_size"):
        custom_kernel(scale, "scale", [x], writes=[0], scalars=[2.0], global_size=(1, 1, 1, 1))
    broken = custom_kernel("__kernel void oops(__global double* o) { nope; }", "oops", [],
                           outputs=[((2,), xp.float64)])
    with pytest.raises(Exception, match="nope"):   # the build log names the problem
        broken.to_device(dev).realize() if broken.device != dev else broken.realize()


@pytest.mark.cpu_only
def test_runs_of_storage_from_its_start_are_passed_as_they_are_others_are_copied():
    add1 = "void add1(double* out, const double* x) { for (int i = 0; i < 3; i++) out[i] = x[i] + 1; }"
    x = xp.asarray(np.arange(10.0))
    for arg, want, kernels in ((x[:3], [1, 2, 3], 1),                    # a leading slice: the buffer itself
                               (x.reshape(2, 5)[0, :3], [1, 2, 3], 1),   # through a reshape too
                               (x[2:5], [3, 4, 5], 2),                    # at an offset: copied first
                               (x[::3], [1, 4, 7], 2)):                   # skipping elements: copied
        out = custom_kernel(add1, "add1", [arg], outputs=[((3,), xp.float64)])
        assert len(out.schedule()) == kernels
        assert_close(out, np.array(want, dtype=np.float64))
    twice = precompiled(lambda out, a: np.multiply(a, 2, out=out), [x[:4].reshape(2, 2)], outputs=[((2, 2), xp.float64)])
    assert len(twice.schedule()) == 1
    assert_close(twice, np.arange(4.0).reshape(2, 2) * 2)
    v = x + 0                                                              # written through: whole buffers only
    scale = "void scale(double* v) { for (int i = 0; i < 3; i++) v[i] *= 2; }"
    written = custom_kernel(scale, "scale", [v[:3]], writes=[0])
    assert_close(written, np.arange(3.0) * 2)
    assert_close(v, np.arange(10.0))
