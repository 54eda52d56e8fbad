#include "kernels/vector_math.h"

#include <algorithm>

namespace npu::kernels {
namespace {

int32_t PowI32(int64_t base, int64_t exp) {
  if (exp < 0) return base == 1 ? 1 : base == -1 ? (exp % 2 == 0 ? 1 : -1) : 0;
  uint32_t result = 1, b = static_cast<uint32_t>(base);
  while (exp > 0) {  // square and multiply, wrapping like the other int ops
    if (exp & 1) result *= b;
    b *= b;
    exp >>= 1;
  }
  return static_cast<int32_t>(result);
}

}  // namespace

bool IsComparison(BinaryOp op) {
  return op == BinaryOp::kEqual || op == BinaryOp::kLess || op == BinaryOp::kGreater;
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
      case BinaryOp::kPow: out[i] = PowI32(x, y); break;
      case BinaryOp::kMax: out[i] = static_cast<int32_t>(std::max(x, y)); break;
      case BinaryOp::kMin: out[i] = static_cast<int32_t>(std::min(x, y)); break;
      case BinaryOp::kEqual: out[i] = x == y; break;
      case BinaryOp::kLess: out[i] = x < y; break;
      case BinaryOp::kGreater: out[i] = x > y; break;
      case BinaryOp::kPRelu: out[i] = x > 0 ? static_cast<int32_t>(x) : wrap(x * y); break;
      case BinaryOp::kFmod: out[i] = y == 0 ? 0 : static_cast<int32_t>(x % y); break;  // int64: no INT32_MIN % -1 trap
      case BinaryOp::kMod: {
        int64_t r = y == 0 ? 0 : x % y;
        if (r != 0 && (r < 0) != (y < 0)) r += y;
        out[i] = static_cast<int32_t>(r);
        break;
      }
    }
  }
}

}  // namespace npu::kernels
