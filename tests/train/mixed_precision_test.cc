// apex's semantics on the device: O1 and O2 graphs, fp32 master weights, the
// loss scaler's schedule, and overflow caught through the float-status flag,
// as the NPU does (on the saturating 910 an overflow leaves no inf behind).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <tuple>

#include "gtest/gtest.h"
#include "kernels/fp16.h"
#include "server/graph/runner.h"
#include "server/train/amp.h"
#include "server/train/graph_editor.h"
#include "server/train/step_graph.h"
#include "server/train/trainer.h"
#include "tests/train/train_test_support.h"

namespace npu::train {
namespace {

using graph::HostTensor;
using testing::AddNode;
using testing::BitwiseEqual;
using testing::DeviceFor;

v1::Tensor RandomTensor(std::vector<int64_t> shape, float scale, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-scale, scale);
  v1::Tensor t;
  t.set_dtype(v1::FLOAT32);
  int64_t n = 1;
  for (int64_t d : shape) t.add_shape(d), n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = u(rng);
  t.set_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4));
  return t;
}

// x [B, 16] -> Gemm -> BatchNorm -> Relu -> Gemm -> logits [B, 4].
// The model's data shape for batches of `rows`.
graph::Shape DataShape(const ModelSpec& spec, int64_t rows) {
  const auto& dims = spec.graph.inputs(0).shape();
  graph::Shape x(dims.begin(), dims.end());
  x[0] = rows;
  return x;
}

ModelSpec SmallModel(float weight_scale = 0.3f) {
  std::mt19937 rng(7);
  v1::Graph g;
  g.set_name("small");
  v1::ValueInfo* in = g.add_inputs();
  in->set_name("x");
  in->set_dtype(v1::FLOAT32);
  in->add_shape(8), in->add_shape(16);
  auto init = [&](const std::string& name, v1::Tensor t) {
    v1::Initializer* i = g.add_initializers();
    i->set_name(name);
    *i->mutable_tensor() = std::move(t);
  };
  init("w1", RandomTensor({12, 16}, weight_scale, rng));
  init("b1", RandomTensor({12}, 0.1f, rng));
  v1::Tensor ones = RandomTensor({12}, 0, rng), zeros = RandomTensor({12}, 0, rng);
  std::vector<float> one(12, 1.0f);
  ones.set_data(std::string(reinterpret_cast<const char*>(one.data()), 48));
  init("gamma", ones);
  init("beta", zeros);
  init("rm", zeros);
  init("rv", ones);
  init("w2", RandomTensor({4, 12}, weight_scale, rng));
  AddNode(g, "fc1", "Gemm", {"x", "w1", "b1"}, {"h"}, {{"transB", AttrInt(1)}});
  AddNode(g, "bn", "BatchNormalization", {"h", "gamma", "beta", "rm", "rv"}, {"hn"});
  AddNode(g, "relu", "Relu", {"hn"}, {"a"});
  AddNode(g, "fc2", "Gemm", {"a", "w2"}, {"logits"}, {{"transB", AttrInt(1)}});
  g.add_outputs("logits");
  return DescribeModel(g).value();
}

HostTensor Batch(int seed, float scale = 2.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  HostTensor x = HostTensor::Allocate({v1::FLOAT32, {8, 16}});
  for (int i = 0; i < 128; ++i) x.mutable_as<float>()[i] = u(rng);
  return x;
}

HostTensor Labels(int seed) {
  HostTensor y = HostTensor::Allocate({v1::INT64, {8}});
  for (int i = 0; i < 8; ++i) y.mutable_as<int64_t>()[i] = (i * 7 + seed) % 4;
  return y;
}

TrainConfig Config(AmpLevel amp, LossScaleConfig scale) {
  TrainConfig c;
  c.amp = amp;
  c.loss_scale = scale;
  c.optimizer.kind = OptimizerKind::kMomentum;
  c.optimizer.lr = 0.05;
  return c;
}

