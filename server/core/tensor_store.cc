#include "server/core/tensor_store.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "server/graph/bounded_text.h"

namespace npu::core {
namespace {

std::string TenantName(const std::string& tenant) {
  return tenant.empty() ? std::string("(anonymous)") : graph::Quoted(tenant);
}

absl::Status HandleNotFound(const std::string& handle) {
  return absl::NotFoundError(absl::StrCat("handle ", graph::Quoted(handle), " not found"));
}

}  // namespace

TensorStore::~TensorStore() {
  MutexLock lock(&mu_);
  for (auto& [key, e] : tensors_) e.stored.device->ReleaseMemory(e.stored.tensor.bytes());
}

std::string TensorStore::NewHandle() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return absl::StrFormat("%016x%016x", rng(), rng());
}

v1::TensorHandle TensorStore::Describe(const StoredTensor& t) {
  v1::TensorHandle h;
  h.set_handle(t.handle);
  h.set_device(t.device->id());
  h.mutable_type()->set_dtype(t.tensor.type().dtype);
  for (int64_t d : t.tensor.type().shape) h.mutable_type()->add_shape(d);
  h.set_bytes(t.tensor.bytes());
  return h;
}

absl::Status TensorStore::Reserve(const std::string& tenant, device::Device* device, uint64_t bytes) {
  MutexLock lock(&mu_);
  MaybeSweepLocked(Clock::now());  // expired handles first give their memory back
  uint64_t& used = tenant_bytes_[tenant];
  if (options_.tenant_quota_bytes > 0 &&
      (bytes > options_.tenant_quota_bytes || used > options_.tenant_quota_bytes - bytes)) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "tenant ", TenantName(tenant), " device memory quota: ", bytes, " bytes requested, ",
        options_.tenant_quota_bytes - std::min(used, options_.tenant_quota_bytes), " of ",
        options_.tenant_quota_bytes, " free (free handles or raise --tenant_memory_quota_bytes)"));
  }
  if (auto s = device->ReserveMemory(bytes); !s.ok()) return s;
  used += bytes;
  return absl::OkStatus();
}

void TensorStore::Release(const std::string& tenant, device::Device* device, uint64_t bytes) {
  device->ReleaseMemory(bytes);
  MutexLock lock(&mu_);
  tenant_bytes_[tenant] -= bytes;
}

absl::StatusOr<v1::TensorHandle> TensorStore::Put(const std::string& tenant, device::Device* device,
                                                  graph::HostTensor tensor) {
  if (auto s = Reserve(tenant, device, tensor.bytes()); !s.ok()) return s;
  if (!tensor.owns_data()) {
    graph::HostTensor copy = graph::HostTensor::Allocate(tensor.type());
    std::memcpy(copy.mutable_data(), tensor.data(), tensor.bytes());
    tensor = std::move(copy);
  }
  return PutReserved(tenant, device, std::move(tensor));
}

v1::TensorHandle TensorStore::PutReserved(const std::string& tenant, device::Device* device,
                                          graph::HostTensor tensor) {
  Entry e{StoredTensor{NewHandle(), device, std::move(tensor)}, tenant, Clock::now()};
  v1::TensorHandle described = Describe(e.stored);
  MutexLock lock(&mu_);
  const std::string key = Key(tenant, e.stored.handle);
  tensors_.emplace(key, std::move(e));
  return described;
}

bool TensorStore::Expired(const Entry& e, Clock::time_point now) const {
  return options_.idle_timeout.count() > 0 && now - e.last_used > options_.idle_timeout;
}

void TensorStore::EraseLocked(std::unordered_map<std::string, Entry>::iterator it) {
  it->second.stored.device->ReleaseMemory(it->second.stored.tensor.bytes());
  tenant_bytes_[it->second.tenant] -= it->second.stored.tensor.bytes();
  tensors_.erase(it);
}

void TensorStore::MaybeSweepLocked(Clock::time_point now) {
  if (options_.idle_timeout.count() == 0 || now < next_sweep_) return;
  // A sweep walks every handle: at most a few per idle period.
  next_sweep_ = now + options_.idle_timeout / 4;
  for (auto it = tensors_.begin(); it != tensors_.end();) {
    auto next = std::next(it);
    if (Expired(it->second, now)) EraseLocked(it);
    it = next;
  }
}

size_t TensorStore::ExpireIdle(Clock::time_point now) {
  MutexLock lock(&mu_);
  const size_t before = tensors_.size();
  next_sweep_ = {};
  MaybeSweepLocked(now);
  return before - tensors_.size();
}

absl::StatusOr<StoredTensor> TensorStore::Get(const std::string& tenant, const std::string& handle) {
  const Clock::time_point now = Clock::now();
  MutexLock lock(&mu_);
  MaybeSweepLocked(now);
  auto it = tensors_.find(Key(tenant, handle));
  if (it == tensors_.end()) return HandleNotFound(handle);
  if (Expired(it->second, now)) {
    EraseLocked(it);
    return HandleNotFound(handle);
  }
  it->second.last_used = now;
  return it->second.stored;
}

absl::Status TensorStore::Free(const std::string& tenant, const std::string& handle) {
  MutexLock lock(&mu_);
  auto it = tensors_.find(Key(tenant, handle));
  if (it == tensors_.end()) return HandleNotFound(handle);
  EraseLocked(it);
  return absl::OkStatus();
}

std::vector<v1::TensorHandle> TensorStore::List(const std::string& tenant) {
  std::vector<v1::TensorHandle> out;
  MutexLock lock(&mu_);
  MaybeSweepLocked(Clock::now());
  for (const auto& [key, e] : tensors_) {
    if (e.tenant == tenant) out.push_back(Describe(e.stored));
  }
  return out;
}

uint64_t TensorStore::tenant_bytes(const std::string& tenant) {
  MutexLock lock(&mu_);
  auto it = tenant_bytes_.find(tenant);
  return it == tenant_bytes_.end() ? 0 : it->second;
}

}  // namespace npu::core
