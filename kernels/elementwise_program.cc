#include "kernels/elementwise_program.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/fp16.h"
#include "kernels/vector_kernels.h"

namespace npu::kernels {

uint64_t CountOverflow(const float* v, size_t n, bool fp16) {
  const float limit = fp16 ? 65520.0f : std::numeric_limits<float>::infinity();
  uint64_t count = 0;
  for (size_t i = 0; i < n; ++i) count += !(std::fabs(v[i]) < limit);
  return count;
}

uint64_t RunEwProgram(const EwProgram& program, float* acc, size_t n, EwOperandChunks operands, bool saturate,
                      float* scratch) {
  const VectorKernelSet& k = VectorKernels();
  float* in = scratch + n;
  uint64_t overflow = 0;
  for (const EwStep& s : program.steps) {
    switch (s.kind) {
      case EwStep::Kind::kCaptureIn:
        std::memcpy(in, acc, n * sizeof(float));
        break;
      // The separate ops' own kernels, on fp32: what they compute before they
      // store. Their overflow counts are the kStore steps' to take.
      case EwStep::Kind::kUnary:
        k.unary(s.unary, s.params, F32Src(acc), F32Dst(acc), n, saturate);
        break;
      case EwStep::Kind::kBinary: {
        const float* other = s.operand == EwStep::kIn ? in : operands[s.operand];
        if (s.operand_first) {
          k.binary(s.binary, F32Src(other), F32Src(acc), F32Dst(acc), n, saturate);
        } else {
          k.binary(s.binary, F32Src(acc), F32Src(other), F32Dst(acc), n, saturate);
        }
        break;
      }
      case EwStep::Kind::kStore: {
        overflow += CountOverflow(acc, n, s.fp16);
        if (s.fp16) {  // the fp16 the separate op stored, as the next one read it back
          half_bits* h = reinterpret_cast<half_bits*>(scratch);
          k.narrow(acc, h, n, saturate);
          k.widen(h, acc, n);
        }
        break;
      }
    }
  }
  return overflow;
}

}  // namespace npu::kernels
