#include "server/core/device_pool.h"

#include "absl/strings/str_cat.h"
#include "server/graph/bounded_text.h"
#include "server/core/device_names.h"

namespace npu::core {

DevicePool::DevicePool(int count, const device::DevicePreset& preset, const device::DeviceOptions& options) {
  for (int i = 0; i < count; ++i) devices_.push_back(std::make_unique<device::Device>(i, preset, options));
}

absl::StatusOr<device::Device*> DevicePool::Find(absl::string_view name) const {
  auto ref = ParseDevice(name);
  if (!ref.ok()) return ref.status();
  if (ref->index >= static_cast<int>(devices_.size())) {
    return absl::NotFoundError(absl::StrCat("device ", graph::Quoted(name), " does not exist; this server has npu:0..npu:",
                                            devices_.size() - 1));
  }
  return devices_[ref->index].get();
}

}  // namespace npu::core
