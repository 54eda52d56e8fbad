#include "kernels/integer_math.h"

#include <algorithm>
#include <limits>

namespace npu::kernels {
namespace {

int64_t Wrap(uint64_t v) { return static_cast<int64_t>(v); }  // modular since C++20

int64_t DivI64(int64_t x, int64_t y) {
  if (y == 0) return 0;
  if (y == -1) return Wrap(0 - static_cast<uint64_t>(x));  // INT64_MIN / -1 would trap
  return x / y;                                            // C++ truncates toward zero
}

// C's %: the remainder with x's sign; by 0 it is 0, and INT64_MIN % -1 (which
// would trap) is 0.
int64_t FmodI64(int64_t x, int64_t y) { return y == 0 || y == -1 ? 0 : x % y; }

int64_t PowI64(int64_t base, int64_t exp) {
  if (exp < 0) return base == 1 ? 1 : base == -1 ? (exp % 2 == 0 ? 1 : -1) : 0;
  uint64_t result = 1, b = static_cast<uint64_t>(base);
  while (exp > 0) {  // square and multiply, wrapping
    if (exp & 1) result *= b;
    b *= b;
    exp >>= 1;
  }
  return Wrap(result);
}

// Branch-free loops over contiguous arrays, so the compiler vectorises them.
template <typename T, typename F>
void CompareWith(const T* a, const T* b, uint8_t* out, size_t n, F f) {
  for (size_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]) ? 1 : 0;
}

template <typename T>
void CompareAny(CompareOp op, const T* a, const T* b, uint8_t* out, size_t n) {
  switch (op) {
    case CompareOp::kEqual: return CompareWith(a, b, out, n, [](T x, T y) { return x == y; });
    case CompareOp::kLess: return CompareWith(a, b, out, n, [](T x, T y) { return x < y; });
    case CompareOp::kLessOrEqual: return CompareWith(a, b, out, n, [](T x, T y) { return x <= y; });
    case CompareOp::kGreater: return CompareWith(a, b, out, n, [](T x, T y) { return x > y; });
    case CompareOp::kGreaterOrEqual: return CompareWith(a, b, out, n, [](T x, T y) { return x >= y; });
  }
}

}  // namespace

void BinaryI64(BinaryOp op, const int64_t* a, const int64_t* b, int64_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const int64_t x = a[i], y = b[i];
    const uint64_t ux = static_cast<uint64_t>(x), uy = static_cast<uint64_t>(y);
    switch (op) {
      case BinaryOp::kAdd: out[i] = Wrap(ux + uy); break;
      case BinaryOp::kSub: out[i] = Wrap(ux - uy); break;
      case BinaryOp::kMul: out[i] = Wrap(ux * uy); break;
      case BinaryOp::kDiv: out[i] = DivI64(x, y); break;
      case BinaryOp::kPow: out[i] = PowI64(x, y); break;
      case BinaryOp::kMax: out[i] = std::max(x, y); break;
      case BinaryOp::kMin: out[i] = std::min(x, y); break;
      case BinaryOp::kEqual: out[i] = x == y; break;
      case BinaryOp::kLess: out[i] = x < y; break;
      case BinaryOp::kGreater: out[i] = x > y; break;
      case BinaryOp::kPRelu: out[i] = x > 0 ? x : Wrap(ux * uy); break;
      case BinaryOp::kFmod: out[i] = FmodI64(x, y); break;
      case BinaryOp::kMod: {
        int64_t r = FmodI64(x, y);
        if (r != 0 && (r < 0) != (y < 0)) r += y;  // |r| < |y|: no overflow
        out[i] = r;
        break;
      }
    }
  }
}

void Compare(CompareOp op, const float* a, const float* b, uint8_t* out, size_t n) {
  CompareAny(op, a, b, out, n);
}

void Compare(CompareOp op, const int64_t* a, const int64_t* b, uint8_t* out, size_t n) {
  CompareAny(op, a, b, out, n);
}

}  // namespace npu::kernels
