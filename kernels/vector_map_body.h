// Elementwise loops of the Vector kernels, written once over `Isa` (included by
// vector_set_body.h inside each ISA's anonymous namespace): operands are read
// in their storage type (fp16 widened by F16C / AVX-512 conversions), computed
// in fp32 registers, and rounded once on store, which also counts overflows.
// Tails shorter than a vector run the same code on a zero-padded copy, so every
// element sees the same operations whatever its position.

template <Storage S>
using ElemOf = std::conditional_t<S == Storage::kF32, float, half_bits>;

template <Storage S>
VECTOR_INLINE Vec LoadAs(const void* base, size_t i) {
  if constexpr (S == Storage::kF32) {
    return Isa::Load(static_cast<const float*>(base) + i);
  } else {
    return Isa::LoadHalf(static_cast<const half_bits*>(base) + i);
  }
}

// Stores one vector rounded to S; returns the lanes that overflowed (fp16: the
// IEEE half would be +-inf or NaN, i.e. |v| >= 65520 or v NaN; fp32: v is not
// finite). With `saturate` such fp16 lanes store +-65504, NaN stores 0.
template <Storage S>
VECTOR_INLINE VMask StoreMasked(void* base, size_t i, Vec v, bool saturate) {
  if constexpr (S == Storage::kF32) {
    Isa::Store(static_cast<float*>(base) + i, v);
    return Isa::NotLt(Isa::Abs(v), Isa::Set(INFINITY));
  } else {
    const VMask over = Isa::NotLt(Isa::Abs(v), Isa::Set(65520.0f));
    if (saturate && Isa::Any(over)) {
      v = Isa::Min(Isa::Set(kHalfMax), Isa::Max(Isa::Set(-kHalfMax), v));
      v = Isa::Select(Isa::IsNan(v), Isa::Zero(), v);
    }
    Isa::StoreHalf(static_cast<half_bits*>(base) + i, v);
    return over;
  }
}

// The same, the overflowed lanes as bits (lane i: bit i).
template <Storage S>
VECTOR_INLINE uint32_t StoreAs(void* base, size_t i, Vec v, bool saturate) {
  return Isa::Lanes(StoreMasked<S>(base, i, v, saturate));
}

template <Storage S>
Vec LoadTail(const void* base, size_t i, size_t count) {
  ElemOf<S> buf[kLanes] = {};
  std::memcpy(buf, static_cast<const ElemOf<S>*>(base) + i, count * sizeof(ElemOf<S>));
  return LoadAs<S>(buf, 0);
}

template <Storage S>
uint32_t StoreTail(void* base, size_t i, size_t count, Vec v, bool saturate) {
  ElemOf<S> buf[kLanes];
  const uint32_t over = StoreAs<S>(buf, 0, v, saturate);
  std::memcpy(static_cast<ElemOf<S>*>(base) + i, buf, count * sizeof(ElemOf<S>));
  return over & ((count >= 32 ? 0u : (1u << count)) - 1u);
}

// One input operand of storage S: contiguous, or (kBroadcast) one fp32 value.
template <Storage S, bool kBroadcast = false>
struct Reader {
  const void* data;
  Vec value;
  explicit Reader(const VecSrc& src)
      : data(src.data), value(kBroadcast ? Isa::Set(*static_cast<const float*>(src.data)) : Isa::Zero()) {}
  Vec Get(size_t i, size_t count) const {
    if constexpr (kBroadcast) {
      return value;
    } else {
      if constexpr (kLanes == 1) return LoadAs<S>(data, i);  // no tails
      return count == kLanes ? LoadAs<S>(data, i) : LoadTail<S>(data, i, count);
    }
  }
};

// y[i] = f(i, count) for vectors of `count` lanes starting at i; the overflow
// count. Overflowed lanes are counted in an int32 vector (one masked add per
// vector), summed per block of 2^30 elements so that no lane's count wraps.
template <Storage O, typename F>
uint64_t Drive(void* y, size_t n, bool saturate, const F& f) {
  constexpr size_t kBlock = size_t{1} << 30;
  uint64_t over = 0;
  size_t i = 0;
  while (i + kLanes <= n) {
    typename Isa::Int count = Isa::ISet(0);
    const size_t end = std::min(n - kLanes + 1, i + kBlock);
    for (; i < end; i += kLanes) count = Isa::CountIf(count, StoreMasked<O>(y, i, f(i, size_t{kLanes}), saturate));
    over += Isa::SumLanes(count);
  }
  if constexpr (kLanes > 1) {
    if (i < n) over += std::popcount(StoreTail<O>(y, i, n - i, f(i, n - i), saturate));
  }
  return over;
}

