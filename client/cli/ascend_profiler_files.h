// `--profile-dir DIR` of `npu run` and `npu train`: the files the Ascend
// PyTorch Profiler (torch_npu.profiler with tensorboard_trace_handler) writes,
// laid out as it lays them out, one folder per rank:
//   DIR/{host}_{pid}_rank{R}_{timestamp}_ascend_pt/
//       profiler_info_{R}.json
//       ASCEND_PROFILER_OUTPUT/kernel_details.csv   every task of every step, with its Step Id
//                              op_statistic.csv     per (OP Type, Core Type): count and times
//                              op_summary.csv       msprof's op summary of the last step
//                              trace_view.json      the last step's timeline (Chrome trace)
//                              step_trace_time.csv  training: each step's computing, communication, free time
//                              communication.json   training: each collective's time and bandwidth
//                              communication_matrix.json  training: bytes per rank pair
// The values come from the modeled device timeline (docs/profiling.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "npu/v1/profile.pb.h"

namespace npu::client::cli {

// One step (a run, or a training step): each rank's profile, rank = position.
struct ProfiledStep {
  int64_t step = 1;
  std::vector<npu::v1::Profile> ranks;
};

// Writes the folders above for `steps` (the training files only when
// `training`); returns the rank folders written.
absl::StatusOr<std::vector<std::string>> WriteAscendProfilerFiles(const std::string& dir,
                                                                 const std::vector<ProfiledStep>& steps,
                                                                 bool training);

// The headers, exactly as the profiler spells them (tests, docs).
const std::vector<std::string>& KernelDetailsColumns(const npu::v1::Profile& profile);
const std::vector<std::string>& OpStatisticColumns();
const std::vector<std::string>& StepTraceTimeColumns();

}  // namespace npu::client::cli
