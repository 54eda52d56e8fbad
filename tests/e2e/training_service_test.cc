// npu.v1 TrainingService over real loopback gRPC against a real npu-server:
// a step's loss and update against float64 arithmetic, checkpoint and resume
// bit for bit, data parallelism over two devices, trainers private to their
// tenant, and every malformed request refused by name with the server still
// serving.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "client/client.h"
#include "client/graph_builder.h"
#include "client/model_file.h"
#include "client/trainer.h"
#include "client/npy.h"
#include "gtest/gtest.h"
#include "npu/v1/training.grpc.pb.h"
#include "tests/e2e/e2e_support.h"
#include "tests/e2e/digits_case.h"
#include "tests/e2e/server_process.h"

namespace npu::testing {
namespace {

using grpc::StatusCode;
using namespace std::chrono_literals;

v1::Tensor Int64s(std::vector<int64_t> shape, const std::vector<int64_t>& values) {
  v1::Tensor t;
  t.set_dtype(v1::INT64);
  for (int64_t d : shape) t.add_shape(d);
  t.set_data(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(int64_t));
  return t;
}

std::vector<float> Floats(const v1::Tensor& t) {
  std::vector<float> f(t.data().size() / 4);
  std::memcpy(f.data(), t.data().data(), f.size() * 4);
  return f;
}

// y = x W^T + b: x FLOAT32 [B, 2], W [1, 2], b [1].
v1::Graph Linear(std::vector<float> w = {1.0f, 0.5f}, float b = 0.0f) {
  client::GraphBuilder g("linear");
  client::Value x = g.Input("x", v1::FLOAT32, {4, 2});
  client::Value wv = g.Constant("w", Float32({1, 2}, w));
  client::Value bv = g.Constant("b", Float32({1}, {b}));
  g.Output(g.Op("Gemm", {x, wv, bv}, {{"transB", client::AttrInt(1)}}), "y");
  return g.Build();
}

// logits = relu(x W1^T + b1) W2^T + b2: x [B, 4], 3 classes.
v1::Graph Mlp() {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  auto random = [&](size_t n) {
    std::vector<float> v(n);
    for (float& f : v) f = u(rng);
    return v;
  };
  client::GraphBuilder g("mlp");
  client::Value x = g.Input("x", v1::FLOAT32, {8, 4});
  client::Value w1 = g.Constant("w1", Float32({6, 4}, random(24)));
  client::Value b1 = g.Constant("b1", Float32({6}, random(6)));
  client::Value w2 = g.Constant("w2", Float32({3, 6}, random(18)));
  client::Value b2 = g.Constant("b2", Float32({3}, random(3)));
  client::Value h = g.Relu(g.Op("Gemm", {x, w1, b1}, {{"transB", client::AttrInt(1)}}));
  g.Output(g.Op("Gemm", {h, w2, b2}, {{"transB", client::AttrInt(1)}}), "logits");
  return g.Build();
}

struct Batch {
  v1::Tensor x, labels;
};

Batch MlpBatch(int seed, int rows = 8) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(rows) * 4);
  std::vector<int64_t> labels(static_cast<size_t>(rows));
  for (int i = 0; i < rows; ++i) {
    for (int k = 0; k < 4; ++k) x[i * 4 + k] = u(rng);
    labels[i] = x[i * 4] > 0 ? (x[i * 4 + 1] > 0 ? 2 : 1) : 0;  // learnable from x
  }
  return {Float32({rows, 4}, x), Int64s({rows}, labels)};
}

v1::CreateTrainerRequest MlpTrainer(v1::OptimizerConfig::Kind kind = v1::OptimizerConfig::ADAM) {
  v1::CreateTrainerRequest req;
  *req.mutable_graph() = Mlp();
  req.set_loss(v1::CROSS_ENTROPY);
  req.mutable_optimizer()->set_kind(kind);
  req.mutable_optimizer()->set_lr(0.01);
  req.mutable_amp()->set_opt_level(v1::AmpConfig::O2);
  req.mutable_amp()->mutable_dynamic();
  return req;
}

class Client {
 public:
  explicit Client(int port, std::string token = "")
      : channel_(TestChannel("127.0.0.1:" + std::to_string(port))),
        stub_(v1::TrainingService::NewStub(channel_)),
        token_(std::move(token)) {}

