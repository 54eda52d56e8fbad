// The end-to-end slice over real gRPC on loopback: a real npu-server process,
// the C++ client library, uploads, inline and registered runs, device-resident
// outputs chained into a second run, downloads, frees, debug mode, the CLI.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include <gtest/gtest.h>

#include "client/client.h"
#include "client/graph_builder.h"
#include "client/graph_json.h"
#include "client/host_tensor.h"
#include "client/npy.h"
#include "tests/e2e/server_process.h"

namespace npu {
namespace {

using client::Client;
using client::GraphBuilder;
using client::Value;

class SliceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = new testing::ServerProcess(); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override {
    auto c = Client::Connect(server_->target());
    ASSERT_TRUE(c.ok()) << c.status();
    client_ = std::move(*c);
  }
  static testing::ServerProcess* server_;
  std::unique_ptr<Client> client_;
};
testing::ServerProcess* SliceTest::server_ = nullptr;

std::vector<float> RandomValues(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

v1::Tensor Fp16(std::vector<int64_t> shape, const std::vector<float>& values) {
  auto t = client::MakeFloatTensor(v1::FLOAT16, std::move(shape), values);
  EXPECT_TRUE(t.ok()) << t.status();
  return *t;
}

std::vector<double> AsDoubles(const v1::Tensor& t) {
  auto f = client::TensorToFloats(t);
  EXPECT_TRUE(f.ok()) << f.status();
  return std::vector<double>(f->begin(), f->end());
}

// Reference MLP in float64 on the fp16-valued weights and inputs: y = relu(x w1 + b1) w2 + b2.
std::vector<double> MlpReference(const std::vector<double>& x, const std::vector<double>& w1,
                                 const std::vector<double>& b1, const std::vector<double>& w2,
                                 const std::vector<double>& b2, int batch, int in, int hidden, int out) {
  std::vector<double> h(batch * hidden), y(batch * out);
  for (int i = 0; i < batch; ++i) {
    for (int j = 0; j < hidden; ++j) {
      double s = 0;
      for (int k = 0; k < in; ++k) s += x[i * in + k] * w1[k * hidden + j];
      h[i * hidden + j] = std::max(0.0, s + b1[j]);
    }
    for (int j = 0; j < out; ++j) {
      double s = 0;
      for (int k = 0; k < hidden; ++k) s += h[i * hidden + k] * w2[k * out + j];
      y[i * out + j] = s + b2[j];
    }
  }
  return y;
}

// fp16 results: each op rounds once to fp16 (relative error <= 2^-11), so a
// 5-op MLP stays within a few fp16 ulps of the float64 value, relative to the
// magnitude of what was summed.
void ExpectClose(const std::vector<double>& got, const std::vector<double>& want, double scale) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 8 * std::ldexp(1.0, -11) * (std::fabs(want[i]) + scale)) << "element " << i;
  }
}

TEST_F(SliceTest, ListsTheAscend910Device) {
  auto devices = client_->ListDevices();
  ASSERT_TRUE(devices.ok()) << devices.status();
  ASSERT_EQ(devices->devices_size(), 1);
  const auto& d = devices->devices(0);
  EXPECT_EQ(d.id(), "npu:0");
  EXPECT_EQ(d.preset(), "ascend910");
  EXPECT_EQ(d.ai_cores(), 32);
  EXPECT_EQ(d.buffers().l0a_bytes(), 64 * 1024);
  EXPECT_EQ(d.memory_capacity_bytes(), uint64_t{32} << 30);
  auto one = client_->GetDevice("cuda:0");  // users migrating from GPUs type this
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->id(), "npu:0");
  EXPECT_EQ(client_->GetDevice("npu:3").status().code(), absl::StatusCode::kNotFound);
  auto health = client_->Health();
  ASSERT_TRUE(health.ok());
  EXPECT_EQ(*health, grpc::health::v1::HealthCheckResponse::SERVING);
}

