// Tests and fuzzers only: fill every buffer a run gets fresh (its arena block,
// each output tensor) with one byte. An op that leaves some of its output
// unwritten hands back whatever the memory held, another tenant's data in the
// worst case; two runs filled with different bytes then differ, which a
// fuzzer can see. Off (-1) unless set; the check costs one relaxed load.
#pragma once

#include <cstddef>

namespace npu::device {

void SetFreshMemoryFillForTesting(int byte);  // -1: off
void FillFreshMemory(void* p, size_t bytes);  // no-op while off

}  // namespace npu::device
