#include "server/train/gradient_graphs.h"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "server/train/amp.h"
#include "server/train/autodiff.h"
#include "server/train/graph_editor.h"
#include "server/train/model_spec.h"
#include "server/train/training_forward.h"
#include "server/train/value_types.h"

namespace npu::train {
namespace {

absl::StatusOr<ModelSpec> SpecOf(v1::Graph model, const GradientRequest& request) {
  ModelSpec spec;
  NameNodes(model);
  const std::set<std::string> stats = RunningStatistics(model);
  std::set<std::string> seen;
  for (const std::string& p : request.parameters) {
    const v1::Initializer* init = FindInitializer(model, p);
    if (init == nullptr || !graph::IsFloat(init->tensor().dtype())) {
      return absl::InvalidArgumentError(absl::StrCat("parameter \"", p, "\" is not a float initializer of the model"));
    }
    if (stats.contains(p)) {
      return absl::InvalidArgumentError(absl::StrCat("\"", p, "\" is a BatchNormalization running statistic, which "
                                                     "the forward updates; it is not a parameter"));
    }
    if (!seen.insert(p).second) return absl::InvalidArgumentError(absl::StrCat("parameter \"", p, "\" is named twice"));
    spec.params.push_back(p);
  }
  for (const auto& init : model.initializers()) {
    if (stats.contains(init.name()) && graph::IsFloat(init.tensor().dtype())) spec.buffers.push_back(init.name());
  }
  const std::set<std::string> bn_params = BatchNormInputs(model, {1, 2});
  for (const std::string& p : spec.params) {
    if (bn_params.contains(p)) spec.bn_params.push_back(p);
  }
  std::set<std::string> inputs;
  for (const auto& in : model.inputs()) {
    for (int64_t d : in.shape()) {
      if (d < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "input \"", in.name(), "\" has a dynamic dim: gradient graphs are built for one signature, so give "
            "every input its shape (a host autograd registers each input signature it meets)"));
      }
    }
    if (graph::IsFloat(in.dtype())) inputs.insert(in.name());
  }
  std::set<std::string> wrt;
  for (const std::string& w : request.wrt) {
    if (!inputs.contains(w) && !seen.contains(w)) {
      return absl::InvalidArgumentError(absl::StrCat("gradient of \"", w, "\" asked for: it is neither a float input of "
                                                     "the model nor one of the parameters"));
    }
    if (!wrt.insert(w).second) return absl::InvalidArgumentError(absl::StrCat("wrt \"", w, "\" is named twice"));
  }
  spec.graph = std::move(model);
  return spec;
}

// The nodes of `g` from `first` on that the values `wanted` need, by index.
std::vector<int> NeededNodes(const v1::Graph& g, int first, std::set<std::string> wanted) {
  std::vector<int> kept;
  for (int i = g.nodes_size() - 1; i >= first; --i) {
    const v1::Node& n = g.nodes(i);
    bool any = false;
    for (const auto& out : n.outputs()) any = any || wanted.contains(out);
    if (!any) continue;
    kept.push_back(i);
    for (const auto& in : n.inputs()) {
      if (!in.empty()) wanted.insert(in);
    }
  }
  return {kept.rbegin(), kept.rend()};
}

v1::ValueInfo Info(const std::string& name, const graph::TensorType& t) {
  v1::ValueInfo v;
  v.set_name(name);
  v.set_dtype(t.dtype);
  for (int64_t d : t.shape) v.add_shape(d);
  return v;
}

}  // namespace

