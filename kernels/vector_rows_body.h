// Row kernels of the Vector unit (softmax, normalisation statistics,
// reductions), written once over `Isa` and included by vector_set_body.h.
//
// A reduction along a row never depends on the vector width: element i of a row
// goes to partial accumulator i mod 64 on every path (4 zmm, 8 ymm or 64
// scalars), and the 64 partials are combined by one fixed pairwise tree. So sums
// (and Welford statistics) are bitwise identical across paths and threads.

constexpr size_t kRowLanes = 64;
constexpr size_t kAccs = kRowLanes / kLanes;  // vectors of partial accumulators
static_assert(kRowLanes % kLanes == 0);

// acc[j] for j < 64 folded by v[j] = op(v[j], v[j + w]), w = 32, 16, ..., 1:
// the levels with w >= kLanes a vector at a time (vop, the same operation on
// lanes), the rest one float at a time (op): the same pairs on every path.
template <typename VOp, typename Op>
VECTOR_INLINE float TreeFold(const Vec (&acc)[kAccs], const VOp& vop, const Op& op) {
  alignas(64) float v[kRowLanes];
  for (size_t a = 0; a < kAccs; ++a) Isa::Store(v + a * kLanes, acc[a]);
  size_t w = kRowLanes / 2;
  for (; w >= kLanes; w /= 2) {
    for (size_t j = 0; j < w; j += kLanes) Isa::Store(v + j, vop(Isa::Load(v + j), Isa::Load(v + j + w)));
  }
  for (; w >= 1; w /= 2) {
    for (size_t j = 0; j < w; ++j) v[j] = op(v[j], v[j + w]);
  }
  return v[0];
}

VECTOR_INLINE float TreeSum(const Vec (&acc)[kAccs]) {
  return TreeFold(acc, [](Vec a, Vec b) { return Isa::Add(a, b); }, [](float a, float b) { return a + b; });
}

// Lane numbers 0, 1, ..., kLanes - 1 (for masking a padded tail).
Vec LaneIndex() {
  alignas(64) float idx[kLanes];
  for (int l = 0; l < kLanes; ++l) idx[l] = static_cast<float>(l);
  return Isa::Load(idx);
}

// Calls f(vector, i, accumulator index, valid lanes) for the elements of a
// row, kLanes at a time; the last vector is zero-padded (valid < kLanes). Whole
// rounds of 64 elements pass the index as a constant (std::integral_constant),
// so accumulator arrays indexed by it stay in registers.
template <Storage S, typename F>
VECTOR_INLINE void ForRowVectors(const void* x, size_t n, const F& f) {
  size_t i = 0;
  for (; i + kRowLanes <= n; i += kRowLanes) {
    [&]<size_t... A>(std::index_sequence<A...>) {
      (f(LoadAs<S>(x, i + A * kLanes), i + A * kLanes, std::integral_constant<size_t, A>{}, size_t{kLanes}), ...);
    }
    (std::make_index_sequence<kAccs>{});
  }
  for (; i + kLanes <= n; i += kLanes) f(LoadAs<S>(x, i), i, (i / kLanes) % kAccs, size_t{kLanes});
  if constexpr (kLanes > 1) {
    if (i < n) f(LoadTail<S>(x, i, n - i), i, (i / kLanes) % kAccs, n - i);
  }
}

// ---- reductions ------------------------------------------------------------------

// max/min that keep the accumulator on ties (and a NaN flag carries NaN).
Vec MaxKeep(Vec acc, Vec v) { return Isa::Max(v, acc); }  // v > acc ? v : acc
Vec MinKeep(Vec acc, Vec v) { return Isa::Min(v, acc); }  // v < acc ? v : acc

template <Storage S>
float ReduceRowAs(ReduceKind kind, const void* x, size_t n) {
  const float init = kind == ReduceKind::kSum ? 0.0f : kind == ReduceKind::kMax ? -INFINITY : INFINITY;
  Vec acc[kAccs];
  for (Vec& a : acc) a = Isa::Set(init);
  VMask nan = Isa::Lt(Isa::Zero(), Isa::Zero());  // all false
  ForRowVectors<S>(x, n, [&](Vec v, size_t, auto a, size_t valid) {
    if (valid < kLanes && kind != ReduceKind::kSum) {
      v = Isa::Select(Isa::Lt(LaneIndex(), Isa::Set(static_cast<float>(valid))), v, Isa::Set(init));
    }
    switch (kind) {
      case ReduceKind::kSum: acc[a] = Isa::Add(acc[a], v); break;
      case ReduceKind::kMax:
        acc[a] = MaxKeep(acc[a], v);
        nan = Isa::Or(nan, Isa::IsNan(v));
        break;
      case ReduceKind::kMin:
        acc[a] = MinKeep(acc[a], v);
        nan = Isa::Or(nan, Isa::IsNan(v));
        break;
    }
  });
  if (Isa::Any(nan)) return NAN;
  switch (kind) {
    case ReduceKind::kSum: return TreeSum(acc);
    // Isa::Max(b, a) is b > a ? b : a, as the float step.
    case ReduceKind::kMax:
      return TreeFold(acc, [](Vec a, Vec b) { return Isa::Max(b, a); }, [](float a, float b) { return b > a ? b : a; });
    case ReduceKind::kMin:
      return TreeFold(acc, [](Vec a, Vec b) { return Isa::Min(b, a); }, [](float a, float b) { return b < a ? b : a; });
  }
  return 0;
}

