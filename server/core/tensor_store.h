// Device-resident tensors, by handle. A handle is a random 128-bit id and
// belongs to the tenant that made it: another tenant gets NOT_FOUND, the same
// answer as for a handle that never existed.
//
// The store also keeps each tenant within its device memory quota and lets
// handles that nobody touched for `idle_timeout` expire (their memory returns
// to the device), so clients that crash do not hold device memory forever.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "base/mutex.h"
#include "npu/v1/memory.pb.h"
#include "server/device/device.h"
#include "server/graph/host_tensor.h"

namespace npu::core {

struct StoredTensor {
  std::string handle;
  device::Device* device = nullptr;
  graph::HostTensor tensor;
};

struct TensorStoreOptions {
  uint64_t tenant_quota_bytes = 0;          // device memory per tenant, all devices together; 0 = no quota
  std::chrono::nanoseconds idle_timeout{0};  // handles unused this long expire; 0 = never
};

class TensorStore {
 public:
  using Clock = std::chrono::steady_clock;

  explicit TensorStore(TensorStoreOptions options = {}) : options_(options) {}
  ~TensorStore();  // returns the memory of what is left to its devices

  // Charges `bytes` to the tenant's quota and the device's memory;
  // RESOURCE_EXHAUSTED naming the quota or the device when either is full.
  absl::Status Reserve(const std::string& tenant, device::Device* device, uint64_t bytes);
  void Release(const std::string& tenant, device::Device* device, uint64_t bytes);

  // Takes `tensor` (copying it when it only views someone else's bytes),
  // reserving its bytes first.
  absl::StatusOr<v1::TensorHandle> Put(const std::string& tenant, device::Device* device,
                                       graph::HostTensor tensor);
  // As Put, for memory already reserved with Reserve (uploads reserve first).
  v1::TensorHandle PutReserved(const std::string& tenant, device::Device* device, graph::HostTensor tensor);
  // Also marks the handle as used now.
  absl::StatusOr<StoredTensor> Get(const std::string& tenant, const std::string& handle);
  absl::Status Free(const std::string& tenant, const std::string& handle);
  std::vector<v1::TensorHandle> List(const std::string& tenant);

  // Frees every handle idle since before `now - idle_timeout`; returns how many.
  // Called lazily by the other methods, and by tests.
  size_t ExpireIdle(Clock::time_point now);
  uint64_t tenant_bytes(const std::string& tenant);

  static v1::TensorHandle Describe(const StoredTensor& t);

 private:
  struct Entry {
    StoredTensor stored;
    std::string tenant;
    Clock::time_point last_used;
  };

  static std::string NewHandle();
  static std::string Key(const std::string& tenant, const std::string& handle) { return tenant + '\0' + handle; }
  bool Expired(const Entry& e, Clock::time_point now) const;
  void EraseLocked(std::unordered_map<std::string, Entry>::iterator it) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MaybeSweepLocked(Clock::time_point now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const TensorStoreOptions options_;
  Mutex mu_;
  std::unordered_map<std::string, Entry> tensors_ ABSL_GUARDED_BY(mu_);  // by Key(tenant, handle)
  std::unordered_map<std::string, uint64_t> tenant_bytes_ ABSL_GUARDED_BY(mu_);
  Clock::time_point next_sweep_ ABSL_GUARDED_BY(mu_) = {};
};

}  // namespace npu::core
