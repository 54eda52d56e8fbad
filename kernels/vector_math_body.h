// The Vector unit's transcendental functions, written once over an `Isa` (see
// vector_kernels_{avx512,avx2,portable}.cc) and included inside each one's
// anonymous namespace, like cube_microkernel_body.h: every path runs the same
// operations in the same order, so all agree bit for bit. Kept TU-local because
// the SIMD TUs are built with -mavx2/-mavx512f.
//
// fp32 functions (exp, sigmoid, tanh, erf, gelu, silu) reduce the argument
// exactly and evaluate a polynomial of kernels/vector_math_coeffs.h; log, pow,
// sin and cos work in double precision (8 or 4 lanes per register) and round
// once to fp32. Accuracy per function: docs/ops.md "Vector math accuracy".

using Vec = typename Isa::Vec;
using VMask = typename Isa::Mask;
using DVec = typename Isa::D::Vec;
constexpr int kLanes = Isa::kLanes;
constexpr int kParts = Isa::D::kParts;

// c[0] + x (c[1] + x (c[2] + ...)): Horner with one fused multiply-add per step.
template <size_t N>
VECTOR_INLINE Vec Poly(Vec x, const float (&c)[N]) {
  Vec p = Isa::Set(c[N - 1]);
  for (size_t k = N - 1; k-- > 0;) p = Isa::Fma(p, x, Isa::Set(c[k]));
  return p;
}

template <size_t N>
VECTOR_INLINE DVec PolyD(DVec x, const double (&c)[N]) {
  DVec p = Isa::D::Set(c[N - 1]);
  for (size_t k = N - 1; k-- > 0;) p = Isa::D::Fma(p, x, Isa::D::Set(c[k]));
  return p;
}

// The sign of `s` on the non-negative `mag`.
VECTOR_INLINE Vec WithSignOf(Vec mag, Vec s) {
  return Isa::FromBits(Isa::IOr(Isa::Bits(mag), Isa::IAnd(Isa::Bits(s), Isa::ISet(INT32_MIN))));
}

// exp(hi + lo) for a small correction lo (|lo| <= ulp(hi)) as (1 + pm1) s1 s2:
// n = round(x / ln2), r = x - n ln2 by two fused steps (the first is exact),
// e^r - 1 = r + r^2 q(r), and 2^n as two normal powers of two. Callers that
// multiply the result by something fold it in before the last scale, so that
// a subnormal product rounds once (TimesExp).
struct ExpParts {
  Vec pm1, s1, s2;
};
struct ExpReduced {
  Vec n, r;
};
VECTOR_INLINE ExpReduced ExpReduce(Vec hi) {
  using namespace vmath;
  // Clamped to where exp under/overflows anyway (-150: even m e^-150 rounds to
  // 0 for the |m| callers pass); Max/Min(c, x) keep a NaN x.
  const Vec x = Isa::Min(Isa::Set(89.0f), Isa::Max(Isa::Set(-150.0f), hi));
  const Vec n = Isa::Round(Isa::Mul(x, Isa::Set(kLog2e)));
  const Vec r = Isa::Fma(n, Isa::Set(-kLn2Hi), x);
  return {n, Isa::Fma(n, Isa::Set(-kLn2Lo), r)};
}
VECTOR_INLINE ExpParts ExpOfReduced(const ExpReduced& a) {
  using namespace vmath;
  const Vec r = a.r;
  const Vec pm1 = Isa::Fma(Isa::Mul(r, r), Poly(r, kExpQ), r);
  const typename Isa::Int ni = Isa::ToInt(a.n);
  const typename Isa::Int n1 = Isa::template ISra<1>(ni);
  const typename Isa::Int n2 = Isa::ISub(ni, n1);
  const Vec s1 = Isa::FromBits(Isa::template IShl<23>(Isa::IAdd(n1, Isa::ISet(127))));
  const Vec s2 = Isa::FromBits(Isa::template IShl<23>(Isa::IAdd(n2, Isa::ISet(127))));
  return {pm1, s1, s2};
}
VECTOR_INLINE ExpParts ExpSplit(Vec hi, Vec lo) {
  ExpReduced a = ExpReduce(hi);
  a.r = Isa::Add(a.r, lo);
  return ExpOfReduced(a);
}
// lo = 0: the same bits without the addition (r + 0 only changes a zero's
// sign, and pm1 = +0 for either zero).
VECTOR_INLINE ExpParts ExpSplit(Vec x) { return ExpOfReduced(ExpReduce(x)); }