float ReduceKernel(ReduceKind kind, VecSrc x, size_t n) {
  if (x.storage == Storage::kF16) return ReduceRowAs<Storage::kF16>(kind, x.data, n);
  return ReduceRowAs<Storage::kF32>(kind, x.data, n);
}

// acc[j] = op(acc[j], x[j]): one more row of a reduction over an outer axis;
// every acc element sees its rows in order, whatever the vector width.
void ReduceIntoKernel(ReduceKind kind, VecSrc x, float* acc, size_t n) {
  WithReader(x, [&](const auto& rx) {
    return Drive<Storage::kF32>(acc, n, false, [&](size_t i, size_t c) {
      const Vec a = c == kLanes ? Isa::Load(acc + i) : LoadTail<Storage::kF32>(acc, i, c);
      const Vec v = rx.Get(i, c);
      switch (kind) {
        case ReduceKind::kSum: return Isa::Add(a, v);
        // (v > a || v is NaN) ? v : a, so a NaN sticks.
        case ReduceKind::kMax: return Isa::Select(Isa::Or(Isa::Gt(v, a), Isa::IsNan(v)), v, a);
        case ReduceKind::kMin: return Isa::Select(Isa::Or(Isa::Lt(v, a), Isa::IsNan(v)), v, a);
      }
      return a;
    });
  });
}

// ---- Welford statistics ------------------------------------------------------------

// Chan et al.'s pairwise combination of 64 partial (count, mean, M2), in
// double, in the fixed tree order; the result lands in lane 0. Equal counts
// (every pair of a row that is a multiple of 64): nb / total is exactly 1/2
// and na nb / total exactly na / 2: the same bits, which kEqualCounts (and the
// scalar steps) use to skip the divisions.
template <bool kEqualCounts>
VECTOR_INLINE void ChanTree(double (&cnt)[kRowLanes], double (&mu)[kRowLanes], double (&ss)[kRowLanes]) {
  using D = typename Isa::D;
  constexpr size_t kDLanes = kLanes / kParts;
  for (size_t w = kRowLanes / 2; w >= 1; w /= 2) {
    size_t j = 0;
    for (; kDLanes > 1 && j + kDLanes <= w; j += kDLanes) {  // the same steps, kDLanes pairs at a time
      const DVec na = D::Load(cnt + j), nb = D::Load(cnt + j + w), total = D::Add(na, nb);
      const DVec ma = D::Load(mu + j), sa = D::Load(ss + j);
      const DVec delta = D::Sub(D::Load(mu + j + w), ma);
      DVec f = D::Set(0.5), g = D::Mul(na, D::Set(0.5));
      if constexpr (!kEqualCounts) {
        const typename D::Mask eq = D::Eq(na, nb);
        f = D::Select(eq, f, D::Div(nb, total));
        g = D::Select(eq, g, D::Div(D::Mul(na, nb), total));
      }
      const DVec next_mu = D::Add(ma, D::Mul(delta, f));
      const DVec next_ss = D::Add(sa, D::Add(D::Load(ss + j + w), D::Mul(D::Mul(delta, delta), g)));
      if constexpr (kEqualCounts) {
        D::Store(mu + j, next_mu);
        D::Store(ss + j, next_ss);
        D::Store(cnt + j, total);
      } else {
        const typename D::Mask empty = D::Eq(nb, D::Set(0.0));
        D::Store(mu + j, D::Select(empty, ma, next_mu));
        D::Store(ss + j, D::Select(empty, sa, next_ss));
        D::Store(cnt + j, D::Select(empty, na, total));
      }
    }
    for (; j < w; ++j) {
      const double na = cnt[j], nb = cnt[j + w], total = na + nb;
      if (nb == 0) continue;
      const double delta = mu[j + w] - mu[j];
      const bool eq = kEqualCounts || na == nb;
      const double f = eq ? 0.5 : nb / total, g = eq ? na * 0.5 : na * nb / total;
      mu[j] = mu[j] + delta * f;
      ss[j] = ss[j] + (ss[j + w] + delta * delta * g);
      cnt[j] = total;
    }
  }
}

