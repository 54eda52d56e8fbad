#include "server/rpc/tensor_store.h"

#include <cstring>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace npu::rpc {

TensorStore::~TensorStore() {
  for (auto& [key, t] : tensors_) t.device->ReleaseMemory(t.tensor.bytes());
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

absl::StatusOr<v1::TensorHandle> TensorStore::Put(const std::string& tenant, device::Device* device,
                                                  graph::HostTensor tensor) {
  if (auto s = device->ReserveMemory(tensor.bytes()); !s.ok()) return s;
  if (!tensor.owns_data()) {
    graph::HostTensor copy = graph::HostTensor::Allocate(tensor.type());
    std::memcpy(copy.mutable_data(), tensor.data(), tensor.bytes());
    tensor = std::move(copy);
  }
  return PutReserved(tenant, device, std::move(tensor));
}

v1::TensorHandle TensorStore::PutReserved(const std::string& tenant, device::Device* device,
                                          graph::HostTensor tensor) {
  StoredTensor t{NewHandle(), device, std::move(tensor)};
  v1::TensorHandle described = Describe(t);
  std::lock_guard<std::mutex> lock(mu_);
  tensors_.emplace(Key(tenant, t.handle), std::move(t));
  return described;
}

absl::StatusOr<StoredTensor> TensorStore::Get(const std::string& tenant, const std::string& handle) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tensors_.find(Key(tenant, handle));
  if (it == tensors_.end()) return absl::NotFoundError(absl::StrCat("handle \"", handle, "\" not found"));
  return it->second;
}

absl::Status TensorStore::Free(const std::string& tenant, const std::string& handle) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tensors_.find(Key(tenant, handle));
  if (it == tensors_.end()) return absl::NotFoundError(absl::StrCat("handle \"", handle, "\" not found"));
  it->second.device->ReleaseMemory(it->second.tensor.bytes());
  tensors_.erase(it);
  return absl::OkStatus();
}

std::vector<v1::TensorHandle> TensorStore::List(const std::string& tenant) {
  std::vector<v1::TensorHandle> out;
  std::lock_guard<std::mutex> lock(mu_);
  const std::string prefix = tenant + '\0';
  for (const auto& [key, t] : tensors_) {
    if (key.compare(0, prefix.size(), prefix) == 0) out.push_back(Describe(t));
  }
  return out;
}

}  // namespace npu::rpc
