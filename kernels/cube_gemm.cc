// Straightforward first version; the blocked SIMD kernel replaces the inner loops.
#include "kernels/cube_gemm.h"

#include <algorithm>
#include <cmath>

namespace npu::kernels {
namespace {

float LoadAsHalf(const void* base, ElemType t, int64_t idx) {
  if (t == ElemType::kFloat16) return HalfToFloat(static_cast<const half_bits*>(base)[idx]);
  return HalfToFloat(FloatToHalf(static_cast<const float*>(base)[idx]));
}

float ApplyEpilogue(float v, Epilogue e) {
  switch (e) {
    case Epilogue::kNone: return v;
    case Epilogue::kRelu: return v > 0.0f ? v : 0.0f;
    case Epilogue::kGeluErf: return 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752f));
    case Epilogue::kGeluTanh:
      return 0.5f * v * (1.0f + std::tanh(0.79788456080286536f * (v + 0.044715f * v * v * v)));
  }
  return v;
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

void CubeGemm(const GemmProblem& p, const CubeTileShape& tile, std::vector<CubeTileCounts>* tiles) {
  const int64_t tm = CeilDiv(p.m, tile.m), tn = CeilDiv(p.n, tile.n);
  const int64_t total = p.batch * tm * tn;
  if (tiles) tiles->assign(total, CubeTileCounts{});
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < total; ++t) {
    const int64_t b = t / (tm * tn);
    const int64_t m0 = (t / tn % tm) * tile.m, n0 = (t % tn) * tile.n;
    const int64_t m1 = std::min(p.m, m0 + tile.m), n1 = std::min(p.n, n0 + tile.n);
    for (int64_t i = m0; i < m1; ++i) {
      for (int64_t j = n0; j < n1; ++j) {
        float acc = 0.0f;
        for (int64_t kk = 0; kk < p.k; ++kk) {
          const int64_t ai = b * p.a_batch_stride + (p.trans_a ? kk * p.lda + i : i * p.lda + kk);
          const int64_t bi = b * p.b_batch_stride + (p.trans_b ? j * p.ldb + kk : kk * p.ldb + j);
          acc += LoadAsHalf(p.a, p.a_type, ai) * LoadAsHalf(p.b, p.b_type, bi);
        }
        if (p.bias) acc += p.bias[j];
        acc = ApplyEpilogue(acc, p.epilogue);
        const int64_t ci = b * p.c_batch_stride + i * p.ldc + j;
        if (p.c_type == ElemType::kFloat32) {
          static_cast<float*>(p.c)[ci] = acc;
        } else {
          static_cast<half_bits*>(p.c)[ci] = p.saturate_fp16 ? FloatToHalfSaturate(acc) : FloatToHalf(acc);
        }
      }
    }
    if (tiles) {
      auto& c = (*tiles)[t];
      const int64_t fm = CeilDiv(m1 - m0, 16), fn = CeilDiv(n1 - n0, 16), fk = CeilDiv(p.k, 16);
      c.batch = b;
      c.m0 = m0;
      c.n0 = n0;
      c.fractal_ops = static_cast<uint64_t>(fm * fn * fk);
      c.mte2_bytes = static_cast<uint64_t>(((m1 - m0) + (n1 - n0)) * p.k * 2);
      c.mte1_bytes = static_cast<uint64_t>((fm + fn) * fk * 512);
      c.fixpipe_bytes = static_cast<uint64_t>((m1 - m0) * (n1 - n0) * (p.c_type == ElemType::kFloat32 ? 4 : 2));
      c.k_steps = static_cast<uint64_t>(CeilDiv(p.k, tile.k));
    }
  }
}

}  // namespace npu::kernels
