// Busy cycles per unit of an AI core.
#pragma once

#include <algorithm>
#include <cstdint>

namespace npu::device {

struct UnitCycles {
  uint64_t cube = 0, vector = 0, scalar = 0, mte1 = 0, mte2 = 0, mte3 = 0, fixpipe = 0;

  uint64_t Max() const { return std::max({cube, vector, scalar, mte1, mte2, mte3, fixpipe}); }
  UnitCycles& operator+=(const UnitCycles& o) {
    cube += o.cube;
    vector += o.vector;
    scalar += o.scalar;
    mte1 += o.mte1;
    mte2 += o.mte2;
    mte3 += o.mte3;
    fixpipe += o.fixpipe;
    return *this;
  }
};

}  // namespace npu::device
