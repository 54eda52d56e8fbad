// Pad's modes and the input position each output position reads, shared by
// the Pad op and its gradient rule (server/train/grad_rules_index.cc).
#pragma once

#include <cstdint>
#include <string>

namespace npu::graph::ops {

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

// "reflect", "edge", "wrap"; anything else is "constant" (the schema checks the name).
inline PadMode PadModeNamed(const std::string& mode) {
  if (mode == "reflect") return PadMode::kReflect;
  if (mode == "edge") return PadMode::kEdge;
  if (mode == "wrap") return PadMode::kWrap;
  return PadMode::kConstant;
}

// The input index that output index o (o - begin in input coordinates) reads
// along a dim of n elements, or -1 for the constant.
inline int64_t PadSourceIndex(PadMode mode, int64_t i, int64_t n) {
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case PadMode::kConstant: return -1;
    case PadMode::kEdge: return i < 0 ? 0 : n - 1;
    case PadMode::kWrap: return ((i % n) + n) % n;
    case PadMode::kReflect: {
      if (n == 1) return 0;
      const int64_t period = 2 * (n - 1);
      const int64_t m = ((i % period) + period) % period;
      return m < n ? m : period - m;
    }
  }
  return -1;
}

}  // namespace npu::graph::ops
