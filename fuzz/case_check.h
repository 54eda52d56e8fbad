// The fuzzers' oracle for one generated case (graph_generator.h), on the
// server's own entry points: BuildPlan, then RunPlan on a simulated device.
//   - planning and running end OK or with a clear status: a client error code
//     (never INTERNAL/UNKNOWN, which mean a thrown exception or a bug), a
//     non-empty message of at most 4 KiB;
//   - every value a run returns has the type the planner inferred;
//   - the run the server makes (fused plan, arena; fresh memory filled with
//     one byte) and a debug run of the plan without fusion (every value its
//     own buffer, filled with another byte) return the same bytes: an op that
//     leaves output unwritten, reads a buffer the arena planner gave to
//     another value, or a fused chain that computes other bits differs
//     (except where a BatchNormalization is folded into a Conv, fusion.h, and
//     for values computed from NPUGetFloatStatus, which reads what the other
//     nodes of the run overflowed);
//   - every node with a float64 reference (op_reference.h) matches it.
// A crash, a sanitizer report or a hang is caught by whoever drives this
// (libFuzzer, the seeded test).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "fuzz/graph_generator.h"
#include "server/device/device.h"

namespace npu::fuzz {

struct CaseCheckLimits {
  uint64_t max_run_bytes = 1 << 20;  // plans touching more are planned, not run
};

struct CaseOutcome {
  bool planned = false;
  bool ran = false;           // both runs OK
  bool fused = false;         // the server's plan fused some chain (compared with the plain plan)
  int nodes_referenced = 0;   // nodes compared against a float64 reference
  absl::Status status;        // how planning or the run ended
  std::string finding;        // empty: nothing wrong
};

// One simulated device per preset, made on first use, reused across cases.
class CaseChecker {
 public:
  explicit CaseChecker(CaseCheckLimits limits = {}) : limits_(limits) {}
  CaseOutcome Check(const FuzzCase& c, const GeneratorLimits& generated_with);

 private:
  device::Device& DeviceFor(const std::string& preset);

  CaseCheckLimits limits_;
  std::map<std::string, std::unique_ptr<device::Device>> devices_;
};

// A readable dump of a case (the graph as protobuf text, the input types), for a finding's report.
std::string DescribeCase(const FuzzCase& c);

}  // namespace npu::fuzz
