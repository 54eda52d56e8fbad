// The micro-kernel, written once over a vector "Isa" and instantiated by each
// cube_microkernel_<isa>.cc, so every path runs the same arithmetic in the same
// order. Include it inside an anonymous namespace after defining `struct Isa`:
//   using Vec; static constexpr int kLanes;  Vec Zero(); Vec Load(const float*);
//   void Store(float*, Vec); Vec LoadHalves(const half_bits*) (kLanes halves ->
//   fp32); Vec Broadcast(const float*); Vec Fma(Vec a, Vec b, Vec c) = a*b+c, one
//   rounding.
// Keeping it TU-local matters: the SIMD TUs are built with -mavx2/-mavx512f, and
// an inline function shared with other TUs could leak those instructions into the
// AVX2-only or portable paths.

template <int MR, int NP>
void CubeMicroKernel(int64_t kc, const float* a, const half_bits* b, int64_t b_panel_stride, float* c,
                     int64_t ldc, bool accumulate) {
  constexpr int kL = Isa::kLanes;
  constexpr int kVpp = 16 / kL;  // vectors per fractal row
  constexpr int kNv = NP * kVpp;
  typename Isa::Vec acc[MR][kNv];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 16
    for (int v = 0; v < kNv; ++v) acc[r][v] = accumulate ? Isa::Load(c + r * ldc + v * kL) : Isa::Zero();
  }
  for (int64_t k = 0; k < kc; ++k) {
    typename Isa::Vec bv[kNv];
#pragma GCC unroll 16
    for (int p = 0; p < NP; ++p) {
#pragma GCC unroll 16
      for (int q = 0; q < kVpp; ++q) bv[p * kVpp + q] = Isa::LoadHalves(b + p * b_panel_stride + k * 16 + q * kL);
    }
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const typename Isa::Vec ar = Isa::Broadcast(a + k * MR + r);
#pragma GCC unroll 16
      for (int v = 0; v < kNv; ++v) acc[r][v] = Isa::Fma(ar, bv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 16
    for (int v = 0; v < kNv; ++v) Isa::Store(c + r * ldc + v * kL, acc[r][v]);
  }
}

// The table of variants fn[rows - 1][cols - 1] for rows <= MR, cols <= NP.
template <int MR, int NP>
constexpr CubeMicroKernelSet MakeCubeKernelSet() {
  CubeMicroKernelSet set;
  set.mr = MR;
  set.np = NP;
  [&]<int... R>(std::integer_sequence<int, R...>) {
    ((set.fn[R][0] = &CubeMicroKernel<R + 1, 1>), ...);
    if constexpr (NP >= 2) ((set.fn[R][1] = &CubeMicroKernel<R + 1, 2>), ...);
  }(std::make_integer_sequence<int, MR>{});
  return set;
}
