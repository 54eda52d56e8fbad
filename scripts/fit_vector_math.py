#!/usr/bin/python3
"""Writes kernels/vector_math_coeffs.h: the polynomial coefficients of the Vector math kernels.

usage: scripts/fit_vector_math.py > kernels/vector_math_coeffs.h

Fitted (near-minimax: least squares at Chebyshev nodes reweighted by Lawson's rule, at 50 digits, then
rounded to fp32 one coefficient at a time, lowest degree first, refitting the rest after each rounding
so the rounding error is absorbed):
  erf(x) = x (2/sqrt(pi) + x^2 P(x^2)) on |x| <= 1
  erfc(z) = exp(-z^2) * t * R(t-1/3), t = 1 / (1 + z), z >= 1/2 (t in (0, 2/3])
  tanh(x) = x + x^3 * Q(x^2)          on |x| <= 0.625
  e^r = 1 + r + r^2 q(r)              on |r| <= ln2/2 (a little more: the reduction's rounding)
  e^r = p(r), degree 5                 on the same interval (fp16 softmax outputs: ~1e-7 is plenty)
Taylor coefficients (exact formulas, rounded once): the double-precision series of log (atanh form),
2^f, sin and cos.
The header states each fit's error bound (in the function's own units) as computed here.
"""
import mpmath as mp
import re
import struct

mp.mp.dps = 50


def f32(x):
    return struct.unpack("f", struct.pack("f", float(x)))[0]


def short_hex(h):
    return re.sub(r"\.?0+p", "p", h)


def c_float(x):
    return short_hex(f32(x).hex()) + "f"


def c_double(x):
    return short_hex(float(x).hex())


def fit(f, a, b, fixed, degree, nodes=120, rounds=25):
    """Coefficients fixed + [c_k..c_degree] minimising max |f - p| at Chebyshev nodes of [a, b]:
    weighted least squares, reweighted by Lawson's rule towards the minimax fit."""
    k = len(fixed)
    xs = [(a + b) / 2 + (b - a) / 2 * mp.cos(mp.pi * (j + mp.mpf(1) / 2) / nodes) for j in range(nodes)]
    target = [f(x) - sum(c * x ** i for i, c in enumerate(fixed)) for x in xs]
    w = [mp.mpf(1) / nodes] * nodes
    for _ in range(rounds):
        A = mp.matrix([[mp.sqrt(w[j]) * xs[j] ** i for i in range(k, degree + 1)] for j in range(nodes)])
        y = mp.matrix([mp.sqrt(w[j]) * target[j] for j in range(nodes)])
        sol, _ = mp.qr_solve(A, y)
        err = [abs(target[j] - sum(sol[i - k] * xs[j] ** i for i in range(k, degree + 1))) for j in range(nodes)]
        total = sum(w[j] * err[j] for j in range(nodes))
        w = [w[j] * err[j] / total for j in range(nodes)]
    return list(fixed) + [sol[i] for i in range(degree + 1 - k)]


def fit_rounded(f, a, b, degree, center=0):
    """fp32 coefficients c[0..degree] (lowest first) of a polynomial in (x - center) close to f on
    [a, b]: each one rounded in turn, the higher ones refitted around it, so that rounding costs
    little accuracy. A center inside [a, b] keeps the coefficients small (better conditioned)."""
    g = lambda s: f(s + center)
    coeffs = []
    for _ in range(degree + 1):
        c = fit(g, a - center, b - center, coeffs, degree)
        coeffs.append(mp.mpf(f32(c[len(coeffs)])))
    err = max(abs(sum(c * (x - f32(center)) ** i for i, c in enumerate(coeffs)) - f(x))
              for x in mp.linspace(a, b, 2001))
    return coeffs, err


TWO_OVER_SQRT_PI = 2 / mp.sqrt(mp.pi)


def erf_rest(u):
    """(erf(x)/x - 2/sqrt(pi)) / x^2 as a function of u = x^2."""
    if u == 0:
        return -TWO_OVER_SQRT_PI / 3
    x = mp.sqrt(u)
    return (mp.erf(x) / x - TWO_OVER_SQRT_PI) / u


