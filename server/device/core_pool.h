// The simulated cores of one chip and their timeline: a list scheduler places
// each tile of an op on the earliest-free core that can run its task type, no
// earlier than the op is ready (its producers' end), so independent ops
// overlap. The chip's L2 (l2_cache.h: every GM access goes through it, and it
// keeps its contents across ops and runs, l2_traffic.h) and its HBM and L2 bandwidth
// (memory_timeline.h, shared fairly among running tiles by op_fluid.h) are
// shared by all cores. Runs execute one at a time on the host, but in modeled
// time a run that arrived while another was executing starts where that one
// was (modeled_clock.h): its ops go on the cores and into the bandwidth and
// issue slots the earlier run left, so the runs of several clients interleave
// on the device. Only the job holding the device calls Schedule, so the pool
// needs no lock; cycles are deterministic for a given sequence of ops.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "server/device/device_preset.h"
#include "server/device/l2_cache.h"
#include "server/device/memory_timeline.h"
#include "server/device/modeled_clock.h"
#include "server/device/tile_work.h"
#include "server/device/unit_cycles.h"

namespace npu::device {

struct TilePlacement {
  int core = 0;
  uint64_t start = 0, end = 0;  // cycles on the device timeline
  UnitCycles busy;
};

// Cycles of one op on the device timeline:
//   ready <= dispatch (the Task Scheduler issues it) <= start (first block)
//   < end (last block ends) <= complete (done: what consumers wait for).
struct ScheduledOp {
  uint64_t ready = 0;           // its inputs were done
  uint64_t dispatch = 0;        // issued
  uint64_t start = 0, end = 0;  // first tile start, last tile end (== ready when no tiles)
  uint64_t complete = 0;        // end + the task's finish cost
  int block_dim = 0;
  UnitCycles busy;              // summed over tiles
  uint64_t hbm_bytes = 0;       // GM traffic that reached HBM: read misses, write-backs the op's accesses
                                // evicted, traffic without an address
  uint64_t l2_hit_bytes = 0;    // GM reads the L2 served
  uint64_t l2_write_bytes = 0;  // GM writes allocated in the L2 (write-allocate)
  std::vector<TilePlacement> tiles;
};

struct CoreInfo {
  std::string kind;  // "ai_core" (coupled), "aic" or "aiv" (separated)
  uint64_t free_at = 0;
  UnitCycles busy;   // lifetime totals
};

class CorePool {
 public:
  explicit CorePool(const DevicePreset& preset);

  // Issues the op no earlier than `ready` and places every tile of `work`, in
  // the op's tile order, block_dim = min(tiles, eligible cores) at a time.
  // AI_CPU work and ops without tiles take no core time and no dispatch.
  ScheduledOp Schedule(const OpWork& work, uint64_t ready);

  const std::vector<CoreInfo>& cores() const { return cores_; }
  // The last cycle any core is busy until.
  uint64_t horizon() const;

  // The device's modeled clock (modeled_clock.h): where runs arrive. Schedule
  // advances it; clients read it from any thread.
  ModeledClock& clock() { return clock_; }
  // A run starts: its tasks form one stream, issued in order, from its first.
  void BeginRun() { stream_next_issue_ = 0; }
  // An address space no earlier access used (a run's inputs and results).
  uint64_t NextFreshSpace() { return FreshSpace(++fresh_spaces_); }
  // The chip's L2, kept across ops and runs (l2_cache.h).
  const L2Cache& l2() const { return l2_; }
  // Issue slots and bandwidth steps kept: those work still to come could meet.
  size_t issue_slots() const { return slots_.size(); }
  size_t memory_steps() const { return memory_.steps(); }

 private:
  // Indices of the cores that run a task type.
  const std::vector<int>& CoresFor(TaskType t) const;

  DevicePreset preset_;
  std::vector<CoreInfo> cores_;
  L2Cache l2_;
  MemoryTimeline memory_;
  uint64_t op_serial_ = 0;  // names an op's private panel space (ops without addresses)
  uint64_t fresh_spaces_ = 0;
  // The Task Scheduler issues one task per issue slot of task_gap cycles.
  // A run's tasks are one stream, issued in order; a task of a run that
  // arrived while another was executing takes the first free slot at or after
  // it is ready, between the other run's. Returns the task's issue cycle.
  uint64_t IssueAt(uint64_t ready);
  ModeledClock clock_;
  uint64_t stream_next_issue_ = 0;   // the running run's next task issues no earlier
  uint64_t issue_floor_ = 0;         // no task of any run still to come issues earlier
  std::map<uint64_t, uint64_t> slots_;  // taken issue slots: start -> end
  std::vector<int> cube_cores_, vector_cores_;
};

}  // namespace npu::device