// m e^x: m s1 is exact (a power of two), m s1 (1 + pm1) rounds once (no
// separate rounding of 1 + pm1), then s2.
VECTOR_INLINE Vec TimesExp(Vec m, const ExpParts& e) {
  const Vec ms = Isa::Mul(m, e.s1);
  return Isa::Mul(Isa::Fma(ms, e.pm1, ms), e.s2);
}

VECTOR_INLINE Vec ExpOf(const ExpParts& e) { return Isa::Mul(Isa::Fma(e.s1, e.pm1, e.s1), e.s2); }

VECTOR_INLINE Vec Exp(Vec x) { return ExpOf(ExpSplit(x)); }

// e^d, d <= 0 (or NaN), for sums and results rounded to fp16 (softmax with an
// fp16 output): one reduction step and a degree-5 polynomial, a few 1e-7
// relative, under 1/1000 of an fp16 ulp. d is taken as at least -80 (e^-80
// becomes 0 in fp16 after any division by a sum >= 1), so 2^n p is normal and
// 2^n an addition to its exponent.
VECTOR_INLINE Vec ExpForHalf(Vec d) {
  using namespace vmath;
  const Vec x = Isa::Max(Isa::Set(-80.0f), d);  // Max(c, NaN) is NaN
  const Vec n = Isa::Round(Isa::Mul(x, Isa::Set(kLog2e)));
  const Vec p = Poly(Isa::Fma(n, Isa::Set(-kLn2Hi), x), kExpForHalf);
  return Isa::FromBits(Isa::IAdd(Isa::Bits(p), Isa::template IShl<23>(Isa::ToInt(n))));
}

// m sigmoid(t), t = thi + tlo, without overflow: with e = e^-|t|,
// m (t < 0 ? e : 1) / (1 + e), the exponential's scale applied last so that
// m sigmoid(t) keeps its accuracy down into the subnormals (Silu, Gelu-tanh).
VECTOR_INLINE Vec TimesSigmoidOf(Vec m, VMask neg, const ExpParts& e) {
  const Vec scale = Isa::Mul(e.s1, e.s2);                                   // exact while 1 + e^-|t| != 1
  const Vec den = Isa::Fma(scale, e.pm1, Isa::Add(Isa::Set(1.0f), scale));  // 1 + e^-|t|, one rounding
  return Isa::Select(neg, TimesExp(Isa::Div(m, den), e), Isa::Div(m, den));
}
VECTOR_INLINE Vec TimesSigmoid(Vec m, Vec thi, Vec tlo) {
  const VMask neg = Isa::Lt(thi, Isa::Zero());
  return TimesSigmoidOf(m, neg, ExpSplit(Isa::Neg(Isa::Abs(thi)), Isa::Select(neg, tlo, Isa::Neg(tlo))));
}
// tlo = 0 (ExpSplit(x)).
VECTOR_INLINE Vec TimesSigmoid(Vec m, Vec t) {
  return TimesSigmoidOf(m, Isa::Lt(t, Isa::Zero()), ExpSplit(Isa::Neg(Isa::Abs(t))));
}

VECTOR_INLINE Vec Sigmoid(Vec x) { return TimesSigmoid(Isa::Set(1.0f), x); }

// x sigmoid(x); below -200 x is taken as -200 so that -inf gives -0, not NaN.
VECTOR_INLINE Vec Silu(Vec x) { return TimesSigmoid(Isa::Max(Isa::Set(-200.0f), x), x); }

