// The simulated devices of this server process.
#pragma once

#include <memory>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "server/device/device.h"

namespace npu::core {

class DevicePool {
 public:
  DevicePool(int count, const device::DevicePreset& preset, const device::DeviceOptions& options);

  // Resolves "npu:N" / "cuda:N" / "" (npu:0); NOT_FOUND for an index past the pool.
  absl::StatusOr<device::Device*> Find(absl::string_view name) const;
  const std::vector<std::unique_ptr<device::Device>>& devices() const { return devices_; }

 private:
  std::vector<std::unique_ptr<device::Device>> devices_;
};

}  // namespace npu::core
