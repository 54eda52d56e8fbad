#include "onnx/opsets.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "absl/strings/str_cat.h"

namespace npu::onnxio {
namespace {

using ::onnx::AttributeProto;
using ::onnx::NodeProto;
using C = OpsetChange;

constexpr const char* kReduceSince18[] = {"ReduceL1",   "ReduceL2",  "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
                                          "ReduceMean", "ReduceMin", "ReduceProd",   "ReduceSumSquare"};

std::vector<OpsetChange> MakeChanges() {
  std::vector<OpsetChange> c = {
      // Ops the server runs that ONNX added within the served opsets.
      {"Expand", 8, C::kIntroduced},
      {"ConstantOfShape", 9, C::kIntroduced},
      {"Erf", 9, C::kIntroduced},
      {"Sign", 9, C::kIntroduced},
      {"Where", 9, C::kIntroduced},
      {"Mod", 10, C::kIntroduced},
      {"Resize", 10, C::kIntroduced},
      {"CumSum", 11, C::kIntroduced},
      {"GatherElements", 11, C::kIntroduced},
      {"Range", 11, C::kIntroduced},
      {"Round", 11, C::kIntroduced},
      {"ScatterND", 11, C::kIntroduced},
      {"Celu", 12, C::kIntroduced},
      {"Einsum", 12, C::kIntroduced},
      {"GreaterOrEqual", 12, C::kIntroduced},
      {"LessOrEqual", 12, C::kIntroduced},
      {"SoftmaxCrossEntropyLoss", 12, C::kIntroduced},
      {"NegativeLogLikelihoodLoss", 12, C::kIntroduced},
      {"CastLike", 15, C::kIntroduced},
      {"HardSwish", 14, C::kIntroduced},
      {"Trilu", 14, C::kIntroduced},
      {"LayerNormalization", 17, C::kIntroduced},
      {"GroupNormalization", 18, C::kIntroduced},
      {"Mish", 18, C::kIntroduced},
      {"Gelu", 20, C::kIntroduced},
      // Attributes added.
      {"MaxPool", 8, C::kAttributeAdded, "storage_order"},
      {"AveragePool", 10, C::kAttributeAdded, "ceil_mode"},
      {"MaxPool", 10, C::kAttributeAdded, "ceil_mode"},
      {"MaxPool", 10, C::kAttributeAdded, "dilations"},
      {"DepthToSpace", 11, C::kAttributeAdded, "mode"},
      {"TopK", 11, C::kAttributeAdded, "largest"},
      {"TopK", 11, C::kAttributeAdded, "sorted"},
      {"ArgMax", 12, C::kAttributeAdded, "select_last_index"},
      {"ArgMin", 12, C::kAttributeAdded, "select_last_index"},
      {"Constant", 12, C::kAttributeAdded, "value_float"},
      {"Constant", 12, C::kAttributeAdded, "value_floats"},
      {"Constant", 12, C::kAttributeAdded, "value_int"},
      {"Constant", 12, C::kAttributeAdded, "value_ints"},
      {"BatchNormalization", 14, C::kAttributeAdded, "training_mode"},
      {"GRU", 14, C::kAttributeAdded, "layout"},
      {"LSTM", 14, C::kAttributeAdded, "layout"},
      {"Reshape", 14, C::kAttributeAdded, "allowzero"},
      {"Shape", 15, C::kAttributeAdded, "start"},
      {"Shape", 15, C::kAttributeAdded, "end"},
      {"ScatterND", 16, C::kAttributeAdded, "reduction"},
      {"ScatterND", 18, C::kValueAdded, "reduction", "max"},
      {"ScatterND", 18, C::kValueAdded, "reduction", "min"},
      {"Split", 18, C::kAttributeAdded, "num_outputs"},
      {"Resize", 13, C::kValueRemoved, "coordinate_transformation_mode", "tf_half_pixel_for_nn"},
      {"Resize", 18, C::kAttributeAdded, "antialias"},
      {"Resize", 18, C::kAttributeAdded, "axes"},
      {"Resize", 18, C::kAttributeAdded, "keep_aspect_ratio_policy"},
      {"Resize", 19, C::kValueAdded, "coordinate_transformation_mode", "half_pixel_symmetric"},
      {"Pad", 18, C::kInputAdded, "axes", "", 3, "none (pads covers every axis)"},
      {"Pad", 19, C::kValueAdded, "mode", "wrap"},
      {"AveragePool", 19, C::kAttributeAdded, "dilations"},
      {"Cast", 19, C::kAttributeAdded, "saturate"},
      {"GroupNormalization", 21, C::kAttributeAdded, "stash_type"},
      {"GroupNormalization", 21, C::kNoted, "", "", -1,
       "scale and bias per channel from 21, per group before: the op takes either by its length"},
      {"BatchNormalization", 9, C::kAttributeRemoved, "spatial"},  // statistics are per channel since
      // Attributes that became inputs (the server's ops take the inputs, and
      // refuse the older attributes as attributes they do not know).
      {"Slice", 10, C::kInputAdded, "starts", "", 1, "the attribute \"starts\""},
      {"Slice", 10, C::kInputAdded, "ends", "", 2, "the attribute \"ends\""},
      {"Slice", 10, C::kInputAdded, "axes", "", 3, "the attribute \"axes\""},
      {"Slice", 10, C::kInputAdded, "steps", "", 4, "none"},
      {"TopK", 10, C::kInputAdded, "K", "", 1, "the attribute \"k\""},
      {"Clip", 11, C::kInputAdded, "min", "", 1, "the attribute \"min\""},
      {"Clip", 11, C::kInputAdded, "max", "", 2, "the attribute \"max\""},
      {"Pad", 11, C::kInputAdded, "pads", "", 1, "the attribute \"pads\""},
      {"Pad", 11, C::kInputAdded, "constant_value", "", 2, "the attribute \"value\""},
      {"Squeeze", 13, C::kAttributeRemoved, "axes", "", -1, "input 1"},
      {"Squeeze", 13, C::kInputAdded, "axes", "", 1, "the attribute \"axes\""},
      {"Unsqueeze", 13, C::kAttributeRemoved, "axes", "", -1, "input 1"},
      {"Unsqueeze", 13, C::kInputAdded, "axes", "", 1, "the attribute \"axes\""},
      {"Split", 13, C::kAttributeRemoved, "split", "", -1, "input 1"},
      {"Split", 13, C::kInputAdded, "split", "", 1, "the attribute \"split\""},
      {"ReduceSum", 13, C::kAttributeRemoved, "axes", "", -1, "input 1"},
      {"ReduceSum", 13, C::kInputAdded, "axes", "", 1, "the attribute \"axes\""},
      {"ReduceSum", 13, C::kAttributeAdded, "noop_with_empty_axes"},
      {"Dropout", 12, C::kInputAdded, "ratio", "", 1, "the attribute \"ratio\""},
      {"Dropout", 12, C::kInputAdded, "training_mode", "", 2, "none (inference only)"},
      // What an op computed before.
      {"Resize", 11, C::kServedFrom, "", "", -1,
       "Resize-10 places its samples as Upsample did (no coordinate_transformation_mode); export at opset 11 or "
       "later"},
      {"Dropout", 12, C::kRewritten, "", "", -1,
       "the attribute \"ratio\" is dropped: before 12 Dropout has no training mode, so it is the identity"},
      {"Softmax", 13, C::kRewritten, "", "", -1,
       "before 13 the input is coerced to 2-D at axis (default 1): axis -1 runs as it is, any other as "
       "Flatten(axis), Softmax(-1), Reshape to the input's shape"},
      {"LogSoftmax", 13, C::kRewritten, "", "", -1, "as Softmax"},
      {"Hardmax", 13, C::kRewritten, "", "", -1, "as Softmax"},
  };
  for (const char* op : kReduceSince18) {
    c.push_back({op, 18, C::kAttributeRemoved, "axes", "", -1, "input 1"});
    c.push_back({op, 18, C::kInputAdded, "axes", "", 1, "the attribute \"axes\""});
    c.push_back({op, 18, C::kAttributeAdded, "noop_with_empty_axes"});
  }
  // By op, then opset: the table reads as each op's history.
  std::stable_sort(c.begin(), c.end(), [](const OpsetChange& a, const OpsetChange& b) {
    const int order = std::strcmp(a.op, b.op);
    return order != 0 ? order < 0 : a.opset < b.opset;
  });
  return c;
}

const AttributeProto* FindAttribute(const NodeProto& n, const std::string& name) {
  for (const AttributeProto& a : n.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

std::string Imports(int opset) { return absl::StrCat("the model imports opset ", opset); }

// Value names (and node names) already taken, for the nodes a rewrite adds.
class Names {
 public:
  explicit Names(const ::onnx::GraphProto& g) {
    for (const auto& v : g.input()) taken_.insert(v.name());
    for (const auto& v : g.initializer()) taken_.insert(v.name());
    for (const auto& n : g.node()) {
      taken_.insert(n.name());
      taken_.insert(n.output().begin(), n.output().end());
    }
  }
  std::string Fresh(const std::string& base) {
    std::string name = base;
    for (int i = 1; !taken_.insert(name).second; ++i) name = absl::StrCat(base, "_", i);
    return name;
  }

 private:
  std::set<std::string> taken_;
};

NodeProto MakeNode(const std::string& op, const std::string& name, std::vector<std::string> inputs,
                   std::string output) {
  NodeProto n;
  n.set_op_type(op);
  n.set_name(name);
  for (auto& in : inputs) n.add_input(std::move(in));
  n.add_output(std::move(output));
  return n;
}

void SetIntAttribute(NodeProto& n, const std::string& name, int64_t value) {
  for (AttributeProto& a : *n.mutable_attribute()) {
    if (a.name() == name) {
      a.set_type(AttributeProto::INT);
      a.set_i(value);
      return;
    }
  }
  AttributeProto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(AttributeProto::INT);
  a->set_i(value);
}

// Softmax, LogSoftmax and Hardmax before opset 13: the input coerced to 2-D
// [d0 * .. * d(axis-1), d(axis) * ..], the op along the second axis, the
// result in the input's shape.
std::vector<NodeProto> RewriteCoerced2D(const NodeProto& node, Names& names) {
  const AttributeProto* a = FindAttribute(node, "axis");
  const int64_t axis = a != nullptr ? a->i() : 1;
  NodeProto same = node;
  SetIntAttribute(same, "axis", -1);
  if (axis == -1 || node.input_size() != 1 || node.output_size() != 1) return {same};  // -1: the same either way
  const std::string& x = node.input(0);
  const std::string& y = node.output(0);
  const std::string shape = names.Fresh(y + "/input_shape"), flat = names.Fresh(y + "/2d"),
                    flat_out = names.Fresh(y + "/2d_out");
  NodeProto flatten = MakeNode("Flatten", names.Fresh(node.name() + "/flatten"), {x}, flat);
  SetIntAttribute(flatten, "axis", axis);
  NodeProto op = MakeNode(node.op_type(), node.name(), {flat}, flat_out);  // keeps the node's name
  SetIntAttribute(op, "axis", -1);
  return {MakeNode("Shape", names.Fresh(node.name() + "/shape"), {x}, shape), std::move(flatten), std::move(op),
          MakeNode("Reshape", names.Fresh(node.name() + "/reshape"), {flat_out, shape}, y)};
}

// Dropout before 12: no training mode, so the identity; the ratio goes.
std::vector<NodeProto> RewriteDropout10(const NodeProto& node) {
  NodeProto out = node;
  auto* attrs = out.mutable_attribute();
  for (int i = attrs->size() - 1; i >= 0; --i) {
    if (attrs->Get(i).name() == "ratio") attrs->DeleteSubrange(i, 1);
  }
  return {out};
}

}  // namespace

absl::Span<const OpsetChange> OpsetChanges() {
  static const auto* changes = new std::vector<OpsetChange>(MakeChanges());
  return *changes;
}

absl::StatusOr<int> DefaultOpset(const ::onnx::ModelProto& model) {
  int found = 0;
  int version = 0;
  for (const auto& o : model.opset_import()) {
    if (!o.domain().empty() && o.domain() != "ai.onnx") continue;
    ++found;
    version = static_cast<int>(std::min<int64_t>(std::max<int64_t>(o.version(), INT32_MIN), INT32_MAX));
  }
  const std::string served = absl::StrCat("the server serves opsets ", kMinServedOpset, "-", kMaxServedOpset);
  if (found == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the model imports no opset of the default ONNX domain (no opset_import for \"\" or \"ai.onnx\"); ", served));
  }
  if (found > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("the model imports the default ONNX domain ", found, " times; it must name one opset"));
  }
  if (version < kMinServedOpset || version > kMaxServedOpset) {
    return absl::InvalidArgumentError(
        absl::StrCat(Imports(version), " of the default ONNX domain; ", served,
                     version < kMinServedOpset ? " (convert it with onnx.version_converter)" : ""));
  }
  return version;
}

void CheckNodeOpset(const NodeProto& node, const std::string& name, int opset, NodeProblems& problems) {
  const std::string quoted = absl::StrCat("\"", name, "\"");
  auto problem = [&](std::string what) { problems[std::move(what)].push_back(quoted); };
  for (const OpsetChange& c : OpsetChanges()) {
    if (node.op_type() != c.op) continue;
    const AttributeProto* a = c.name[0] != '\0' ? FindAttribute(node, c.name) : nullptr;
    const bool later = opset < c.opset;
    switch (c.kind) {
      case C::kIntroduced:
        if (later) problem(absl::StrCat("op type \"", c.op, "\" is in ONNX from opset ", c.opset, "; ", Imports(opset)));
        break;
      case C::kAttributeAdded:
        if (a != nullptr && later) {
          problem(absl::StrCat(c.op, " attribute \"", c.name, "\" is in ONNX from opset ", c.opset, "; ",
                               Imports(opset)));
        }
        break;
      case C::kAttributeRemoved:
        if (a != nullptr && !later) {
          problem(absl::StrCat(c.op, " attribute \"", c.name, "\" is the form of opsets before ", c.opset, "; ",
                               c.note[0] == '\0' ? Imports(opset) : absl::StrCat("at opset ", opset, " ", c.name,
                                                                                 " is ", c.note)));
        }
        break;
      case C::kValueAdded:
      case C::kValueRemoved:
        if (a != nullptr && a->s() == c.value && (c.kind == C::kValueAdded ? later : !later)) {
          problem(absl::StrCat(c.op, " attribute \"", c.name, "\" = \"", c.value, "\" is ",
                               c.kind == C::kValueAdded ? "in ONNX from opset " : "the form of opsets before ",
                               c.opset, "; ", Imports(opset)));
        }
        break;
      case C::kInputAdded:
        if (later && node.input_size() > c.input && !node.input(c.input).empty()) {
          problem(absl::StrCat(c.op, " input ", c.input, " (", c.name, ") is in ONNX from opset ", c.opset, "; at opset ",
                               opset, " ", c.name, " is ", c.note));
        }
        break;
      case C::kServedFrom:
        if (later) problem(absl::StrCat(c.op, " before opset ", c.opset, " is not served (", c.note, "); ", Imports(opset)));
        break;
      case C::kRewritten:
      case C::kNoted: break;
    }
  }
}

void AdaptToOpset(::onnx::GraphProto& graph, int opset, NodeProblems& problems) {
  for (int i = 0; i < graph.node_size(); ++i) {
    NodeProto* n = graph.mutable_node(i);
    if (n->name().empty()) n->set_name(absl::StrCat(n->op_type(), "_", i));
  }
  Names names(graph);
  google::protobuf::RepeatedPtrField<NodeProto> adapted;
  adapted.Reserve(graph.node_size());
  for (NodeProto& node : *graph.mutable_node()) {
    CheckNodeOpset(node, node.name(), opset, problems);
    std::vector<NodeProto> replacement;
    for (const OpsetChange& c : OpsetChanges()) {
      if (c.kind != C::kRewritten || node.op_type() != c.op || opset >= c.opset) continue;
      replacement = node.op_type() == "Dropout" ? RewriteDropout10(node) : RewriteCoerced2D(node, names);
    }
    if (replacement.empty()) {
      adapted.Add()->Swap(&node);
      continue;
    }
    for (NodeProto& r : replacement) adapted.Add()->Swap(&r);
  }
  graph.mutable_node()->Swap(&adapted);
}

std::string OpsetTableMarkdown() {
  std::string out = "| op | opset | change | a node of another opset |\n|---|---|---|---|\n";
  for (const OpsetChange& c : OpsetChanges()) {
    std::string change, other;
    switch (c.kind) {
      case C::kIntroduced:
        change = "the op is added";
        other = "earlier: refused";
        break;
      case C::kAttributeAdded:
        change = absl::StrCat("attribute `", c.name, "` added");
        other = "earlier, with it: refused";
        break;
      case C::kAttributeRemoved:
        change = c.note[0] == '\0' ? absl::StrCat("attribute `", c.name, "` removed")
                                   : absl::StrCat("attribute `", c.name, "` becomes ", c.note);
        other = "from then, with the attribute: refused";
        break;
      case C::kValueAdded:
        change = absl::StrCat("`", c.name, "` may be `", c.value, "`");
        other = "earlier, with that value: refused";
        break;
      case C::kValueRemoved:
        change = absl::StrCat("`", c.name, "` may no longer be `", c.value, "`");
        other = "from then, with that value: refused";
        break;
      case C::kInputAdded:
        change = absl::StrCat("input ", c.input, " (`", c.name, "`) added; before: ", c.note);
        other = "earlier, with it: refused";
        break;
      case C::kRewritten:
        change = "what the op computes";
        other = absl::StrCat("earlier: rewritten; ", c.note);
        break;
      case C::kServedFrom:
        change = "this version is the first served";
        other = absl::StrCat("earlier: refused; ", c.note);
        break;
      case C::kNoted:
        change = "what its inputs mean";
        other = c.note;
        break;
    }
    absl::StrAppend(&out, "| ", c.op, " | ", c.opset, " | ", change, " | ", other, " |\n");
  }
  return out;
}

}  // namespace npu::onnxio
