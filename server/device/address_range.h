// A tensor's place in device memory, as the device model sees it: `bytes`
// from `offset` in one address space. Spaces keep apart what never aliases
// (the device's run arena, one plan's constants, one run's inputs and
// results); only equality of spaces matters, never their numbers, so the L2
// model's results do not depend on how the ids were drawn.
#pragma once

#include <cstdint>

namespace npu::device {

struct AddressRange {
  uint64_t space = 0;  // 0: no address (the L2 model does not see the tensor)
  uint64_t offset = 0;
  uint64_t bytes = 0;

  bool known() const { return space != 0 && bytes > 0; }
};

// Address spaces: the kind in the top two bits, an id below.
inline constexpr uint64_t kRunArenaSpace = 1;  // the device's run arena (run_arena.h): intermediates
inline uint64_t ConstantSpace(uint64_t plan_id) { return (uint64_t{1} << 62) | plan_id; }  // a plan's initializers
inline uint64_t FreshSpace(uint64_t serial) { return (uint64_t{2} << 62) | serial; }        // one run's inputs, results
inline uint64_t OpPrivateSpace(uint64_t serial) { return (uint64_t{3} << 62) | serial; }    // panels of an op without addresses

}  // namespace npu::device
