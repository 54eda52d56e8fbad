// Device strings as users type them: "npu:N", or "cuda:N" from GPU habits.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace npu::client {

// "npu:N" stays (canonical decimal), "cuda:N" becomes "npu:N", "" becomes
// "npu:0"; anything else is INVALID_ARGUMENT naming the string.
absl::StatusOr<std::string> NormalizeDevice(std::string_view device);

// True for "cuda:N" strings, so callers can print their one-line notice.
bool IsCudaDeviceName(std::string_view device);

}  // namespace npu::client
