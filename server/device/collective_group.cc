#include "server/device/collective_group.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "kernels/fp16.h"
#include "server/device/collective_cost.h"

namespace npu::device {
namespace {

using Buffer = CollectiveGroup::Buffer;

size_t ElemBytes(kernels::ElemType t) { return t == kernels::ElemType::kFloat16 ? 2 : 4; }

float Load(const Buffer& b, int64_t i) {
  if (b.type == kernels::ElemType::kFloat16) return kernels::HalfToFloat(static_cast<const kernels::half_bits*>(b.in)[i]);
  return static_cast<const float*>(b.in)[i];
}

void Store(const Buffer& b, int64_t i, float v, bool saturate) {
  if (b.type == kernels::ElemType::kFloat16) {
    static_cast<kernels::half_bits*>(b.out)[i] = saturate ? kernels::FloatToHalfSaturate(v) : kernels::FloatToHalf(v);
  } else {
    static_cast<float*>(b.out)[i] = v;
  }
}

// `sum` kept in the buffer's type, as the partial a ring step passes on; sets
// `overflow` when it left the type's range.
float Keep(kernels::ElemType type, float sum, bool saturate, bool& overflow) {
  if (type == kernels::ElemType::kFloat32) {
    overflow = overflow || !std::isfinite(sum);
    return sum;
  }
  overflow = overflow || kernels::CountHalfOverflow(&sum, 1) != 0;
  return kernels::HalfToFloat(saturate ? kernels::FloatToHalfSaturate(sum) : kernels::FloatToHalf(sum));
}

}  // namespace

CollectiveGroup::CollectiveGroup(int size, DevicePreset preset) : size_(size), preset_(std::move(preset)) {}

void CollectiveGroup::Abort(absl::Status why) {
  if (why.ok()) why = absl::AbortedError("the collective group was aborted");
  {
    MutexLock lock(&mu_);
    if (aborted_.ok()) aborted_ = std::move(why);
  }
  cv_.SignalAll();
}

absl::StatusOr<CollectiveGroup::Window> CollectiveGroup::AllReduce(const std::string& tag, int rank,
                                                                   std::vector<Buffer> buffers, uint64_t ready_cycle) {
  if (rank < 0 || rank >= size_) return absl::InternalError(absl::StrCat("rank ", rank, " is not in a group of ", size_));
  MutexLock lock(&mu_);
  if (!aborted_.ok()) return aborted_;
  Pending& p = pending_[tag];
  if (p.buffers.empty()) {
    p.buffers.resize(static_cast<size_t>(size_));
    p.ready.resize(static_cast<size_t>(size_));
  }
  p.buffers[rank] = std::move(buffers);
  p.ready[rank] = ready_cycle;
  if (++p.arrived == size_) {
    Reduce(p);
    p.done = true;
    cv_.SignalAll();
  }
  while (!p.done && aborted_.ok()) cv_.Wait(&mu_);
  if (!p.done) return aborted_;
  if (!p.status.ok()) return p.status;
  return p.window;
}

void CollectiveGroup::Reduce(Pending& p) {
  const std::vector<Buffer>& first = p.buffers[0];
  for (int r = 1; r < size_; ++r) {
    const std::vector<Buffer>& b = p.buffers[r];
    bool same = b.size() == first.size();
    for (size_t i = 0; same && i < b.size(); ++i) same = b[i].type == first[i].type && b[i].elements == first[i].elements;
    if (!same) {
      p.status = absl::InternalError(absl::StrCat("allreduce: rank ", r, "'s buffers differ from rank 0's"));
      return;
    }
  }
  // The flattened buffers' element e lies in segment c when bound(c) <= e < bound(c + 1).
  int64_t total = 0;
  uint64_t bytes = 0;
  for (const Buffer& b : first) total += b.elements, bytes += static_cast<uint64_t>(b.elements) * ElemBytes(b.type);
  const int64_t n = size_;
  auto bound = [&](int64_t c) { return total * c / n; };
  const bool saturate = preset_.fp16_saturation;
  uint64_t overflowed = 0;
  std::vector<float> x(static_cast<size_t>(n));
  int64_t e = 0, c = 0;
  for (size_t bi = 0; bi < first.size(); ++bi) {
    for (int64_t i = 0; i < first[bi].elements; ++i, ++e) {
      while (c + 1 < n && bound(c + 1) <= e) ++c;
      for (int64_t r = 0; r < n; ++r) x[r] = Load(p.buffers[r][bi], i);  // read all before any write (in place)
      bool overflow = false;
      float sum = x[c];
      for (int64_t k = 1; k < n; ++k) sum = Keep(first[bi].type, sum + x[(c + k) % n], saturate, overflow);
      overflowed += overflow;
      for (int64_t r = 0; r < n; ++r) Store(p.buffers[r][bi], i, sum, saturate);
    }
  }
  uint64_t ready = links_free_;
  for (uint64_t r : p.ready) ready = std::max(ready, r);
  p.window.start = ready;
  p.window.end = ready + RingAllReduceCycles(bytes, size_, preset_);
  p.window.bytes = bytes;
  p.window.overflow_elements = overflowed;
  links_free_ = p.window.end;
}

}  // namespace npu::device