ERFC_CENTER = mp.mpf(1) / 3  # R is evaluated in t - 1/3
ERFC_A = mp.mpf(1)  # t = 1/(1 + z): R then hardly depends on t's rounding (|dlnR/dlnt| < 0.3)


def erfc_r(t):
    if t == 0:
        return ERFC_A / mp.sqrt(mp.pi)  # t ~ 1/(a z), erfc(z) e^(z^2) ~ 1/(z sqrt(pi))
    z = (1 / t - 1) / ERFC_A
    return mp.erfc(z) * mp.exp(z * z) / t


def tanh_q(u):
    if u == 0:
        return mp.mpf(-1) / 3
    x = mp.sqrt(u)
    return (mp.tanh(x) - x) / (x * u)


def exp_q(r):
    if r == 0:
        return mp.mpf(1) / 2
    return (mp.exp(r) - 1 - r) / (r * r)


EXP_R = mp.log(2) / 2 * mp.mpf("1.0001")


def exp_rel_err(approx):
    """max |approx(r) - e^r| / e^r on |r| <= EXP_R."""
    return max(abs(approx(r) - mp.exp(r)) / mp.exp(r) for r in mp.linspace(-EXP_R, EXP_R, 2001))


def poly(coeffs, x):
    return sum(c * x ** i for i, c in enumerate(coeffs))


def emit_array(ctype, name, values, comment):
    print("// %s" % comment)
    lines, line = [], "inline constexpr %s %s[] = {" % (ctype, name)
    for i, v in enumerate(values):
        item = v + ("," if i + 1 < len(values) else "};")
        if len(line) + 1 + len(item) > 118:
            lines.append(line)
            line = "    " + item
        else:
            line += ("" if line.endswith("{") else " ") + item
    lines.append(line)
    print("\n".join(lines))


def emit_float_array(name, coeffs, comment):
    emit_array("float", name, [c_float(c) for c in coeffs], comment)


def emit_double_array(name, coeffs, comment):
    emit_array("double", name, [c_double(c) for c in coeffs], comment)


