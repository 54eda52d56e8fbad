#include "server/core/batch_policy.h"

#include <algorithm>

namespace npu::core {

std::chrono::microseconds BatchPolicy::TimeoutOf(std::chrono::microseconds requested) const {
  if (!allow_timeout_override || requested.count() <= 0) return default_timeout;
  if (default_timeout.count() == 0) return requested;
  return std::min(requested, default_timeout);
}

}  // namespace npu::core