  grpc::Status Create(const v1::CreateTrainerRequest& req, v1::CreateTrainerResponse* resp) {
    return stub_->CreateTrainer(Ctx(60s, token_).get(), req, resp);
  }
  grpc::Status Step(const std::string& id, const Batch& b, v1::StepResponse* resp, bool profile = false) {
    v1::StepRequest req;
    req.set_trainer_id(id);
    *req.mutable_x()->mutable_tensor() = b.x;
    *req.mutable_labels()->mutable_tensor() = b.labels;
    req.set_profile(profile);
    return stub_->Step(Ctx(60s, token_).get(), req, resp);
  }
  grpc::Status Export(const std::string& id, v1::ExportResponse* resp,
                      v1::ExportRequest::Format format = v1::ExportRequest::NPU_GRAPH) {
    v1::ExportRequest req;
    req.set_trainer_id(id);
    req.set_format(format);
    return stub_->Export(Ctx(60s, token_).get(), req, resp);
  }
  grpc::Status Save(const std::string& id, v1::TrainerCheckpoint* c) {
    v1::SaveCheckpointRequest req;
    req.set_trainer_id(id);
    return stub_->SaveCheckpoint(Ctx(60s, token_).get(), req, c);
  }
  grpc::Status Restore(const std::string& id, const v1::TrainerCheckpoint& c) {
    v1::RestoreCheckpointRequest req;
    req.set_trainer_id(id);
    *req.mutable_checkpoint() = c;
    v1::RestoreCheckpointResponse resp;
    return stub_->RestoreCheckpoint(Ctx(60s, token_).get(), req, &resp);
  }
  grpc::Status Delete(const std::string& id) {
    v1::DeleteTrainerRequest req;
    req.set_trainer_id(id);
    v1::DeleteTrainerResponse resp;
    return stub_->DeleteTrainer(Ctx(20s, token_).get(), req, &resp);
  }
  grpc::Status Evaluate(const std::string& id, const Batch& b, v1::EvaluateResponse* resp) {
    v1::EvaluateRequest req;
    req.set_trainer_id(id);
    *req.mutable_x()->mutable_tensor() = b.x;
    *req.mutable_labels()->mutable_tensor() = b.labels;
    req.set_return_predictions(true);
    return stub_->Evaluate(Ctx(60s, token_).get(), req, resp);
  }
  bool Serving() {
    grpc::health::v1::HealthCheckResponse health;
    auto stub = grpc::health::v1::Health::NewStub(channel_);
    return stub->Check(Ctx().get(), {}, &health).ok() &&
           health.status() == grpc::health::v1::HealthCheckResponse::SERVING;
  }
  v1::TrainingService::Stub& stub() { return *stub_; }

 private:
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::TrainingService::Stub> stub_;
  std::string token_;
};

const v1::Tensor& Initializer(const v1::Graph& g, const std::string& name) {
  for (const auto& init : g.initializers()) {
    if (init.name() == name) return init.tensor();
  }
  ADD_FAILURE() << "no initializer " << name;
  static const v1::Tensor none;
  return none;
}

// One SGD step of MSE on a linear model, every value exact in fp16 (the
// Cube's operands) and fp32: the loss and the new weights are float64's.
TEST(TrainingServiceTest, AStepIsTheFloat64StepOfTheModel) {
  ServerProcess server;
  Client c(server.port());
  v1::CreateTrainerRequest req;
  *req.mutable_graph() = Linear();
  req.set_loss(v1::MSE);
  req.mutable_optimizer()->set_kind(v1::OptimizerConfig::SGD);
  req.mutable_optimizer()->set_lr(0.125);
  v1::CreateTrainerResponse created;
  ASSERT_TRUE(c.Create(req, &created).ok());
  EXPECT_EQ(std::vector<std::string>(created.parameters().begin(), created.parameters().end()),
            (std::vector<std::string>{"w", "b"}));
  EXPECT_EQ(created.devices(0), "npu:0");
  EXPECT_EQ(created.loss_scale(), 1.0);

  const std::vector<double> x = {1, 2, -1, 0, 2, 2, 0, -2}, t = {1, 1, 0, 2};
  Batch b{Float32({4, 2}, {1, 2, -1, 0, 2, 2, 0, -2}), Float32({4, 1}, {1, 1, 0, 2})};
  double w[2] = {1.0, 0.5}, bias = 0, loss = 0, dw[2] = {0, 0}, db = 0;
  for (int i = 0; i < 4; ++i) {
    const double err = w[0] * x[2 * i] + w[1] * x[2 * i + 1] + bias - t[i];
    loss += err * err / 4;
    for (int k = 0; k < 2; ++k) dw[k] += 2 * err / 4 * x[2 * i + k];
    db += 2 * err / 4;
  }
  v1::StepResponse step;
  ASSERT_TRUE(c.Step(created.trainer_id(), b, &step).ok());
  EXPECT_EQ(step.step(), 1);
  EXPECT_EQ(step.loss(), loss);
  EXPECT_FALSE(step.skipped());
  EXPECT_EQ(step.overflow_elements(), 0u);
  v1::ExportResponse exported;
  ASSERT_TRUE(c.Export(created.trainer_id(), &exported).ok());
  EXPECT_EQ(Floats(Initializer(exported.graph(), "w")),
            (std::vector<float>{static_cast<float>(w[0] - 0.125 * dw[0]), static_cast<float>(w[1] - 0.125 * dw[1])}));
  EXPECT_EQ(Floats(Initializer(exported.graph(), "b")), (std::vector<float>{static_cast<float>(bias - 0.125 * db)}));

  // The exported graph is the model: it runs on the server's Run.
  auto runtime = v1::RuntimeService::NewStub(TestChannel("127.0.0.1:" + std::to_string(server.port())));
  v1::RunRequest run;
  *run.mutable_graph() = exported.graph();
  v1::RunInput* in = run.add_inputs();
  in->set_name("x");
  *in->mutable_tensor() = b.x;
  v1::RunResponse ran;
  ASSERT_TRUE(runtime->Run(Ctx().get(), run, &ran).ok());
  EXPECT_EQ(ran.outputs(0).name(), "y");
}