TEST(MixedPrecisionTest, O2KeepsFp32MastersAndRunsAnFp16Model) {
  const ModelSpec spec = SmallModel();
  auto t = Trainer::Create(spec, Config(AmpLevel::kO2, {.dynamic = false, .scale = 128}), {&DeviceFor("ascend910b")});
  ASSERT_TRUE(t.ok()) << t.status();
  for (int s = 0; s < 4; ++s) ASSERT_TRUE((*t)->Step(Batch(s), Labels(s), false).ok());
  const Replica r = (*t)->ReplicaOf(0);
  for (size_t i = 0; i < spec.params.size(); ++i) {
    const std::string& p = spec.params[i];
    const bool bn = p == "gamma" || p == "beta";
    EXPECT_EQ(r.params[i].type().dtype, bn ? v1::FLOAT32 : v1::FLOAT16) << p;
    if (bn) continue;
    ASSERT_EQ(r.masters[i].type().dtype, v1::FLOAT32) << p;
    // The model copy is the master rounded to fp16, element for element.
    for (int64_t k = 0; k < r.params[i].type().elements(); ++k) {
      ASSERT_EQ(r.params[i].as<kernels::half_bits>()[k], kernels::FloatToHalf(r.masters[i].as<float>()[k])) << p;
    }
  }
  EXPECT_EQ(r.buffers[0].type().dtype, v1::FLOAT32);
}

// O2's conversions of fp32 to fp16 (the model copy of each parameter, and
// the graph's other fp32 constants) round in the device's float mode: 1e5 is
// 65504 on the saturating 910 and inf on the 910B, NaN is 0 and NaN.
TEST(MixedPrecisionTest, O2ConvertsInTheDevicesFloatMode) {
  for (const char* preset : {"ascend910", "ascend910b"}) {
    const bool saturate = std::string(preset) == "ascend910";
    ModelSpec spec = SmallModel();
    for (auto& init : *spec.graph.mutable_initializers()) {
      if (init.name() != "w1") continue;
      float big[2] = {1e5f, std::nanf("")};
      init.mutable_tensor()->mutable_data()->replace(0, sizeof big, reinterpret_cast<const char*>(big), sizeof big);
    }
    auto t = Trainer::Create(spec, Config(AmpLevel::kO2, {.dynamic = false, .scale = 128}), {&DeviceFor(preset)});
    ASSERT_TRUE(t.ok()) << t.status();
    const Replica r = (*t)->ReplicaOf(0);
    const size_t w1 = std::find(spec.params.begin(), spec.params.end(), "w1") - spec.params.begin();
    ASSERT_LT(w1, spec.params.size());
    const kernels::half_bits* h = r.params[w1].as<kernels::half_bits>();
    EXPECT_EQ(h[0], saturate ? 0x7bff : 0x7c00) << preset;
    if (saturate) {
      EXPECT_EQ(h[1], 0) << preset;
    } else {
      EXPECT_EQ(h[1] & 0x7e00, 0x7e00) << preset;
    }
    EXPECT_EQ(r.masters[w1].as<float>()[0], 1e5f);  // the master keeps fp32

    v1::Graph forward = spec.graph;
    v1::Initializer* c = forward.add_initializers();
    c->set_name("big");
    c->mutable_tensor()->set_dtype(v1::FLOAT32);
    c->mutable_tensor()->add_shape(1);
    const float v = -1e5f;
    c->mutable_tensor()->set_data(reinterpret_cast<const char*>(&v), sizeof v);
    ApplyAmp(AmpLevel::kO2, spec, {spec.input}, {spec.output}, forward, saturate);
    for (const auto& init : forward.initializers()) {
      if (init.name() != "big") continue;
      ASSERT_EQ(init.tensor().dtype(), v1::FLOAT16);
      kernels::half_bits got;
      std::memcpy(&got, init.tensor().data().data(), 2);
      EXPECT_EQ(got, saturate ? 0xfbff : 0xfc00) << preset;
    }
  }
}

