#include "client/graph_json.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <google/protobuf/util/json_util.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace npu::client {

absl::StatusOr<npu::v1::Graph> ParseGraphJson(absl::string_view json, absl::string_view source) {
  npu::v1::Graph graph;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;  // a typo in a field name is an error, not a no-op
  const auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), &graph, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": not a valid npu.v1.Graph JSON: ", status.message().as_string()));
  }
  return graph;
}

absl::StatusOr<npu::v1::Graph> LoadGraphJson(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": is a directory, not a graph file"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open graph file"));
  std::ostringstream contents;
  contents << in.rdbuf();
  return ParseGraphJson(contents.str(), path);
}

absl::StatusOr<std::string> GraphToJson(const npu::v1::Graph& graph) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = false;
  const auto status = google::protobuf::util::MessageToJsonString(graph, &json, options);
  if (!status.ok()) return absl::InternalError(status.message().as_string());
  return json;
}

}  // namespace npu::client