TEST(TrainingServiceTest, AnMlpLearnsAndEvaluates) {
  ServerProcess server;
  Client c(server.port());
  v1::CreateTrainerResponse created;
  ASSERT_TRUE(c.Create(MlpTrainer(), &created).ok());
  EXPECT_EQ(created.loss_scale(), 65536.0);  // apex's dynamic default
  const Batch held_out = MlpBatch(1000, 64);
  v1::EvaluateResponse before, after;
  ASSERT_TRUE(c.Evaluate(created.trainer_id(), held_out, &before).ok());
  for (int s = 0; s < 60; ++s) {
    v1::StepResponse step;
    ASSERT_TRUE(c.Step(created.trainer_id(), MlpBatch(s), &step).ok());
    EXPECT_EQ(step.step(), s + 1);
  }
  ASSERT_TRUE(c.Evaluate(created.trainer_id(), held_out, &after).ok());
  EXPECT_EQ(after.count(), 64);
  EXPECT_LT(after.loss(), before.loss() * 0.8) << "before " << before.loss();
  EXPECT_GT(after.correct(), before.correct());
  EXPECT_DOUBLE_EQ(after.accuracy(), static_cast<double>(after.correct()) / 64);
  ASSERT_EQ(after.predictions().shape_size(), 2);
  EXPECT_EQ(after.predictions().shape(1), 3);
  EXPECT_TRUE(c.Delete(created.trainer_id()).ok());
  v1::StepResponse gone;
  EXPECT_EQ(c.Step(created.trainer_id(), MlpBatch(0), &gone).error_code(), StatusCode::NOT_FOUND);
}