// A trainer's float mode (TrainConfig::float_mode, CreateTrainerRequest's)
// overrides its devices': forced inf_nan on the 910, O2's model copy of 1e5
// is inf; forced saturation on the 910B, 65504.
TEST(MixedPrecisionTest, ATrainersFloatModeOverridesThePresets) {
  for (auto [preset, mode, bits] : {std::tuple{"ascend910", device::FloatMode::kInfNan, 0x7c00},
                                    std::tuple{"ascend910b", device::FloatMode::kSaturation, 0x7bff},
                                    std::tuple{"ascend910", device::FloatMode::kPreset, 0x7bff},
                                    std::tuple{"ascend910b", device::FloatMode::kPreset, 0x7c00}}) {
    ModelSpec spec = SmallModel();
    for (auto& init : *spec.graph.mutable_initializers()) {
      if (init.name() != "w1") continue;
      const float big = 1e5f;
      init.mutable_tensor()->mutable_data()->replace(0, sizeof big, reinterpret_cast<const char*>(&big), sizeof big);
    }
    TrainConfig config = Config(AmpLevel::kO2, {.dynamic = false, .scale = 128});
    config.float_mode = mode;
    auto t = Trainer::Create(spec, config, {&DeviceFor(preset)});
    ASSERT_TRUE(t.ok()) << t.status();
    const size_t w1 = std::find(spec.params.begin(), spec.params.end(), "w1") - spec.params.begin();
    ASSERT_LT(w1, spec.params.size());
    EXPECT_EQ((*t)->ReplicaOf(0).params[w1].as<kernels::half_bits>()[0], bits)
        << preset << " in mode " << static_cast<int>(mode);
  }
}

TEST(MixedPrecisionTest, O1CastsAroundTheCubeOpsOnly) {
  const ModelSpec spec = SmallModel();
  auto step = BuildStepGraph(spec, Config(AmpLevel::kO1, {}), DataShape(spec, 8), DeviceFor("ascend910").preset());
  ASSERT_TRUE(step.ok()) << step.status();
  int casts = 0;
  for (const auto& n : step->graph.nodes()) {
    if (n.op_type() == "Cast" && n.name().rfind("amp/", 0) == 0) ++casts;
  }
  // fc1: x, w1, b1 in and the output back; fc2: a, w2 in and the output back.
  EXPECT_EQ(casts, 7);
  // Parameters stay fp32 (O1 casts inside the step, apex's patched functions).
  for (const auto& in : step->graph.inputs()) {
    if (in.name() == "w1") EXPECT_EQ(in.dtype(), v1::FLOAT32);
  }
}

TEST(MixedPrecisionTest, AmpLevelsTrainAlike) {
  std::vector<double> losses[3];
  int level = 0;
  for (AmpLevel amp : {AmpLevel::kO0, AmpLevel::kO1, AmpLevel::kO2}) {
    auto t = Trainer::Create(SmallModel(), Config(amp, {.dynamic = true, .scale = 65536}), {&DeviceFor("ascend910")});
    ASSERT_TRUE(t.ok()) << t.status();
    for (int s = 0; s < 6; ++s) losses[level].push_back((*t)->Step(Batch(s), Labels(s), false)->loss);
    ++level;
  }
  for (int s = 0; s < 6; ++s) {
    // fp16 activations and gradients: a few fp16 ulp (2^-11 each) per layer, compounding over the steps.
    EXPECT_NEAR(losses[1][s], losses[0][s], 1e-2 * losses[0][s]) << "O1, step " << s;
    EXPECT_NEAR(losses[2][s], losses[0][s], 1e-2 * losses[0][s]) << "O2, step " << s;
  }
}

// x [8, 16] -> Gemm (no bias) -> F.normalize as torch exports it (ReduceL2,
// Clip at a Cast of the Constant 1e-12, Expand, Div) -> Gemm -> logits [8, 4].
ModelSpec NormalizeModel() {
  std::mt19937 rng(11);
  v1::Graph g;
  g.set_name("normalize");
  v1::ValueInfo* in = g.add_inputs();
  in->set_name("x");
  in->set_dtype(v1::FLOAT32);
  in->add_shape(8), in->add_shape(16);
  for (auto [name, shape] : {std::pair<std::string, std::vector<int64_t>>{"w1", {12, 16}}, {"w2", {4, 12}}}) {
    v1::Initializer* i = g.add_initializers();
    i->set_name(name);
    *i->mutable_tensor() = RandomTensor(shape, 0.3f, rng);
  }
  v1::Tensor eps;
  eps.set_dtype(v1::FLOAT32);
  const float e = 1e-12f;
  eps.set_data(&e, sizeof e);
  AddNode(g, "fc1", "Gemm", {"x", "w1"}, {"h"}, {{"transB", AttrInt(1)}});
  AddNode(g, "norm", "ReduceL2", {"h"}, {"n"}, {{"axes", AttrInts({-1})}, {"keepdims", AttrInt(1)}});
  v1::AttributeValue value;
  *value.mutable_t() = eps;
  AddNode(g, "eps", "Constant", {}, {"eps"}, {{"value", value}});
  AddNode(g, "eps_cast", "Cast", {"eps"}, {"eps32"}, {{"to", AttrInt(1)}});
  AddNode(g, "clip", "Clip", {"n", "eps32"}, {"nc"});
  AddNode(g, "shape", "Shape", {"h"}, {"hs"});
  AddNode(g, "expand", "Expand", {"nc", "hs"}, {"ne"});
  AddNode(g, "div", "Div", {"h", "ne"}, {"hn"});
  AddNode(g, "fc2", "Gemm", {"hn", "w2"}, {"logits"}, {{"transB", AttrInt(1)}});
  g.add_outputs("logits");
  return DescribeModel(g).value();
}

