"""A differential set of small NumPy programs: each is written once against a module `np` and run
with `np` as NumPy and as lazyarr, and their results compared. They are the code NumPy users write
(views and in-place writes, dtypes, NumPy's names and methods, loops never realized), not tests of
one function each."""
import numpy
import pytest

import lazyarr


def _run(src: str, module) -> dict:
    scope = {"np": module}
    exec(src, scope)   # noqa: S102  (the programs are this file's own)
    return {k: v for k, v in scope.items() if k.startswith("out")}


PROGRAMS = {
    "row views see writes": "a = np.arange(12.0).reshape(3, 4)\nrow = a[1]\na[1, 2] = -5\nout = row * 1",
    "slice written through": "a = np.zeros(6)\nb = a[1:4]\nb[:] = 7\nout = a",
    "reshape written through": "a = np.arange(6.0)\na.reshape(2, 3)[1, 1] = 100\nout = a",
    "strided view +=": "a = np.arange(10.0)\nv = a[::3]\nv += 1\nout, out2 = a, v",
    "transpose written through": "m = np.arange(6.0).reshape(2, 3)\nm.T[2, 1] = 9\nout = m",
    "reshape of a transpose copies": "m = np.arange(6.0).reshape(2, 3)\nc = m.T.reshape(6)\nc[0] = 50\nout, out2 = m, c",
    "view of a view": "a = np.arange(16.0).reshape(4, 4)\nb = a[1:3]\nc = b[:, ::2]\nc[0, 1] = -1\nout = a",
    "flip written through": "a = np.arange(5.0)\nnp.flip(a)[0] = 40\nout = a",
    "complex parts written": "z = np.array([1 + 2j, 3 - 1j])\nz.real[0] = 10\nz.imag[1] = 5\nout = z",
    "in-place sort of a view": "a = np.array([5.0, 3, 9, 1, 4])\na[1:4].sort()\nout = a",
    "fill a row": "a = np.ones((3, 3))\na[2].fill(0)\nout = a",
    "copies do not alias": "a = np.arange(4.0)\nb = a.copy()\nc = np.array(a)\nb[0] = 9\nc[1] = 9\nout = a",
    "earlier results keep old values": "a = np.arange(4.0)\ns = a.sum()\na[:] = 0\nout = s",
    "running mean loop": "x = np.linspace(0, 1, 50)\nacc = np.zeros_like(x)\nfor i in range(20):\n    acc = acc * 0.9 + x * 0.1\nout = acc",
    "heat equation steps": ("u = np.zeros(32)\nu[16] = 1.0\nfor _ in range(40):\n"
                            "    u[1:-1] = u[1:-1] + 0.25 * (u[2:] - 2 * u[1:-1] + u[:-2])\nout = u"),
    "game of life": ("g = np.zeros((8, 8))\ng[1, 2] = g[2, 3] = g[3, 1] = g[3, 2] = g[3, 3] = 1\n"
                     "for _ in range(4):\n    n = sum(np.roll(np.roll(g, i, 0), j, 1) for i in (-1, 0, 1) for j in (-1, 0, 1)) - g\n"
                     "    g = ((n == 3) | ((g == 1) & (n == 2))).astype(np.float64)\nout = g"),
    "normalise columns": "x = np.arange(12.0).reshape(4, 3) + 1\nout = (x - x.mean(axis=0)) / x.std(axis=0)",
    "softmax rows": "x = np.arange(12.0).reshape(3, 4) / 5\ne = np.exp(x - x.max(axis=1, keepdims=True))\nout = e / e.sum(axis=1, keepdims=True)",
    "pairwise distances": ("p = np.arange(10.0).reshape(5, 2) ** 1.5\n"
                           "d = np.sqrt(((p[:, None, :] - p[None, :, :]) ** 2).sum(-1))\nout = d"),
    "boolean mask mean": "y = np.array([1, 0, 1, 1, 0])\npred = np.array([1, 1, 1, 0, 0])\nout = (pred == y).mean()",
    "masked assignment": "x = np.arange(10.0) - 5\nx[x < 0] = 0\nout = x",
    "fancy indexing gather": "x = np.arange(20.0).reshape(4, 5)\nout = x[[0, 2, 3], [1, 1, 4]]",
    "integer array write": "x = np.zeros(6)\nx[[1, 3, 3]] = [5.0, 6.0, 7.0]\nout = x",
    "argsort and take": "v = np.array([3.0, 1.0, 2.0, 5.0])\nidx = np.argsort(v)\nout = np.take(v, idx)",
    "cumsum and diff": "x = np.array([1.0, 4.0, 9.0, 16.0])\nout, out2 = np.cumsum(x), np.diff(x)",
    "where three arguments": "x = np.arange(6.0)\nout = np.where(x > 2, x, -x)",
    "clip and round": "x = np.linspace(-2, 2, 9)\nout = np.round(np.clip(x, -1, 1.5), 1)",
    "unique with counts": "x = np.array([3, 1, 3, 2, 1, 3])\nout, out2 = np.unique(x, return_counts=True)",
    "stack and split": "a = np.arange(4.0)\ns = np.vstack([a, a * 2])\nout = np.split(s, 2, axis=1)[1]",
    "hstack and column_stack": "a = np.arange(3.0)\nout, out2 = np.hstack([a, a]), np.column_stack([a, a ** 2])",
    "pad edge": "x = np.arange(6.0).reshape(2, 3)\nout = np.pad(x, ((1, 0), (2, 1)), mode='edge')",
    "concatenate positional axis": "a = np.ones((2, 2))\nout = np.concatenate([a, 2 * a], 1)",
    "sum positional axis": "x = np.arange(6.0).reshape(2, 3)\nout, out2 = np.sum(x, 0), np.mean(x, 1)",
    "tril and triu": "x = np.arange(16.0).reshape(4, 4)\nout, out2 = np.tril(x, -1), np.triu(x, 1)",
    "eye and diag": "out, out2 = np.eye(3, 4, 1), np.diag(np.arange(3.0), 1)",
    "matmul and dot": "a = np.arange(6.0).reshape(2, 3)\nb = np.arange(12.0).reshape(3, 4)\nout, out2 = a @ b, np.dot(a[0], b[:, 1])",
    "einsum trace and outer": "m = np.arange(9.0).reshape(3, 3)\nout, out2 = np.einsum('ii', m), np.einsum('i,j->ij', m[0], m[1])",
    "solve and inv": "a = np.array([[3.0, 1.0], [1.0, 2.0]])\nb = np.array([9.0, 8.0])\nout, out2 = np.linalg.solve(a, b), np.linalg.inv(a)",
    "svd reconstruct": "a = np.arange(6.0).reshape(3, 2) + 1\nu, s, vh = np.linalg.svd(a, full_matrices=False)\nout = (u * s) @ vh",
    "eigh of a symmetric matrix": "a = np.array([[2.0, 1.0], [1.0, 3.0]])\nout = np.linalg.eigh(a)[0]",
    "norms": "x = np.arange(6.0).reshape(2, 3)\nout, out2 = np.linalg.norm(x), np.linalg.norm(x, axis=1)",
    "det and slogdet": "a = np.array([[1.0, 2.0], [3.0, 4.0]])\nout, out2 = np.linalg.det(a), np.linalg.slogdet(a)[1]",
    "rfft magnitude": "t = np.arange(16.0)\nout = np.abs(np.fft.rfft(np.sin(t)))",
    "fft round trip": "x = np.arange(8.0)\nout = np.fft.ifft(np.fft.fft(x)).real",
    "fftfreq and fftshift": "out, out2 = np.fft.fftfreq(8, 0.5), np.fft.fftshift(np.arange(6.0))",
    "median and percentile": "x = np.array([[1.0, 7, 3], [4, 2, 9]])\nout, out2 = np.median(x, axis=1), np.percentile(x, 25)",
    "nan functions": "x = np.array([1.0, np.nan, 3.0])\nout, out2 = np.nanmean(x), np.nanmax(x)",
    "isclose and allclose": "a = np.array([1.0, 2.0])\nout, out2 = np.isclose(a, a + 1e-9), np.allclose(a, a + 1e-3)",
    "nan_to_num": "out = np.nan_to_num(np.array([np.nan, np.inf, -np.inf, 2.0]))",
    "integer division and remainder": "a = np.array([-7, 7, -7, 7])\nb = np.array([2, -2, -2, 2])\nout, out2 = a // b, a % b",
    "integers wrap": "a = np.array([250, 10], dtype=np.uint8)\nout = a + np.uint8(10)",
    "float32 stays float32": "x = np.ones(3, dtype=np.float32)\nout = (x * 2.5 + 1).dtype == np.float32",
    "dtype interop": "x = np.arange(3, dtype=np.int16)\nz = np.zeros(2, dtype=x.dtype)\nout = str(z.dtype)",
    "astype and bool": "x = np.array([0.0, 1.5, -2.0])\nout, out2 = x.astype(np.int32), x.astype(bool)",
    "finfo and iinfo": "out, out2 = np.finfo(np.float32).eps, np.iinfo(np.int8).max",
    "methods": "x = np.arange(6.0).reshape(2, 3)\nout, out2, out3 = np.ptp(x), x.swapaxes(0, 1), x.repeat(2, axis=1)",
    "item and tolist": "x = np.arange(6.0).reshape(2, 3)\nout, out2 = x.item(4), x.tolist()",
    "max with initial and where": "x = np.array([1.0, 5.0, 3.0])\nout, out2 = x.max(initial=10), x.sum(where=x > 2)",
    "interp": "out = np.interp(np.array([0.5, 1.5, 3.0]), np.array([0.0, 1.0, 2.0]), np.array([0.0, 10.0, 0.0]))",
    "convolve": "out = np.convolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]), 'same')",
    "logspace and geomspace": "out, out2 = np.logspace(0, 2, 3), np.geomspace(1, 16, 5)",
    "average with weights": "x = np.arange(4.0)\nout = np.average(x, weights=np.array([1.0, 0.0, 0.0, 3.0]))",
    "atleast and squeeze": "x = np.array(3.0)\nout, out2 = np.atleast_2d(x).shape, np.squeeze(np.ones((1, 3, 1))).shape",
    "broadcasting arithmetic": "a = np.arange(3.0)[:, None]\nb = np.arange(4.0)\nout = a * 10 + b",
    "polynomial fit by lstsq": ("x = np.linspace(0, 1, 8)\ny = 2 * x + 1\nA = np.stack([x, np.ones_like(x)], axis=1)\n"
                                "out = np.linalg.lstsq(A, y, rcond=None)[0]"),
    "gradient descent never realized": ("w = np.zeros(3)\nX = np.arange(12.0).reshape(4, 3) / 10\ny = X @ np.array([1.0, -2.0, 0.5])\n"
                                        "for _ in range(60):\n    w = w - 0.5 * X.T @ (X @ w - y) / 4\nout = w"),
    "ravel views and flatten copies": ("a = np.arange(6.0).reshape(2, 3)\nr, f = a.ravel(), a.flatten()\n"
                                       "r[0], f[1] = 10, 20\nt = a.T.ravel()\nt[2] = 30\nout, out2 = a, np.ravel(a)"),
    "cumulative product and argmax": "x = np.array([1.0, 3.0, 2.0, 0.5])\nout, out2 = np.cumprod(x), np.argmax(x)",
    "bit views write through": ("a = np.arange(8.0, dtype=np.float32).reshape(2, 4)\nb = a.view(np.int32)\n"
                                "b[0, 1] = 1065353216\nh = a[1].view(np.uint16)\nh[::2] = 0\nb ^= 1\n"
                                "out, out2, out3 = a.view(np.uint32) * 1, b.strides, h.strides"),
    "float16 arithmetic": ("x = np.linspace(-3, 3, 7).astype(np.float16)\ny = x * x + np.float16(0.1)\n"
                           "out, out2 = y, (np.sqrt(np.abs(x)) / 3).dtype.name"),
    # issue 32: ufunc objects, NumPy's longer tail of names and arguments, errors at the call, repr
    "running maxima and outer products": ("x = np.sin(np.arange(20.0))\nout = np.maximum.accumulate(x)\n"
                                          "out2 = np.add.reduce(x)\nout3 = np.multiply.outer(x[:3], x[:4])"),
    "counting with add.at": "d = np.zeros(5)\nidx = np.array([0, 1, 1, 3, 3, 3])\nnp.add.at(d, idx, 1.0)\nout = d",
    "segment sums by reduceat": "v = np.arange(10.0)\nout = np.add.reduceat(v, [0, 3, 7])\nout2 = np.maximum.reduceat(v, [5, 1])",
    "logical reduce of a list": "out = np.logical_and.reduce([np.ones(3) > 0, np.arange(3) > 0])",
    "a ufunc's dtype argument": "x = np.arange(5)\nout = np.add(x, 1, dtype=np.float32)\nout2 = out.dtype.name",
    "index grids": ("a = np.arange(20).reshape(4, 5)\nout = a[np.ix_([0, 2], [1, 3, 4])]\nout2 = np.mgrid[0:3, 0:2]\n"
                    "o = np.ogrid[0:3, 0:4]\nout3 = o[0] + o[1]\nout4 = np.indices((2, 3))"),
    "flat and multi indices": ("out = np.array(np.unravel_index(7, (3, 4)))\n"
                               "out2 = np.ravel_multi_index((np.array([1, 2]), np.array([3, 0])), (3, 4))"),
    "covariance and correlation": ("X = np.array([[1.0, 2, 4, 7], [2.0, 1, 0, 3], [0.5, 0.5, 2, 1]])\n"
                                   "out, out2 = np.cov(X), np.corrcoef(X)"),
    "set operations": ("a, b = np.array([5, 1, 3, 3, 9]), np.array([3, 4, 5, 6])\nout = np.intersect1d(a, b)\n"
                       "out2 = np.union1d(a, b)\nout3 = np.setdiff1d(a, b)\nout4 = np.setxor1d(a, b)\nout5 = np.isin(a, b)"),
    "lexsort by two keys": "last = np.array([3, 1, 2, 1])\nfirst = np.array([1, 2, 1, 2])\nout = np.lexsort((first, last))",
    "polynomial fit and calculus": ("x = np.linspace(0, 2, 9)\ny = 3 * x ** 2 - x + 1\nc = np.polyfit(x, y, 2)\n"
                                    "out, out2 = c, np.polyval(c, 1.5)\nout3, out4 = np.polyder(c), np.polyint(c)"),
    "poly1d and roots": ("p = np.poly1d([1.0, -3, 2])\nout = p(np.array([0.0, 1, 2, 3]))\n"
                         "out2 = np.sort(np.roots([1.0, -3, 2]))\nout3 = (p * p).coeffs"),
    "select and piecewise": ("x = np.linspace(-2, 2, 9)\nout = np.select([x < -1, x > 1], [x * 0, x * 2], default=x)\n"
                             "out2 = np.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v ** 2])"),
    "derivative and integral of samples": ("x = np.linspace(0, np.pi, 50)\ny = np.sin(x)\n"
                                           "out, out2 = np.gradient(y, x), np.trapezoid(y, x)"),
    "insert append delete": ("a = np.arange(6.0)\nout = np.insert(a, 2, -1.0)\nout2 = np.append(a, [7.0, 8.0])\n"
                             "out3 = np.delete(a, [0, 5])"),
    "rotations and flips": "m = np.arange(6).reshape(2, 3)\nout, out2, out3 = np.rot90(m), np.flipud(m), np.fliplr(m)",
    "rounding and other elementwise extras": ("x = np.array([-2.5, -0.5, 0.5, 2.5])\nout, out2 = np.rint(x), np.fix(x)\n"
                                              "out3 = np.cbrt(np.array([8.0, -27.0]))\nout4 = np.degrees(np.pi / 2)\n"
                                              "out5 = np.heaviside(x, 0.5)\n"
                                              "out6 = np.fmax(np.array([1.0, np.nan]), np.array([np.nan, 2.0]))"),
    "gcd lcm divmod": ("a, b = np.array([12, 18, 7]), np.array([8, 27, 21])\nout, out2 = np.gcd(a, b), np.lcm(a, b)\n"
                       "q, r = np.divmod(np.array([7, -7]), 3)\nout3, out4 = q, r"),
    "mantissa and exponent": "m, e = np.frexp(np.array([8.0, 0.3, -5.0]))\nout, out2, out3 = m, e, np.ldexp(m, e)",
    "choose compress extract": ("c = np.array([0, 1, 2, 1])\n"
                                "out = np.choose(c, [[1, 2, 3, 4], [10, 20, 30, 40], [100, 200, 300, 400]])\n"
                                "x = np.arange(6)\nout2 = np.compress([True, False, True], x[:3])\n"
                                "out3 = np.extract(x % 2 == 0, x)"),
    "triangle and diagonal indices": ("a = np.arange(16.0).reshape(4, 4)\nout = a[np.triu_indices(4, 1)]\n"
                                      "out2 = a[np.tril_indices(4)]\nout3 = a[np.diag_indices(4)]"),
    "a singular matrix caught at the call": ("try:\n    np.linalg.inv(np.ones((3, 3)))\n    out = 'no error'\n"
                                             "except np.linalg.LinAlgError:\n    out = 'caught'"),
    "repr as numpy's": "out = repr(np.arange(6).reshape(2, 3))\nout2 = repr(np.array([1.5, 2.0], dtype=np.float32))",
    "take repeat pad": ("a = np.arange(12).reshape(3, 4)\nout = np.take(a, [0, 5, 11])\n"
                        "out2 = np.repeat(np.array([1, 2, 3]), [1, 0, 3])\n"
                        "out3 = np.pad(np.arange(4.0), 2, mode='linear_ramp')\nout4 = np.pad(np.arange(5.0), 1, mode='maximum')"),
    "linspace step full_like initial": ("x, step = np.linspace(0, 1, 5, retstep=True)\nout, out2 = x, step\n"
                                        "out3 = np.full_like(np.arange(3), 2.7)\nout4 = np.max(np.array([1, 5, 2]), initial=7)"),
    "setting the imaginary part": "w = np.array([1 + 2j, 3 - 4j])\nw.imag = 0\nout = w",
    "fromfunction and identity": "out = np.fromfunction(lambda i, j: i * 10 + j, (3, 4))\nout2 = np.identity(3)",
    "apply along an axis": "m = np.arange(12.0).reshape(3, 4)\nout = np.apply_along_axis(lambda r: r.max() - r.min(), 1, m)",
    "dtype objects": "out = np.dtype(np.float16).itemsize\nout2 = np.dtype('float32').name",
    "two-dimensional histogram": ("x = np.array([0.1, 0.5, 0.9, 0.3])\ny = np.array([0.2, 0.8, 0.4, 0.6])\n"
                                  "out = np.histogram2d(x, y, bins=2)[0]"),
}


# programs whose results name the device on any other (an array's repr says where it lives)
CPU_ONLY = {"repr as numpy's"}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_numpy_program_gives_numpys_results_on_lazyarr(name):
    if name in CPU_ONLY and lazyarr.get_device(None).name != "cpu":
        pytest.skip("the repr of an array on another device names it")
    src = PROGRAMS[name]
    want = _run(src, numpy)
    got = _run(src, lazyarr)
    assert want.keys() == got.keys()
    for k in want:
        w, g = want[k], got[k]
        if isinstance(w, (str, tuple, bool, numpy.bool_)) and not isinstance(w, numpy.ndarray):
            assert (g == w) if not isinstance(w, tuple) else tuple(g) == w, (k, g, w)
            continue
        if isinstance(w, list):
            assert numpy.asarray(g).tolist() == numpy.asarray(w).tolist(), (k, g, w)
            continue
        g = numpy.asarray(g)
        w = numpy.asarray(w)
        assert g.shape == w.shape, (k, g.shape, w.shape)
        if w.dtype.kind in "biu":
            numpy.testing.assert_array_equal(g, w, err_msg=k)
        else:
            numpy.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12, err_msg=k)


def test_there_are_at_least_ninety_programs():
    assert len(PROGRAMS) >= 90