// Saved after 3 steps, restored into a new trainer: 3 more steps give the bits
// of the uninterrupted run's steps 4-6 (losses and parameters).
TEST(TrainingServiceTest, ACheckpointResumesBitForBit) {
  ServerProcess server;
  Client c(server.port());
  v1::CreateTrainerResponse a, b;
  ASSERT_TRUE(c.Create(MlpTrainer(), &a).ok());
  ASSERT_TRUE(c.Create(MlpTrainer(), &b).ok());
  v1::StepResponse step;
  for (int s = 0; s < 3; ++s) ASSERT_TRUE(c.Step(a.trainer_id(), MlpBatch(s), &step).ok());
  v1::TrainerCheckpoint saved;
  ASSERT_TRUE(c.Save(a.trainer_id(), &saved).ok());
  EXPECT_EQ(saved.step(), 3);
  EXPECT_EQ(saved.optimizer(), "adam");
  EXPECT_EQ(saved.amp(), "O2");
  ASSERT_EQ(saved.parameters_size(), 4);
  EXPECT_EQ(saved.parameters(0).value().dtype(), v1::FLOAT16);   // O2's model weights
  EXPECT_EQ(saved.parameters(0).master().dtype(), v1::FLOAT32);  // and fp32 masters
  EXPECT_EQ(saved.parameters(0).optimizer_state_size(), 2);      // exp_avg, exp_avg_sq
  std::string bytes;
  ASSERT_TRUE(saved.SerializeToString(&bytes));  // what `npu train --checkpoint` writes
  v1::TrainerCheckpoint reread;
  ASSERT_TRUE(reread.ParseFromString(bytes));
  ASSERT_TRUE(c.Restore(b.trainer_id(), reread).ok());
  for (int s = 3; s < 6; ++s) {
    v1::StepResponse sa, sb;
    ASSERT_TRUE(c.Step(a.trainer_id(), MlpBatch(s), &sa).ok());
    ASSERT_TRUE(c.Step(b.trainer_id(), MlpBatch(s), &sb).ok());
    EXPECT_EQ(sa.step(), sb.step());
    EXPECT_EQ(sa.loss(), sb.loss()) << "step " << s + 1;
    EXPECT_EQ(sa.next_loss_scale(), sb.next_loss_scale());
  }
  v1::ExportResponse ea, eb;
  ASSERT_TRUE(c.Export(a.trainer_id(), &ea).ok());
  ASSERT_TRUE(c.Export(b.trainer_id(), &eb).ok());
  for (const char* p : {"w1", "b1", "w2", "b2"}) {
    EXPECT_EQ(Initializer(ea.graph(), p).data(), Initializer(eb.graph(), p).data()) << p;
  }
  // Another optimizer's checkpoint is refused, changing nothing.
  v1::CreateTrainerResponse sgd;
  ASSERT_TRUE(c.Create(MlpTrainer(v1::OptimizerConfig::SGD), &sgd).ok());
  grpc::Status refused = c.Restore(sgd.trainer_id(), saved);
  EXPECT_EQ(refused.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(refused.error_message().find("optimizer \"adam\""), std::string::npos) << refused.error_message();
}

// Two devices: each gets half the batch, the allreduce is in each device's
// profile, and the step follows the one-device step of the same batch.
TEST(TrainingServiceTest, TwoDevicesSplitTheBatchAndAllreduce) {
  ServerProcess server({"--devices=2"});
  Client c(server.port());
  v1::CreateTrainerRequest two = MlpTrainer(v1::OptimizerConfig::SGD);
  two.mutable_amp()->set_opt_level(v1::AmpConfig::O0);
  two.mutable_amp()->clear_dynamic();
  v1::CreateTrainerRequest one = two;
  two.add_devices("npu:0");
  two.add_devices("cuda:1");  // a GPU script's device names work
  two.set_backend("nccl");
  v1::CreateTrainerResponse t2, t1;
  ASSERT_TRUE(c.Create(two, &t2).ok());
  ASSERT_TRUE(c.Create(one, &t1).ok());
  EXPECT_EQ(std::vector<std::string>(t2.devices().begin(), t2.devices().end()),
            (std::vector<std::string>{"npu:0", "npu:1"}));
  EXPECT_NE(t2.notice().find("HCCL"), std::string::npos) << t2.notice();
  for (int s = 0; s < 3; ++s) {
    v1::StepResponse s2, s1;
    ASSERT_TRUE(c.Step(t2.trainer_id(), MlpBatch(s), &s2, /*profile=*/true).ok());
    ASSERT_TRUE(c.Step(t1.trainer_id(), MlpBatch(s), &s1).ok());
    EXPECT_NEAR(s2.loss(), s1.loss(), 1e-3 * std::fabs(s1.loss())) << "step " << s + 1;
    ASSERT_EQ(s2.profiles_size(), 2);
    for (const v1::Profile& p : s2.profiles()) {
      int hccl = 0;
      for (const auto& n : p.nodes()) hccl += n.task_type() == "HCCL";
      EXPECT_GE(hccl, 1) << "an allreduce task in each device's profile";
    }
  }
}

TEST(TrainingServiceTest, TrainersArePrivateToTheirTenant) {
  const std::filesystem::path tokens =
      std::filesystem::temp_directory_path() / ("npu_train_tokens_" + std::to_string(std::random_device{}()));
  std::ofstream(tokens) << "tok-a alice\ntok-b bob\n";
  ServerProcess server({"--auth_tokens=" + tokens.string(), "--max_trainers_per_tenant=2"});
  std::filesystem::remove(tokens);
  Client alice(server.port(), "tok-a"), bob(server.port(), "tok-b"), nobody(server.port());
  v1::CreateTrainerResponse mine, second, third;
  ASSERT_TRUE(alice.Create(MlpTrainer(), &mine).ok());
  v1::StepResponse step;
  v1::ExportResponse exported;
  v1::TrainerCheckpoint saved;
  EXPECT_EQ(bob.Step(mine.trainer_id(), MlpBatch(0), &step).error_code(), StatusCode::NOT_FOUND);
  EXPECT_EQ(bob.Export(mine.trainer_id(), &exported).error_code(), StatusCode::NOT_FOUND);
  EXPECT_EQ(bob.Save(mine.trainer_id(), &saved).error_code(), StatusCode::NOT_FOUND);
  EXPECT_EQ(bob.Delete(mine.trainer_id()).error_code(), StatusCode::NOT_FOUND);
  EXPECT_EQ(nobody.Step(mine.trainer_id(), MlpBatch(0), &step).error_code(), StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(alice.Step(mine.trainer_id(), MlpBatch(0), &step).ok());
  // At most two trainers each; bob's quota is his own.
  ASSERT_TRUE(alice.Create(MlpTrainer(), &second).ok());
  grpc::Status full = alice.Create(MlpTrainer(), &third);
  EXPECT_EQ(full.error_code(), StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(full.error_message().find("--max_trainers_per_tenant"), std::string::npos) << full.error_message();
  EXPECT_TRUE(bob.Create(MlpTrainer(), &third).ok());
  ASSERT_TRUE(alice.Delete(second.trainer_id()).ok());
  EXPECT_TRUE(alice.Create(MlpTrainer(), &second).ok());
}

// A trainer made from an npu.v1.Graph exports as ONNX: the server imports it
// back (RegisterGraph), and its Run gives Evaluate's predictions bit for bit
// (O0: the trainer evaluates the fp32 parameters the export holds).
TEST(TrainingServiceTest, AGraphTrainerExportsAsOnnxThatRunsAsItEvaluates) {
  ServerProcess server;
  Client c(server.port());
  v1::CreateTrainerRequest req = MlpTrainer();
  req.mutable_amp()->set_opt_level(v1::AmpConfig::O0);
  req.mutable_amp()->clear_dynamic();
  v1::CreateTrainerResponse created;
  ASSERT_TRUE(c.Create(req, &created).ok());
  for (int s = 0; s < 5; ++s) {
    v1::StepResponse step;
    ASSERT_TRUE(c.Step(created.trainer_id(), MlpBatch(s), &step).ok());
  }
  const Batch held_out = MlpBatch(1000, 8);
  v1::EvaluateResponse eval;
  ASSERT_TRUE(c.Evaluate(created.trainer_id(), held_out, &eval).ok());
  v1::ExportResponse exported;
  ASSERT_TRUE(c.Export(created.trainer_id(), &exported, v1::ExportRequest::ONNX).ok());
  ASSERT_FALSE(exported.onnx_model().empty());
  // A valid ONNX model by ONNX's own checker (Debian's python3-onnx), not only by our importer.
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("npu-export-" + std::to_string(getpid()) + ".onnx");
  std::ofstream(file, std::ios::binary) << exported.onnx_model();
  const std::string check = std::string(NPU_PYTHON) +
                            " -c 'import onnx, sys; onnx.checker.check_model(onnx.load(sys.argv[1]), full_check=True)' " +
                            file.string();
  EXPECT_EQ(std::system(check.c_str()), 0) << check;
  std::filesystem::remove(file);
  auto runtime = v1::RuntimeService::NewStub(TestChannel(server.target()));
  v1::RegisterGraphRequest reg;
  reg.set_onnx_model(exported.onnx_model());
  v1::RegisterGraphResponse registered;
  grpc::Status st = runtime->RegisterGraph(Ctx().get(), reg, &registered);
  ASSERT_TRUE(st.ok()) << st.error_message();
  v1::RunRequest run;
  run.set_graph_id(registered.graph_id());
  v1::RunInput* in = run.add_inputs();
  in->set_name("x");
  *in->mutable_tensor() = held_out.x;
  v1::RunResponse ran;
  st = runtime->Run(Ctx().get(), run, &ran);
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_EQ(ran.outputs_size(), 1);
  EXPECT_EQ(ran.outputs(0).name(), "logits");
  EXPECT_EQ(ran.outputs(0).tensor().dtype(), v1::FLOAT32);
  EXPECT_EQ(std::vector<int64_t>(ran.outputs(0).tensor().shape().begin(), ran.outputs(0).tensor().shape().end()),
            (std::vector<int64_t>{8, 3}));
  EXPECT_EQ(Floats(ran.outputs(0).tensor()), Floats(eval.predictions()));
  // The export is of the trained weights: not the model as created.
  v1::ExportResponse graph;
  ASSERT_TRUE(c.Export(created.trainer_id(), &graph).ok());
  EXPECT_NE(Initializer(graph.graph(), "w1").data(), Initializer(Mlp(), "w1").data());
}

// logits = relu(relu(x W1^T) W2^T) W3^T, x [B, 64], 1024 wide: a step of a
// large batch keeps the devices busy for a long while, from a small request.
v1::Graph WideMlp() {
  client::GraphBuilder g("wide");
  client::Value x = g.Input("x", v1::FLOAT32, {8, 64});
  auto weight = [&](const char* name, int64_t out, int64_t in) {
    std::vector<float> w(static_cast<size_t>(out * in));
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i % 7) - 3) / 64.0f;
    return g.Constant(name, Float32({out, in}, w));
  };
  auto gemm = [&](client::Value a, client::Value w) { return g.Op("Gemm", {a, w}, {{"transB", client::AttrInt(1)}}); };
  client::Value h1 = g.Relu(gemm(x, weight("w1", 1024, 64)));
  client::Value h2 = g.Relu(gemm(h1, weight("w2", 1024, 1024)));
  g.Output(gemm(h2, weight("w3", 10, 1024)), "logits");
  return g.Build();
}

// The C++ client's trainer of a model larger than one message (4.5 MB of
// weights, a 1 MiB send limit): streamed by RegisterGraphStream, named by
// graph_id, and unregistered once the trainer exists; it trains as the
// inline one does.
TEST(TrainingServiceTest, AModelAboveTheClientsSendLimitIsStreamedAndNamedById) {
  ServerProcess server({"--log_level=warn"});
  client::ClientOptions small;
  small.max_send_message_bytes = int64_t{1} << 20;
  auto npu = client::Client::Connect(server.target(), small);
  ASSERT_TRUE(npu.ok()) << npu.status();
  v1::CreateTrainerRequest req;
  *req.mutable_graph() = WideMlp();
  ASSERT_GT(req.ByteSizeLong(), size_t{4} << 20);
  req.set_loss(v1::CROSS_ENTROPY);
  req.mutable_optimizer()->set_kind(v1::OptimizerConfig::SGD);
  req.mutable_optimizer()->set_lr(0.01);
  auto streamed = client::Trainer::Create(**npu, req);
  ASSERT_TRUE(streamed.ok()) << streamed.status();
  EXPECT_EQ((*streamed)->info().parameters_size(), 3);
  // The temporary registration is gone.
  EXPECT_EQ((*npu)->FindGraph(client::ModelOf(req.graph()).sha256).status().code(), absl::StatusCode::kNotFound);
  // The same first step as a trainer made inline (a roomy client).
  auto roomy = client::Client::Connect(server.target(), client::ClientOptions{});
  ASSERT_TRUE(roomy.ok());
  auto inline_trainer = client::Trainer::Create(**roomy, req);
  ASSERT_TRUE(inline_trainer.ok()) << inline_trainer.status();
  std::vector<float> xs(8 * 64);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i % 13) / 13.0f;
  const v1::Tensor x = Float32({8, 64}, xs), y = Int64s({8}, {0, 1, 2, 3, 4, 5, 6, 7});
  auto a = (*streamed)->Step(x, y, false);
  auto b = (*inline_trainer)->Step(x, y, false);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->loss(), b->loss());
}

