#include "server/graph/value_addresses.h"

namespace npu::graph {
namespace {

// As the arena: every tensor starts 64-byte aligned.
uint64_t Aligned(uint64_t bytes) { return (bytes + 63) & ~uint64_t{63}; }

}  // namespace

std::vector<device::AddressRange> ValueAddresses(const Plan& plan, uint64_t run_space) {
  std::vector<device::AddressRange> out(plan.values.size());
  uint64_t constant_at = 0, run_at = 0;
  for (size_t i = 0; i < plan.values.size(); ++i) {
    const PlanValue& v = plan.values[i];
    const uint64_t bytes = v.type.bytes();
    switch (v.storage) {
      case ValueStorage::kArena:
        out[i] = {device::kRunArenaSpace, static_cast<uint64_t>(v.arena_offset), bytes};
        break;
      case ValueStorage::kConstant:
        out[i] = {device::ConstantSpace(plan.id), constant_at, bytes};
        constant_at += Aligned(bytes);
        break;
      case ValueStorage::kInput:
      case ValueStorage::kHeap:
        out[i] = {run_space, run_at, bytes};
        run_at += Aligned(bytes);
        break;
      case ValueStorage::kView:
        break;
    }
  }
  return out;
}

}  // namespace npu::graph
