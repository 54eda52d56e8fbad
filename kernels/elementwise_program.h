// A fused chain of elementwise ops as one program over a chunk of fp32 values:
// what FixPipe applies on the way out of L0C (a Cube op's fused epilogue) and
// what one Vector pass runs for a fused chain of Vector ops (fusion.h).
//
// The program keeps two values per element: `acc`, the chain's running value,
// and `in`, the value the chain started from (so x * sigmoid(x) or
// x * (1 + erf(x / sqrt 2)) / 2 read x again), taken by a kCaptureIn step. Each step calls the very
// function the separate op calls (vector_math.h) on the same fp32 values, and
// a kStore step stands where a separate op stored its result: an fp16 result
// is narrowed and widened back (as the next op read it), and the results that
// overflowed are counted as that op's store counts them. So a fused chain gives
// the unfused chain's bits and overflow count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/vector_math.h"

namespace npu::kernels {

struct EwStep {
  enum class Kind : uint8_t { kUnary, kBinary, kStore, kCaptureIn };
  Kind kind = Kind::kUnary;
  UnaryOp unary = UnaryOp::kRelu;
  UnaryParams params;
  BinaryOp binary = BinaryOp::kAdd;
  // kBinary: the other operand, an index into the program's operands, or kIn.
  static constexpr int kIn = -1;
  int operand = kIn;
  bool operand_first = false;  // acc = op(operand, acc) instead of op(acc, operand)
  bool fp16 = false;           // kStore: the stored type was fp16 (else fp32)
};

struct EwProgram {
  std::vector<EwStep> steps;
  int operands = 0;  // external operands the steps read (indices 0 .. operands-1)
};

// One chunk's external operands: `n` fp32 values each (the caller gathers or
// broadcasts them).
using EwOperandChunks = const float* const*;

// Runs the program over acc[0, n) in place (acc holds the chain's start value).
// `scratch` holds EwScratchFloats(n) floats. Returns the results the kStore
// steps counted: fp16 ones beyond the range (saturated when `saturate`, or
// inf) and any inf or NaN.
uint64_t RunEwProgram(const EwProgram& program, float* acc, size_t n, EwOperandChunks operands, bool saturate,
                      float* scratch);

// Results that do not survive a store: NaN, inf and, for fp16, magnitudes that
// round past 65504 (from 65520 up: inf, or +-65504 saturated).
uint64_t CountOverflow(const float* v, size_t n, bool fp16);

// The scratch RunEwProgram needs for chunks of n.
inline size_t EwScratchFloats(size_t n) { return 2 * n; }

}  // namespace npu::kernels