// A Step whose deadline passes, or whose client cancels it, while the device
// computes stops there (the server counts it in runs_cancelled) and changes
// nothing: no step counted, every parameter as it was; the trainer then
// steps on as if it had never been sent.
TEST(TrainingServiceTest, AStepGivenUpByItsClientStopsAndChangesNothing) {
  ServerProcess server({"--log_level=warn"});
  Client c(server.port());
  auto devices = v1::DeviceService::NewStub(TestChannel(server.target()));
  // The server counts a stopped step once its devices are free: polled, at most a minute (a bound against
  // hangs, not a timing assertion; a step that ran to its end is never counted).
  auto cancelled = [&](uint64_t want) {
    v1::ServerStats stats;
    for (int i = 0; i < 6000; ++i) {
      EXPECT_TRUE(devices->GetStats(Ctx().get(), {}, &stats).ok());
      if (stats.runs_cancelled() >= want) break;
      std::this_thread::sleep_for(10ms);
    }
    return stats.runs_cancelled();
  };
  v1::CreateTrainerRequest req;
  *req.mutable_graph() = WideMlp();
  req.set_loss(v1::CROSS_ENTROPY);
  req.mutable_optimizer()->set_kind(v1::OptimizerConfig::SGD);
  req.mutable_optimizer()->set_lr(0.01);
  v1::CreateTrainerResponse created;
  ASSERT_TRUE(c.Create(req, &created).ok());
  v1::TrainerCheckpoint before;
  ASSERT_TRUE(c.Save(created.trainer_id(), &before).ok());

  std::vector<float> xs(2048 * 64);
  std::vector<int64_t> ys(2048);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i % 13) / 13.0f;
  for (size_t i = 0; i < ys.size(); ++i) ys[i] = static_cast<int64_t>(i % 10);
  v1::StepRequest big;
  big.set_trainer_id(created.trainer_id());
  *big.mutable_x()->mutable_tensor() = Float32({2048, 64}, xs);
  *big.mutable_labels()->mutable_tensor() = Int64s({2048}, ys);
  v1::StepResponse resp;
  grpc::Status st = c.stub().Step(Ctx(50ms).get(), big, &resp);
  EXPECT_EQ(st.error_code(), StatusCode::DEADLINE_EXCEEDED) << st.error_message();
  EXPECT_EQ(cancelled(1), 1u) << "the server's side of it: the step stopped";

  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 60s);
  std::thread canceller([&] {
    std::this_thread::sleep_for(50ms);  // the step is under way (or still arriving: either way it stops)
    ctx.TryCancel();
  });
  st = c.stub().Step(&ctx, big, &resp);
  canceller.join();
  EXPECT_EQ(st.error_code(), StatusCode::CANCELLED) << st.error_message();
  EXPECT_EQ(cancelled(2), 2u);

  v1::TrainerCheckpoint after;
  ASSERT_TRUE(c.Save(created.trainer_id(), &after).ok());
  EXPECT_EQ(after.step(), 0);
  ASSERT_EQ(after.parameters_size(), before.parameters_size());
  for (int i = 0; i < before.parameters_size(); ++i) {
    EXPECT_EQ(after.parameters(i).value().data(), before.parameters(i).value().data()) << before.parameters(i).name();
  }
  v1::StepResponse small;
  ASSERT_TRUE(c.Step(created.trainer_id(), {Float32({4, 64}, std::vector<float>(256, 0.5f)), Int64s({4}, {1, 2, 3, 4})},
                     &small).ok());
  EXPECT_EQ(small.step(), 1);
}

