// What `npu run` and `npu load` read from their command lines: the graph file
// and the --input NAME=FILE.npy pairs.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "npu/v1/graph.pb.h"

namespace npu::client::cli {

// A graph from JSON (an ONNX model is registered with the server instead:
// model_file.h). Failures are usage errors (cli_status.h).
absl::StatusOr<npu::v1::Graph> LoadGraphFile(const std::string& path);

// "NAME=FILE" -> (name, file), in the order given. Splits at the first '=',
// since file paths may hold '=' more often than value names do. Usage errors
// for a malformed pair or a name given twice.
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ParseInputSpecs(
    const std::vector<std::string>& specs);

}  // namespace npu::client::cli