// Per partial lane: count, mean and M2 updated in element order; lanes a
// padded tail does not reach keep their state. 1/k is rounded once per round
// (the same for every lane), so no division per element.
template <Storage S>
Moments MomentsAs(const void* x, size_t n) {
  Vec mean[kAccs], m2[kAccs];
  for (size_t a = 0; a < kAccs; ++a) mean[a] = m2[a] = Isa::Zero();
  Vec rk = Isa::Set(1.0f);
  size_t round = 0;
  ForRowVectors<S>(x, n, [&](Vec v, size_t, auto a, size_t valid) {
    if (a == 0) rk = Isa::Set(1.0f / static_cast<float>(++round));
    const Vec delta = Isa::Sub(v, mean[a]);
    Vec next_mean = Isa::Fma(delta, rk, mean[a]);
    Vec next_m2 = Isa::Fma(delta, Isa::Sub(v, next_mean), m2[a]);
    if (valid < kLanes) {
      const VMask live = Isa::Lt(LaneIndex(), Isa::Set(static_cast<float>(valid)));
      next_mean = Isa::Select(live, next_mean, mean[a]);
      next_m2 = Isa::Select(live, next_m2, m2[a]);
    }
    mean[a] = next_mean;
    m2[a] = next_m2;
  });
  alignas(64) float means[kRowLanes], m2s[kRowLanes];
  for (size_t a = 0; a < kAccs; ++a) Isa::Store(means + a * kLanes, mean[a]), Isa::Store(m2s + a * kLanes, m2[a]);
  alignas(64) double cnt[kRowLanes], mu[kRowLanes], ss[kRowLanes];
  for (size_t j = 0; j < kRowLanes; ++j) {
    cnt[j] = static_cast<double>(j < n ? (n - j - 1) / kRowLanes + 1 : 0);
    mu[j] = means[j];
    ss[j] = m2s[j];
  }
  if (n > 0 && n % kRowLanes == 0) {
    ChanTree<true>(cnt, mu, ss);
  } else {
    ChanTree<false>(cnt, mu, ss);
  }
  return {mu[0], ss[0]};
}

Moments MomentsKernel(VecSrc x, size_t n) {
  if (x.storage == Storage::kF16) return MomentsAs<Storage::kF16>(x.data, n);
  return MomentsAs<Storage::kF32>(x.data, n);
}

// y = (x - mean) inv_std scale + bias; scale/bias contiguous or broadcast
// (bias.data null: none).
uint64_t NormalizeKernel(VecSrc x, VecDst y, size_t n, float mean, float inv_std, VecSrc scale, VecSrc bias, bool sat) {
  const Vec m = Isa::Set(mean), inv = Isa::Set(inv_std);
  if (bias.data == nullptr) {
    return Map2(x, scale, y, n, sat, [&](Vec v, Vec g) { return Isa::Mul(Isa::Mul(Isa::Sub(v, m), inv), g); });
  }
  return WithOutput(y, [&](auto out) {
    return WithReader(x, [&](const auto& rx) {
      return WithReader(scale, [&](const auto& rg) {
        return WithReader(bias, [&](const auto& rb) {
          return Drive<decltype(out)::value>(y.data, n, sat, [&](size_t i, size_t c) {
            return Isa::Fma(Isa::Mul(Isa::Sub(rx.Get(i, c), m), inv), rg.Get(i, c), rb.Get(i, c));
          });
        });
      });
    });
  });
}

uint64_t AffineKernel(VecSrc x, VecDst y, size_t n, float a, float b, bool sat) {
  const Vec va = Isa::Set(a), vb = Isa::Set(b);
  return Map1(x, y, n, sat, [&](Vec v) { return Isa::Fma(v, va, vb); });
}

// ---- softmax ---------------------------------------------------------------------------

