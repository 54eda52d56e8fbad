// The stencil kernels (kernels/stencil.h) over `Isa`, included by
// vector_set_body.h: PadPlane's widening and phase split (pure data movement),
// and the stencil itself: row blocks for the common windows (each input row
// loaded once for the output rows that read it), otherwise blocks of up to
// kStencilVectors output vectors with one broadcast weight (or max / add) per
// tap; taps in (channel, ky, kx) order for every output element on every path.

// ---- PadPlane: one input plane into its stride phases --------------------------------------------

template <Storage S>
VECTOR_INLINE float WidenOne(const ElemOf<S>* p) {
  if constexpr (S == Storage::kF32) {
    return *p;
  } else {
    return HalfToFloat(*p);
  }
}

// Padded row elements [j0, j1) of column phase b: input column j sw + b - pl,
// `pad` outside the row.
template <Storage S>
void PadRowScalar(const ElemOf<S>* row, const StencilShape& s, int64_t b, float pad, int64_t j0, int64_t j1,
                  float* dst) {
  for (int64_t j = j0; j < j1; ++j) {
    const int64_t ix = j * s.sw + b - s.pl;
    dst[j] = ix >= 0 && ix < s.w ? WidenOne<S>(row + ix) : pad;
  }
}

// The first n <= kLanes elements at p (the other lanes 0), read no further.
template <Storage S>
VECTOR_INLINE Vec LoadFirstAs(const ElemOf<S>* p, size_t n) {
  if constexpr (S == Storage::kF32) {
    return n == kLanes ? Isa::Load(p) : Isa::LoadFirst(p, n);
  } else {
    return LoadTail<S>(p, 0, n);
  }
}

// One padded row (row: the input row, or null for a row of padding) into the
// column phases that some tap reads (dst: phase 0's row; phases phase_floats
// apart). The last vector of a row may write up to kLanes - 1 floats past it:
// into the next row, written after it, or the phase's slack, filled last.
template <Storage S>
VECTOR_INLINE void PadRow(const ElemOf<S>* row, const StencilPlan& plan, float pad, float* dst) {
  const StencilShape& s = plan.shape;
  const int64_t p = plan.phase_cols, phase = plan.phase_floats, lo = plan.pad_lo, hi = plan.pad_hi;
  const uint8_t* cols_used = plan.cols_used.data();
  if (row == nullptr) {
    for (int64_t b = 0; b < s.sw; ++b) {
      if (cols_used[b]) std::fill(dst + b * phase, dst + b * phase + p, pad);
    }
    return;
  }
  if (s.sw == 1) {  // pad, the row widened, pad
    std::fill(dst, dst + lo, pad);
    int64_t j = lo;
    for (; j + kLanes <= hi; j += kLanes) Isa::Store(dst + j, LoadAs<S>(row, static_cast<size_t>(j - s.pl)));
    if (j < hi) Isa::Store(dst + j, LoadFirstAs<S>(row + j - s.pl, static_cast<size_t>(hi - j)));
    std::fill(dst + hi, dst + p, pad);
    return;
  }
  if (s.sw == 2 && cols_used[1]) {  // both phases in one pass over the row, vector pairs split into evens and odds
    float* odd = dst + phase;
    PadRowScalar<S>(row, s, 0, pad, 0, lo, dst);
    PadRowScalar<S>(row, s, 1, pad, 0, lo, odd);
    int64_t j = lo;
    Vec even, odd_v;
    for (; j + kLanes <= hi; j += kLanes) {
      const size_t at = static_cast<size_t>(2 * j - s.pl);
      Isa::Deinterleave(LoadAs<S>(row, at), LoadAs<S>(row, at + kLanes), even, odd_v);
      Isa::Store(dst + j, even);
      Isa::Store(odd + j, odd_v);
    }
    if (j < hi) {
      const ElemOf<S>* at = row + 2 * j - s.pl;
      const size_t n = static_cast<size_t>(2 * (hi - j));
      const Vec first = LoadFirstAs<S>(at, std::min<size_t>(n, kLanes));
      const Vec second = n > kLanes ? LoadFirstAs<S>(at + kLanes, n - kLanes) : Isa::Zero();
      Isa::Deinterleave(first, second, even, odd_v);
      Isa::Store(dst + j, even);
      Isa::Store(odd + j, odd_v);
    }
    PadRowScalar<S>(row, s, 0, pad, hi, p, dst);
    PadRowScalar<S>(row, s, 1, pad, hi, p, odd);
    return;
  }
  for (int64_t b = 0; b < s.sw; ++b) {
    if (cols_used[b]) PadRowScalar<S>(row, s, b, pad, 0, p, dst + b * phase);
  }
}

