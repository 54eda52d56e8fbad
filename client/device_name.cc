#include "client/device_name.h"

#include <charconv>

#include "absl/status/status.h"

namespace npu::client {
namespace {

// std::string_view throughout: Debian's absl has its own string_view type.
constexpr std::string_view kNpuPrefix = "npu:";
constexpr std::string_view kCudaPrefix = "cuda:";

// Decimal digits only: no sign, no spaces.
bool ParseIndex(std::string_view digits, int* index) {
  if (digits.empty() || digits.size() > 9) return false;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
  }
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), *index);
  return error == std::errc() && end == digits.data() + digits.size();
}

}  // namespace

bool IsCudaDeviceName(std::string_view device) { return device.starts_with(kCudaPrefix); }

absl::StatusOr<std::string> NormalizeDevice(std::string_view device) {
  if (device.empty()) return std::string("npu:0");
  std::string_view digits;
  if (device.starts_with(kNpuPrefix)) {
    digits = device.substr(kNpuPrefix.size());
  } else if (device.starts_with(kCudaPrefix)) {
    digits = device.substr(kCudaPrefix.size());
  } else {
    return absl::InvalidArgumentError("device \"" + std::string(device) +
                                      "\" is not an NPU; use npu:N (cuda:N is accepted)");
  }
  int index = 0;
  if (!ParseIndex(digits, &index)) {
    return absl::InvalidArgumentError("device \"" + std::string(device) +
                                      "\" has no valid device index; use npu:N, e.g. npu:0");
  }
  return std::string(kNpuPrefix) + std::to_string(index);
}

}  // namespace npu::client