// A zero row (a padded token) normalises to 0 in fp32 (0 / 1e-12), but to
// 0 / 0 in fp16, where 1e-12 is 0: O2 and O3 run F.normalize in fp32, so
// the forward's loss is O0's within fp16's rounding in both float modes.
// (Its gradient there is dy / 1e-12, which no fp16 gradient holds: a step
// through it overflows at O2 as apex's would, and the scaler skips it.)
TEST(MixedPrecisionTest, NormalizeRunsInFp32SoAZeroVectorStaysFinite) {
  HostTensor x = Batch(3);
  std::fill_n(x.mutable_as<float>(), 2 * 16, 0.0f);  // rows 0 and 1
  auto o0 = Trainer::Create(NormalizeModel(), Config(AmpLevel::kO0, {}), {&DeviceFor("ascend910b")});
  ASSERT_TRUE(o0.ok()) << o0.status();
  auto want = (*o0)->Evaluate(x, Labels(3));
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_TRUE(std::isfinite(want->loss));
  for (AmpLevel level : {AmpLevel::kO2, AmpLevel::kO3}) {
    for (const char* preset : {"ascend910", "ascend910b"}) {  // saturation and inf/NaN
      auto t = Trainer::Create(NormalizeModel(), Config(level, {.dynamic = false, .scale = 128}), {&DeviceFor(preset)});
      ASSERT_TRUE(t.ok()) << t.status();
      auto r = (*t)->Evaluate(x, Labels(3));
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_NEAR(r->loss, want->loss, 2e-3 * std::fabs(want->loss)) << preset;
    }
  }
}

TEST(MixedPrecisionTest, DynamicScaleSkipsAndHalvesUntilTrainingProceeds) {
  // Start at 2^24 as `--loss-scale dynamic:16777216` does: fp16 gradients overflow.
  auto t = Trainer::Create(SmallModel(), Config(AmpLevel::kO2, {.dynamic = true, .scale = 16777216, .window = 3}),
                           {&DeviceFor("ascend910")});
  ASSERT_TRUE(t.ok()) << t.status();
  int skipped = 0, s = 0;
  double scale = 16777216;
  for (;; ++s) {
    ASSERT_LT(s, 30) << "the scale never came down";
    const Replica before = (*t)->ReplicaOf(0);
    auto r = (*t)->Step(Batch(s), Labels(s), false);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->loss_scale, scale);
    const Replica after = (*t)->ReplicaOf(0);
    if (!r->skipped) {
      EXPECT_FALSE(BitwiseEqual(before.masters[0], after.masters[0]));
      break;
    }
    ++skipped;
    EXPECT_GT(r->overflow_elements, 0u);
    // A skipped step changes no parameter, master or optimizer state.
    for (size_t i = 0; i < before.params.size(); ++i) {
      EXPECT_TRUE(BitwiseEqual(before.params[i], after.params[i]));
      EXPECT_TRUE(BitwiseEqual(before.masters[i], after.masters[i]) || before.masters[i].bytes() == 0);
      for (size_t k = 0; k < before.state[i].size(); ++k) EXPECT_TRUE(BitwiseEqual(before.state[i][k], after.state[i][k]));
    }
    scale /= 2;
    EXPECT_EQ(r->next_loss_scale, scale);
  }
  EXPECT_GE(skipped, 1);
  // Three clean steps in a row double the scale (window 3 here, apex's 2000 by default).
  double last = scale;
  for (int k = 0; k < 3; ++k) last = (*t)->Step(Batch(100 + k), Labels(k), false)->next_loss_scale;
  EXPECT_TRUE(last == 2 * scale || last < scale) << last;  // doubled, unless another overflow halved it
}