template <Storage S>
void PadPlaneAs(const StencilPlan& plan, const void* in, float pad, float* out) {
  const StencilShape& s = plan.shape;
  const ElemOf<S>* x = static_cast<const ElemOf<S>*>(in);
  const int64_t rows = plan.phase_rows, p = plan.phase_cols, phase = plan.phase_floats;
  for (int64_t a = 0; a < s.sh; ++a) {
    if (!plan.rows_used[a]) continue;
    float* first = out + a * s.sw * phase;
    for (int64_t i = 0, iy = a - s.pt; i < rows; ++i, iy += s.sh) {
      PadRow<S>(iy >= 0 && iy < s.h ? x + iy * s.w : nullptr, plan, pad, first + i * p);
    }
    for (int64_t b = 0; b < s.sw; ++b) {
      if (plan.cols_used[b]) std::fill(first + b * phase + rows * p, first + (b + 1) * phase, pad);
    }
  }
}

void PadPlaneKernel(const StencilPlan& plan, const void* in, bool fp16, float pad, float* padded) {
  if (fp16) {
    PadPlaneAs<Storage::kF16>(plan, in, pad, padded);
  } else {
    PadPlaneAs<Storage::kF32>(plan, in, pad, padded);
  }
}

// ---- the stencil ---------------------------------------------------------------------------------

// Up to 8 output vectors accumulate side by side, enough independent chains
// to hide the FMA latency. Each output only ever sees its own taps in their
// order, so how outputs are grouped into vectors and blocks (along a row, or
// several rows in one vector) does not change a bit.
constexpr int kStencilVectors = 8;

// acc[v] = the stencil of the outputs whose first tap is at padded + base[v]
// (tap t at off[t] from there).
template <StencilOp kOp, int NV>
void StencilBlock(const float* padded, const int64_t* off, const float* weights, size_t taps, float init,
                  const int64_t* base, Vec* acc) {
  for (int v = 0; v < NV; ++v) acc[v] = Isa::Set(init);
  for (size_t t = 0; t < taps; ++t) {
    const float* src = padded + off[t];
    if constexpr (kOp == StencilOp::kWeighted) {
      const Vec wv = Isa::Set(weights[t]);
      for (int v = 0; v < NV; ++v) acc[v] = Isa::Fma(wv, Isa::Load(src + base[v]), acc[v]);
    } else if constexpr (kOp == StencilOp::kMax) {
      for (int v = 0; v < NV; ++v) {
        const Vec x = Isa::Load(src + base[v]);
        acc[v] = Isa::Select(Isa::Or(Isa::Gt(x, acc[v]), Isa::IsNan(x)), x, acc[v]);
      }
    } else {
      for (int v = 0; v < NV; ++v) acc[v] = Isa::Add(acc[v], Isa::Load(src + base[v]));
    }
  }
}

template <StencilOp kOp>
void StencilBlockOf(int nv, const float* padded, const int64_t* off, const float* weights, size_t taps, float init,
                    const int64_t* base, Vec* acc) {
  switch (nv) {
    case 1: return StencilBlock<kOp, 1>(padded, off, weights, taps, init, base, acc);
    case 2: return StencilBlock<kOp, 2>(padded, off, weights, taps, init, base, acc);
    case 3: return StencilBlock<kOp, 3>(padded, off, weights, taps, init, base, acc);
    case 4: return StencilBlock<kOp, 4>(padded, off, weights, taps, init, base, acc);
    case 5: return StencilBlock<kOp, 5>(padded, off, weights, taps, init, base, acc);
    case 6: return StencilBlock<kOp, 6>(padded, off, weights, taps, init, base, acc);
    case 7: return StencilBlock<kOp, 7>(padded, off, weights, taps, init, base, acc);
    default: return StencilBlock<kOp, 8>(padded, off, weights, taps, init, base, acc);
  }
}

