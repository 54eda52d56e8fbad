// Device strings as users type them: "npu:N", or "cuda:N" from GPU code.
#pragma once

#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"

namespace npu::core {

struct DeviceRef {
  int index = 0;
  bool was_cuda = false;  // the caller wrote "cuda:N"
};

// "" -> npu:0. Anything but npu:N / cuda:N is INVALID_ARGUMENT naming it.
absl::StatusOr<DeviceRef> ParseDevice(absl::string_view text);

}  // namespace npu::core
