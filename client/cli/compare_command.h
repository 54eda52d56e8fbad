// `npu compare MODEL --input NAME=FILE.npy ... --output-dir DIR`: msprobe's
// precision comparison on one machine (docs/compare.md). The graph runs twice
// on the server, unfused with every intermediate returned: once with the
// device's arithmetic (its preset, in --float-mode), once as the bench (what a
// GPU computes: RunOptions.numerics NUMERICS_BENCH_FP32). Every node output is
// compared (compare_metrics.h) and the command writes
//   DIR/compare_result.csv   msprobe's real-data columns, one row per output
//   DIR/diff_analyze.json    the first diverging node: the first, in
//                            topological order, whose result is an error while
//                            none of its inputs' is
//   DIR/compare.png          Cosine and MaxRelativeErr along the graph
//                            (scripts/plot_compare.py, when Python's matplotlib is there)
// and prints a summary.
#pragma once

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "client/cli/run_command.h"
#include "client/client.h"

namespace npu::client::cli {

struct CompareCommandArgs {
  RunCommandArgs run;          // graph_path, inputs, output_dir, device, float_mode
  std::string bench = "fp32";  // the bench's numerics: fp32 (fp64 is not offered)
  std::string plot_script;     // scripts/plot_compare.py; empty: found beside the binary or in the source tree
};

absl::Status RunCompareCommand(Client& client, const CompareCommandArgs& args, std::ostream& out,
                               std::ostream& notices);

// The torch module path an ONNX node name carries ("/layer1/layer1.0/conv1/Conv"
// -> "layer1.0.conv1"), or "" when it carries none.
std::string ModuleScope(const std::string& node_name);

}  // namespace npu::client::cli