// ---- row blocks: a column of output vectors over several rows at once ----------------------------
// With dh = 1 a (row phase's) input row feeds up to kh rows of outputs: loaded
// once, it is multiplied into each of them, which halves the loads of a 3x3
// stencil. The loop runs over the input rows; an output still sees its taps in
// (channel, ky, kx) order (its ky grows with the input row, kx inside it), so
// the bits are the tap loop's.

// f(0), ..., f(N - 1) with compile-time arguments, inlined: the row block's
// loops must unroll into straight code for its accumulators to stay in registers.
#define VECTOR_INLINE_LAMBDA __attribute__((always_inline))
template <int N, typename F>
VECTOR_INLINE void StaticFor(F&& f) {
  [&]<int... I>(std::integer_sequence<int, I...>) VECTOR_INLINE_LAMBDA {
    (f(std::integral_constant<int, I>{}), ...);
  }(std::make_integer_sequence<int, N>{});
}

template <StencilOp kOp>
VECTOR_INLINE Vec TapStep(Vec acc, Vec x, Vec w) {
  if constexpr (kOp == StencilOp::kWeighted) {
    return Isa::Fma(w, x, acc);
  } else if constexpr (kOp == StencilOp::kMax) {
    return Isa::Select(Isa::Or(Isa::Gt(x, acc), Isa::IsNan(x)), x, acc);
  } else {
    return Isa::Add(acc, x);
  }
}

// acc[r][j] = the stencil of output row oy0 + r, columns x0 + j kLanes on.
// Not inlined: one copy serves both output storages (the build time of the
// per-ISA files), and the block's 8 stores cost nothing beside its FMAs.
template <StencilOp kOp, int KH, int KW, int SH, int R, int V>
__attribute__((noinline)) void StencilRowBlock(const StencilPlan& plan, const float* padded, const float* weights,
                                              float init, int64_t oy0, int64_t x0, Vec (&acc)[R][V]) {
  const int64_t p = plan.phase_cols, row_phase = plan.shape.sw * plan.phase_floats, plane = plan.plane_floats;
  const int64_t* col = plan.columns.data();
  const size_t channels = plan.channels;
  for (int r = 0; r < R; ++r) {
    for (int j = 0; j < V; ++j) acc[r][j] = Isa::Set(init);
  }
  for (size_t c = 0; c < channels; ++c) {
    Vec w[KH][KW];
    StaticFor<KH>([&](auto ky) VECTOR_INLINE_LAMBDA {
      StaticFor<KW>([&](auto kx) VECTOR_INLINE_LAMBDA {
        if constexpr (kOp == StencilOp::kWeighted) {
          w[ky][kx] = Isa::Set(weights[(c * KH + ky) * KW + kx]);
        } else {
          w[ky][kx] = Isa::Zero();
        }
      });
    });
    const float* in = padded + static_cast<int64_t>(c) * plane + oy0 * p + x0;
    StaticFor<(R - 1) * SH + KH>([&](auto rr) VECTOR_INLINE_LAMBDA {  // padded row oy0 * SH + rr
      constexpr int r = decltype(rr)::value;
      const float* row = in + (r % SH) * row_phase + (r / SH) * p;
      StaticFor<KW>([&](auto kx) VECTOR_INLINE_LAMBDA {
        StaticFor<V>([&](auto j) VECTOR_INLINE_LAMBDA {
          const Vec x = Isa::Load(row + col[kx] + j * kLanes);
          StaticFor<KH>([&](auto ky) VECTOR_INLINE_LAMBDA {
            constexpr int d = r - decltype(ky)::value;  // output row d / SH reads this row as its tap row ky
            if constexpr (d >= 0 && d % SH == 0 && d / SH < R) {
              acc[d / SH][j] = TapStep<kOp>(acc[d / SH][j], x, w[ky][kx]);
            }
          });
        });
      });
    });
  }
}

// One output vector's store: `count` results from output element o, divided
// by the divisor's first when there is one.
template <Storage O>
VECTOR_INLINE uint32_t StencilStore(void* out, int64_t o, size_t count, Vec r, const float* divisor, bool sat) {
  if (divisor != nullptr) {
    r = Isa::Div(r, count == kLanes ? Isa::Load(divisor + o) : Isa::LoadFirst(divisor + o, count));
  }
  if (count == kLanes) return StoreAs<O>(out, o, r, sat);
  if constexpr (O == Storage::kF32) {  // a masked store (fp16 has none without AVX-512BW: staged)
    Isa::StoreFirst(static_cast<float*>(out) + o, r, count);
    return Isa::Lanes(Isa::NotLt(Isa::Abs(r), Isa::Set(INFINITY))) & ((1u << count) - 1);
  } else {
    return StoreTail<O>(out, o, count, r, sat);
  }
}

