// npu-bench vector: the Vector unit's ops on large tensors, through the same op
// code the server runs (OpRegistry -> OpDef::run), next to a STREAM-style
// triad measured in the same run; depthwise 3x3 convolutions of MobileNetV2
// and pooling layers (the Vector stencil); and Conv 3x3 (img2col + Cube) next to a Cube GEMM of
// the same FLOP count. bench/vector_vs_torch.py runs it beside PyTorch.
//
//   npu-bench vector [--mib 64] [--reps 5] [--ops Gelu,Softmax] [--dtypes FLOAT16]
//                    [--path auto|avx512|avx2|portable] [--cpu-time]
//
// One JSON line per op and dtype: GB/s moved (inputs read + output written, at
// the tensor's dtype), GB/s of input alone, and the ratio to the triad's GB/s;
// per depthwise or pooling layer, microseconds and GFLOP/s; for Conv, GFLOP/s and the
// ratio to the GEMM's.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_registry.h"
#include "absl/strings/str_split.h"
#include "kernels/cube_gemm.h"
#include "kernels/fp16.h"
#include "kernels/vector_kernels.h"
#include "server/device/device_preset.h"
#include "server/graph/op_registry.h"

namespace npu::bench {
namespace {

using graph::HostTensor;
using graph::TensorType;
using graph::DataType;

// --cpu-time: the process's CPU seconds instead of wall seconds, so that one
// thread on a shared machine is not charged for the time slices others take
// (meaningless for more than one thread: their CPU times add up).
bool g_cpu_time = false;

double Now() {
  if (!g_cpu_time) return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double Seconds(const std::function<void()>& fn, int reps) {
  fn();  // warm-up: first touch of the pages
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const double t0 = Now();
    fn();
    t.push_back(Now() - t0);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

HostTensor Random(TensorType type) {
  HostTensor t = HostTensor::Allocate(type);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> d(-2, 2);
  const int64_t n = type.elements();
  if (type.dtype == v1::FLOAT16) {
    for (int64_t i = 0; i < n; ++i) t.mutable_as<kernels::half_bits>()[i] = kernels::FloatToHalf(d(rng));
  } else {
    for (int64_t i = 0; i < n; ++i) t.mutable_as<float>()[i] = d(rng);
  }
  return t;
}

// Runs the registered op `op_type` on `inputs` (attributes in `node`), planned
// as the server plans it: its infer (prepare) once, with every input but the
// first as a constant (weights, scales), then only runs.
std::function<void()> OpRunner(v1::Node& node, const std::vector<const HostTensor*>& inputs, TensorType out_type,
                               const device::DevicePreset& preset) {
  const graph::OpDef* op = graph::OpRegistry::Global().Find(node.op_type());
  graph::InferContext infer{node, {}, {}};
  for (size_t i = 0; i < inputs.size(); ++i) {
    infer.inputs.push_back(&inputs[i]->type());
    infer.constants.push_back(i == 0 ? nullptr : inputs[i]);
  }
  infer.preset = &preset;
  auto types = op->infer(infer);
  if (!types.ok()) {
    std::fprintf(stderr, "%s: %s\n", node.op_type().c_str(), std::string(types.status().message()).c_str());
    std::exit(1);
  }
  std::shared_ptr<const void> state = infer.state;
  auto out = std::make_shared<HostTensor>(HostTensor::Allocate(out_type));
  return [op, &node, inputs, out, &preset, state] {
    graph::RunContext ctx{node, graph::NodeAttributes(node), inputs, {*out}, preset, {}};
    ctx.state = state.get();
    (void)op->run(ctx);
  };
}

struct VectorArgs {
  int64_t mib = 64;
  int reps = 5;
  std::string ops;     // comma-separated filter; empty: all
  std::string dtypes = "FLOAT32,FLOAT16";
  std::string path = "auto";
  bool cpu_time = false;
};

bool Wanted(const std::string& list, const std::string& name) {
  if (list.empty()) return true;
  for (absl::string_view item : absl::StrSplit(list, ',')) {
    if (item == name) return true;
  }
  return false;
}

// MobileNetV2's depthwise 3x3 layers at 224x224: channels, input size, stride.
struct DepthwiseLayer {
  int64_t c, hw, stride;
};
constexpr DepthwiseLayer kMobileNetV2Depthwise[] = {
    {32, 112, 1}, {96, 112, 2}, {144, 56, 1}, {144, 56, 2}, {192, 28, 1}, {192, 28, 2}, {384, 14, 1},
    {576, 14, 1}, {576, 14, 2}, {960, 7, 1}};

// Pooling layers of torchvision's CNNs: resnet's stem MaxPool, VGG's, an
// Inception branch's AveragePool (padding not counted) and DenseNet's transition.
struct PoolLayer {
  const char* op;
  int64_t c, hw, k, stride, pad;
};
constexpr PoolLayer kPoolLayers[] = {{"MaxPool", 64, 112, 3, 2, 1},
                                     {"MaxPool", 128, 56, 2, 2, 0},
                                     {"AveragePool", 192, 28, 3, 1, 1},
                                     {"AveragePool", 256, 28, 2, 2, 0}};

void PrintWindowRow(const char* op, int64_t c, int64_t hw, const std::string& geometry, double s, double flops) {
  std::printf("{\"bench\": \"vector\", \"op\": \"%s\", \"shape\": \"1x%lldx%lldx%lld/%s\", \"us\": %.1f, "
              "\"gflops\": %.2f}\n",
              op, static_cast<long long>(c), static_cast<long long>(hw), static_cast<long long>(hw), geometry.c_str(),
              s * 1e6, flops / s / 1e9);
}

// Each layer fp32, batch 1, pads 1, with a bias, through the Conv op.
void RunDepthwise(const device::DevicePreset& preset, int reps) {
  double total_s = 0, total_flops = 0;
  for (const DepthwiseLayer& l : kMobileNetV2Depthwise) {
    const int64_t oh = (l.hw + 2 - 3) / l.stride + 1;
    HostTensor x = Random({v1::FLOAT32, {1, l.c, l.hw, l.hw}}), w = Random({v1::FLOAT32, {l.c, 1, 3, 3}});
    HostTensor b = Random({v1::FLOAT32, {l.c}});
    v1::Node node;
    node.set_op_type("Conv");
    auto& attrs = *node.mutable_attributes();
    attrs["group"].set_i(l.c);
    for (int i = 0; i < 4; ++i) attrs["pads"].mutable_ints()->add_values(1);
    for (int i = 0; i < 2; ++i) attrs["strides"].mutable_ints()->add_values(l.stride);
    auto run = OpRunner(node, {&x, &w, &b}, {v1::FLOAT32, {1, l.c, oh, oh}}, preset);
    const double s = Seconds(run, reps), flops = 2.0 * 9 * l.c * oh * oh;
    total_s += s, total_flops += flops;
    PrintWindowRow("DepthwiseConv3x3", l.c, l.hw, "s" + std::to_string(l.stride), s, flops);
  }
  std::printf("{\"bench\": \"vector\", \"op\": \"DepthwiseConv3x3\", \"shape\": \"mobilenet_v2 (10 layers)\", "
              "\"us\": %.1f, \"gflops\": %.2f}\n", total_s * 1e6, total_flops / total_s / 1e9);
}

// Each pooling layer fp32, batch 1, through the MaxPool / AveragePool op; the
// "flops" are one operation per tap.
void RunPools(const std::string& ops, const device::DevicePreset& preset, int reps) {
  for (const PoolLayer& l : kPoolLayers) {
    if (!Wanted(ops, l.op)) continue;
    const int64_t oh = (l.hw + 2 * l.pad - l.k) / l.stride + 1;
    HostTensor x = Random({v1::FLOAT32, {1, l.c, l.hw, l.hw}});
    v1::Node node;
    node.set_op_type(l.op);
    auto& attrs = *node.mutable_attributes();
    for (int i = 0; i < 2; ++i) attrs["kernel_shape"].mutable_ints()->add_values(l.k);
    for (int i = 0; i < 2; ++i) attrs["strides"].mutable_ints()->add_values(l.stride);
    for (int i = 0; i < 4; ++i) attrs["pads"].mutable_ints()->add_values(l.pad);
    auto run = OpRunner(node, {&x}, {v1::FLOAT32, {1, l.c, oh, oh}}, preset);
    const double s = Seconds(run, reps);
    PrintWindowRow(l.op, l.c, l.hw,
                   "k" + std::to_string(l.k) + "s" + std::to_string(l.stride) + "p" + std::to_string(l.pad), s,
                   static_cast<double>(l.k * l.k * l.c * oh * oh));
  }
}

int RunVectorBench(const VectorArgs& args) {
  const int64_t mib = args.mib;
  const int reps = args.reps;
  g_cpu_time = args.cpu_time;
  const device::DevicePreset preset = device::PresetByName("ascend910b").value();
  const kernels::SimdPath path = args.path == "avx512"     ? kernels::SimdPath::kAvx512
                                 : args.path == "avx2"     ? kernels::SimdPath::kAvx2
                                 : args.path == "portable" ? kernels::SimdPath::kPortable
                                                           : kernels::SimdPath::kAuto;
  kernels::ForceVectorSimdPath(path);
  std::printf("{\"bench\": \"vector\", \"simd_path\": \"%s\"}\n",
              kernels::SimdPathName(kernels::ActiveVectorSimdPath()));

  // Anchor: STREAM triad a = b + s * c on fp32 arrays of `mib` MiB each.
  const int64_t n32 = mib * 1024 * 1024 / 4;
  std::vector<float> a(n32), b(n32, 1.0f), c(n32, 2.0f);
  const double triad_s = Seconds([&] {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n32; ++i) a[i] = b[i] + 3.0f * c[i];
  }, reps);
  const double triad_gbs = 3.0 * n32 * 4 / triad_s / 1e9;
  std::printf("{\"bench\": \"vector\", \"op\": \"triad\", \"mib\": %lld, \"gbs\": %.2f}\n",
              static_cast<long long>(mib), triad_gbs);

  bool elementwise = false;  // filling 64 MiB tensors takes seconds: only for ops that read them
  for (const char* op : {"Add", "Mul", "Relu", "Gelu", "Sigmoid", "Tanh", "Exp", "Softmax", "LayerNormalization"}) {
    elementwise = elementwise || Wanted(args.ops, op);
  }
  for (DataType dt : {v1::FLOAT32, v1::FLOAT16}) {
    if (!elementwise || !Wanted(args.dtypes, graph::DataTypeName(dt))) continue;
    const int64_t n = mib * 1024 * 1024 / static_cast<int64_t>(graph::ElementSize(dt));
    const TensorType flat{dt, {n}};
    const TensorType rows{dt, {n / 1024, 1024}};
    HostTensor x = Random(flat), y = Random(flat), scale = Random({dt, {1024}}), bias = Random({dt, {1024}});
    HostTensor xr(rows, nullptr, x.data());
    struct Case {
      const char* op;
      std::vector<const HostTensor*> inputs;
      TensorType out;
      int inputs_n;  // inputs of n elements (read); the output is one more
    };
    const std::vector<Case> cases = {
        {"Add", {&x, &y}, flat, 2},      {"Mul", {&x, &y}, flat, 2},   {"Relu", {&x}, flat, 1},
        {"Gelu", {&x}, flat, 1},         {"Sigmoid", {&x}, flat, 1},   {"Tanh", {&x}, flat, 1},
        {"Exp", {&x}, flat, 1},          {"Softmax", {&xr}, rows, 1},
        {"LayerNormalization", {&xr, &scale, &bias}, rows, 1}};
    for (const Case& cs : cases) {
      if (!Wanted(args.ops, cs.op)) continue;
      v1::Node node;
      node.set_op_type(cs.op);
      auto run = OpRunner(node, cs.inputs, cs.out, preset);
      const double s = Seconds(run, reps);
      const double in_bytes = cs.inputs_n * static_cast<double>(n) * graph::ElementSize(dt);
      const double gbs = (in_bytes + static_cast<double>(n) * graph::ElementSize(dt)) / s / 1e9;
      std::printf("{\"bench\": \"vector\", \"op\": \"%s\", \"dtype\": \"%s\", \"mib\": %lld, \"gbs\": %.2f, "
                  "\"gbs_input\": %.2f, \"anchor_gbs\": %.2f, \"ratio\": %.3f}\n",
                  cs.op, graph::DataTypeName(dt).c_str(), static_cast<long long>(mib), gbs, in_bytes / s / 1e9,
                  triad_gbs, gbs / triad_gbs);
    }
  }

  if (Wanted(args.ops, "DepthwiseConv3x3")) RunDepthwise(preset, reps);
  RunPools(args.ops, preset, reps);

  // Conv 3x3, 56x56x64 -> 64, batch 8, fp16, through the Conv op; the anchor
  // is one Cube GEMM with the same M, N, K as all its img2col GEMMs together.
  if (Wanted(args.ops, "Conv3x3")) {
    const int64_t batch = 8, ch = 64, hw = 56;
    HostTensor x = Random({v1::FLOAT16, {batch, ch, hw, hw}}), w = Random({v1::FLOAT16, {ch, ch, 3, 3}});
    v1::Node node;
    node.set_op_type("Conv");
    for (int i = 0; i < 4; ++i) (*node.mutable_attributes())["pads"].mutable_ints()->add_values(1);
    auto run = OpRunner(node, {&x, &w}, {v1::FLOAT16, {batch, ch, hw, hw}}, preset);
    const double flops = 2.0 * batch * ch * ch * 9 * hw * hw;
    const double conv_s = Seconds(run, reps);
    HostTensor ga = Random({v1::FLOAT16, {ch, ch * 9}}), gb = Random({v1::FLOAT16, {ch * 9, batch * hw * hw}});
    HostTensor gc = HostTensor::Allocate({v1::FLOAT16, {ch, batch * hw * hw}});
    kernels::GemmProblem p;
    p.m = ch, p.n = batch * hw * hw, p.k = ch * 9;
    p.a = ga.data(), p.lda = p.k, p.b = gb.data(), p.ldb = p.n, p.c = gc.mutable_data(), p.ldc = p.n;
    p.c_type = kernels::ElemType::kFloat16;
    const double gemm_s = Seconds([&] { kernels::CubeGemm(p, kernels::CubeTileShape{}, nullptr); }, reps);
    std::printf("{\"bench\": \"vector\", \"op\": \"Conv3x3\", \"shape\": \"8x64x56x56->64\", \"gflops\": %.2f, "
                "\"anchor_gflops\": %.2f, \"ratio\": %.3f, \"target\": 0.7}\n",
                flops / conv_s / 1e9, flops / gemm_s / 1e9, gemm_s / conv_s);
  }
  kernels::ForceVectorSimdPath(kernels::SimdPath::kAuto);
  return 0;
}

std::function<int()> SetupVectorBench(CLI::App& command) {
  auto args = std::make_shared<VectorArgs>();
  command.add_option("--mib", args->mib, "MiB per tensor")->check(CLI::Range(1, 16384))->capture_default_str();
  command.add_option("--reps", args->reps, "timed runs per op (the median is printed)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  command.add_option("--ops", args->ops,
                     "comma-separated ops to run (Add, Mul, Relu, Gelu, Sigmoid, Tanh, Exp, Softmax, "
                     "LayerNormalization, DepthwiseConv3x3, MaxPool, AveragePool, Conv3x3); default all");
  command.add_option("--dtypes", args->dtypes, "comma-separated dtypes of the elementwise and row ops")
      ->capture_default_str();
  command.add_option("--path", args->path, "the Vector kernels' SIMD path (the best one the CPU has: auto)")
      ->check(CLI::IsMember({"auto", "avx512", "avx2", "portable"}))
      ->capture_default_str();
  command.add_flag("--cpu-time", args->cpu_time,
                   "time by the process's CPU seconds, not wall seconds (one thread on a shared machine)");
  return [args] { return RunVectorBench(*args); };
}

}  // namespace

NPU_BENCH("vector", "Vector ops against a STREAM triad, depthwise convolutions, Conv against the Cube GEMM",
          SetupVectorBench);

}  // namespace npu::bench
