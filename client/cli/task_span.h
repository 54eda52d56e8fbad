// When a task of a profile ran, from its issue to its being done. Profiles of
// servers before model v3 carry only the span of its blocks, which stands in.
#pragma once

#include <algorithm>
#include <cstdint>

#include "npu/v1/profile.pb.h"

namespace npu::client::cli {

struct TaskSpan {
  uint64_t issue = 0, done = 0;  // device cycles; done >= issue
};

inline TaskSpan TaskSpanOf(const npu::v1::NodeProfile& node) {
  const bool v3 = node.complete_cycle() != 0 || node.end_cycle() == 0;
  const uint64_t issue = v3 ? node.dispatch_cycle() : node.start_cycle();
  const uint64_t done = v3 ? node.complete_cycle() : node.end_cycle();
  return TaskSpan{issue, std::max(done, issue)};
}

}  // namespace npu::client::cli