// The stencil along the rows in row blocks (StencilRowBlock) of R rows by V
// vectors (the vectors left over in blocks of R rows by 1), for a KH x KW
// kernel with row stride SH and dh = 1, over the first oh - oh % R rows;
// returns the overflow count and sets *rows_done.
template <Storage O, StencilOp kOp, int KH, int KW, int SH, int R, int V>
uint64_t StencilRowBlocks(const StencilPlan& plan, const float* padded, const float* weights, float init,
                          const float* divisor, void* out, bool sat, int64_t* rows_done) {
  const StencilShape& s = plan.shape;
  const int64_t per_row = (s.ow + kLanes - 1) / kLanes;
  uint64_t over = 0;
  auto store = [&](int64_t oy, int64_t xv, Vec r) {
    const size_t count = static_cast<size_t>(std::min<int64_t>(kLanes, s.ow - xv * kLanes));
    over += std::popcount(StencilStore<O>(out, oy * s.ow + xv * kLanes, count, r, divisor, sat));
  };
  int64_t oy0 = 0;
  for (; oy0 + R <= s.oh; oy0 += R) {
    int64_t xv = 0;
    for (; xv + V <= per_row; xv += V) {
      Vec acc[R][V];
      StencilRowBlock<kOp, KH, KW, SH, R, V>(plan, padded, weights, init, oy0, xv * kLanes, acc);
      for (int r = 0; r < R; ++r) {
        for (int j = 0; j < V; ++j) store(oy0 + r, xv + j, acc[r][j]);
      }
    }
    for (; xv < per_row; ++xv) {
      Vec acc[R][1];
      StencilRowBlock<kOp, KH, KW, SH, R, 1>(plan, padded, weights, init, oy0, xv * kLanes, acc);
      for (int r = 0; r < R; ++r) store(oy0 + r, xv, acc[r][0]);
    }
  }
  *rows_done = oy0;
  return over;
}

using StencilRowsFn = uint64_t (*)(const StencilPlan&, const float*, const float*, float, const float*, void*, bool,
                                   int64_t*);

// Row blocks for one kernel: 8 accumulators, as 4 rows x 2 vectors beside a
// 3x3's weights in AVX-512's 32 registers, else 4 rows x 1 (AVX2's 16), or 8
// rows x 1 when a row is one vector.
template <Storage O, StencilOp kOp, int KH, int KW, int SH>
StencilRowsFn RowBlocksFor(const StencilShape& s) {
  if ((s.ow + kLanes - 1) / kLanes == 1) return StencilRowBlocks<O, kOp, KH, KW, SH, 8, 1>;
  if constexpr (kLanes >= 16 && KH * KW <= 9) {
    return StencilRowBlocks<O, kOp, KH, KW, SH, 4, 2>;
  } else {
    return StencilRowBlocks<O, kOp, KH, KW, SH, 4, 1>;
  }
}

// The row-block kernel for the common windows (MobileNet's and EfficientNet's
// depthwise 3x3 and 5x5, 3x3 pooling), or null (a 2x2 window of stride 2
// shares no input row between output rows).
template <Storage O, StencilOp kOp>
StencilRowsFn RowBlockKernel(const StencilShape& s) {
  if constexpr (kLanes == 1) {  // one lane: no loads to share
    return nullptr;
  } else {
    if (s.dh != 1 || s.sh > 2 || s.kh != s.kw) return nullptr;
    if (s.kh == 3) return s.sh == 1 ? RowBlocksFor<O, kOp, 3, 3, 1>(s) : RowBlocksFor<O, kOp, 3, 3, 2>(s);
    if constexpr (kOp == StencilOp::kWeighted) {
      if (s.kh == 5) return s.sh == 1 ? RowBlocksFor<O, kOp, 5, 5, 1>(s) : RowBlocksFor<O, kOp, 5, 5, 2>(s);
    }
    return nullptr;
  }
}