// Online over blocks of 256 elements: each block's max updates the running max
// M (rescaling the partial sums when it grows), its e^(x - M) are summed and
// kept; then one write pass scales each block by e^(M_block - M_final) / S.
// One exponential per element, x read once from memory (kSoftmaxBlock).
template <Storage S>
float BlockMax(const void* x, size_t i, size_t len, VMask& nan) {
  Vec m = Isa::Set(-INFINITY);
  ForRowVectors<S>(static_cast<const ElemOf<S>*>(x) + i, len, [&](Vec v, size_t, size_t, size_t valid) {
    if (valid < kLanes)
      v = Isa::Select(Isa::Lt(LaneIndex(), Isa::Set(static_cast<float>(valid))), v, Isa::Set(-INFINITY));
    m = Isa::Max(v, m);
    nan = Isa::Or(nan, Isa::IsNan(v));
  });
  // The order of a max only decides the sign of a zero, which softmax cannot see.
  alignas(64) float lanes[kLanes];
  Isa::Store(lanes, m);
  float r = lanes[0];
  for (int l = 1; l < kLanes; ++l) r = lanes[l] > r ? lanes[l] : r;
  return r;
}

// e^(x - max) of an element: an fp16 output needs ExpForHalf's accuracy only.
template <Storage O>
VECTOR_INLINE Vec SoftmaxExp(Vec d) {
  if constexpr (O == Storage::kF16) {
    return ExpForHalf(d);
  } else {
    return Exp(d);
  }
}

template <Storage S, Storage O>
uint64_t SoftmaxRowAs(const void* x, void* y, size_t n, bool log, bool sat, float* scratch) {
  if (n == 0) return 0;
  const size_t blocks = (n + kSoftmaxBlock - 1) / kSoftmaxBlock;
  float* e_row = O == Storage::kF32 ? static_cast<float*>(y) : scratch;  // e^(x - M_b), fp32
  float* block_max = scratch + n;
  Vec acc[kAccs];
  for (Vec& a : acc) a = Isa::Zero();
  VMask nan = Isa::Lt(Isa::Zero(), Isa::Zero());
  float running = -INFINITY;
  for (size_t b = 0; b < blocks; ++b) {
    const size_t i0 = b * kSoftmaxBlock, len = std::min(kSoftmaxBlock, n - i0);
    const float m = BlockMax<S>(x, i0, len, nan);
    const float next = m > running ? m : running;
    if (next != running && running != -INFINITY) {
      const Vec f = Exp(Isa::Set(running - next));
      for (Vec& a : acc) a = Isa::Mul(a, f);
    }
    running = next;
    block_max[b] = running;
    if (running == -INFINITY) {  // everything so far is -inf: e = 0
      if (!log) std::memset(e_row + i0, 0, len * sizeof(float));
      continue;
    }
    const Vec mv = Isa::Set(running);
    // Block-relative accumulator slots: blocks are multiples of 64, so i mod 64 holds.
    ForRowVectors<S>(static_cast<const ElemOf<S>*>(x) + i0, len, [&](Vec v, size_t i, auto a, size_t count) {
      const Vec e = SoftmaxExp<O>(Isa::Sub(v, mv));
      if (count == kLanes) {
        acc[a] = Isa::Add(acc[a], e);
        if (!log) Isa::Store(e_row + i0 + i, e);
      } else {
        const Vec live = Isa::Select(Isa::Lt(LaneIndex(), Isa::Set(static_cast<float>(count))), e, Isa::Zero());
        acc[a] = Isa::Add(acc[a], live);
        if (!log) StoreTail<Storage::kF32>(e_row + i0, i, count, e, false);
      }
    });
  }
  const float total = TreeSum(acc);
  const float top = Isa::Any(nan) ? NAN : running;
  if (log) {
    // y = (x - M) - log(S)
    const Vec mv = Isa::Set(top), lse = Log(Isa::Set(total));
    return Map1(VecSrc{x, S, false}, VecDst{y, O}, n, sat, [&](Vec v) { return Isa::Sub(Isa::Sub(v, mv), lse); });
  }
  // Each block's e^(M_b - M) / S, from the same exponential as the elements,
  // kLanes blocks at a time (in place of the maxima).
  const Vec topv = Isa::Set(top), totalv = Isa::Set(total);
  for (size_t b = 0; b < blocks; b += kLanes) {
    const size_t c = std::min<size_t>(kLanes, blocks - b);
    const Vec m = c == kLanes ? Isa::Load(block_max + b) : LoadTail<Storage::kF32>(block_max, b, c);
    const Vec f = Isa::Div(Exp(Isa::Sub(m, topv)), totalv);
    if (c == kLanes) {
      Isa::Store(block_max + b, f);
    } else {
      StoreTail<Storage::kF32>(block_max, b, c, f, false);
    }
  }
  uint64_t over = 0;
  for (size_t b = 0; b < blocks; ++b) {
    const size_t i0 = b * kSoftmaxBlock, len = std::min(kSoftmaxBlock, n - i0);
    const Vec fv = Isa::Set(block_max[b]);
    over += Drive<O>(static_cast<ElemOf<O>*>(y) + i0, len, sat, [&](size_t i, size_t c) {
      const Vec e = c == kLanes ? Isa::Load(e_row + i0 + i) : LoadTail<Storage::kF32>(e_row + i0, i, c);
      return Isa::Mul(e, fv);
    });
  }
  return over;
}