def main():
    erf_p, erf_err = fit_rounded(erf_rest, 0, 1, 5)
    erfc_r_c, erfc_err = fit_rounded(erfc_r, 0, mp.mpf(2) / 3, 12, ERFC_CENTER)
    tanh_c, tanh_err = fit_rounded(tanh_q, 0, mp.mpf("0.625") ** 2, 5)
    exp_c, _ = fit_rounded(exp_q, -EXP_R, EXP_R, 4)
    exp_half_c, _ = fit_rounded(mp.exp, -EXP_R, EXP_R, 5)
    print("// Generated by scripts/fit_vector_math.py; do not edit. Coefficients lowest degree first.")
    print("#pragma once")
    print()
    print("namespace npu::kernels::vmath {")
    print()
    c0_hi = f32(TWO_OVER_SQRT_PI)
    print("// erf(x) = x (c0 + x^2 P(x^2)), |x| <= 1, c0 = 2/sqrt(pi) = kErfC0Hi + kErfC0Lo; max |P - exact| = %s"
          % mp.nstr(erf_err, 3))
    print("inline constexpr float kErfC0Hi = %s, kErfC0Lo = %s;" % (c_float(c0_hi), c_float(TWO_OVER_SQRT_PI - c0_hi)))
    emit_float_array("kErfSmall", erf_p, "P")
    print("inline constexpr float kErfSmallLimit = 1.0f;")
    emit_float_array("kErfcR", erfc_r_c, "erfc(z) = exp(-z^2) t R(t - kErfcCenter), t = 1/(1 + z), z >= 1/2; max |R - exact| = "
                     "%s (R in [0.56, 0.93])" % mp.nstr(erfc_err, 3))
    print("inline constexpr float kErfcCenter = %s;" % c_float(ERFC_CENTER))
    emit_float_array("kTanhSmall", tanh_c, "tanh(x) = x + x^3 Q(x^2), |x| <= 0.625; max |Q - exact| = %s"
                     % mp.nstr(tanh_err, 3))
    print("inline constexpr float kTanhSmallLimit = 0.625f;")
    half_ln2, s_max, quarter_pi = mp.log(2) / 2, (mp.sqrt(2) - 1) / (mp.sqrt(2) + 1), mp.pi / 4
    emit_float_array("kExpQ", exp_c, "e^r = 1 + r + r^2 q(r), |r| <= ln2/2; max |1 + r + r^2 q - e^r| / e^r = %s"
                     % mp.nstr(exp_rel_err(lambda r: 1 + r + r * r * poly(exp_c, r)), 3))
    emit_float_array("kExpForHalf", exp_half_c, "e^r = p(r), |r| <= ln2/2, for results rounded to fp16; "
                     "max |p - e^r| / e^r = %s" % mp.nstr(exp_rel_err(lambda r: poly(exp_half_c, r)), 3))
    emit_double_array("kLogAtanh", [mp.mpf(1) / (2 * k + 1) for k in range(0, 8)],
                      "log(m) = 2 s (1 + s^2/3 + ... + s^14/15), s = (m-1)/(m+1), |s| <= 0.172 (truncation %s rel)"
                      % mp.nstr(s_max ** 16 / 17, 2))
    ln2 = mp.log(2)
    emit_double_array("kExp2Taylor", [ln2 ** k / mp.factorial(k) for k in range(0, 13)],
                      "2^f = sum (f ln2)^k / k!, k <= 12, |f| <= 1/2 (truncation %s rel)"
                      % mp.nstr(half_ln2 ** 13 / mp.factorial(13), 2))
    emit_double_array("kSinTaylor", [(-1) ** k / mp.factorial(2 * k + 1) for k in range(0, 8)],
                      "sin(r) = r (1 - r^2/3! + ... - r^14/15!), |r| <= pi/4 (truncation %s rel)"
                      % mp.nstr(quarter_pi ** 16 / mp.factorial(17), 2))
    emit_double_array("kCosTaylor", [(-1) ** k / mp.factorial(2 * k) for k in range(0, 9)],
                      "cos(r) = 1 - r^2/2! + ... + r^16/16!, |r| <= pi/4 (truncation %s rel)"
                      % mp.nstr(quarter_pi ** 18 / mp.factorial(18), 2))
    print("// Cody-Waite splits (hi + lo = the constant to twice the precision) and other constants.")
    ln2_hi = f32(ln2)
    print("inline constexpr float kLn2Hi = %s, kLn2Lo = %s, kLog2e = %s;"
          % (c_float(ln2_hi), c_float(ln2 - mp.mpf(ln2_hi)), c_float(1 / ln2)))
    pio2_hi = float(mp.pi / 2)
    print("inline constexpr double kPio2Hi = %s, kPio2Lo = %s;" % (c_double(pio2_hi), c_double(mp.pi / 2 - mp.mpf(pio2_hi))))
    print("inline constexpr double kTwoOverPi = %s;" % c_double(2 / mp.pi))
    print("inline constexpr double kLn2 = %s, kLog2eD = %s;" % (c_double(ln2), c_double(1 / ln2)))
    print("inline constexpr float kInvSqrt2 = %s;" % c_float(1 / mp.sqrt(2)))
    print("inline constexpr double kTwoSqrt2OverPi = %s;" % c_double(2 * mp.sqrt(2 / mp.pi)))
    # 2/pi = 0.b1 b2 b3 ... in binary; word 0 holds b1..b64 (b1 in its top bit).
    with mp.workdps(120):
        bits = int(mp.floor(2 / mp.pi * mp.mpf(2) ** 256))
    words = [(bits >> (64 * (3 - i))) & (2 ** 64 - 1) for i in range(4)]
    print("// The first 256 bits of 2/pi after the binary point, for the large-argument reduction.")
    print("inline constexpr unsigned long long kTwoOverPiBits[4] = {\n    %s};" % ", ".join("0x%016xull" % w for w in words))
    print()
    print("}  // namespace npu::kernels::vmath")


main()