template <Storage O, StencilOp kOp>
uint64_t StencilAs(const StencilPlan& plan, const float* padded, const float* weights, float init,
                   const float* divisor, void* out, bool sat) {
  const StencilShape& s = plan.shape;
  const int64_t p = plan.phase_cols;
  const int64_t* off = plan.taps.data();
  const size_t taps = plan.taps.size();
  const int64_t per_row = (s.ow + kLanes - 1) / kLanes;
  uint64_t over = 0;
  int64_t base[kStencilVectors];
  Vec acc[kStencilVectors];
  // Rows narrower than a vector waste most lanes one row a vector: then the
  // plane is read as one row of oh * phase_cols outputs (the phase_cols - ow
  // past each row's end are computed and dropped), staged in `res`.
  if (s.oh > 1 && 5 * p < 4 * per_row * kLanes) {
    // Up to the last row's last output: its junk would read past the last phase's slack.
    const int64_t vectors = ((s.oh - 1) * p + s.ow + kLanes - 1) / kLanes;
    thread_local std::vector<float> res;
    res.resize(static_cast<size_t>((vectors + 1) * kLanes));  // a vector of slack: rows are read whole vectors
    for (int64_t first = 0; first < vectors; first += kStencilVectors) {
      const int nv = static_cast<int>(std::min<int64_t>(kStencilVectors, vectors - first));
      for (int v = 0; v < nv; ++v) base[v] = (first + v) * kLanes;
      StencilBlockOf<kOp>(nv, padded, off, weights, taps, init, base, acc);
      for (int v = 0; v < nv; ++v) Isa::Store(res.data() + base[v], acc[v]);
    }
    for (int64_t oy = 0; oy < s.oh; ++oy) {
      for (int64_t ox = 0; ox < s.ow; ox += kLanes) {
        const size_t count = static_cast<size_t>(std::min<int64_t>(kLanes, s.ow - ox));
        over += std::popcount(StencilStore<O>(out, oy * s.ow + ox, count, Isa::Load(res.data() + oy * p + ox), divisor,
                                              sat));
      }
    }
    return over;
  }
  // Along the rows: vector (oy, xv) holds outputs [xv kLanes, xv kLanes + kLanes) of row oy;
  // row blocks where they apply, the rows they leave tap by tap.
  int64_t oy = 0, xv = 0;
  if (const StencilRowsFn rows = RowBlockKernel<O, kOp>(s)) {
    over += rows(plan, padded, weights, init, divisor, out, sat, &oy);
  }
  int64_t o[kStencilVectors];
  size_t count[kStencilVectors];
  const int64_t total = (s.oh - oy) * per_row;
  for (int64_t first = 0; first < total; first += kStencilVectors) {
    const int nv = static_cast<int>(std::min<int64_t>(kStencilVectors, total - first));
    for (int v = 0; v < nv; ++v) {
      base[v] = oy * p + xv * kLanes;
      o[v] = oy * s.ow + xv * kLanes;
      count[v] = static_cast<size_t>(std::min<int64_t>(kLanes, s.ow - xv * kLanes));
      if (++xv == per_row) xv = 0, ++oy;
    }
    StencilBlockOf<kOp>(nv, padded, off, weights, taps, init, base, acc);
    for (int v = 0; v < nv; ++v) over += std::popcount(StencilStore<O>(out, o[v], count[v], acc[v], divisor, sat));
  }
  return over;
}

template <Storage O>
uint64_t StencilOf(StencilOp op, const StencilPlan& plan, const float* padded, const float* weights, float init,
                   const float* divisor, void* out, bool sat) {
  switch (op) {
    case StencilOp::kWeighted:
      return StencilAs<O, StencilOp::kWeighted>(plan, padded, weights, init, divisor, out, sat);
    case StencilOp::kMax: return StencilAs<O, StencilOp::kMax>(plan, padded, weights, init, divisor, out, sat);
    case StencilOp::kSum: return StencilAs<O, StencilOp::kSum>(plan, padded, weights, init, divisor, out, sat);
  }
  return 0;
}

uint64_t StencilKernel(StencilOp op, const StencilPlan& plan, const float* padded, const float* weights, float init,
                       const float* divisor, VecDst out, bool sat) {
  if (out.storage == Storage::kF16) {
    return StencilOf<Storage::kF16>(op, plan, padded, weights, init, divisor, out.data, sat);
  }
  return StencilOf<Storage::kF32>(op, plan, padded, weights, init, divisor, out.data, sat);
}