absl::StatusOr<GradientGraphs> BuildGradientGraphs(v1::Graph model, const GradientRequest& request,
                                                   const device::DevicePreset& preset) {
  auto spec = SpecOf(std::move(model), request);
  if (!spec.ok()) return spec.status();
  GradientGraphs out;
  v1::Graph& f = out.forward;
  auto io = MakeForward(*spec, kDeclaredShapes, request.training, f);
  if (!io.ok()) return io.status();
  if (auto s = FoldShapeComputations(f, preset); !s.ok()) return s;
  f.set_name(spec->graph.name() + "/forward");
  out.dropout_seed = io->dropout_seed;
  out.buffers = spec->buffers;
  for (const std::string& b : spec->buffers) {
    auto it = io->buffer_out.find(b);
    out.buffer_outputs.push_back(it == io->buffer_out.end() ? "" : it->second);
    if (it != io->buffer_out.end()) f.add_outputs(it->second);
  }
  auto facts = InferGraphFacts(f, preset);
  if (!facts.ok()) return facts.status();
  if (request.amp != AmpLevel::kO0) {
    std::vector<std::string> data, outputs;
    for (const auto& in : spec->graph.inputs()) {
      if (graph::IsFloat(in.dtype())) data.push_back(in.name());
    }
    for (const std::string& y : spec->graph.outputs()) {
      if (graph::IsFloat(facts->types.at(y).dtype)) outputs.push_back(y);
    }
    ApplyAmp(request.amp, *spec, data, outputs, f, preset.fp16_saturation);
    facts = InferGraphFacts(f, preset);
    if (!facts.ok()) return facts.status();
  }

  if (request.wrt.empty()) {  // a forward alone (a train-mode run without autograd): nothing saved
    out.grad_outputs.assign(spec->graph.outputs_size(), "");
    return out;
  }
  // The whole of it, forward then backward, in one graph `g`; split below.
  v1::Graph g = f;
  const int forward_nodes = g.nodes_size();
  BackwardRequest vjp;
  vjp.wrt = request.wrt;
  std::vector<std::string> seeds;
  {
    GraphEditor e(&g);
    for (const std::string& y : spec->graph.outputs()) {
      const bool differentiable = graph::IsFloat(facts->types.at(y).dtype);
      seeds.push_back(differentiable ? e.FreshValue("grad/" + y) : "");
      if (differentiable) vjp.output_grads.emplace_back(y, seeds.back());
    }
  }
  if (vjp.output_grads.empty()) return absl::InvalidArgumentError("the model has no float output to differentiate");
  auto grads = AppendBackward(g, vjp, preset);
  if (!grads.ok()) return grads.status();

  // Every gradient the output of a node of its own in the backward: one that
  // is a constant (zero), an input's gradient given as is, or the same value
  // as another's gets an Identity.
  std::map<std::string, int> producer;
  for (int i = 0; i < g.nodes_size(); ++i) {
    for (const auto& o : g.nodes(i).outputs()) producer[o] = i;
  }
  {
    GraphEditor e(&g);
    std::set<std::string> taken;
    for (std::string& grad : *grads) {
      auto p = producer.find(grad);
      if (p == producer.end() || p->second < forward_nodes || !taken.insert(grad).second) {
        grad = e.Add1("Identity", {grad}, {}, "grad/out");
        taken.insert(grad);
      }
    }
  }
  out.gradients = *grads;
  // What the backward reads from outside it is a forward value (typed by the
  // forward's facts) or an input of `g` (the outputs' gradients among them).
  std::map<std::string, const v1::ValueInfo*> g_inputs;
  for (const auto& in : g.inputs()) g_inputs[in.name()] = &in;

  v1::Graph& b = out.backward;
  b.set_name(spec->graph.name() + "/backward");
  std::map<std::string, const v1::Initializer*> initializers;
  for (const auto& init : g.initializers()) initializers[init.name()] = &init;
  const std::vector<int> kept = NeededNodes(g, forward_nodes, {out.gradients.begin(), out.gradients.end()});
  std::set<std::string> produced, read;
  for (int i : kept) {
    for (const auto& o : g.nodes(i).outputs()) produced.insert(o);
  }
  std::set<std::string> forward_outputs(f.outputs().begin(), f.outputs().end());
  for (int i : kept) {
    const v1::Node& n = g.nodes(i);
    *b.add_nodes() = n;
    for (const auto& in : n.inputs()) {
      if (in.empty() || produced.contains(in) || !read.insert(in).second) continue;
      if (auto init = initializers.find(in); init != initializers.end()) {
        *b.add_initializers() = *init->second;
        continue;
      }
      if (auto t = facts->types.find(in); t != facts->types.end()) {
        *b.add_inputs() = Info(in, t->second);
      } else if (auto gi = g_inputs.find(in); gi != g_inputs.end()) {
        *b.add_inputs() = *gi->second;
      } else {
        return absl::InternalError(absl::StrCat("the backward reads \"", in, "\", which has no type"));
      }
      auto p = producer.find(in);
      if (p != producer.end() && p->second < forward_nodes && !forward_outputs.contains(in)) {
        out.saved.push_back(in);
        forward_outputs.insert(in);
        f.add_outputs(in);
      }
    }
  }
  for (const std::string& grad : out.gradients) b.add_outputs(grad);
  // The device's float status of the backward, as apex for Ascend reads it
  // after loss.backward(): ordered after every gradient.
  GraphEditor e(&b);
  out.float_status = e.Add1("NPUGetFloatStatus", out.gradients, {}, "grad/float_status");
  b.add_outputs(out.float_status);
  for (const std::string& s : seeds) out.grad_outputs.push_back(read.contains(s) ? s : "");
  return out;
}

}  // namespace npu::train