// |x| < 0.625: x + x^3 Q(x^2); else 1 - 2 / (e^(2|x|) + 1) with x's sign.
VECTOR_INLINE Vec Tanh(Vec x) {
  using namespace vmath;
  const Vec a = Isa::Abs(x);
  const Vec x2 = Isa::Mul(x, x);
  const Vec small = Isa::Fma(Isa::Mul(x, x2), Poly(x2, kTanhSmall), x);
  const Vec e = Exp(Isa::Add(a, a));
  const Vec large = Isa::Sub(Isa::Set(1.0f), Isa::Div(Isa::Set(2.0f), Isa::Add(e, Isa::Set(1.0f))));
  return Isa::Select(Isa::Lt(a, Isa::Set(kTanhSmallLimit)), small, WithSignOf(large, x));
}

// m erfc(z) for 1/2 <= z <= 16, given z^2 = z2hi + z2lo exactly:
// m exp(-z^2) t R(t - 1/3), t = 1 / (1 + z). t carries its rounding error in a
// second float (tl), R hardly depends on it, and the exponential's 1 + pm1
// is folded in by a fused step, so the product rounds few times.
VECTOR_INLINE Vec TimesErfc(Vec m, Vec z, Vec z2hi, Vec z2lo) {
  using namespace vmath;
  const Vec one = Isa::Set(1.0f);
  const Vec d = Isa::Add(one, z);
  const Vec dl = Isa::Sub(z, Isa::Sub(d, one));  // 1 + z = d + dl exactly
  const Vec t = Isa::Div(one, d);
  const Vec residual = Isa::Fma(Isa::Neg(d), t, one);               // 1 - d t, exact
  const Vec tl = Isa::Mul(t, Isa::Fma(Isa::Neg(dl), t, residual));  // 1/(d + dl) = t + tl
  const Vec r = Poly(Isa::Sub(t, Isa::Set(kErfcCenter)), kErfcR);
  const Vec q = Isa::Fma(t, r, Isa::Mul(tl, r));
  return TimesExp(Isa::Mul(m, q), ExpSplit(Isa::Neg(z2hi), Isa::Neg(z2lo)));
}

// x*x = hi + lo exactly.
struct Square {
  Vec hi, lo;
};
VECTOR_INLINE Square SquareOf(Vec x) {
  const Vec hi = Isa::Mul(x, x);
  return {hi, Isa::Fma(x, x, Isa::Neg(hi))};
}

// erf(x) for |x| < 1: x (c0 + x^2 P(x^2)), c0 = 2/sqrt(pi) in two parts, so
// that its rounding does not show near 0.
VECTOR_INLINE Vec ErfSmall(Vec x, Vec x2) {
  using namespace vmath;
  const Vec rest = Isa::Mul(x, Isa::Fma(x2, Poly(x2, kErfSmall), Isa::Set(kErfC0Lo)));
  return Isa::Fma(x, Isa::Set(kErfC0Hi), rest);
}

// |x| < 1: the series; else +-(1 - erfc(|x|)).
VECTOR_INLINE Vec Erf(Vec x) {
  using namespace vmath;
  const Vec a = Isa::Min(Isa::Set(16.0f), Isa::Abs(x));  // erfc(16) underflows; keeps z^2 finite
  const Square s = SquareOf(a);
  const Vec small = ErfSmall(x, s.hi);
  const Vec large = Isa::Sub(Isa::Set(1.0f), TimesErfc(Isa::Set(1.0f), a, s.hi, s.lo));
  return Isa::Select(Isa::Lt(a, Isa::Set(kErfSmallLimit)), small, WithSignOf(large, x));
}

