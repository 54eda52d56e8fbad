#include "client/cli/command_inputs.h"

#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/cli/cli_status.h"
#include "client/graph_json.h"

namespace npu::client::cli {

absl::StatusOr<npu::v1::Graph> LoadGraphFile(const std::string& path) {
  if (absl::EndsWith(path, ".onnx")) {
    return UsageError(absl::InvalidArgumentError(
        absl::StrCat(path, ": an ONNX model is registered with the server, which imports it, not sent inline")));
  }
  absl::StatusOr<npu::v1::Graph> graph = LoadGraphJson(path);
  if (!graph.ok()) return UsageError(graph.status());
  return graph;
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ParseInputSpecs(
    const std::vector<std::string>& specs) {
  std::vector<std::pair<std::string, std::string>> parsed;
  std::set<std::string> seen;
  for (const std::string& spec : specs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
      return UsageError(absl::InvalidArgumentError(absl::StrCat("--input \"", spec, "\": expected NAME=FILE.npy")));
    }
    std::string name = spec.substr(0, eq);
    if (!seen.insert(name).second) {
      return UsageError(absl::InvalidArgumentError(absl::StrCat("--input \"", name, "\" is given twice")));
    }
    parsed.emplace_back(std::move(name), spec.substr(eq + 1));
  }
  return parsed;
}

}  // namespace npu::client::cli