TEST_F(SliceTest, UploadDownloadFreeRoundTrip) {
  // 3 MiB + a bit: several upload chunks and download chunks.
  const int64_t n = (3 << 20) / 4 + 7;
  v1::Tensor t;
  t.set_dtype(v1::INT32);
  t.add_shape(n);
  std::string bytes(n * 4, '\0');
  for (int64_t i = 0; i < n; ++i) {
    const int32_t v = static_cast<int32_t>(i * 2654435761u);
    std::memcpy(bytes.data() + i * 4, &v, 4);
  }
  t.set_data(bytes);
  auto h = client_->Upload(t);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->bytes(), static_cast<uint64_t>(n * 4));
  EXPECT_EQ(h->handle().size(), 32u);  // 128 random bits, hex
  auto listed = client_->ListHandles();
  ASSERT_TRUE(listed.ok());
  bool found = false;
  for (const auto& x : listed->handles()) found = found || x.handle() == h->handle();
  EXPECT_TRUE(found);
  auto back = client_->Download(h->handle());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->dtype(), v1::INT32);
  ASSERT_EQ(back->shape_size(), 1);
  EXPECT_EQ(back->shape(0), n);
  EXPECT_TRUE(back->data() == bytes);
  ASSERT_TRUE(client_->Free(h->handle()).ok());
  EXPECT_EQ(client_->Download(h->handle()).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(client_->Free(h->handle()).code(), absl::StatusCode::kNotFound);
}

struct Mlp {
  static constexpr int kBatch = 5, kIn = 33, kHidden = 40, kOut = 7;
  std::vector<float> x = RandomValues(kBatch * kIn, 1), w1 = RandomValues(kIn * kHidden, 2, 0.2f),
                     b1 = RandomValues(kHidden, 3, 0.1f), w2 = RandomValues(kHidden * kOut, 4, 0.2f),
                     b2 = RandomValues(kOut, 5, 0.1f);
  v1::Graph graph;
  Mlp() {
    GraphBuilder g("mlp");
    Value in = g.Input("x", v1::FLOAT16, {kBatch, kIn});
    Value h = g.Relu(g.Add(g.MatMul(in, g.Constant("w1", Fp16({kIn, kHidden}, w1))), g.Constant("b1", Fp16({kHidden}, b1))));
    Value y = g.Add(g.MatMul(h, g.Constant("w2", Fp16({kHidden, kOut}, w2))), g.Constant("b2", Fp16({kOut}, b2)));
    g.Output(y, "y");
    EXPECT_TRUE(g.status().ok()) << g.status();
    graph = g.Build();
  }
  // The reference sees the same fp16-rounded values the server gets.
  std::vector<double> Reference() const {
    auto r = [](const std::vector<float>& v, std::vector<int64_t> s) { return AsDoubles(Fp16(s, v)); };
    return MlpReference(r(x, {kBatch, kIn}), r(w1, {kIn, kHidden}), r(b1, {kHidden}), r(w2, {kHidden, kOut}),
                        r(b2, {kOut}), kBatch, kIn, kHidden, kOut);
  }
};

TEST_F(SliceTest, InlineMlpMatchesFloat64Reference) {
  Mlp mlp;
  v1::RunRequest req;
  *req.mutable_graph() = mlp.graph;
  auto* in = req.add_inputs();
  in->set_name("x");
  *in->mutable_tensor() = Fp16({Mlp::kBatch, Mlp::kIn}, mlp.x);
  req.mutable_options()->set_profile(true);
  auto resp = client_->Run(req);
  ASSERT_TRUE(resp.ok()) << resp.status();
  ASSERT_EQ(resp->outputs_size(), 1);
  EXPECT_EQ(resp->outputs(0).name(), "y");
  const v1::Tensor& y = resp->outputs(0).tensor();
  EXPECT_EQ(y.dtype(), v1::FLOAT16);
  ASSERT_EQ(y.shape_size(), 2);
  EXPECT_EQ(y.shape(0), Mlp::kBatch);
  EXPECT_EQ(y.shape(1), Mlp::kOut);
  ExpectClose(AsDoubles(y), mlp.Reference(), 1.0);
  // A profile with one entry per node as run, in a valid order: each MatMul
  // with the ops after it fused into its FixPipe epilogue, named after them all.
  const auto& p = resp->profile();
  ASSERT_EQ(p.nodes_size(), 2);
  EXPECT_EQ(p.nodes(0).name(), "MatMul_0+Add_0+Relu_0");
  EXPECT_EQ(p.nodes(0).op_type(), "MatMul+Add+Relu");
  EXPECT_EQ(p.nodes(0).fused_nodes_size(), 3);
  EXPECT_EQ(p.nodes(1).name(), "MatMul_1+Add_1");
  EXPECT_FALSE(p.model_version().empty());
  EXPECT_GT(p.total_cycles(), 0u);
  for (const auto& n : p.nodes()) {
    EXPECT_LE(n.start_cycle(), n.end_cycle()) << n.name();
    EXPECT_GE(n.block_dim(), 1) << n.name();
  }
  // The test server's chip is coupled (ascend910): Vector work runs on its AI
  // cores, and msprof calls every task there AI_CORE.
  EXPECT_EQ(p.nodes(0).task_type(), "AI_CORE");
  EXPECT_EQ(p.nodes(1).task_type(), "AI_CORE");
  EXPECT_EQ(p.core_architecture(), "coupled");
}

