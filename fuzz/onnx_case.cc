#include "fuzz/onnx_case.h"

#include <cstring>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "onnx/onnx_import.h"
#include "onnx/supported_ops.h"
#include "server/device/device.h"
#include "server/device/device_preset.h"
#include "server/graph/passes/prepare_graph.h"
#include "server/graph/passes/shape_binding.h"
#include "server/graph/runner.h"

namespace npu::fuzz {
namespace {

using ::onnx::AttributeProto;
using ::onnx::GraphProto;
using ::onnx::NodeProto;
using ::onnx::TensorProto;

constexpr graph::PlanLimits kLimits{256, 1 << 20};
constexpr uint64_t kMaxRunBytes = 1 << 20;

const std::vector<std::string>& OpTypes() {
  static const auto* ops = [] {
    auto* v = new std::vector<std::string>{"", "Upsample", "If", "Loop", "Scan", "NoSuchOp"};
    for (const auto& [op, attrs] : onnxio::SupportedOps()) v->push_back(op);
    return v;
  }();
  return *ops;
}

int64_t Extreme(ChoiceSource& src) {
  static const std::vector<int64_t> v = {0, 1, -1, 2, 3, 7, 64, 1 << 20, int64_t{1} << 40,
                                         std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(),
                                         std::numeric_limits<int32_t>::max()};
  return src.Pick(v);
}

std::vector<std::string> ValueNames(const GraphProto& g) {
  std::vector<std::string> names;
  for (const auto& v : g.input()) names.push_back(v.name());
  for (const auto& v : g.initializer()) names.push_back(v.name());
  for (const auto& n : g.node()) names.insert(names.end(), n.output().begin(), n.output().end());
  if (names.empty()) names.push_back("x");
  return names;
}

void MutateAttribute(AttributeProto& a, ChoiceSource& src, int depth) {
  switch (src.Below(7)) {
    case 0: a.set_type(static_cast<AttributeProto::AttributeType>(src.Below(15))); break;
    case 1: a.set_i(Extreme(src)); break;
    case 2: a.set_f(src.Pick(std::vector<float>{0.f, -1.f, 1e30f, std::numeric_limits<float>::quiet_NaN(),
                                                std::numeric_limits<float>::infinity()})); break;
    case 3:
      a.clear_ints();
      for (uint64_t i = 0, n = src.Below(src.Chance(5) ? 300 : 6); i < n; ++i) a.add_ints(Extreme(src));
      break;
    case 4: a.set_s(src.Chance(50) ? "nonsense" : std::string(1000, '\xff')); break;
    case 5: {  // a subgraph, nested: the importer refuses graph attributes, without recursion of its own
      a.set_type(AttributeProto::GRAPH);
      GraphProto* g = a.mutable_g();
      for (int d = 0; d < depth && d < 30; ++d) {
        NodeProto* n = g->add_node();
        n->set_op_type("If");
        AttributeProto* inner = n->add_attribute();
        inner->set_name("then_branch");
        inner->set_type(AttributeProto::GRAPH);
        g = inner->mutable_g();
      }
      break;
    }
    default: a.set_name(src.Chance(50) ? "" : "undeclared"); break;
  }
}

void MutateTensor(TensorProto& t, ChoiceSource& src) {
  switch (src.Below(6)) {
    case 0:
      t.clear_dims();
      for (uint64_t i = 0, n = src.Below(src.Chance(5) ? 40 : 4); i < n; ++i) t.add_dims(Extreme(src));
      break;
    case 1: t.set_data_type(static_cast<int32_t>(src.Below(24))); break;
    case 2: t.mutable_raw_data()->resize(src.Below(t.raw_data().size() + 16)); break;
    case 3:
      t.clear_raw_data();
      for (uint64_t i = 0, n = src.Below(8); i < n; ++i) t.add_float_data(1.5f);
      break;
    case 4: t.set_data_location(TensorProto::EXTERNAL); break;
    default: t.set_name(src.Chance(50) ? "" : "x"); break;
  }
}

void MutateNode(GraphProto& g, ChoiceSource& src) {
  if (g.node_size() == 0) {
    NodeProto* n = g.add_node();
    n->set_op_type(src.Pick(OpTypes()));
    n->add_input(src.Pick(ValueNames(g)));
    n->add_output("new");
    return;
  }
  NodeProto& n = *g.mutable_node(static_cast<int>(src.Below(g.node_size())));
  const std::vector<std::string> names = ValueNames(g);
  switch (src.Below(10)) {
    case 0: n.set_op_type(src.Pick(OpTypes())); break;
    case 1: n.set_domain(src.Pick(std::vector<std::string>{"", "ai.onnx", "com.microsoft", "ai.onnx.ml"})); break;
    case 2:
      if (n.input_size() > 0) n.set_input(static_cast<int>(src.Below(n.input_size())), src.Pick(names));
      break;
    case 3:  // an output renamed onto another value: two definitions
      if (n.output_size() > 0) n.set_output(static_cast<int>(src.Below(n.output_size())), src.Pick(names));
      break;
    case 4: n.clear_output(); break;
    case 5: *g.add_node() = n; break;
    case 6:
      if (n.attribute_size() > 0) {
        MutateAttribute(*n.mutable_attribute(static_cast<int>(src.Below(n.attribute_size()))), src,
                        static_cast<int>(src.Below(40)));
      } else {
        AttributeProto* a = n.add_attribute();
        a->set_name("axis");
        a->set_type(AttributeProto::INT);
        MutateAttribute(*a, src, 3);
      }
      break;
    case 7: n.add_input(src.Chance(50) ? "" : src.Pick(names)); break;
    case 8: n.add_output(src.Chance(50) ? "" : "extra"); break;
    default: g.mutable_node()->SwapElements(0, static_cast<int>(src.Below(g.node_size()))); break;
  }
}

}  // namespace

void MutateModel(::onnx::ModelProto& model, ChoiceSource& src) {
  GraphProto& g = *model.mutable_graph();
  for (uint64_t m = 0, count = 1 + src.Below(4); m < count; ++m) {
    switch (src.Below(8)) {
      case 0: {
        if (model.opset_import_size() == 0 || src.Chance(20)) model.add_opset_import()->set_domain("");
        auto* o = model.mutable_opset_import(static_cast<int>(src.Below(model.opset_import_size())));
        o->set_version(src.Pick(std::vector<int64_t>{0, 1, 6, 7, 10, 11, 12, 13, 17, 18, 20, 21, 22, 99, -5,
                                                     std::numeric_limits<int64_t>::max()}));
        if (src.Chance(20)) o->set_domain(src.Chance(50) ? "ai.onnx" : "com.example");
        break;
      }
      case 1:
        if (src.Chance(50)) model.clear_opset_import();
        break;
      case 2:
      case 3:
      case 4: MutateNode(g, src); break;
      case 5:
        if (g.initializer_size() > 0) MutateTensor(*g.mutable_initializer(static_cast<int>(src.Below(g.initializer_size()))), src);
        break;
      case 6:
        if (g.input_size() > 0) {
          auto* t = g.mutable_input(static_cast<int>(src.Below(g.input_size())))->mutable_type()->mutable_tensor_type();
          if (src.Chance(50)) {
            t->set_elem_type(static_cast<int32_t>(src.Below(24)));
          } else if (t->shape().dim_size() > 0) {
            t->mutable_shape()->mutable_dim(static_cast<int>(src.Below(t->shape().dim_size())))->set_dim_value(Extreme(src));
          }
        }
        break;
      default:
        if (src.Chance(50) && g.output_size() > 0) {
          g.mutable_output(static_cast<int>(src.Below(g.output_size())))->set_name(src.Pick(ValueNames(g)));
        } else {
          g.add_output()->set_name(src.Chance(50) ? "undefined" : "");
        }
        break;
    }
  }
}

std::string CheckOnnxModel(const std::string& bytes) {
  static auto* device = [] {
    device::DeviceOptions o;
    o.omp_threads = 1;
    o.max_queue = 4;
    return new device::Device(0, *device::PresetByName("ascend310"), o);
  }();
  auto clear = [](const absl::Status& s, const char* where) -> std::string {
    if (s.code() == absl::StatusCode::kInternal || s.code() == absl::StatusCode::kUnknown) {
      return absl::StrCat(where, " answered ", s.ToString().substr(0, 400));
    }
    return "";
  };
  auto imported = onnxio::ImportOnnxBytes(bytes);
  if (!imported.ok()) return clear(imported.status(), "the import");
  auto model = std::make_shared<const v1::Graph>(std::move(imported->graph));
  if (graph::HasDynamicInputs(*model)) return "";
  auto plan = graph::PreparePlan(model, nullptr, device->preset(), kLimits);
  if (!plan.ok()) return clear(plan.status(), "planning");
  if ((*plan)->value_bytes > kMaxRunBytes) return "";
  std::vector<graph::HostTensor> inputs;
  for (int id : (*plan)->inputs) {
    graph::HostTensor t = graph::HostTensor::Allocate((*plan)->values[id].type);
    if (t.bytes() > 0) std::memset(t.mutable_data(), 0, t.bytes());
    inputs.push_back(std::move(t));
  }
  auto result = graph::RunPlan(*plan, std::move(inputs), graph::ExecOptions{}, *device);
  return result.ok() ? "" : clear(result.status(), "the run");
}

}  // namespace npu::fuzz
