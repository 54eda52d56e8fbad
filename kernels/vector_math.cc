#include "kernels/vector_math.h"

namespace npu::kernels {

void BinaryF32(BinaryOp op, const float* a, const float* b, float* out, size_t n) {
  switch (op) {
    case BinaryOp::kAdd:
      for (size_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
      return;
    case BinaryOp::kSub:
      for (size_t i = 0; i < n; ++i) out[i] = a[i] - b[i];
      return;
    case BinaryOp::kMul:
      for (size_t i = 0; i < n; ++i) out[i] = a[i] * b[i];
      return;
    case BinaryOp::kDiv:
      for (size_t i = 0; i < n; ++i) out[i] = a[i] / b[i];
      return;
  }
}

void BinaryI32(BinaryOp op, const int32_t* a, const int32_t* b, int32_t* out, size_t n) {
  auto wrap = [](int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); };
  for (size_t i = 0; i < n; ++i) {
    const int64_t x = a[i], y = b[i];
    switch (op) {
      case BinaryOp::kAdd: out[i] = wrap(x + y); break;
      case BinaryOp::kSub: out[i] = wrap(x - y); break;
      case BinaryOp::kMul: out[i] = wrap(x * y); break;
      case BinaryOp::kDiv: out[i] = y == 0 ? 0 : wrap(x / y); break;
    }
  }
}

void UnaryF32(UnaryOp op, const float* in, float* out, size_t n) {
  switch (op) {
    case UnaryOp::kRelu:
      for (size_t i = 0; i < n; ++i) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
      return;
  }
}

}  // namespace npu::kernels