// x/2 (1 + erf(z)), z = x/sqrt2. |z| < 1/2: x/2 + x/2 erf(z) by the series;
// else x >= 0 ? x - h : h with h = x/2 erfc(|z|): erfc of the magnitude, so
// the negative tail keeps its relative accuracy (no cancellation in 1 + erf),
// with z^2 = x^2/2 exactly.
VECTOR_INLINE Vec GeluErf(Vec x) {
  using namespace vmath;
  const Vec xc = Isa::Min(Isa::Set(24.0f), Isa::Max(Isa::Set(-24.0f), x));
  const Vec zs = Isa::Mul(xc, Isa::Set(kInvSqrt2));
  const Vec z = Isa::Abs(zs);
  const Vec half_x = Isa::Mul(Isa::Set(0.5f), xc);
  const Vec small = Isa::Fma(half_x, ErfSmall(zs, Isa::Mul(zs, zs)), half_x);
  const Square s = SquareOf(xc);
  const Vec h =
      TimesErfc(half_x, Isa::Max(Isa::Set(0.5f), z), Isa::Mul(s.hi, Isa::Set(0.5f)), Isa::Mul(s.lo, Isa::Set(0.5f)));
  const Vec large = Isa::Select(Isa::Ge(x, Isa::Zero()), Isa::Sub(x, h), h);
  return Isa::Select(Isa::Lt(z, Isa::Set(0.5f)), small, large);
}

// x/2 (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3), as x sigmoid(2u): the
// same function without the cancellation of 1 + tanh(u) for u << 0. 2u is
// formed in double (its rounding would be amplified |2u| times by the
// exponential) and handed over as two floats.
VECTOR_INLINE Vec GeluTanh(Vec x) {
  using D = typename Isa::D;
  const Vec xc = Isa::Min(Isa::Set(30.0f), Isa::Max(Isa::Set(-30.0f), x));  // sigmoid(2u) is 0 or 1 beyond
  DVec t[kParts], rest[kParts];
  for (int p = 0; p < kParts; ++p) {
    const DVec xd = D::Part(xc, p);
    const DVec inner = D::Mul(xd, D::Fma(D::Set(0.044715), D::Mul(xd, xd), D::Set(1.0)));
    t[p] = D::Mul(D::Set(vmath::kTwoSqrt2OverPi), inner);
  }
  const Vec thi = D::Join(t);
  for (int p = 0; p < kParts; ++p) rest[p] = D::Sub(t[p], D::Part(thi, p));
  const Vec tlo = D::Join(rest);
  // -inf: -30 sigmoid(-2u) = -0, not -inf * 0.
  return TimesSigmoid(Isa::Max(Isa::Set(-30.0f), x), thi, tlo);
}

// x = m 2^e with m in [sqrt(1/2), sqrt(2)), exactly (subnormals scaled first);
// for x > 0 finite.
struct Decomposed {
  Vec m, e;
};
VECTOR_INLINE Decomposed Decompose(Vec x) {
  const VMask tiny = Isa::Lt(x, Isa::Set(0x1p-126f));
  const Vec xs = Isa::Select(tiny, Isa::Mul(x, Isa::Set(0x1p24f)), x);
  const typename Isa::Int bits = Isa::Bits(xs);
  Vec e = Isa::ToFloat(Isa::ISub(Isa::template ISrl<23>(bits), Isa::ISet(127)));
  e = Isa::Select(tiny, Isa::Sub(e, Isa::Set(24.0f)), e);
  Vec m = Isa::FromBits(Isa::IOr(Isa::IAnd(bits, Isa::ISet(0x7fffff)), Isa::ISet(0x3f800000)));
  const VMask big = Isa::Gt(m, Isa::Set(1.41421356f));
  m = Isa::Select(big, Isa::Mul(m, Isa::Set(0.5f)), m);
  e = Isa::Select(big, Isa::Add(e, Isa::Set(1.0f)), e);
  return {m, e};
}

// log(m) in double for m in [sqrt(1/2), sqrt(2)): 2 atanh(s), s = (m-1)/(m+1).
VECTOR_INLINE DVec LogMantissa(DVec m) {
  using D = typename Isa::D;
  const DVec s = D::Div(D::Sub(m, D::Set(1.0)), D::Add(m, D::Set(1.0)));
  const DVec s2 = D::Mul(s, s);
  return D::Mul(D::Add(s, s), PolyD(s2, vmath::kLogAtanh));
}