TEST(MixedPrecisionTest, AStaticScaleTooLargeSkipsEveryOverflowingStep) {
  auto t = Trainer::Create(SmallModel(), Config(AmpLevel::kO2, {.dynamic = false, .scale = 16777216}),
                           {&DeviceFor("ascend910")});
  ASSERT_TRUE(t.ok()) << t.status();
  const Replica start = (*t)->ReplicaOf(0);
  for (int s = 0; s < 3; ++s) {
    auto r = (*t)->Step(Batch(s), Labels(s), false);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(r->skipped);
    EXPECT_EQ(r->next_loss_scale, 16777216);
  }
  const Replica end = (*t)->ReplicaOf(0);
  for (size_t i = 0; i < start.params.size(); ++i) EXPECT_TRUE(BitwiseEqual(start.params[i], end.params[i]));
}

TEST(MixedPrecisionTest, SaturatedGradientsWithoutAnyInfRaiseTheFloatStatus) {
  // On the 910 fp16 saturates: at scale 2^24 the gradients reach +-65504 and
  // stay finite, so an isinf/isnan check finds nothing; the float status does.
  const ModelSpec spec = SmallModel();
  const device::Device& dev = DeviceFor("ascend910");
  auto step = BuildStepGraph(spec, Config(AmpLevel::kO2, {}), DataShape(spec, 8), dev.preset());
  ASSERT_TRUE(step.ok()) << step.status();
  // Also return the fp16 gradient of w1 (what the update reads).
  std::string grad_w1;
  for (const auto& n : step->graph.nodes()) {
    if (n.op_type() == "SGDUpdate" && n.inputs(0) == step->sig.masters[0]) grad_w1 = n.inputs(1);
  }
  ASSERT_FALSE(grad_w1.empty());
  step->graph.add_outputs(grad_w1);
  auto plan = graph::BuildPlan(std::make_shared<const v1::Graph>(step->graph), dev.preset());
  ASSERT_TRUE(plan.ok()) << plan.status();
  auto t = Trainer::Create(spec, Config(AmpLevel::kO2, {}), {&DeviceFor("ascend910")});
  const Replica r = (*t)->ReplicaOf(0);
  std::map<std::string, HostTensor> in{{step->sig.x, Batch(1, 50.0f)}, {step->sig.labels, Labels(1)},
                                       {step->sig.loss_seed, ScalarF32(16777216.0f)},
                                       {step->sig.grad_scale, ScalarF32(1.0f / 16777216.0f)},
                                       {step->sig.lr, ScalarF32(0.05f)}};
  for (size_t i = 0; i < spec.params.size(); ++i) {
    in[step->sig.params[i]] = r.params[i];
    if (!step->sig.masters[i].empty()) in[step->sig.masters[i]] = r.masters[i];
    for (size_t k = 0; k < r.state[i].size(); ++k) in[step->sig.state[i][k]] = r.state[i][k];
  }
  for (size_t b = 0; b < spec.buffers.size(); ++b) in[step->sig.buffers[b]] = r.buffers[b];
  std::vector<HostTensor> inputs;
  for (int v : (*plan)->inputs) inputs.push_back(in.at((*plan)->values[v].name));
  auto run = graph::RunPlan(*plan, inputs, graph::ExecOptions{}, DeviceFor("ascend910"));
  ASSERT_TRUE(run.ok()) << run.status();
  const HostTensor& g = run->outputs.back();
  int saturated = 0;
  for (int64_t k = 0; k < g.type().elements(); ++k) {
    const float v = kernels::HalfToFloat(g.as<kernels::half_bits>()[k]);
    ASSERT_TRUE(std::isfinite(v));  // what an isinf check would see: nothing
    saturated += std::fabs(v) == 65504.0f;
  }
  EXPECT_GT(saturated, 0);
  EXPECT_GT(run->overflow_elements, 0u);
  EXPECT_GT(run->outputs[1].as<float>()[0], 0.0f);  // found_inf: the update was skipped on the device
}

}  // namespace
}  // namespace npu::train