// Calls body(reader) with the Reader type of `src` (broadcast sources are fp32).
template <typename Body>
uint64_t WithReader(const VecSrc& src, const Body& body) {
  if (src.broadcast) return body(Reader<Storage::kF32, true>(src));
  if (src.storage == Storage::kF16) return body(Reader<Storage::kF16>(src));
  return body(Reader<Storage::kF32>(src));
}

template <typename Body>
uint64_t WithOutput(const VecDst& dst, const Body& body) {
  if (dst.storage == Storage::kF16) return body(std::integral_constant<Storage, Storage::kF16>{});
  return body(std::integral_constant<Storage, Storage::kF32>{});
}

template <typename F>
uint64_t Map1(VecSrc x, VecDst y, size_t n, bool saturate, const F& f) {
  return WithOutput(y, [&](auto out) {
    return WithReader(x, [&](const auto& rx) {
      return Drive<decltype(out)::value>(y.data, n, saturate, [&](size_t i, size_t c) { return f(rx.Get(i, c)); });
    });
  });
}

template <typename F>
uint64_t Map2(VecSrc a, VecSrc b, VecDst y, size_t n, bool saturate, const F& f) {
  return WithOutput(y, [&](auto out) {
    return WithReader(a, [&](const auto& ra) {
      return WithReader(b, [&](const auto& rb) {
        return Drive<decltype(out)::value>(y.data, n, saturate,
                                           [&](size_t i, size_t c) { return f(ra.Get(i, c), rb.Get(i, c)); });
      });
    });
  });
}

// ---- the ops -----------------------------------------------------------------

// clamp(x, lo, hi) with NaN kept.
VECTOR_INLINE Vec Clamp(Vec x, Vec lo, Vec hi) {
  const Vec m = Isa::Select(Isa::Lt(x, lo), lo, x);
  return Isa::Select(Isa::Lt(hi, m), hi, m);
}

// Rounded toward -inf (-0 kept): truncation, one less where that rose.
VECTOR_INLINE Vec Floor(Vec x) {
  const Vec t = Isa::Trunc(x);
  return Isa::Select(Isa::Gt(t, x), Isa::Sub(t, Isa::Set(1.0f)), t);
}

VECTOR_INLINE Vec Relu(Vec x) { return Isa::Select(Isa::IsNan(x), x, Isa::Max(x, Isa::Zero())); }  // -0 -> +0, NaN kept

uint64_t UnaryCompute(UnaryOp op, const UnaryParams& p, VecSrc x, VecDst y, size_t n, bool sat) {
  const auto map = [&](const auto& f) { return Map1(x, y, n, sat, f); };
  switch (op) {
    case UnaryOp::kRelu: return map([](Vec v) { return Relu(v); });
    case UnaryOp::kNeg: return map([](Vec v) { return Isa::Neg(v); });
    case UnaryOp::kAbs: return map([](Vec v) { return Isa::Abs(v); });
    case UnaryOp::kSqrt: return map([](Vec v) { return Isa::Sqrt(v); });
    case UnaryOp::kReciprocal: return map([](Vec v) { return Isa::Div(Isa::Set(1.0f), v); });
    case UnaryOp::kExp: return map([](Vec v) { return Exp(v); });
    case UnaryOp::kLog: return map([](Vec v) { return Log(v); });
    case UnaryOp::kErf: return map([](Vec v) { return Erf(v); });
    case UnaryOp::kSigmoid: return map([](Vec v) { return Sigmoid(v); });
    case UnaryOp::kTanh: return map([](Vec v) { return Tanh(v); });
    case UnaryOp::kSilu: return map([](Vec v) { return Silu(v); });
    case UnaryOp::kGeluErf: return map([](Vec v) { return GeluErf(v); });
    case UnaryOp::kGeluTanh: return map([](Vec v) { return GeluTanh(v); });
    case UnaryOp::kSin: return map([](Vec v) { return SinCos<false>(v); });
    case UnaryOp::kCos: return map([](Vec v) { return SinCos<true>(v); });
    case UnaryOp::kLeakyRelu: {
      const Vec alpha = Isa::Set(p.alpha);
      return map([alpha](Vec v) { return Isa::Select(Isa::Ge(v, Isa::Zero()), v, Isa::Mul(alpha, v)); });
    }
    case UnaryOp::kHardSigmoid: {
      // alpha x + beta as two roundings (what torch computes), then clamped; NaN kept.
      const Vec alpha = Isa::Set(p.alpha), beta = Isa::Set(p.beta);
      return map([alpha, beta](Vec v) {
        const Vec t = Isa::Add(Isa::Mul(alpha, v), beta);
        return Isa::Select(Isa::Lt(Isa::Set(1.0f), t), Isa::Set(1.0f),
                           Isa::Select(Isa::Lt(t, Isa::Zero()), Isa::Zero(), t));
      });
    }
    case UnaryOp::kClip: {
      const Vec lo = Isa::Set(p.alpha), hi = Isa::Set(p.beta);  // NaN x stays NaN
      return map([lo, hi](Vec v) { return Clamp(v, lo, hi); });
    }
    case UnaryOp::kFloor: return map([](Vec v) { return Floor(v); });
    case UnaryOp::kCeil:
      return map([](Vec v) {
        const Vec t = Isa::Trunc(v);
        return Isa::Select(Isa::Lt(t, v), Isa::Add(t, Isa::Set(1.0f)), t);
      });
    case UnaryOp::kRound: return map([](Vec v) { return Isa::Round(v); });
    case UnaryOp::kSign:
      return map([](Vec v) {
        const Vec s = Isa::Select(Isa::Gt(v, Isa::Zero()), Isa::Set(1.0f), Isa::Set(-1.0f));
        return Isa::Select(Isa::Eq(v, Isa::Zero()), Isa::Zero(), Isa::Select(Isa::IsNan(v), v, s));
      });
    case UnaryOp::kHardSwish:
      return map([](Vec v) {
        const Vec c = Clamp(Isa::Add(v, Isa::Set(3.0f)), Isa::Zero(), Isa::Set(6.0f));
        return Isa::Div(Isa::Mul(v, c), Isa::Set(6.0f));
      });
    case UnaryOp::kSoftplus: return map([](Vec v) { return Softplus(v); });
    case UnaryOp::kMish: return map([](Vec v) { return Isa::Mul(v, Tanh(Softplus(v))); });
    case UnaryOp::kElu: {
      const Vec alpha = Isa::Set(p.alpha);
      return map([alpha](Vec v) { return Isa::Select(Isa::Gt(v, Isa::Zero()), v, Isa::Mul(Expm1(v), alpha)); });
    }
    case UnaryOp::kSelu: {
      const Vec neg = Isa::Set(p.alpha), pos = Isa::Set(p.beta);
      return map([neg, pos](Vec v) {
        return Isa::Select(Isa::Gt(v, Isa::Zero()), Isa::Mul(v, pos), Isa::Mul(Expm1(v), neg));
      });
    }
    case UnaryOp::kCelu: {
      const Vec alpha = Isa::Set(p.alpha), inv = Isa::Set(p.beta);
      return map([alpha, inv](Vec v) {
        return Isa::Select(Isa::Gt(v, Isa::Zero()), v, Isa::Mul(Expm1(Isa::Mul(v, inv)), alpha));
      });
    }
  }
  return 0;
}