VECTOR_INLINE Vec Log(Vec x) {
  using D = typename Isa::D;
  const Decomposed d = Decompose(x);
  DVec out[kParts];
  for (int p = 0; p < kParts; ++p) out[p] = D::Fma(D::Part(d.e, p), D::Set(vmath::kLn2), LogMantissa(D::Part(d.m, p)));
  const Vec r = D::Join(out);
  const Vec inf = Isa::Set(INFINITY);
  // log(+-0) = -inf, log(x < 0) = NaN, log(inf) = inf, log(NaN) = NaN.
  Vec special = Isa::Select(Isa::Eq(x, inf), inf, Isa::Set(NAN));
  special = Isa::Select(Isa::Eq(x, Isa::Zero()), Isa::Set(-INFINITY), special);
  special = Isa::Select(Isa::IsNan(x), x, special);
  return Isa::Select(Isa::And(Isa::Gt(x, Isa::Zero()), Isa::Lt(x, inf)), r, special);
}

// e^x - 1: for |x| < 1 Kahan's (u - 1) x / log u with u = e^x, which cancels
// u's rounding (x itself where u rounds to 1); u - 1 elsewhere.
VECTOR_INLINE Vec Expm1(Vec x) {
  const Vec u = Exp(x);
  const Vec um1 = Isa::Sub(u, Isa::Set(1.0f));
  const Vec kahan = Isa::Select(Isa::Eq(um1, Isa::Zero()), x, Isa::Div(Isa::Mul(um1, x), Log(u)));
  return Isa::Select(Isa::Lt(Isa::Abs(x), Isa::Set(1.0f)), kahan, um1);
}

// log(1 + e^x), x past 20 taken as x (torch's threshold); log1p(u) as
// log(w) u / (w - 1) with w = 1 + u, which keeps u's digits when u is tiny.
VECTOR_INLINE Vec Softplus(Vec x) {
  const Vec u = Exp(x);
  const Vec w = Isa::Add(Isa::Set(1.0f), u);
  const Vec wm1 = Isa::Sub(w, Isa::Set(1.0f));
  const Vec log1p = Isa::Select(Isa::Eq(wm1, Isa::Zero()), u, Isa::Div(Isa::Mul(Log(w), u), wm1));
  return Isa::Select(Isa::Gt(x, Isa::Set(20.0f)), x, log1p);
}

// x^y with C's special cases: |x|^y = 2^(y log2|x|) in double (log2 from the
// atanh series, 2^f by its Taylor series, 2^n by the exponent), then the sign
// and the exceptional cases of pow().
VECTOR_INLINE Vec Pow(Vec x, Vec y) {
  using D = typename Isa::D;
  const Vec ax = Isa::Abs(x);
  const Vec inf = Isa::Set(INFINITY), one = Isa::Set(1.0f);
  Decomposed d = Decompose(ax);
  // log2(0) = -inf, log2(inf) = inf, log2(NaN) = NaN: through e, with m = 1.
  const VMask zero = Isa::Eq(ax, Isa::Zero()), infinite = Isa::Eq(ax, inf), nan = Isa::IsNan(ax);
  const VMask odd_x = Isa::Or(Isa::Or(zero, infinite), nan);
  d.e = Isa::Select(zero, Isa::Set(-INFINITY), Isa::Select(infinite, inf, Isa::Select(nan, ax, d.e)));
  d.m = Isa::Select(odd_x, one, d.m);
  DVec out[kParts];
  for (int p = 0; p < kParts; ++p) {
    const DVec lg = D::Fma(LogMantissa(D::Part(d.m, p)), D::Set(vmath::kLog2eD), D::Part(d.e, p));
    const DVec t = D::Min(D::Set(200.0), D::Max(D::Set(-200.0), D::Mul(D::Part(y, p), lg)));
    const DVec n = D::Round(t);
    out[p] = D::Mul(PolyD(D::Sub(t, n), vmath::kExp2Taylor), D::Exp2Int(n));
  }
  Vec r = D::Join(out);
  // y an integer (infinities count as even), odd when |y| < 2^24 and its low bit is set.
  const VMask y_int = Isa::Eq(Isa::Trunc(y), y);
  const VMask y_odd = Isa::And(Isa::And(y_int, Isa::Lt(Isa::Abs(y), Isa::Set(0x1p24f))),
                               Isa::IEq(Isa::IAnd(Isa::ToInt(y), Isa::ISet(1)), Isa::ISet(1)));
  r = Isa::Select(Isa::Eq(ax, one), one, r);  // 1^y = 1 (any y), (-1)^(+-inf) = 1
  const VMask sign = Isa::IEq(Isa::IAnd(Isa::Bits(x), Isa::ISet(INT32_MIN)), Isa::ISet(INT32_MIN));
  r = Isa::Select(Isa::And(Isa::AndNot(nan, sign), y_odd), Isa::Neg(r), r);
  // A finite negative base to a non-integer power (or NaN) is NaN; -0 and -inf are not.
  const VMask neg_finite = Isa::And(Isa::Lt(x, Isa::Zero()), Isa::Gt(x, Isa::Set(-INFINITY)));
  r = Isa::Select(Isa::AndNot(y_int, neg_finite), Isa::Set(NAN), r);
  return Isa::Select(Isa::Eq(y, Isa::Zero()), one, r);  // x^0 = 1, even for a NaN x
}

