#include "server/train/amp.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <vector>

#include "kernels/fp16.h"
#include "server/train/graph_editor.h"

namespace npu::train {
namespace {

bool IsCubeOp(const std::string& op) { return op == "MatMul" || op == "Gemm" || op == "Conv"; }

std::string CastTo(GraphEditor& g, const std::string& v, graph::DataType to, const std::string& base) {
  return g.Add1("Cast", {v}, {{"to", AttrInt(OnnxFloatCode(to))}}, base);
}

// A Cast of `from` that writes the existing name `to` (a value whose readers
// stay as they are).
void CastInto(GraphEditor& g, const std::string& from, const std::string& to, graph::DataType dtype,
              const std::string& base) {
  v1::Node* c = g.graph().add_nodes();
  c->set_name(g.FreshNode(base));
  c->set_op_type("Cast");
  c->add_inputs(from);
  c->add_outputs(to);
  (*c->mutable_attributes())["to"] = AttrInt(OnnxFloatCode(dtype));
}

void ToHalf(v1::Tensor& t, bool saturate) {
  const size_t n = t.data().size() / 4;
  std::vector<float> f(n);
  std::memcpy(f.data(), t.data().data(), n * 4);
  std::string half(n * 2, '\0');
  kernels::FloatToHalfN(f.data(), reinterpret_cast<kernels::half_bits*>(half.data()), n, saturate);
  t.set_dtype(v1::FLOAT16);
  t.set_data(std::move(half));
}

void ApplyO1(v1::Graph& f) {
  GraphEditor g(&f);
  const int n = f.nodes_size();
  for (int i = 0; i < n; ++i) {
    if (!IsCubeOp(f.nodes(i).op_type())) continue;
    const std::string name = f.nodes(i).name();
    std::vector<std::string> inputs(f.nodes(i).inputs().begin(), f.nodes(i).inputs().end());
    for (std::string& in : inputs) {
      if (!in.empty()) in = CastTo(g, in, v1::FLOAT16, "amp/" + name + "/" + in);
    }
    const std::string out = f.nodes(i).outputs(0);
    const std::string half = g.FreshValue(out + "/fp16");
    v1::Node* node = f.mutable_nodes(i);
    node->mutable_inputs()->Clear();
    for (const std::string& in : inputs) node->add_inputs(in);
    node->set_outputs(0, half);
    // Back to fp32 under the original name, so every consumer is unchanged.
    CastInto(g, half, out, v1::FLOAT32, "amp/" + name + "/fp32");
  }
}

// The floats the model makes itself, made fp16: Constant nodes' values,
// ConstantOfShape's fill and casts to FLOAT (torch's .float() and the casts
// of its exports), so that each meets the fp16 activations in fp16, as
// Python numbers and .half()'d tensors do in apex's O2/O3 model. `keep`
// (values BatchNormalization reads at O2) stay fp32.
void MadeFloatsToHalf(v1::Graph& f, const std::set<std::string>& keep, bool saturate) {
  for (v1::Node& n : *f.mutable_nodes()) {
    if (!n.outputs().empty() && keep.contains(n.outputs(0))) continue;
    auto& attrs = *n.mutable_attributes();
    if (n.op_type() == "Constant" || n.op_type() == "ConstantOfShape") {
      if (auto it = attrs.find("value"); it != attrs.end() && it->second.has_t()) {
        if (it->second.t().dtype() == v1::FLOAT32) ToHalf(*it->second.mutable_t(), saturate);
        continue;
      }
      v1::Tensor t;
      t.set_dtype(v1::FLOAT32);
      if (auto it = attrs.find("value_float"); it != attrs.end()) {
        const float v = it->second.f();
        t.set_data(&v, sizeof v);
      } else if (auto it = attrs.find("value_floats"); it != attrs.end()) {
        t.add_shape(it->second.floats().values_size());
        t.set_data(it->second.floats().values().data(), sizeof(float) * it->second.floats().values_size());
      } else {
        continue;  // an integer constant
      }
      ToHalf(t, saturate);
      attrs.clear();
      *attrs["value"].mutable_t() = std::move(t);
    } else if (n.op_type() == "Cast") {
      if (auto it = attrs.find("to"); it != attrs.end() && it->second.i() == OnnxFloatCode(v1::FLOAT32)) {
        it->second = AttrInt(OnnxFloatCode(v1::FLOAT16));
      }
    }
  }
}

// F.normalize as torch exports it, Div(x, [Expand](Clip(ReduceL2(x), eps))),
// found in the fp32 model: the nodes and the bounds of its Clip (their fp32
// values, read before the model's constants become fp16).
struct Normalize {
  int reduce = -1, clip = -1, div = -1;
  std::vector<std::optional<v1::Tensor>> bounds;  // Clip's min and max, if given
};

// The fp32 value of `name` when it is a constant: an initializer, or a
// Constant node reached through at most `hops` Casts and Identities (a bound:
// the graph is not known to be acyclic yet).
std::optional<v1::Tensor> FloatConstant(const v1::Graph& f, const std::map<std::string, int>& producer,
                                        const std::string& name, int hops = 8) {
  for (const auto& init : f.initializers()) {
    if (init.name() == name) {
      return init.tensor().dtype() == v1::FLOAT32 ? std::optional<v1::Tensor>(init.tensor()) : std::nullopt;
    }
  }
  auto it = producer.find(name);
  if (it == producer.end()) return std::nullopt;
  const v1::Node& n = f.nodes(it->second);
  if ((n.op_type() == "Cast" || n.op_type() == "Identity") && n.inputs_size() == 1) {
    return hops > 0 ? FloatConstant(f, producer, n.inputs(0), hops - 1) : std::nullopt;
  }
  if (n.op_type() != "Constant") return std::nullopt;
  if (auto a = n.attributes().find("value"); a != n.attributes().end() && a->second.has_t() &&
                                             a->second.t().dtype() == v1::FLOAT32) {
    return a->second.t();
  }
  if (auto a = n.attributes().find("value_float"); a != n.attributes().end()) {
    v1::Tensor t;
    t.set_dtype(v1::FLOAT32);
    const float v = a->second.f();
    t.set_data(&v, sizeof v);
    return t;
  }
  return std::nullopt;
}

std::vector<Normalize> FindNormalizes(const v1::Graph& f) {
  std::map<std::string, int> producer;
  std::map<std::string, int> readers;
  for (int i = 0; i < f.nodes_size(); ++i) {
    for (const auto& o : f.nodes(i).outputs()) producer[o] = i;
    for (const auto& in : f.nodes(i).inputs()) ++readers[in];
  }
  auto made_by = [&](const std::string& v, const char* op) {
    auto it = producer.find(v);
    return it != producer.end() && f.nodes(it->second).op_type() == op && readers[v] == 1 ? it->second : -1;
  };
  std::vector<Normalize> found;
  for (int i = 0; i < f.nodes_size(); ++i) {
    const v1::Node& div = f.nodes(i);
    if (div.op_type() != "Div" || div.inputs_size() != 2) continue;
    std::string d = div.inputs(1);
    if (const int e = made_by(d, "Expand"); e >= 0) d = f.nodes(e).inputs(0);
    Normalize n;
    n.div = i;
    n.clip = made_by(d, "Clip");
    if (n.clip < 0) continue;
    n.reduce = made_by(f.nodes(n.clip).inputs(0), "ReduceL2");
    if (n.reduce < 0 || f.nodes(n.reduce).inputs(0) != div.inputs(0)) continue;
    bool constant = true;
    for (int k = 1; k < f.nodes(n.clip).inputs_size(); ++k) {
      const std::string& b = f.nodes(n.clip).inputs(k);
      n.bounds.push_back(b.empty() ? std::nullopt : FloatConstant(f, producer, b));
      constant = constant && (b.empty() || n.bounds.back().has_value());
    }
    if (constant) found.push_back(std::move(n));
  }
  return found;
}

// Runs each F.normalize in fp32 in the fp16 model (apex lists `normalize` among
// its fp32 functions): x cast to fp32 for the norm and the division, the Clip's
// epsilon (torch's 1e-12, 0 in fp16, so a zero vector such as a padded token
// would give 0/0) as an fp32 constant, the result cast back to fp16.
void NormalizesInFp32(GraphEditor& g, const std::vector<Normalize>& found) {
  v1::Graph& f = g.graph();
  for (const Normalize& n : found) {
    const std::string base = "amp/" + f.nodes(n.div).name();
    const std::string x32 = CastTo(g, f.nodes(n.div).inputs(0), v1::FLOAT32, base + "/x_fp32");
    f.mutable_nodes(n.reduce)->set_inputs(0, x32);
    f.mutable_nodes(n.div)->set_inputs(0, x32);
    for (size_t k = 0; k < n.bounds.size(); ++k) {
      if (!n.bounds[k]) continue;
      f.mutable_nodes(n.clip)->set_inputs(static_cast<int>(k) + 1, g.Constant(base + "/bound", *n.bounds[k]));
    }
    const std::string out = f.nodes(n.div).outputs(0), out32 = g.FreshValue(out + "/fp32");
    f.mutable_nodes(n.div)->set_outputs(0, out32);
    CastInto(g, out32, out, v1::FLOAT16, base + "/fp16");
  }
}

// O2 and O3: an fp16 model; at O2 BatchNormalization's parameters stay fp32.
// The data inputs arrive in fp32 and each float output leaves in fp32 under
// its own name (the model's fp16 value renamed, every reader of it unchanged).
void ApplyHalfModel(AmpLevel level, const ModelSpec& spec, const std::vector<std::string>& data_inputs,
                    const std::vector<std::string>& float_outputs, v1::Graph& f, bool saturate) {
  const std::vector<Normalize> normalizes = FindNormalizes(f);
  std::set<std::string> keep;
  if (level == AmpLevel::kO2) keep.insert(spec.bn_params.begin(), spec.bn_params.end());
  const std::set<std::string> fp32_buffers(spec.buffers.begin(), spec.buffers.end());
  const std::set<std::string> data(data_inputs.begin(), data_inputs.end());
  for (auto& in : *f.mutable_inputs()) {
    if (in.dtype() == v1::FLOAT32 && !data.contains(in.name()) && !keep.contains(in.name()) &&
        !fp32_buffers.contains(in.name())) {
      in.set_dtype(v1::FLOAT16);
    }
  }
  for (auto& init : *f.mutable_initializers()) {
    if (init.tensor().dtype() == v1::FLOAT32 && !keep.contains(init.name())) ToHalf(*init.mutable_tensor(), saturate);
  }
  MadeFloatsToHalf(f, keep, saturate);
  GraphEditor g(&f);
  // Each input arrives in fp32: one cast, and every reader reads the fp16 copy.
  std::map<std::string, std::string> half;
  for (const auto& in : f.inputs()) {
    if (data.contains(in.name()) && in.dtype() == v1::FLOAT32) half[in.name()] = g.FreshValue("amp/" + in.name() + "/fp16");
  }
  // Each float output: its producer writes a fresh fp16 value, which a cast
  // turns back into fp32 under the output's name.
  for (const std::string& out : float_outputs) half[out] = g.FreshValue(out + "/fp16");
  const int n = f.nodes_size();
  for (int i = 0; i < n; ++i) {
    v1::Node* node = f.mutable_nodes(i);
    for (auto& in : *node->mutable_inputs()) {
      if (auto it = half.find(in); it != half.end()) in = it->second;
    }
    for (auto& o : *node->mutable_outputs()) {
      if (auto it = half.find(o); it != half.end()) o = it->second;
    }
  }
  // The casts come last; graphs need not be sorted, the planner sorts them.
  for (const std::string& in : data_inputs) {
    if (half.contains(in)) CastInto(g, in, half.at(in), v1::FLOAT16, "amp/" + half.at(in));
  }
  for (const std::string& out : float_outputs) CastInto(g, half.at(out), out, v1::FLOAT32, "amp/" + out);
  NormalizesInFp32(g, normalizes);
}

}  // namespace

graph::DataType ModelDtype(AmpLevel level, const ModelSpec& spec, const std::string& param) {
  if (level == AmpLevel::kO3) return v1::FLOAT16;
  if (level != AmpLevel::kO2) return v1::FLOAT32;
  return std::find(spec.bn_params.begin(), spec.bn_params.end(), param) != spec.bn_params.end() ? v1::FLOAT32
                                                                                                  : v1::FLOAT16;
}

bool HasMasters(AmpLevel level, const ModelSpec& spec, const std::string& param) {
  return level == AmpLevel::kO2 && ModelDtype(level, spec, param) == v1::FLOAT16;
}

void ApplyAmp(AmpLevel level, const ModelSpec& spec, const std::vector<std::string>& data_inputs,
              const std::vector<std::string>& float_outputs, v1::Graph& forward, bool saturate) {
  switch (level) {
    case AmpLevel::kO0: return;
    case AmpLevel::kO1: return ApplyO1(forward);
    case AmpLevel::kO2:
    case AmpLevel::kO3: return ApplyHalfModel(level, spec, data_inputs, float_outputs, forward, saturate);
  }
}

}  // namespace npu::train