// The acceptance model of issue 15: scikit-learn's digits, an MLP exported
// from torch as ONNX, trained through the service with apex O2 and a dynamic
// loss scale; the exported ONNX model, registered and run, classifies the
// held-out images as Evaluate counted.
TEST(TrainingServiceTest, AnOnnxMlpLearnsTheDigitsUnderO2AndExportsAsOnnx) {
  namespace fs = std::filesystem;
  const fs::path dir = DigitsCase();
  ASSERT_FALSE(dir.empty());
  auto x = client::ReadNpy((dir / "x.npy").string());
  auto y = client::ReadNpy((dir / "y.npy").string());
  ASSERT_TRUE(x.ok() && y.ok());
  std::ifstream f(dir / "mlp.onnx", std::ios::binary);
  const std::string onnx((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const int64_t rows = x->shape(0), train_rows = rows * 8 / 10, batch = 64;
  auto slice = [](const v1::Tensor& t, int64_t begin, int64_t end) {
    v1::Tensor s = t;
    const size_t row = t.data().size() / static_cast<size_t>(t.shape(0));
    s.set_shape(0, end - begin);
    s.set_data(t.data().substr(static_cast<size_t>(begin) * row, static_cast<size_t>(end - begin) * row));
    return s;
  };
  ServerProcess server;
  Client c(server.port());
  v1::CreateTrainerRequest req;
  req.set_onnx_model(onnx);
  req.set_loss(v1::CROSS_ENTROPY);
  req.mutable_optimizer()->set_kind(v1::OptimizerConfig::ADAM);
  req.mutable_optimizer()->set_lr(0.01);
  req.mutable_amp()->set_opt_level(v1::AmpConfig::O2);
  req.mutable_amp()->mutable_dynamic();
  v1::CreateTrainerResponse created;
  ASSERT_TRUE(c.Create(req, &created).ok());
  EXPECT_EQ(created.parameters_size(), 4);
  for (int epoch = 0; epoch < 5; ++epoch) {
    for (int64_t b = 0; b < train_rows; b += batch) {
      const int64_t e = std::min(train_rows, b + batch);
      v1::StepResponse step;
      ASSERT_TRUE(c.Step(created.trainer_id(), {slice(*x, b, e), slice(*y, b, e)}, &step).ok());
    }
  }
  const Batch val{slice(*x, train_rows, rows), slice(*y, train_rows, rows)};
  v1::EvaluateResponse eval;
  ASSERT_TRUE(c.Evaluate(created.trainer_id(), val, &eval).ok());
  EXPECT_GE(eval.accuracy(), 0.95) << eval.correct() << " of " << eval.count();
  std::printf("[ digits ] 5 epochs, O2, dynamic scale: validation accuracy %.4f (%lld of %lld), loss %.4f\n",
              eval.accuracy(), static_cast<long long>(eval.correct()), static_cast<long long>(eval.count()),
              eval.loss());

  v1::ExportResponse exported;
  ASSERT_TRUE(c.Export(created.trainer_id(), &exported, v1::ExportRequest::ONNX).ok());
  ASSERT_FALSE(exported.onnx_model().empty());
  auto runtime = v1::RuntimeService::NewStub(TestChannel("127.0.0.1:" + std::to_string(server.port())));
  v1::RegisterGraphRequest reg;
  reg.set_onnx_model(exported.onnx_model());
  v1::RegisterGraphResponse registered;
  ASSERT_TRUE(runtime->RegisterGraph(Ctx().get(), reg, &registered).ok());
  v1::RunRequest run;
  run.set_graph_id(registered.graph_id());
  v1::RunInput* in = run.add_inputs();
  in->set_name("x");
  *in->mutable_tensor() = val.x;
  v1::RunResponse ran;
  ASSERT_TRUE(runtime->Run(Ctx().get(), run, &ran).ok());
  const std::vector<float> logits = Floats(ran.outputs(0).tensor());
  std::vector<int64_t> labels(static_cast<size_t>(val.labels.shape(0)));
  std::memcpy(labels.data(), val.labels.data().data(), labels.size() * 8);
  int64_t correct = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    const float* row = logits.data() + i * 10;
    correct += std::max_element(row, row + 10) - row == labels[i];
  }
  // The export holds the fp32 masters, the trainer evaluates its fp16 model:
  // a few rows near a tie may fall either way.
  EXPECT_NEAR(static_cast<double>(correct), static_cast<double>(eval.correct()), 3.0);
  EXPECT_GE(static_cast<double>(correct) / static_cast<double>(labels.size()), 0.95);
  std::printf("[ digits ] the exported ONNX model, registered and run: %lld of %zu correct\n",
              static_cast<long long>(correct), labels.size());
}

struct BadCase {
  std::string name;
  StatusCode code;
  std::string culprit;
  std::function<grpc::Status(Client&, const std::string& trainer)> send;
};

std::vector<BadCase> BadRequests() {
  std::vector<BadCase> cases;
  auto create = [](std::function<void(v1::CreateTrainerRequest&)> mutate) {
    return [mutate](Client& c, const std::string&) {
      v1::CreateTrainerRequest req = MlpTrainer();
      mutate(req);
      v1::CreateTrainerResponse resp;
      return c.Create(req, &resp);
    };
  };
  auto step = [](std::function<void(Batch&)> mutate) {
    return [mutate](Client& c, const std::string& trainer) {
      Batch b = MlpBatch(0);
      mutate(b);
      v1::StepResponse resp;
      return c.Step(trainer, b, &resp);
    };
  };
  auto add = [&](std::string name, StatusCode code, std::string culprit,
                 std::function<grpc::Status(Client&, const std::string&)> f) {
    cases.push_back({std::move(name), code, std::move(culprit), std::move(f)});
  };
  add("no model", StatusCode::INVALID_ARGUMENT, "carries no model", create([](auto& r) { r.clear_model(); }));
  add("loss unset", StatusCode::INVALID_ARGUMENT, "loss 0 is not set", create([](auto& r) { r.clear_loss(); }));
  add("optimizer unset", StatusCode::INVALID_ARGUMENT, "optimizer.kind 0",
      create([](auto& r) { r.mutable_optimizer()->clear_kind(); }));
  add("zero learning rate", StatusCode::INVALID_ARGUMENT, "learning rate = 0",
      create([](auto& r) { r.mutable_optimizer()->set_lr(0); }));
  add("momentum of Adam", StatusCode::INVALID_ARGUMENT, "optimizer.momentum",
      create([](auto& r) { r.mutable_optimizer()->mutable_momentum()->set_value(0.9); }));
  add("momentum of 1", StatusCode::INVALID_ARGUMENT, "momentum = 1", create([](auto& r) {
        r.mutable_optimizer()->set_kind(v1::OptimizerConfig::MOMENTUM);
        r.mutable_optimizer()->mutable_momentum()->set_value(1);
      }));
  add("negative loss scale", StatusCode::INVALID_ARGUMENT, "loss scale = -4",
      create([](auto& r) { r.mutable_amp()->set_static_scale(-4); }));
  add("unknown opt level", StatusCode::INVALID_ARGUMENT, "amp.opt_level 7",
      create([](auto& r) { r.mutable_amp()->set_opt_level(static_cast<v1::AmpConfig::OptLevel>(7)); }));
  add("no such device", StatusCode::NOT_FOUND, "npu:5", create([](auto& r) { r.add_devices("npu:5"); }));
  add("a device twice", StatusCode::INVALID_ARGUMENT, "npu:0 is listed twice", create([](auto& r) {
        r.add_devices("npu:0");
        r.add_devices("cuda:0");
      }));
  add("unknown backend", StatusCode::INVALID_ARGUMENT, "backend \"gloo\"", create([](auto& r) { r.set_backend("gloo"); }));
  add("short initializer", StatusCode::INVALID_ARGUMENT, "initializer \"w1\"", create([](auto& r) {
        for (auto& init : *r.mutable_graph()->mutable_initializers()) {
          if (init.name() == "w1") init.mutable_tensor()->mutable_data()->resize(8);
        }
      }));
  add("two inputs", StatusCode::INVALID_ARGUMENT, "one data input", create([](auto& r) {
        v1::ValueInfo* in = r.mutable_graph()->add_inputs();
        in->set_name("z");
        in->set_dtype(v1::FLOAT32);
        in->add_shape(8);
      }));
  add("trainable not in the model", StatusCode::INVALID_ARGUMENT, "trainable parameter \"w9\"",
      create([](auto& r) { r.add_trainable("w9"); }));
  add("an op without a gradient", StatusCode::INVALID_ARGUMENT, "\"hard\" (Hardmax)", create([](auto& r) {
        v1::Graph& g = *r.mutable_graph();
        v1::Node* n = g.add_nodes();
        n->set_name("hard");
        n->set_op_type("Hardmax");
        n->add_inputs(g.outputs(0));
        n->add_outputs("hardened");
        g.set_outputs(0, "hardened");
      }));
  add("onnx bytes that are not ONNX", StatusCode::INVALID_ARGUMENT, "ONNX",
      create([](auto& r) { r.set_onnx_model("not a model"); }));
  add("unknown trainer", StatusCode::NOT_FOUND, "trainer id \"t-nope\"",
      [](Client& c, const std::string&) {
        v1::StepResponse resp;
        return c.Step("t-nope", MlpBatch(0), &resp);
      });
  add("x of another shape", StatusCode::INVALID_ARGUMENT, "must be FLOAT32 [B, 4]",
      step([](Batch& b) { b = {Float32({2, 3}, {1, 2, 3, 4, 5, 6}), Int64s({2}, {0, 1})}; }));
  add("x bytes short", StatusCode::INVALID_ARGUMENT, "x", step([](Batch& b) { b.x.mutable_data()->resize(12); }));
  add("float labels for cross entropy", StatusCode::INVALID_ARGUMENT, "cross_entropy labels must be INT64",
      step([](Batch& b) { b.labels = Float32({8}, std::vector<float>(8, 0)); }));
  add("labels of another batch", StatusCode::INVALID_ARGUMENT, "one row per example",
      step([](Batch& b) { b.labels = Int64s({3}, {0, 1, 2}); }));
  add("a label past the classes", StatusCode::INVALID_ARGUMENT, "label", step([](Batch& b) {
        std::vector<int64_t> l(8, 0);
        l[5] = 3;
        b.labels = Int64s({8}, l);
      }));
  add("no x", StatusCode::INVALID_ARGUMENT, "no x", [](Client& c, const std::string& trainer) {
    v1::StepRequest req;
    req.set_trainer_id(trainer);
    v1::StepResponse resp;
    return c.stub().Step(Ctx().get(), req, &resp);
  });
  add("unknown handle", StatusCode::NOT_FOUND, "h-missing", [](Client& c, const std::string& trainer) {
    v1::StepRequest req;
    req.set_trainer_id(trainer);
    req.mutable_x()->set_handle("h-missing");
    *req.mutable_labels()->mutable_tensor() = MlpBatch(0).labels;
    v1::StepResponse resp;
    return c.stub().Step(Ctx().get(), req, &resp);
  });
  auto restore = [](std::function<void(v1::TrainerCheckpoint&)> mutate) {
    return [mutate](Client& c, const std::string& trainer) {
      v1::TrainerCheckpoint saved;
      grpc::Status s = c.Save(trainer, &saved);
      if (!s.ok()) return s;
      mutate(saved);
      return c.Restore(trainer, saved);
    };
  };
  add("checkpoint of another parameter", StatusCode::INVALID_ARGUMENT, "checkpoint parameter 0 is \"v1\"",
      restore([](auto& s) { s.mutable_parameters(0)->set_name("v1"); }));
  add("checkpoint tensor bytes short", StatusCode::INVALID_ARGUMENT, "checkpoint parameter \"w1\"",
      restore([](auto& s) { s.mutable_parameters(0)->mutable_value()->mutable_data()->resize(2); }));
  add("checkpoint tensor of another shape", StatusCode::INVALID_ARGUMENT, "checkpoint parameters 0",
      restore([](auto& s) {
        v1::Tensor& t = *s.mutable_parameters(0)->mutable_value();
        t.set_shape(0, 4);
        t.set_shape(1, 6);
      }));
  add("checkpoint of another amp level", StatusCode::INVALID_ARGUMENT, "amp \"O1\"",
      restore([](auto& s) { s.set_amp("O1"); }));
  add("checkpoint with a zero loss scale", StatusCode::INVALID_ARGUMENT, "loss scale 0",
      restore([](auto& s) { s.set_loss_scale(0); }));
  add("checkpoint missing a parameter", StatusCode::INVALID_ARGUMENT, "has 3 parameters",
      restore([](auto& s) { s.mutable_parameters()->RemoveLast(); }));
  return cases;
}

TEST(TrainingServiceTest, EachMalformedRequestIsRefusedByNameAndTheServerKeepsServing) {
  ServerProcess server;
  Client c(server.port());
  v1::CreateTrainerResponse trainer;
  ASSERT_TRUE(c.Create(MlpTrainer(), &trainer).ok());
  for (const BadCase& bad : BadRequests()) {
    SCOPED_TRACE(bad.name);
    grpc::Status s = bad.send(c, trainer.trainer_id());
    EXPECT_EQ(s.error_code(), bad.code) << s.error_message();
    EXPECT_NE(s.error_message().find(bad.culprit), std::string::npos)
        << "message \"" << s.error_message() << "\" does not name \"" << bad.culprit << "\"";
    EXPECT_TRUE(c.Serving());
  }
  // The trainer is as it was: a good step still works and counts one.
  v1::StepResponse step;
  ASSERT_TRUE(c.Step(trainer.trainer_id(), MlpBatch(0), &step).ok());
  EXPECT_EQ(step.step(), 1);
}

}  // namespace
}  // namespace npu::testing
