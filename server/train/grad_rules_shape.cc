// Gradient rules of the views and the data movement: a view's gradient is dy
// viewed back in the input's shape, Transpose's is the inverse permutation,
// Concat and Split undo each other, Expand sums over what it broadcast, and
// Gather's scatter-adds (GatherGrad). Slice has no rule yet.
#include "absl/strings/str_cat.h"
#include "server/train/gradient_rules.h"

namespace npu::train {
namespace {

absl::Status ViewRule(GradContext& c) {
  c.dx[0] = c.Reshape(c.dy[0], c.OutputType(0).shape, c.InputType(0).shape);
  return absl::OkStatus();
}

absl::Status TransposeRule(GradContext& c) {
  const size_t rank = c.InputType(0).shape.size();
  std::vector<int64_t> reversed;
  for (size_t i = 0; i < rank; ++i) reversed.push_back(static_cast<int64_t>(rank - 1 - i));
  const std::vector<int64_t> perm = c.IntsAttr("perm", reversed);
  std::vector<int64_t> inverse(rank);
  for (size_t i = 0; i < rank; ++i) inverse[perm[i]] = static_cast<int64_t>(i);
  c.dx[0] = c.g.Add1("Transpose", {c.dy[0]}, {{"perm", AttrInts(inverse)}}, c.Base());
  return absl::OkStatus();
}

int64_t AxisAttr(const v1::Node& node, int64_t fallback, size_t rank) {
  auto it = node.attributes().find("axis");
  const int64_t a = it == node.attributes().end() ? fallback : it->second.i();
  return a < 0 ? a + static_cast<int64_t>(rank) : a;
}

absl::Status ConcatRule(GradContext& c) {
  const size_t rank = c.OutputType(0).shape.size();
  const int64_t axis = AxisAttr(c.node, 0, rank);
  std::vector<int64_t> sizes;
  for (int i = 0; i < c.node.inputs_size(); ++i) sizes.push_back(c.InputType(i).shape[axis]);
  const std::string split = c.g.IntsConstant(c.Base() + "/split", sizes);
  const auto parts = c.g.Add("Split", {c.dy[0], split}, static_cast<int>(sizes.size()), {{"axis", AttrInt(axis)}},
                             c.Base());
  for (int i = 0; i < c.node.inputs_size(); ++i) c.dx[i] = parts[i];
  return absl::OkStatus();
}

absl::Status SplitRule(GradContext& c) {
  const graph::TensorType& x = c.InputType(0);
  const int64_t axis = AxisAttr(c.node, 0, x.shape.size());
  std::vector<std::string> parts;
  for (int i = 0; i < c.node.outputs_size(); ++i) {
    if (!c.dy[i].empty()) {
      parts.push_back(c.dy[i]);
      continue;
    }
    // An output nobody used: its gradient is zero.
    const graph::TensorType& t = c.OutputType(i);
    v1::Tensor zeros;
    zeros.set_dtype(t.dtype);
    for (int64_t d : t.shape) zeros.add_shape(d);
    zeros.mutable_data()->assign(t.bytes(), '\0');
    parts.push_back(c.g.Constant(absl::StrCat(c.Base(), "/zeros"), std::move(zeros)));
  }
  c.dx[0] = c.g.Add1("Concat", parts, {{"axis", AttrInt(axis)}}, c.Base());
  return absl::OkStatus();
}

absl::Status GatherRule(GradContext& c) {
  Attributes at;
  if (auto it = c.node.attributes().find("axis"); it != c.node.attributes().end()) at["axis"] = it->second;
  c.dx[0] = c.g.Add1("GatherGrad", {c.dy[0], c.node.inputs(1), c.node.inputs(0)}, at, c.Base());
  return absl::OkStatus();
}

absl::Status ExpandRule(GradContext& c) {
  c.dx[0] = c.Unbroadcast(c.dy[0], c.OutputType(0).shape, c.InputType(0).shape);
  return absl::OkStatus();
}

}  // namespace

void AddShapeGradRules(std::map<std::string, GradRule>& rules) {
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Dropout"}) rules[op] = ViewRule;
  rules["Transpose"] = TransposeRule;
  rules["Concat"] = ConcatRule;
  rules["Split"] = SplitRule;
  rules["Gather"] = GatherRule;
  rules["Expand"] = ExpandRule;
}

}  // namespace npu::train
