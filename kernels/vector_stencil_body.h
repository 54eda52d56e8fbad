// The stencil kernel (kernels/stencil.h) over `Isa`, included by
// vector_set_body.h: each output row in blocks of kStencilVectors vectors, one
// broadcast weight (or max / add) per tap and vector, taps in (channel, ky, kx)
// order for every output element on every path.

constexpr int kStencilVectors = 4;  // independent accumulators per block: hides FMA latency

template <int NV>
void StencilBlock(StencilOp op, const StencilShape& s, const float* padded, size_t channels, const float* weights,
                  float init, int64_t oy, int64_t ox0, Vec (&acc)[kStencilVectors]) {
  const int64_t phase = s.PhaseLen(), plane = s.PlaneFloats();
  for (int v = 0; v < NV; ++v) acc[v] = Isa::Set(init);
  for (size_t ch = 0; ch < channels; ++ch) {
    for (int64_t ky = 0; ky < s.kh; ++ky) {
      const float* row = padded + static_cast<int64_t>(ch) * plane + (oy * s.sh + ky * s.dh) * s.sw * phase;
      for (int64_t kx = 0; kx < s.kw; ++kx) {
        const int64_t off = kx * s.dw;
        const float* src = row + (off % s.sw) * phase + off / s.sw + ox0;
        if (op == StencilOp::kWeighted) {
          const Vec wv = Isa::Set(weights[(static_cast<int64_t>(ch) * s.kh + ky) * s.kw + kx]);
          for (int v = 0; v < NV; ++v) acc[v] = Isa::Fma(wv, Isa::Load(src + v * kLanes), acc[v]);
        } else if (op == StencilOp::kMax) {
          for (int v = 0; v < NV; ++v) {
            const Vec x = Isa::Load(src + v * kLanes);
            acc[v] = Isa::Select(Isa::Or(Isa::Gt(x, acc[v]), Isa::IsNan(x)), x, acc[v]);
          }
        } else {
          for (int v = 0; v < NV; ++v) acc[v] = Isa::Add(acc[v], Isa::Load(src + v * kLanes));
        }
      }
    }
  }
}

template <Storage O>
uint64_t StencilAs(StencilOp op, const StencilShape& s, const float* padded, size_t channels, const float* weights,
                   float init, const float* divisor, void* out, bool sat) {
  uint64_t over = 0;
  for (int64_t oy = 0; oy < s.oh; ++oy) {
    for (int64_t ox0 = 0; ox0 < s.ow; ox0 += kStencilVectors * kLanes) {
      const int64_t left = s.ow - ox0;
      const int nv = static_cast<int>(std::min<int64_t>(kStencilVectors, (left + kLanes - 1) / kLanes));
      Vec acc[kStencilVectors];
      if (nv == kStencilVectors) {
        StencilBlock<kStencilVectors>(op, s, padded, channels, weights, init, oy, ox0, acc);
      } else {
        for (int v = 0; v < nv; ++v) {
          Vec one[kStencilVectors];
          StencilBlock<1>(op, s, padded, channels, weights, init, oy, ox0 + v * kLanes, one);
          acc[v] = one[0];
        }
      }
      for (int v = 0; v < nv; ++v) {
        const int64_t o = oy * s.ow + ox0 + v * kLanes;
        const size_t count = static_cast<size_t>(std::min<int64_t>(kLanes, s.ow - (ox0 + v * kLanes)));
        Vec r = acc[v];
        if (divisor != nullptr) r = Isa::Div(r, count == kLanes ? Isa::Load(divisor + o) : LoadTail<Storage::kF32>(divisor, o, count));
        over += std::popcount(count == kLanes ? StoreAs<O>(out, o, r, sat) : StoreTail<O>(out, o, count, r, sat));
      }
    }
  }
  return over;
}

uint64_t StencilKernel(StencilOp op, const StencilShape& s, const float* padded, size_t channels, const float* weights,
                       float init, const float* divisor, VecDst out, bool sat) {
  if (out.storage == Storage::kF16) return StencilAs<Storage::kF16>(op, s, padded, channels, weights, init, divisor, out.data, sat);
  return StencilAs<Storage::kF32>(op, s, padded, channels, weights, init, divisor, out.data, sat);
}
