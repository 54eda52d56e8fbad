// The stencil kernel (kernels/stencil.h) over `Isa`, included by
// vector_set_body.h: blocks of up to kStencilVectors output vectors, one
// broadcast weight (or max / add) per tap and vector, taps in (channel, ky, kx)
// order for every output element on every path.

// Up to 8 output vectors (of one row or of several: small planes have few per
// row) accumulate side by side, enough independent chains to hide the FMA
// latency. Each output only ever sees its own taps in their order, so how
// outputs are grouped into blocks does not change a bit.
constexpr int kStencilVectors = 8;

template <int NV>
void StencilBlock(StencilOp op, const StencilShape& s, const float* padded, size_t channels, const float* weights,
                  float init, const int64_t* base, Vec* acc) {
  const int64_t phase = s.PhaseLen(), plane = s.PlaneFloats(), row = s.sw * phase;
  for (int v = 0; v < NV; ++v) acc[v] = Isa::Set(init);
  for (size_t ch = 0; ch < channels; ++ch) {
    for (int64_t ky = 0; ky < s.kh; ++ky) {
      for (int64_t kx = 0; kx < s.kw; ++kx) {
        const int64_t off = kx * s.dw;
        const float* src =
            padded + static_cast<int64_t>(ch) * plane + ky * s.dh * row + (off % s.sw) * phase + off / s.sw;
        if (op == StencilOp::kWeighted) {
          const Vec wv = Isa::Set(weights[(static_cast<int64_t>(ch) * s.kh + ky) * s.kw + kx]);
          for (int v = 0; v < NV; ++v) acc[v] = Isa::Fma(wv, Isa::Load(src + base[v]), acc[v]);
        } else if (op == StencilOp::kMax) {
          for (int v = 0; v < NV; ++v) {
            const Vec x = Isa::Load(src + base[v]);
            acc[v] = Isa::Select(Isa::Or(Isa::Gt(x, acc[v]), Isa::IsNan(x)), x, acc[v]);
          }
        } else {
          for (int v = 0; v < NV; ++v) acc[v] = Isa::Add(acc[v], Isa::Load(src + base[v]));
        }
      }
    }
  }
}

using StencilBlockFn = void (*)(StencilOp, const StencilShape&, const float*, size_t, const float*, float,
                                const int64_t*, Vec*);
constexpr StencilBlockFn kStencilBlocks[kStencilVectors] = {StencilBlock<1>, StencilBlock<2>, StencilBlock<3>,
                                                            StencilBlock<4>, StencilBlock<5>, StencilBlock<6>,
                                                            StencilBlock<7>, StencilBlock<8>};

template <Storage O>
uint64_t StencilAs(StencilOp op, const StencilShape& s, const float* padded, size_t channels, const float* weights,
                   float init, const float* divisor, void* out, bool sat) {
  const int64_t per_row = (s.ow + kLanes - 1) / kLanes, total = s.oh * per_row;
  const int64_t row = s.sw * s.PhaseLen();
  uint64_t over = 0;
  for (int64_t first = 0; first < total; first += kStencilVectors) {
    const int nv = static_cast<int>(std::min<int64_t>(kStencilVectors, total - first));
    int64_t base[kStencilVectors], o[kStencilVectors];
    for (int v = 0; v < nv; ++v) {  // output vector first + v: row oy, columns from ox0
      const int64_t oy = (first + v) / per_row, ox0 = (first + v) % per_row * kLanes;
      base[v] = oy * s.sh * row + ox0;
      o[v] = oy * s.ow + ox0;
    }
    Vec acc[kStencilVectors];
    kStencilBlocks[nv - 1](op, s, padded, channels, weights, init, base, acc);
    for (int v = 0; v < nv; ++v) {
      const size_t count = static_cast<size_t>(std::min<int64_t>(kLanes, s.ow - o[v] % s.ow));
      Vec r = acc[v];
      if (divisor != nullptr) {
        r = Isa::Div(r, count == kLanes ? Isa::Load(divisor + o[v]) : LoadTail<Storage::kF32>(divisor, o[v], count));
      }
      over += std::popcount(count == kLanes ? StoreAs<O>(out, o[v], r, sat) : StoreTail<O>(out, o[v], count, r, sat));
    }
  }
  return over;
}

uint64_t StencilKernel(StencilOp op, const StencilShape& s, const float* padded, size_t channels, const float* weights,
                       float init, const float* divisor, VecDst out, bool sat) {
  if (out.storage == Storage::kF16)
    return StencilAs<Storage::kF16>(op, s, padded, channels, weights, init, divisor, out.data, sat);
  return StencilAs<Storage::kF32>(op, s, padded, channels, weights, init, divisor, out.data, sat);
}