// Below 2^18 (every fp16 value and the usual fp32 range) sin/cos reduce in
// double with a two-part pi/2; above, trig_reduction.h reduces exactly.
constexpr float kTrigFastLimit = 0x1p18f;

void ReduceLargeLanes(Vec x, VMask large, DVec (&r)[kParts], DVec (&q)[kParts]) {
  using D = typename Isa::D;
  constexpr int kPerPart = kLanes / kParts;
  alignas(64) float xs[kLanes];
  alignas(64) double rs[kLanes], qs[kLanes];
  Isa::Store(xs, x);
  for (int p = 0; p < kParts; ++p) D::Store(rs + p * kPerPart, r[p]), D::Store(qs + p * kPerPart, q[p]);
  const uint32_t lanes = Isa::Lanes(large);
  for (int i = 0; i < kLanes; ++i) {
    if ((lanes >> i) & 1) {
      int quadrant = 0;
      rs[i] = ReduceHalfPi(xs[i], &quadrant);
      qs[i] = quadrant;
    }
  }
  for (int p = 0; p < kParts; ++p) r[p] = D::Load(rs + p * kPerPart), q[p] = D::Load(qs + p * kPerPart);
}

// sin(x), or cos(x) = sin(x + pi/2) by one quadrant more: x = n pi/2 + r,
// |r| <= pi/4, then +-sin(r) or +-cos(r) by the quadrant n mod 4.
template <bool kCos>
VECTOR_INLINE Vec SinCos(Vec x) {
  using D = typename Isa::D;
  using namespace vmath;
  DVec r[kParts], q[kParts];
  for (int p = 0; p < kParts; ++p) {
    const DVec xd = D::Part(x, p);
    const DVec n = D::Round(D::Mul(xd, D::Set(kTwoOverPi)));
    r[p] = D::Fma(n, D::Set(-kPio2Lo), D::Fma(n, D::Set(-kPio2Hi), xd));
    q[p] = D::Sub(n, D::Mul(D::Set(4.0), D::Floor(D::Mul(n, D::Set(0.25)))));
  }
  const Vec a = Isa::Abs(x);
  const VMask large = Isa::And(Isa::Ge(a, Isa::Set(kTrigFastLimit)), Isa::Lt(a, Isa::Set(INFINITY)));
  if (Isa::Any(large)) ReduceLargeLanes(x, large, r, q);
  DVec out[kParts];
  for (int p = 0; p < kParts; ++p) {
    const DVec r2 = D::Mul(r[p], r[p]);
    const DVec s = D::Mul(r[p], PolyD(r2, kSinTaylor));
    const DVec c = PolyD(r2, kCosTaylor);
    const DVec qq = kCos ? D::Add(q[p], D::Set(1.0)) : q[p];  // 1..4 for cos; 4 acts as 0
    const DVec v = D::Select(D::Or(D::Eq(qq, D::Set(1.0)), D::Eq(qq, D::Set(3.0))), c, s);
    out[p] = D::Select(D::Or(D::Eq(qq, D::Set(2.0)), D::Eq(qq, D::Set(3.0))), D::Neg(v), v);
  }
  return D::Join(out);
}
