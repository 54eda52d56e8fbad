// `npu run MODEL.onnx|GRAPH.json --input NAME=FILE.npy|handle:ID ... --output-dir DIR`.
//
// The model is registered on the server (which imports ONNX) once per content
// hash, then run by id. Split so tests can drive each part without a server:
// PrepareRunRequest (checks against the registration, usage errors), the Run
// call, and WriteRunResults (files and the summary).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "client/client.h"
#include "client/model_file.h"

namespace npu::client::cli {

struct RunCommandArgs {
  std::string graph_path;
  std::vector<std::string> inputs;  // "NAME=FILE.npy" or "NAME=handle:ID"
  std::string output_dir;
  std::string device = "npu:0";
  bool profile = false;             // print the op summary table (the run is profiled anyway: overflow warnings)
  std::string op_summary_path;      // write the op summary as CSV here (asks for a profile)
  std::string trace_path;           // write a Chrome trace-event JSON here (asks for a profile)
  std::string profile_dir;          // the Ascend PyTorch Profiler's files (ascend_profiler_files.h)
  bool debug = false;
  std::vector<std::string> keep;  // outputs to keep on the device as handles
  std::string float_mode;         // saturation or inf_nan; empty: the preset's (float_mode_arg.h)
  // msprobe's overflow_check: run unfused and list the nodes whose results
  // overflowed, in topological order, at most overflow_nums of them (-1: all).
  bool overflow_check = false;
  int overflow_nums = 1;
};

// The model file named on the command line (a usage error when unreadable).
absl::StatusOr<ModelFile> ReadModelArg(const RunCommandArgs& args);

// "handle:ID" as an --input value: a tensor already on the device.
inline constexpr absl::string_view kHandlePrefix = "handle:";

// Reads the inputs and checks them against the registered model: unknown or
// duplicate input names, graph inputs without a value, dtype mismatches and
// --keep names that are no output are usage errors. Notices (cuda mapping)
// go to `notices`.
absl::StatusOr<npu::v1::RunRequest> PrepareRunRequest(const RunCommandArgs& args,
                                                      const npu::v1::RegisterGraphResponse& model,
                                                      std::ostream& notices);

// A value name as a safe file name: '/', ':' and other odd characters become '_'.
std::string SafeFileName(const std::string& value_name);

// Writes DIR/NAME.npy per returned output (and DIR/intermediates/ in debug
// mode), prints each output's name, dtype and shape, warns on `notices` about
// nodes whose results overflowed (the request always asks for the profile,
// which counts them), then prints the profile and writes the op summary CSV
// and the trace when asked.
absl::Status WriteRunResults(const npu::v1::RunResponse& response, const RunCommandArgs& args,
                             std::ostream& out, std::ostream& notices);

absl::Status RunRunCommand(Client& client, const RunCommandArgs& args, std::ostream& out,
                           std::ostream& notices);

}  // namespace npu::client::cli