TEST_F(SliceTest, RegisteredGraphKeepsOutputsOnDeviceAndChains) {
  Mlp mlp;
  v1::RegisterGraphRequest reg;
  *reg.mutable_graph() = mlp.graph;
  auto registered = client_->RegisterGraph(reg);
  ASSERT_TRUE(registered.ok()) << registered.status();
  ASSERT_EQ(registered->outputs_size(), 1);
  EXPECT_EQ(registered->outputs(0).shape(1), Mlp::kOut);

  // Input by handle, output kept on the device.
  auto x = client_->Upload(Fp16({Mlp::kBatch, Mlp::kIn}, mlp.x));
  ASSERT_TRUE(x.ok()) << x.status();
  v1::RunRequest req;
  req.set_graph_id(registered->graph_id());
  req.add_inputs()->set_name("x");
  req.mutable_inputs(0)->set_handle(x->handle());
  req.mutable_options()->add_keep_on_device("y");
  auto first = client_->Run(req);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(first->outputs(0).has_handle());
  const std::string y_handle = first->outputs(0).handle().handle();

  // Chain: relu(y * y) on the device, from the handle.
  GraphBuilder g("square");
  Value in = g.Input("y", v1::FLOAT16, {Mlp::kBatch, Mlp::kOut});
  g.Output(g.Relu(g.Mul(in, in)), "z");
  v1::RunRequest second;
  *second.mutable_graph() = g.Build();
  second.add_inputs()->set_name("y");
  second.mutable_inputs(0)->set_handle(y_handle);
  auto z = client_->Run(second);
  ASSERT_TRUE(z.ok()) << z.status();

  auto y = client_->Download(y_handle);
  ASSERT_TRUE(y.ok()) << y.status();
  const auto yv = AsDoubles(*y);
  ExpectClose(yv, mlp.Reference(), 1.0);
  const auto zv = AsDoubles(z->outputs(0).tensor());
  for (size_t i = 0; i < yv.size(); ++i) EXPECT_NEAR(zv[i], yv[i] * yv[i], std::ldexp(std::fabs(yv[i] * yv[i]), -10));

  EXPECT_TRUE(client_->Free(y_handle).ok());
  EXPECT_TRUE(client_->Free(x->handle()).ok());
  EXPECT_TRUE(client_->UnregisterGraph(registered->graph_id()).ok());
  EXPECT_EQ(client_->Run(req).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(SliceTest, DebugModeReturnsEveryIntermediate) {
  Mlp mlp;
  v1::RunRequest req;
  *req.mutable_graph() = mlp.graph;
  req.add_inputs()->set_name("x");
  *req.mutable_inputs(0)->mutable_tensor() = Fp16({Mlp::kBatch, Mlp::kIn}, mlp.x);
  req.mutable_options()->set_debug(true);
  auto resp = client_->Run(req);
  ASSERT_TRUE(resp.ok()) << resp.status();
  ASSERT_EQ(resp->intermediates_size(), 5);  // one per node
  // The first intermediate is x @ w1: check it against float64 directly.
  const auto h = AsDoubles(resp->intermediates(0).tensor());
  const auto xd = AsDoubles(Fp16({Mlp::kBatch, Mlp::kIn}, mlp.x));
  const auto w1 = AsDoubles(Fp16({Mlp::kIn, Mlp::kHidden}, mlp.w1));
  for (int i = 0; i < Mlp::kBatch; ++i) {
    for (int j = 0; j < Mlp::kHidden; ++j) {
      double s = 0, mag = 0;
      for (int k = 0; k < Mlp::kIn; ++k) {
        s += xd[i * Mlp::kIn + k] * w1[k * Mlp::kHidden + j];
        mag += std::fabs(xd[i * Mlp::kIn + k] * w1[k * Mlp::kHidden + j]);
      }
      // fp32 accumulation (K u32 mag) plus one rounding to fp16.
      EXPECT_NEAR(h[i * Mlp::kHidden + j], s, std::ldexp(std::fabs(s), -11) + 1e-6 * mag) << i << "," << j;
    }
  }
  EXPECT_EQ(resp->intermediates(4).name(), resp->outputs(0).name());
}

TEST_F(SliceTest, CastBetweenTypes) {
  GraphBuilder g("cast");
  Value in = g.Input("x", v1::FLOAT32, {6});
  g.Output(g.Op("Cast", {in}, {{"to", client::AttrInt(6)}}), "i");   // ONNX INT32
  g.Output(g.Op("Cast", {in}, {{"to", client::AttrInt(10)}}), "h");  // ONNX FLOAT16
  v1::RunRequest req;
  *req.mutable_graph() = g.Build();
  req.add_inputs()->set_name("x");
  auto x = client::MakeFloatTensor(v1::FLOAT32, {6}, std::vector<float>{-2.7f, -0.5f, 0.0f, 1.9f, 70000.0f, 3.14159f});
  ASSERT_TRUE(x.ok());
  *req.mutable_inputs(0)->mutable_tensor() = *x;
  auto resp = client_->Run(req);
  ASSERT_TRUE(resp.ok()) << resp.status();
  const auto i = AsDoubles(resp->outputs(0).tensor());
  EXPECT_EQ(i, (std::vector<double>{-2, 0, 0, 1, 70000, 3}));  // truncation toward zero
  const auto h = AsDoubles(resp->outputs(1).tensor());
  EXPECT_EQ(h[4], 65504.0);  // Ascend 910 saturates fp16 overflow
  EXPECT_EQ(h[5], 3.140625);  // nearest fp16 to pi: 3 + 145/1024
}

TEST_F(SliceTest, CliRunsTheMlpExampleAndWritesNpy) {
  const std::string dir = ::testing::TempDir() + "/cli_mlp";
  std::filesystem::remove_all(dir);
  const std::string cmd = std::string(NPU_CLI_BIN) + " --target " + server_->target() + " run " NPU_SOURCE_DIR
                          "/examples/graphs/mlp.json --input x=" NPU_SOURCE_DIR "/examples/graphs/mlp_x.npy"
                          " --output-dir " + dir + " --profile --device cuda:0 > " + dir + ".out 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  auto y = client::ReadNpy(dir + "/y.npy");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->dtype(), v1::FLOAT16);
  ASSERT_EQ(y->shape_size(), 2);
  EXPECT_EQ(y->shape(0), 4);
  EXPECT_EQ(y->shape(1), 10);
  std::ifstream out(dir + ".out");
  const std::string text((std::istreambuf_iterator<char>(out)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("fc1"), std::string::npos) << text;        // the per-node profile
  EXPECT_NE(text.find("cuda:0"), std::string::npos) << text;     // the migration notice

  // Compare with float64 computed from the example's own files.
  auto graph = client::LoadGraphJson(NPU_SOURCE_DIR "/examples/graphs/mlp.json");
  ASSERT_TRUE(graph.ok());
  std::map<std::string, std::vector<double>> w;
  for (const auto& init : graph->initializers()) w[init.name()] = AsDoubles(init.tensor());
  auto x = client::ReadNpy(NPU_SOURCE_DIR "/examples/graphs/mlp_x.npy");
  ASSERT_TRUE(x.ok());
  ExpectClose(AsDoubles(*y), MlpReference(AsDoubles(*x), w["w1"], w["b1"], w["w2"], w["b2"], 4, 64, 128, 10), 1.0);
}

}  // namespace
}  // namespace npu
