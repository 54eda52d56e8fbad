// The devices of one data-parallel step, one member (rank) each, whose jobs
// run at the same time and meet in collectives, as HCCL's communicator does.
// A member's AllReduce waits until every member called the collective of the
// same tag; the last to arrive then runs the ring allreduce for all of them,
// and each returns with the modeled window of the transfer.
//
// The ring (HCCL's Ring algorithm): the flattened buffers are cut into `size`
// segments; in the ReduceScatter, segment c starts on rank c and travels
// round the ring, each rank adding its own part, so it is summed in the order
// x_c + x_(c+1) + ... + x_(c+size-1) (ranks mod size), the partial sum kept in
// the buffer's type after each addition (fp16 partials saturate on presets
// that saturate); the AllGather then copies every finished segment to every
// rank. Every rank ends with the same bits.
//
// Time: every rank's buffers are ready (its ready cycle) and the ring's links
// are free (one collective at a time on them); the transfer then takes
// RingAllReduceCycles (collective_cost.h). Devices count cycles from the same
// start, so their cycles compare. Thread-safe; Abort wakes every waiter.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "base/mutex.h"
#include "kernels/cube_gemm.h"
#include "server/device/device_preset.h"

namespace npu::device {

class CollectiveGroup {
 public:
  CollectiveGroup(int size, DevicePreset preset);

  struct Buffer {
    const void* in = nullptr;  // this rank's contribution
    void* out = nullptr;       // where the sum lands (may equal `in`)
    kernels::ElemType type = kernels::ElemType::kFloat32;
    int64_t elements = 0;
  };
  struct Window {
    uint64_t start = 0, end = 0;      // modeled cycles, the same for every rank
    uint64_t bytes = 0;               // per rank
    uint64_t overflow_elements = 0;   // sums that overflowed their type, this rank's share (all on rank 0)
  };

  // Member `rank`'s part of collective `tag`. Every member passes buffers of
  // the same types and sizes in the same order. Returns once all have (or
  // with the abort's status).
  absl::StatusOr<Window> AllReduce(const std::string& tag, int rank, std::vector<Buffer> buffers,
                                   uint64_t ready_cycle);

  // Fails every member waiting now, and every later call, with `why`.
  void Abort(absl::Status why);

  int size() const { return size_; }

 private:
  struct Pending {
    std::vector<std::vector<Buffer>> buffers;
    std::vector<uint64_t> ready;
    int arrived = 0;
    bool done = false;
    absl::Status status;
    Window window;
  };
  // With mu_ held, by the last member to arrive.
  void Reduce(Pending& p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int size_;
  const DevicePreset preset_;
  Mutex mu_;
  CondVar cv_;
  std::map<std::string, Pending> pending_ ABSL_GUARDED_BY(mu_);
  absl::Status aborted_ ABSL_GUARDED_BY(mu_);
  uint64_t links_free_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace npu::device