// fp16 in, fp16 out, for the parameterless transcendentals but Exp: an fp16
// input has 65,536 values, so this kernel's own result for each (IEEE,
// unsaturated) is computed once into a table and looked up: the same bits as
// computing, without the polynomial (half_lookup.h). Saturation and the
// overflow count follow per chunk, while the chunk is in L1. Exp computes:
// its polynomial is cheaper than the lookup (bench/README.md).
bool Tabulated(UnaryOp op) {
  switch (op) {
    case UnaryOp::kLog: case UnaryOp::kErf: case UnaryOp::kSigmoid: case UnaryOp::kTanh: case UnaryOp::kSilu:
    case UnaryOp::kGeluErf: case UnaryOp::kGeluTanh: case UnaryOp::kSin: case UnaryOp::kCos:
      return true;
    default: return false;
  }
}

// The table of `op`: its 65,536 results, built on first use (128 KiB).
const half_bits* HalfTable(UnaryOp op) {
  constexpr size_t kOps = static_cast<size_t>(UnaryOp::kCos) + 1;  // Tabulated ops come first in UnaryOp
  static std::once_flag once[kOps];
  static std::unique_ptr<half_bits[]> tables[kOps];
  const size_t i = static_cast<size_t>(op);
  std::call_once(once[i], [&] {
    auto table = std::make_unique<half_bits[]>(65536);
    for (uint32_t h = 0; h < 65536; ++h) table[h] = static_cast<half_bits>(h);
    UnaryCompute(op, {}, F16Src(table.get()), F16Dst(table.get()), 65536, false);
    tables[i] = std::move(table);
  });
  return tables[i].get();
}

uint64_t LookUpAndSaturate(const half_bits* table, const half_bits* in, half_bits* out, size_t n, bool saturate) {
  constexpr size_t kChunk = 2048;  // 4 KiB of output
  uint64_t over = 0;
  for (size_t i = 0; i < n; i += kChunk) {
    const size_t c = std::min(kChunk, n - i);
    LookUpHalves(table, in + i, out + i, c);
    over += Isa::SaturateHalves(out + i, c, saturate);
  }
  return over;
}

uint64_t UnaryKernel(UnaryOp op, const UnaryParams& p, VecSrc x, VecDst y, size_t n, bool sat) {
  if (x.storage == Storage::kF16 && y.storage == Storage::kF16 && !x.broadcast && Tabulated(op)) {
    return LookUpAndSaturate(HalfTable(op), static_cast<const half_bits*>(x.data), static_cast<half_bits*>(y.data), n,
                             sat);
  }
  return UnaryCompute(op, p, x, y, n, sat);
}

