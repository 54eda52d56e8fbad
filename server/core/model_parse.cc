#include "server/core/model_parse.h"

#include "onnx/onnx_import.h"

namespace npu::core {

absl::StatusOr<LoadedModel> ParseModel(v1::RegisterGraphHeader::Format format, std::string bytes) {
  LoadedModel model;
  switch (format) {
    case v1::RegisterGraphHeader::ONNX: {
      auto imported = onnxio::ImportOnnxBytes(std::move(bytes));
      if (!imported.ok()) return imported.status();
      model.graph = std::make_shared<const v1::Graph>(std::move(imported->graph));
      model.declared_outputs = std::move(imported->outputs);
      return model;
    }
    case v1::RegisterGraphHeader::NPU_GRAPH: {
      auto graph = std::make_shared<v1::Graph>();
      if (!graph->ParseFromString(bytes)) {
        return absl::InvalidArgumentError("the model bytes are not a serialized npu.v1.Graph");
      }
      model.graph = std::move(graph);
      return model;
    }
    default:
      return absl::InvalidArgumentError("the model's format is not set (NPU_GRAPH or ONNX)");
  }
}

}  // namespace npu::core
