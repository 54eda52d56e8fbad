// Device-resident tensors, by handle. A handle is a random 128-bit id and
// belongs to the tenant that made it: another tenant gets NOT_FOUND, the same
// answer as for a handle that never existed.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "npu/v1/memory.pb.h"
#include "server/device/device.h"
#include "server/graph/host_tensor.h"

namespace npu::rpc {

struct StoredTensor {
  std::string handle;
  device::Device* device = nullptr;
  graph::HostTensor tensor;
};

class TensorStore {
 public:
  TensorStore() = default;
  ~TensorStore();  // returns the memory of what is left to its devices

  // Takes `tensor` (copying it when it only views someone else's bytes),
  // charging its bytes to the device. RESOURCE_EXHAUSTED when the device is full.
  absl::StatusOr<v1::TensorHandle> Put(const std::string& tenant, device::Device* device,
                                       graph::HostTensor tensor);
  // As Put, for memory already reserved on the device (uploads reserve first).
  v1::TensorHandle PutReserved(const std::string& tenant, device::Device* device, graph::HostTensor tensor);
  absl::StatusOr<StoredTensor> Get(const std::string& tenant, const std::string& handle);
  absl::Status Free(const std::string& tenant, const std::string& handle);
  std::vector<v1::TensorHandle> List(const std::string& tenant);

  static v1::TensorHandle Describe(const StoredTensor& t);

 private:
  static std::string NewHandle();
  static std::string Key(const std::string& tenant, const std::string& handle) { return tenant + '\0' + handle; }

  std::mutex mu_;
  std::unordered_map<std::string, StoredTensor> tensors_;  // by Key(tenant, handle)
};

}  // namespace npu::rpc