// NaN in either operand gives NaN (x + y), as torch.maximum / ONNX Max do.
VECTOR_INLINE Vec MaxPropagate(Vec a, Vec b) {
  return Isa::Select(Isa::Or(Isa::IsNan(a), Isa::IsNan(b)), Isa::Add(a, b), Isa::Select(Isa::Gt(a, b), a, b));
}
VECTOR_INLINE Vec MinPropagate(Vec a, Vec b) {
  return Isa::Select(Isa::Or(Isa::IsNan(a), Isa::IsNan(b)), Isa::Add(a, b), Isa::Select(Isa::Lt(a, b), a, b));
}

VECTOR_INLINE Vec OneIf(VMask m) { return Isa::Select(m, Isa::Set(1.0f), Isa::Zero()); }

// C's fmod, exact, lane by lane (the remainder is exact in fp32; no SIMD
// sequence computes it exactly for large quotients).
VECTOR_INLINE Vec Fmod(Vec a, Vec b) {
  float x[kLanes], y[kLanes];
  Isa::Store(x, a);
  Isa::Store(y, b);
  for (size_t i = 0; i < kLanes; ++i) x[i] = std::fmod(x[i], y[i]);
  return Isa::Load(x);
}

uint64_t BinaryKernel(BinaryOp op, VecSrc a, VecSrc b, VecDst y, size_t n, bool sat) {
  const auto map = [&](const auto& f) { return Map2(a, b, y, n, sat, f); };
  switch (op) {
    case BinaryOp::kAdd: return map([](Vec u, Vec v) { return Isa::Add(u, v); });
    case BinaryOp::kSub: return map([](Vec u, Vec v) { return Isa::Sub(u, v); });
    case BinaryOp::kMul: return map([](Vec u, Vec v) { return Isa::Mul(u, v); });
    case BinaryOp::kDiv: return map([](Vec u, Vec v) { return Isa::Div(u, v); });
    case BinaryOp::kPow: return map([](Vec u, Vec v) { return Pow(u, v); });
    case BinaryOp::kMax: return map([](Vec u, Vec v) { return MaxPropagate(u, v); });
    case BinaryOp::kMin: return map([](Vec u, Vec v) { return MinPropagate(u, v); });
    case BinaryOp::kEqual: return map([](Vec u, Vec v) { return OneIf(Isa::Eq(u, v)); });
    case BinaryOp::kLess: return map([](Vec u, Vec v) { return OneIf(Isa::Lt(u, v)); });
    case BinaryOp::kGreater: return map([](Vec u, Vec v) { return OneIf(Isa::Gt(u, v)); });
    case BinaryOp::kPRelu:
      return map([](Vec u, Vec v) { return Isa::Select(Isa::Gt(u, Isa::Zero()), u, Isa::Mul(v, u)); });
    case BinaryOp::kFmod: return map([](Vec u, Vec v) { return Fmod(u, v); });
    case BinaryOp::kMod:
      return map([](Vec u, Vec v) {
        // torch.remainder: fmod, plus b where a non-zero remainder's sign is not b's.
        const Vec r = Fmod(u, v);
        const VMask differ = Isa::Or(Isa::And(Isa::Lt(r, Isa::Zero()), Isa::Gt(v, Isa::Zero())),
                                     Isa::And(Isa::Gt(r, Isa::Zero()), Isa::Lt(v, Isa::Zero())));
        return Isa::Select(differ, Isa::Add(r, v), r);
      });
  }
  return 0;
}

uint64_t SelectKernel(VecSrc cond, VecSrc a, VecSrc b, VecDst y, size_t n, bool sat) {
  return WithOutput(y, [&](auto out) {
    return WithReader(cond, [&](const auto& rc) {
      return WithReader(a, [&](const auto& ra) {
        return WithReader(b, [&](const auto& rb) {
          return Drive<decltype(out)::value>(y.data, n, sat, [&](size_t i, size_t c) {
            return Isa::Select(Isa::Ne(rc.Get(i, c), Isa::Zero()), ra.Get(i, c), rb.Get(i, c));
          });
        });
      });
    });
  });
}

uint64_t ConvertKernel(VecSrc x, VecDst y, size_t n, bool sat) {
  return Map1(x, y, n, sat, [](Vec v) { return v; });
}

void WidenKernel(const half_bits* in, float* out, size_t n) { ConvertKernel(F16Src(in), F32Dst(out), n, false); }

uint64_t NarrowKernel(const float* in, half_bits* out, size_t n, bool sat) {
  return ConvertKernel(F32Src(in), F16Dst(out), n, sat);
}
