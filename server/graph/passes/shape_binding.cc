#include "server/graph/passes/shape_binding.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/graph/bounded_text.h"

namespace npu::graph {

bool HasDynamicDims(const v1::ValueInfo& input) {
  for (int64_t d : input.shape()) {
    if (d == kDynamicDim) return true;
  }
  return false;
}

bool HasDynamicInputs(const v1::Graph& graph) {
  for (const auto& in : graph.inputs()) {
    if (HasDynamicDims(in)) return true;
  }
  return false;
}

std::string DeclaredTypeString(const v1::ValueInfo& input) {
  return absl::StrCat(DataTypeName(input.dtype()), "[",
                      absl::StrJoin(input.shape(), ",",
                                    [](std::string* out, int64_t d) {
                                      absl::StrAppend(out, d == kDynamicDim ? "?" : absl::StrCat(d));
                                    }),
                      "]");
}

absl::Status ValidateDeclared(const v1::ValueInfo& input, const std::string& what) {
  google::protobuf::RepeatedField<int64_t> dims = input.shape();
  for (int64_t& d : dims) {
    if (d == kDynamicDim) d = 1;  // any size will do; the bound one is checked when it comes
  }
  return ValidateType(input.dtype(), dims, what).status();
}

absl::Status CheckFits(const v1::ValueInfo& declared, const TensorType& given) {
  bool fits = given.dtype == declared.dtype() && static_cast<int>(given.shape.size()) == declared.shape_size();
  for (int i = 0; fits && i < declared.shape_size(); ++i) {
    fits = declared.shape(i) == kDynamicDim || declared.shape(i) == given.shape[i];
  }
  if (fits) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("input ", Quoted(declared.name()), " is ", ToString(given),
                                                 "; the graph declares ", DeclaredTypeString(declared)));
}

absl::Status BindInputShapes(v1::Graph& graph, const std::vector<TensorType>& given) {
  if (static_cast<int>(given.size()) != graph.inputs_size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the graph has ", graph.inputs_size(), " inputs; ", given.size(), " were given"));
  }
  for (int i = 0; i < graph.inputs_size(); ++i) {
    v1::ValueInfo* in = graph.mutable_inputs(i);
    if (auto s = CheckFits(*in, given[i]); !s.ok()) return s;
    in->clear_shape();
    for (int64_t d : given[i].shape) in->add_shape(d);
  }
  return absl::OkStatus();
}

}  // namespace npu::graph