uint64_t SoftmaxRowKernel(VecSrc x, VecDst y, size_t n, bool log, bool sat, float* scratch) {
  const bool in16 = x.storage == Storage::kF16, out16 = y.storage == Storage::kF16;
  if (in16 && out16) return SoftmaxRowAs<Storage::kF16, Storage::kF16>(x.data, y.data, n, log, sat, scratch);
  if (in16) return SoftmaxRowAs<Storage::kF16, Storage::kF32>(x.data, y.data, n, log, sat, scratch);
  if (out16) return SoftmaxRowAs<Storage::kF32, Storage::kF16>(x.data, y.data, n, log, sat, scratch);
  return SoftmaxRowAs<Storage::kF32, Storage::kF32>(x.data, y.data, n, log, sat, scratch);
}

// `width` softmaxes of `len` elements side by side (element c of softmax j at
// c * stride + j): each lane is one softmax, its max, exponentials and sum run
// in c order, so the vector width does not matter. scratch: len * width floats
// (unused for an fp32 y, which holds the exponentials).
template <Storage S, Storage O>
uint64_t SoftmaxColumnsAs(const void* x, void* y, size_t len, size_t stride, size_t width, bool log, bool sat,
                          float* scratch) {
  const auto* xs = static_cast<const ElemOf<S>*>(x);
  auto* ys = static_cast<ElemOf<O>*>(y);
  uint64_t over = 0;
  for (size_t j = 0; j < width; j += kLanes) {
    const size_t c = std::min<size_t>(kLanes, width - j);
    const auto load = [&](size_t row) {
      return c == kLanes ? LoadAs<S>(xs + row * stride, j) : LoadTail<S>(xs + row * stride, j, c);
    };
    Vec m = Isa::Set(-INFINITY);
    VMask nan = Isa::Lt(Isa::Zero(), Isa::Zero());
    for (size_t r = 0; r < len; ++r) {
      const Vec v = load(r);
      m = Isa::Max(v, m);
      nan = Isa::Or(nan, Isa::IsNan(v));
    }
    m = Isa::Select(nan, Isa::Set(NAN), m);
    Vec sum = Isa::Zero();
    for (size_t r = 0; r < len; ++r) {
      const Vec d = Isa::Sub(load(r), m);
      const Vec e = SoftmaxExp<O>(d);
      sum = Isa::Add(sum, e);
      if (!log) {
        float* dst = O == Storage::kF32 ? reinterpret_cast<float*>(ys) + r * stride + j : scratch + r * width + j;
        if (c == kLanes)
          Isa::Store(dst, e);
        else
          StoreTail<Storage::kF32>(dst, 0, c, e, false);
      }
    }
    const Vec scale = log ? Log(sum) : Isa::Div(Isa::Set(1.0f), sum);
    for (size_t r = 0; r < len; ++r) {
      Vec v;
      if (log) {
        v = Isa::Sub(Isa::Sub(load(r), m), scale);
      } else {
        const float* src = O == Storage::kF32 ? reinterpret_cast<float*>(ys) + r * stride + j : scratch + r * width + j;
        v = Isa::Mul(c == kLanes ? Isa::Load(src) : LoadTail<Storage::kF32>(src, 0, c), scale);
      }
      over += std::popcount(c == kLanes ? StoreAs<O>(ys + r * stride, j, v, sat)
                                        : StoreTail<O>(ys + r * stride, j, c, v, sat));
    }
  }
  return over;
}

uint64_t SoftmaxColumnsKernel(VecSrc x, VecDst y, size_t len, size_t stride, size_t width, bool log, bool sat,
                              float* scratch) {
  const bool in16 = x.storage == Storage::kF16, out16 = y.storage == Storage::kF16;
  if (in16 && out16)
    return SoftmaxColumnsAs<Storage::kF16, Storage::kF16>(x.data, y.data, len, stride, width, log, sat, scratch);
  if (in16)
    return SoftmaxColumnsAs<Storage::kF16, Storage::kF32>(x.data, y.data, len, stride, width, log, sat, scratch);
  if (out16)
    return SoftmaxColumnsAs<Storage::kF32, Storage::kF16>(x.data, y.data, len, stride, width, log, sat, scratch);
  return SoftmaxColumnsAs<Storage::kF32, Storage::kF32>(x.data, y.data, len, stride, width, log, sat, scratch);
}
