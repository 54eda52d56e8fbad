#include "client/model_file.h"

#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/deterministic_bytes.h"
#include "base/sha256.h"
#include "client/graph_json.h"

namespace npu::client {

ModelFile ModelOf(const npu::v1::Graph& graph) {
  ModelFile m;
  m.format = npu::v1::RegisterGraphHeader::NPU_GRAPH;
  m.bytes = DeterministicBytes(graph);
  m.sha256 = Sha256Hex(m.bytes);
  return m;
}

absl::StatusOr<ModelFile> ReadModelFile(const std::string& path) {
  if (!absl::EndsWith(path, ".onnx")) {
    absl::StatusOr<npu::v1::Graph> graph = LoadGraphJson(path);
    if (!graph.ok()) return graph.status();
    return ModelOf(*graph);
  }
  std::ifstream f(path, std::ios::binary);
  if (!f) return absl::NotFoundError(absl::StrCat("cannot open ONNX model \"", path, "\""));
  std::ostringstream buf;
  buf << f.rdbuf();
  ModelFile m;
  m.format = npu::v1::RegisterGraphHeader::ONNX;
  m.bytes = std::move(buf).str();
  if (m.bytes.empty()) return absl::InvalidArgumentError(absl::StrCat("ONNX model \"", path, "\" is empty"));
  m.sha256 = Sha256Hex(m.bytes);
  return m;
}

}  // namespace npu::client
