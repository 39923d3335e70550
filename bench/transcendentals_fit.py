"""Fit the polynomial coefficients and split the constants used by lazyarr/compiler/transcendentals.py.

Run `python bench/transcendentals_fit.py` to print them; the module holds the printed values.
Polynomials are near-minimax fits (mpmath's Chebyshev fit, at 80 digits) of the smooth part of
each function on the interval the argument reduction leaves; constants are split into parts
whose products with small integers are exact (Cody–Waite). The float32 polynomials are rounded
to float32, and the error printed is that of the rounded polynomial (in units of the term it
approximates: x²·P for e^x = 1 + x + x²·P, and so on).
"""
import mpmath as mp
import numpy as np

mp.mp.dps = 80


def fit(name, f, a, b, degree):
    coeffs, err = mp.chebyfit(f, [a, b], degree + 1, error=True)
    coeffs = list(reversed(coeffs))          # lowest degree first
    print(f"{name} = ({', '.join(repr(float(c)) for c in coeffs)})  # max error {mp.nstr(err, 3)}")


def fit32(name, f, a, b, degree, weight):
    """A float32 polynomial: the fit's coefficients rounded to float32, and the largest of
    |poly − f|·weight on a grid."""
    coeffs = [float(np.float32(float(c))) for c in reversed(mp.chebyfit(f, [a, b], degree + 1))]
    worst = max(abs((mp.polyval(list(reversed(coeffs)), t) - f(t)) * weight(t)) for t in mp.linspace(a, b, 2001))
    print(f"{name} = {tuple(coeffs)!r}  # rounded: 2^{float(mp.log(worst, 2)):.1f}")


def split(name, value, bits):
    """value = hi + lo, hi with `bits` significant bits."""
    e = int(mp.floor(mp.log(abs(value), 2)))
    hi = mp.floor(value * mp.mpf(2) ** (bits - 1 - e)) / mp.mpf(2) ** (bits - 1 - e)
    print(f"{name}_HI, {name}_LO = {float(hi)!r}, {float(value - hi)!r}")


def chunks(name, value, bits, count):
    """value = Σ chunk_i · 2^(-bits·(i+1)), each chunk an integer of `bits` bits."""
    out, v = [], value
    for _ in range(count):
        v *= 2 ** bits
        c = int(mp.floor(v))
        out.append(c)
        v -= c
    print(f"{name} = ({', '.join(map(str, out))})")


if __name__ == "__main__":
    fit("EXP_Q", lambda t: (mp.exp(t) - 1 - t) / t ** 2 if t != 0 else mp.mpf(1) / 2, -0.3466, 0.3466, 11)
    fit("LOG_T", lambda z: (mp.log((1 + mp.sqrt(z)) / (1 - mp.sqrt(z))) - 2 * mp.sqrt(z) - 2 * mp.sqrt(z) ** 3 / 3)
        / mp.sqrt(z) ** 5 if z != 0 else mp.mpf(2) / 5, 0, 0.02944, 8)
    # float32's pow: its float64 core needs less than float64's functions (see the coefficients module)
    fit("POWF_EXP_Q", lambda t: (mp.exp(t) - 1 - t) / t ** 2 if t != 0 else mp.mpf(1) / 2, -0.3466, 0.3466, 6)
    fit("POWF_LOG_T", lambda z: (mp.log((1 + mp.sqrt(z)) / (1 - mp.sqrt(z))) - 2 * mp.sqrt(z) - 2 * mp.sqrt(z) ** 3 / 3)
        / mp.sqrt(z) ** 5 if z != 0 else mp.mpf(2) / 5, 0, 0.02944, 3)
    fit("SIN_S", lambda z: (mp.sin(mp.sqrt(z)) - mp.sqrt(z)) / mp.sqrt(z) ** 3 if z != 0 else -mp.mpf(1) / 6,
        0, 0.64, 8)
    fit("COS_C", lambda z: (mp.cos(mp.sqrt(z)) - 1 + z / 2) / z ** 2 if z != 0 else mp.mpf(1) / 24, 0, 0.64, 8)
    split("LN2_CW", mp.log(2), 40)         # n·LN2_CW_HI exact for |n| < 2^13
    split("LN2", mp.log(2), 53)
    split("LOG2E", 1 / mp.log(2), 53)
    split("TWO_THIRDS", mp.mpf(2) / 3, 53)
    split("PIO2", mp.pi / 2, 53)
    pio2, parts = mp.pi / 2, []
    for _ in range(3):                     # three 30-bit parts: k·part exact for |k| < 2^23
        e = int(mp.floor(mp.log(abs(pio2), 2)))
        hi = mp.floor(pio2 * mp.mpf(2) ** (29 - e)) / mp.mpf(2) ** (29 - e)
        parts.append(float(hi))
        pio2 -= hi
    parts.append(float(pio2))
    print(f"PIO2_CW = {tuple(parts)!r}")
    with mp.workprec(1400):
        chunks("TWO_OVER_PI_24", 2 / mp.pi, 24, 48)
    # float32
    sq = mp.sqrt
    half_ln2 = mp.log(2) / 2 * mp.mpf(1.002)
    fit32("EXPF_P", lambda t: (mp.exp(t) - 1 - t) / t ** 2 if t else mp.mpf(1) / 2, -half_ln2, half_ln2, 5,
          lambda t: t ** 2)
    fit32("EXP2F_Q", lambda t: (mp.power(2, t) - 1) / t if t else mp.log(2), -0.501, 0.501, 6, lambda t: t)
    z_log = ((sq(2) - 1) / (sq(2) + 1)) ** 2 * mp.mpf(1.001)
    fit32("LOGF_R", lambda z: (2 * mp.atanh(sq(z)) - 2 * sq(z)) / sq(z) / z if z else mp.mpf(2) / 3, 0, z_log, 3,
          lambda z: z * sq(z))
    z_trig = (mp.pi / 4 * mp.mpf(1.001)) ** 2
    fit32("SINF_S", lambda z: (mp.sin(sq(z)) - sq(z)) / sq(z) ** 3 if z else -mp.mpf(1) / 6, 0, z_trig, 3, lambda z: z)
    fit32("COSF_C", lambda z: (mp.cos(sq(z)) - 1 + z / 2) / z ** 2 if z else mp.mpf(1) / 24, 0, z_trig, 3,
          lambda z: z * z)
    fit32("TANF_T", lambda z: (mp.tan(sq(z)) - sq(z)) / sq(z) ** 3 if z else mp.mpf(1) / 3, 0, z_trig, 6, lambda z: z)
    fit32("TANHF_T", lambda z: (mp.tanh(sq(z)) - sq(z)) / sq(z) ** 3 if z else -mp.mpf(1) / 3, 0, mp.mpf(0.56) ** 2,
          5, lambda z: z)
    print(f"LOG2E_F = {float(np.float32(float(1 / mp.log(2))))!r}")
    for name, value, bits in (("LN2F", mp.log(2), 16), ("IVLN2F", 1 / mp.log(2), 12)):
        e = int(mp.floor(mp.log(abs(value), 2)))
        hi = mp.floor(value * mp.mpf(2) ** (bits - 1 - e)) / mp.mpf(2) ** (bits - 1 - e)
        print(f"{name}_HI, {name}_LO = {float(hi)!r}, {float(np.float32(float(value - hi)))!r}")
    with mp.workprec(400):
        chunks("TWO_OVER_PI_29", 2 / mp.pi, 29, 7)
