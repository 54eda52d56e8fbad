#include "server/train/step_graph.h"

#include "absl/strings/str_cat.h"
#include "server/train/amp.h"
#include "server/train/autodiff.h"
#include "server/train/graph_editor.h"
#include "server/train/loss.h"
#include "server/train/optimizer.h"
#include "server/train/training_forward.h"
#include "server/train/value_types.h"

namespace npu::train {
namespace {

// The forward under amp and the loss, in `g`; returns the loss and sets the
// prediction (FLOAT32).
struct ForwardWithLoss {
  ForwardIO io;
  std::string prediction;
  LossIO loss;
};

absl::StatusOr<ForwardWithLoss> ForwardAndLoss(const ModelSpec& spec, const TrainConfig& config,
                                               const graph::Shape& x, bool training,
                                               const device::DevicePreset& preset, v1::Graph& g) {
  ForwardWithLoss f;
  auto io = MakeForward(spec, x, training, g);
  if (!io.ok()) return io.status();
  f.io = *std::move(io);
  if (auto s = FoldShapeComputations(g, preset); !s.ok()) return s;
  ApplyAmp(config.amp, spec, {spec.input}, {spec.output}, g, preset.fp16_saturation);
  f.prediction = spec.output;
  g.clear_outputs();
  g.add_outputs(f.prediction);
  auto facts = InferGraphFacts(g, preset);
  if (!facts.ok()) return facts.status();
  auto loss = AppendLoss(config.loss, f.prediction, facts->types.at(f.prediction), g);
  if (!loss.ok()) return loss.status();
  f.loss = *std::move(loss);
  return f;
}

}  // namespace

// DDP's buckets over `grads` (of spec.params): parameter indices, each
// bucket in the reverse order of the parameters.
std::vector<std::vector<size_t>> Buckets(const ModelSpec& spec, const TrainConfig& config) {
  std::vector<std::vector<size_t>> buckets;
  int64_t filled = 0;
  for (size_t k = spec.params.size(); k-- > 0;) {
    const graph::TensorType t = TypeOf(FindInitializer(spec.graph, spec.params[k])->tensor());
    const int64_t bytes = static_cast<int64_t>(graph::TensorType{ModelDtype(config.amp, spec, spec.params[k]), t.shape}.bytes());
    const int64_t cap = buckets.size() <= 1 ? config.ddp.first_bucket_bytes : config.ddp.bucket_bytes;
    if (buckets.empty() || (filled > 0 && filled + bytes > cap)) {
      buckets.emplace_back();
      filled = 0;
    }
    buckets.back().push_back(k);
    filled += bytes;
  }
  return buckets;
}

absl::StatusOr<StepGraph> BuildStepGraph(const ModelSpec& spec, const TrainConfig& config, const graph::Shape& x,
                                         const device::DevicePreset& preset, int world) {
  StepGraph step;
  v1::Graph& g = step.graph;
  g.set_name(spec.graph.name() + "/train_step");
  auto fwd = ForwardAndLoss(spec, config, x, /*training=*/true, preset, g);
  if (!fwd.ok()) return fwd.status();
  StepSignature& sig = step.sig;
  sig.x = spec.input;
  sig.labels = fwd->loss.labels;
  sig.loss = fwd->loss.loss;
  sig.dropout_seed = fwd->io.dropout_seed;
  sig.params = spec.params;
  sig.buffers = spec.buffers;
  g.clear_outputs();
  g.add_outputs(sig.loss);

  sig.loss_seed = "step/loss_seed";
  auto grads = AppendBackward(g, {sig.loss, sig.loss_seed, spec.params}, preset);
  if (!grads.ok()) return grads.status();

  GraphEditor e(&g);
  if (world > 1) {
    // The gradients are this shard's part of the batch mean (the loss seed
    // weights it): summed over the devices, they are the global batch's.
    int b = 0;
    for (const std::vector<size_t>& bucket : Buckets(spec, config)) {
      std::vector<std::string> in;
      for (size_t k : bucket) in.push_back((*grads)[k]);
      const auto out = e.Add("HcclAllReduce", in, static_cast<int>(in.size()), {}, absl::StrCat("ddp/bucket", b++));
      for (size_t j = 0; j < bucket.size(); ++j) (*grads)[bucket[j]] = out[j];
    }
  }
  sig.found_inf = e.Add1("NPUGetFloatStatus", *grads, {}, "step/float_status");
  if (world > 1) sig.found_inf = e.Add1("HcclAllReduce", {sig.found_inf}, {}, "ddp/float_status");
  sig.grad_scale = e.FreshValue("step/grad_scale");
  e.AddInput(sig.grad_scale, {v1::FLOAT32, {}});
  sig.lr = e.FreshValue("step/lr");
  e.AddInput(sig.lr, {v1::FLOAT32, {}});
  const OptimizerKind kind = config.optimizer.kind;
  if (kind == OptimizerKind::kAdam || kind == OptimizerKind::kAdamW) {
    sig.step = e.FreshValue("step/number");
    e.AddInput(sig.step, {v1::INT64, {}});
  }
  // Without loss scaling at O0 the float status is reported but skips nothing (SkipsOnOverflow).
  const std::string skip_if =
      SkipsOnOverflow(config) ? sig.found_inf : e.ScalarConstant("step/never_skip", 0.0f, v1::FLOAT32);
  const UpdateScalars scalars{sig.lr, sig.grad_scale, skip_if, sig.step};
  auto cast = [&](const std::string& v, graph::DataType to, const std::string& base) {
    return e.Add1("Cast", {v}, {{"to", AttrInt(OnnxFloatCode(to))}}, base);
  };
  for (size_t i = 0; i < spec.params.size(); ++i) {
    const std::string& p = spec.params[i];
    const graph::Shape shape = TypeOf(FindInitializer(spec.graph, p)->tensor()).shape;
    const graph::TensorType fp32{v1::FLOAT32, shape};
    const bool half = ModelDtype(config.amp, spec, p) == v1::FLOAT16;
    const bool masters = HasMasters(config.amp, spec, p);
    // O3 keeps no masters: the update reads the fp16 weights (and state) widened, and rounds what it writes.
    const bool pure = half && !masters;
    std::string master = p;
    if (masters) {
      master = e.FreshValue("master/" + p);
      e.AddInput(master, fp32);
    } else if (pure) {
      master = cast(p, v1::FLOAT32, "update/" + p + "/fp32");
    }
    sig.masters.push_back(masters ? master : "");
    std::vector<std::string> state, state_in;
    for (int s = 0; s < StateSlots(kind); ++s) {
      state.push_back(e.FreshValue("state/" + p + "/" + StateSlotName(kind, s)));
      e.AddInput(state.back(), {pure ? v1::FLOAT16 : v1::FLOAT32, shape});
      state_in.push_back(pure ? cast(state.back(), v1::FLOAT32, state.back() + "/fp32") : state.back());
    }
    sig.state.push_back(state);
    std::vector<std::string> out = AppendUpdate(config.optimizer, master, (*grads)[i], state_in, scalars, e);
    if (pure) {
      for (size_t k = 1; k < out.size(); ++k) out[k] = cast(out[k], v1::FLOAT16, out[k] + "/fp16");
    }
    sig.state_out.emplace_back(out.begin() + 1, out.end());
    if (half) {
      sig.masters_out.push_back(masters ? out[0] : "");
      // apex's master -> model copy: the fp16 weights the next step runs with.
      sig.params_out.push_back(cast(out[0], v1::FLOAT16, "update/" + p + "/fp16"));
    } else {
      sig.masters_out.push_back("");
      sig.params_out.push_back(out[0]);
    }
  }
  for (const std::string& b : spec.buffers) sig.buffers_out.push_back(fwd->io.buffer_out.at(b));

  g.clear_outputs();
  for (const std::string& o : {sig.loss, sig.found_inf}) g.add_outputs(o);
  for (const auto* list : {&sig.params_out, &sig.masters_out, &sig.buffers_out}) {
    for (const std::string& o : *list) {
      if (!o.empty()) g.add_outputs(o);
    }
  }
  for (const auto& slots : sig.state_out) {
    for (const std::string& o : slots) g.add_outputs(o);
  }
  return step;
}

absl::StatusOr<EvalGraph> BuildEvalGraph(const ModelSpec& spec, const TrainConfig& config, const graph::Shape& x,
                                         const device::DevicePreset& preset) {
  EvalGraph eval;
  eval.graph.set_name(spec.graph.name() + "/evaluate");
  auto fwd = ForwardAndLoss(spec, config, x, /*training=*/false, preset, eval.graph);
  if (!fwd.ok()) return fwd.status();
  eval.sig = {spec.input, fwd->loss.labels, spec.params, spec.buffers, fwd->prediction, fwd->loss.loss};
  eval.graph.clear_outputs();
  eval.graph.add_outputs(eval.sig.prediction);
  eval.graph.add_outputs(eval.sig.loss);
  return eval;
}

}  // namespace npu::train
