#include "onnx/onnx_reweight.h"

#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "onnx/onnx_pb.h"

namespace npu::onnxio {

absl::StatusOr<std::string> ReweightOnnx(const std::string& onnx_bytes, const v1::Graph& trained,
                                         const std::vector<std::string>& names) {
  ::onnx::ModelProto model;
  if (!model.ParseFromString(onnx_bytes)) return absl::InternalError("the trainer's ONNX model no longer parses");
  std::unordered_map<std::string, const v1::Tensor*> by_name;
  for (const std::string& name : names) by_name[name] = nullptr;
  for (const v1::Initializer& init : trained.initializers()) {
    auto it = by_name.find(init.name());
    if (it != by_name.end() && init.tensor().dtype() == v1::FLOAT32) it->second = &init.tensor();
  }
  size_t replaced = 0;
  for (::onnx::TensorProto& t : *model.mutable_graph()->mutable_initializer()) {
    auto it = by_name.find(t.name());
    if (it == by_name.end() || it->second == nullptr) continue;
    t.set_data_type(::onnx::TensorProto::FLOAT);
    t.clear_float_data();
    t.clear_double_data();
    t.set_raw_data(it->second->data());
    ++replaced;
  }
  if (replaced != by_name.size()) {
    return absl::InternalError(absl::StrCat("only ", replaced, " of the ", by_name.size(),
                                            " trained tensors are initializers of the ONNX model"));
  }
  std::string out;
  if (!model.SerializeToString(&out)) return absl::InternalError("the trained ONNX model does not serialize");
  return out;
}

}  // namespace npu::onnxio
