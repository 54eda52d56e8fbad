#include "fuzz/training_case.h"

#include <grpcpp/grpcpp.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/graph_builder.h"
#include "fuzz/onnx_case.h"
#include "npu/v1/runtime.grpc.pb.h"
#include "npu/v1/training.grpc.pb.h"
#include "onnx/onnx_export.h"
#include "server/rpc/npu_server.h"

namespace npu::fuzz {
namespace {

struct World {
  World() {
    rpc::ServerConfig config;
    config.listen = "127.0.0.1:0";
    config.devices = 2;
    config.preset = "ascend310";
    config.device_options.omp_threads = 1;
    config.grpc_max_pollers = 4;
    config.limits.max_tensor_bytes = 1 << 20;
    server = rpc::NpuServer::Start(config).value();
    auto channel =
        grpc::CreateChannel(absl::StrCat("127.0.0.1:", server->port()), grpc::InsecureChannelCredentials());
    stub = v1::TrainingService::NewStub(channel);
    runtime = v1::RuntimeService::NewStub(channel);
  }
  std::unique_ptr<rpc::NpuServer> server;
  std::unique_ptr<v1::TrainingService::Stub> stub;
  std::unique_ptr<v1::RuntimeService::Stub> runtime;
};

double Hyper(ChoiceSource& src) {
  static const std::vector<double> v = {0.01, 0.1, 0.9, 0, -1, 1e30, std::numeric_limits<double>::quiet_NaN(),
                                        std::numeric_limits<double>::infinity(), 1, 2, 1e-12};
  return src.Pick(v);
}

v1::Tensor Floats(std::vector<int64_t> shape, float value) {
  v1::Tensor t;
  t.set_dtype(v1::FLOAT32);
  int64_t n = 1;
  for (int64_t d : shape) {
    t.add_shape(d);
    n *= d;
  }
  std::vector<float> v(static_cast<size_t>(n), value);
  t.set_data(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
  return t;
}

// x [-1, 4] -> Gemm/MatMul -> Relu -> MatMul -> logits [-1, classes].
v1::Graph Mlp(ChoiceSource& src, int64_t classes) {
  client::GraphBuilder g("mlp");
  client::Value x = g.Input("x", v1::FLOAT32, {src.Chance(80) ? -1 : 2, 4});
  client::Value w1 = g.Constant("w1", Floats({4, 8}, 0.1f));
  client::Value b1 = g.Constant("b1", Floats({8}, 0.0f));
  client::Value h = g.Relu(g.Add(g.MatMul(x, w1), b1));
  if (src.Chance(30)) h = g.Op(src.Pick(std::vector<std::string>{"Tanh", "Sigmoid", "Dropout", "Gelu"}), {h});
  client::Value w2 = g.Constant("w2", Floats({8, classes}, src.Chance(10) ? 1e30f : -0.2f));
  g.Output(g.MatMul(h, w2), "logits");
  return g.Build();
}

v1::Tensor Batch(ChoiceSource& src, int64_t rows, int64_t cols, v1::DataType dtype, int64_t label_max) {
  v1::Tensor t;
  t.set_dtype(dtype);
  std::vector<int64_t> shape = {rows};
  if (cols > 0) shape.push_back(cols);
  if (src.Chance(5)) shape.push_back(3);
  if (src.Chance(3)) shape = {int64_t{1} << 40};
  int64_t n = 1;
  for (int64_t d : shape) {
    t.add_shape(d);
    n = d > (1 << 16) ? -1 : n * d;
  }
  if (n < 0) return t;  // a declared size with no data
  const size_t width = dtype == v1::INT64 ? 8 : dtype == v1::FLOAT16 ? 2 : 4;
  std::string data(static_cast<size_t>(n) * width, '\0');
  for (int64_t i = 0; i < n; ++i) {
    if (dtype == v1::INT64) {
      const int64_t label = src.Chance(5) ? (src.Chance(50) ? -1 : label_max + 5) : static_cast<int64_t>(src.Below(label_max));
      std::memcpy(data.data() + i * 8, &label, 8);
    } else if (dtype == v1::FLOAT32) {
      const float v = src.Chance(3) ? std::numeric_limits<float>::quiet_NaN() : static_cast<float>(src.Below(7)) - 3;
      std::memcpy(data.data() + i * 4, &v, 4);
    }
  }
  if (src.Chance(3)) data.resize(data.size() / 2);
  t.set_data(data);
  return t;
}

std::string Clear(const grpc::Status& s, const char* call) {
  if (s.error_code() == grpc::StatusCode::INTERNAL || s.error_code() == grpc::StatusCode::UNKNOWN) {
    return absl::StrCat(call, " answered ", s.error_code(), ": ", s.error_message().substr(0, 300));
  }
  return "";
}

std::unique_ptr<grpc::ClientContext> Ctx() {
  auto c = std::make_unique<grpc::ClientContext>();
  c->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  return c;
}

v1::RunInput* Inline(v1::RunRequest& run, const std::string& name, v1::Tensor t) {
  v1::RunInput* in = run.add_inputs();
  in->set_name(name);
  *in->mutable_tensor() = std::move(t);
  return in;
}

// RegisterGradient of the case's model (parameters and wrt right, wrong or
// repeated; any training flag, amp level and device), then its forward on a
// batch (saved values kept) and its backward from the outputs' gradients,
// which frees them.
std::string GradientCase(ChoiceSource& src, World& world, const v1::CreateTrainerRequest& create, bool hostile) {
  v1::RegisterGradientRequest req;
  if (create.has_graph()) {
    *req.mutable_graph() = create.graph();
    // Static shapes, as a host autograd exports each signature (most cases).
    for (auto& in : *req.mutable_graph()->mutable_inputs()) {
      if (in.shape_size() > 0 && in.shape(0) == -1 && src.Chance(80)) in.set_shape(0, 2);
    }
  } else {
    req.set_onnx_model(create.onnx_model());
  }
  static const std::vector<std::string> names = {"w1", "b1", "w2", "x", "nope", "logits", ""};
  for (const char* p : {"w1", "b1", "w2"}) {
    if (!hostile || src.Chance(70)) req.add_parameters(hostile && src.Chance(20) ? src.Pick(names) : p);
  }
  static const std::vector<std::string> sound = {"w1", "x", "b1", "w2"};
  for (uint64_t i = 0, n = src.Below(4); i < n; ++i) req.add_wrt(hostile ? src.Pick(names) : sound[i]);
  req.set_training(src.Chance(60));
  req.set_opt_level(static_cast<v1::AmpConfig::OptLevel>(hostile && src.Chance(20) ? src.Below(6) : src.Below(4)));
  if (hostile && src.Chance(30)) req.set_device(src.Pick(std::vector<std::string>{"npu:1", "npu:9", "cpu", "npu:-1"}));
  v1::RegisterGradientResponse g;
  grpc::Status s = world.runtime->RegisterGradient(Ctx().get(), req, &g);
  if (std::getenv("NPU_FUZZ_VERBOSE") != nullptr) {
    std::fprintf(stderr, "RegisterGradient: %d %s\n", s.error_code(), s.error_message().substr(0, 160).c_str());
  }
  if (std::string f = Clear(s, "RegisterGradient"); !f.empty() || !s.ok()) return f;
  v1::RunRequest forward;
  forward.set_graph_id(g.forward().graph_id());
  const int64_t rows = src.Chance(80) ? 2 : 1 + static_cast<int64_t>(src.Below(3));
  for (const v1::ValueInfo& in : g.forward().inputs()) {
    if (in.name() == g.dropout_seed()) {
      v1::Tensor seed;
      seed.set_dtype(v1::INT64);
      const int64_t v = static_cast<int64_t>(src.Below(100));
      seed.set_data(&v, sizeof v);
      Inline(forward, in.name(), seed);
    } else if (in.name() == "x") {
      Inline(forward, in.name(), Batch(src, rows, 4, src.Chance(90) ? v1::FLOAT32 : v1::FLOAT16, 0));
    } else {
      std::vector<int64_t> shape(in.shape().begin(), in.shape().end());
      Inline(forward, in.name(), Floats(shape, 0.1f));
    }
  }
  for (const std::string& saved : g.saved()) forward.mutable_options()->add_keep_on_device(saved);
  v1::RunResponse ran;
  s = world.runtime->Run(Ctx().get(), forward, &ran);
  if (std::string f = Clear(s, "Run (forward)"); !f.empty() || !s.ok()) return f;
  std::map<std::string, const v1::RunOutput*> outputs;
  for (const v1::RunOutput& o : ran.outputs()) outputs[o.name()] = &o;
  v1::RunRequest backward;
  backward.set_graph_id(g.backward().graph_id());
  for (const v1::ValueInfo& in : g.backward().inputs()) {
    bool given = false;
    for (int i = 0; i < g.grad_outputs_size() && !given; ++i) {
      if (g.grad_outputs(i) != in.name()) continue;
      Inline(backward, in.name(), Floats({rows, in.shape_size() > 1 ? in.shape(1) : 1}, src.Chance(90) ? 1.0f : 1e30f));
      given = true;
    }
    if (given) continue;
    if (auto o = outputs.find(in.name()); o != outputs.end()) {
      if (o->second->has_handle()) {
        v1::RunInput* h = backward.add_inputs();
        h->set_name(in.name());
        h->set_handle(o->second->handle().handle());
        h->set_release(src.Chance(90));
      } else {
        Inline(backward, in.name(), o->second->tensor());
      }
      continue;
    }
    for (const v1::RunInput& f : forward.inputs()) {
      if (f.name() == in.name()) *backward.add_inputs() = f;
    }
  }
  v1::RunResponse back;
  if (std::string f = Clear(world.runtime->Run(Ctx().get(), backward, &back), "Run (backward)"); !f.empty()) return f;
  for (const std::string& id : {g.forward().graph_id(), g.backward().graph_id()}) {
    if (id.empty()) continue;
    v1::UnregisterGraphRequest un;
    un.set_graph_id(id);
    v1::UnregisterGraphResponse done;
    if (std::string f = Clear(world.runtime->UnregisterGraph(Ctx().get(), un, &done), "UnregisterGraph"); !f.empty()) {
      return f;
    }
  }
  return "";
}

}  // namespace

std::string RunTrainingCase(ChoiceSource& src) {
  static World* world = new World();
  v1::TrainingService::Stub& stub = *world->stub;
  const int64_t classes = src.Chance(90) ? 3 : 1;
  v1::CreateTrainerRequest create;
  v1::Graph model = Mlp(src, classes);
  if (src.Chance(30)) {
    v1::ValueInfo out;
    out.set_dtype(v1::FLOAT32);
    out.add_shape(-1);
    out.add_shape(classes);
    auto onnx = onnxio::ExportOnnx(model, {out});
    if (onnx.ok()) {
      ::onnx::ModelProto m;
      m.ParseFromString(*onnx);
      if (src.Chance(25)) MutateModel(m, src);
      create.set_onnx_model(m.SerializeAsString());
    }
  } else {
    *create.mutable_graph() = model;
  }
  // Most requests are sound, so that steps run; the rest break one thing or many.
  const bool hostile = src.Chance(30);
  static const std::vector<std::string> names = {"w1", "b1", "w2", "x", "nope", ""};
  if (hostile || src.Chance(20)) {
    for (uint64_t i = 0, n = 1 + src.Below(3); i < n; ++i) create.add_trainable(hostile ? src.Pick(names) : "w2");
  }
  const bool mse = src.Chance(30);
  create.set_loss(static_cast<v1::Loss>(hostile && src.Chance(30) ? src.Below(5) : (mse ? 2 : 1)));
  v1::OptimizerConfig* opt = create.mutable_optimizer();
  const auto kind = static_cast<v1::OptimizerConfig::Kind>(hostile && src.Chance(30) ? src.Below(6) : 1 + src.Below(4));
  opt->set_kind(kind);
  opt->set_lr(hostile && src.Chance(50) ? Hyper(src) : 0.01 * (1 + src.Below(10)));
  const bool momentum = kind == v1::OptimizerConfig::MOMENTUM, adam = kind >= v1::OptimizerConfig::ADAM;
  if ((hostile || momentum) && src.Chance(40)) opt->mutable_momentum()->set_value(hostile ? Hyper(src) : 0.5);
  if (hostile || momentum) opt->set_nesterov(src.Chance(30));
  if ((hostile || adam) && src.Chance(40)) opt->mutable_beta1()->set_value(hostile ? Hyper(src) : 0.8);
  if ((hostile || adam) && src.Chance(30)) opt->mutable_beta2()->set_value(hostile ? Hyper(src) : 0.99);
  if ((hostile || adam) && src.Chance(30)) opt->mutable_epsilon()->set_value(hostile ? Hyper(src) : 1e-6);
  if (src.Chance(20)) opt->set_weight_decay(hostile ? Hyper(src) : 0.01);
  if (src.Chance(50)) {
    v1::AmpConfig* amp = create.mutable_amp();
    amp->set_opt_level(static_cast<v1::AmpConfig::OptLevel>(hostile ? src.Below(4) : src.Below(3)));
    if (src.Chance(40)) amp->set_static_scale(hostile ? Hyper(src) : 128);
    if (src.Chance(30)) {
      amp->mutable_dynamic()->set_init_scale(hostile ? Hyper(src) : 1024);
      amp->mutable_dynamic()->set_growth_interval(hostile ? static_cast<int64_t>(src.Below(5)) - 1 : 2);
      amp->mutable_dynamic()->set_max_scale(hostile ? Hyper(src) : 65536);
    }
  }
  static const std::vector<std::string> devices = {"npu:0", "npu:1", "npu:7", "cuda:0", "", "npu:-1", "cpu"};
  if (hostile || src.Chance(30)) {
    for (uint64_t i = 0, n = 1 + src.Below(2); i < n; ++i) {
      create.add_devices(hostile ? src.Pick(devices) : absl::StrCat("npu:", i));
    }
  }
  if (src.Chance(20)) create.set_backend(hostile ? src.Pick(std::vector<std::string>{"gloo", "", "nccl"}) : "hccl");
  create.set_seed(src.Below(1000));
  if (src.Chance(40)) {
    if (std::string f = GradientCase(src, *world, create, hostile); !f.empty()) return f;
  }

  v1::CreateTrainerResponse created;
  grpc::Status s = stub.CreateTrainer(Ctx().get(), create, &created);
  if (std::getenv("NPU_FUZZ_VERBOSE") != nullptr) {
    std::fprintf(stderr, "CreateTrainer: %d %s\n", s.error_code(), s.error_message().substr(0, 160).c_str());
  }
  if (std::string f = Clear(s, "CreateTrainer"); !f.empty()) return f;
  if (!s.ok()) return "";
  const std::string id = src.Chance(95) ? created.trainer_id() : "t-unknown";
  for (uint64_t i = 0, n = 1 + src.Below(3); i < n; ++i) {
    const int64_t rows = src.Chance(90) ? 1 + static_cast<int64_t>(src.Below(4)) : 0;
    v1::StepRequest step;
    step.set_trainer_id(id);
    *step.mutable_x()->mutable_tensor() = Batch(src, rows, src.Chance(95) ? 4 : 5, src.Chance(95) ? v1::FLOAT32 : v1::INT8, 0);
    *step.mutable_labels()->mutable_tensor() =
        mse ? Batch(src, rows, classes, v1::FLOAT32, 0) : Batch(src, rows, 0, src.Chance(95) ? v1::INT64 : v1::FLOAT32, classes);
    if (src.Chance(5)) step.mutable_labels()->set_handle("h-none");
    step.set_profile(src.Chance(20));
    v1::StepResponse stepped;
    const grpc::Status st = stub.Step(Ctx().get(), step, &stepped);
    if (std::getenv("NPU_FUZZ_VERBOSE") != nullptr) {
      std::fprintf(stderr, "  Step: %d %s\n", st.error_code(), st.error_message().substr(0, 160).c_str());
    }
    if (std::string f = Clear(st, "Step"); !f.empty()) return f;
    v1::EvaluateRequest eval;
    eval.set_trainer_id(id);
    *eval.mutable_x() = step.x();
    *eval.mutable_labels() = step.labels();
    eval.set_return_predictions(src.Chance(50));
    v1::EvaluateResponse evaluated;
    if (std::string f = Clear(stub.Evaluate(Ctx().get(), eval, &evaluated), "Evaluate"); !f.empty()) return f;
  }
  v1::SaveCheckpointRequest save;
  save.set_trainer_id(id);
  v1::TrainerCheckpoint checkpoint;
  s = stub.SaveCheckpoint(Ctx().get(), save, &checkpoint);
  if (std::string f = Clear(s, "SaveCheckpoint"); !f.empty()) return f;
  if (s.ok()) {
    v1::RestoreCheckpointRequest restore;
    restore.set_trainer_id(id);
    *restore.mutable_checkpoint() = checkpoint;
    v1::TrainerCheckpoint& c = *restore.mutable_checkpoint();
    switch (src.Below(6)) {
      case 0: c.set_optimizer("lbfgs"); break;
      case 1: c.set_step(-1); break;
      case 2:
        if (c.parameters_size() > 0) c.mutable_parameters(0)->mutable_value()->mutable_data()->resize(3);
        break;
      case 3:
        if (c.parameters_size() > 0) c.mutable_parameters(0)->mutable_value()->add_shape(1 << 20);
        break;
      case 4: c.add_parameters()->set_name("ghost"); break;
      default: break;
    }
    v1::RestoreCheckpointResponse restored;
    if (std::string f = Clear(stub.RestoreCheckpoint(Ctx().get(), restore, &restored), "RestoreCheckpoint"); !f.empty()) {
      return f;
    }
  }
  v1::ExportRequest exp;
  exp.set_trainer_id(id);
  exp.set_format(static_cast<v1::ExportRequest::Format>(src.Below(3)));
  v1::ExportResponse exported;
  if (std::string f = Clear(stub.Export(Ctx().get(), exp, &exported), "Export"); !f.empty()) return f;
  v1::DeleteTrainerRequest del;
  del.set_trainer_id(created.trainer_id());
  v1::DeleteTrainerResponse deleted;
  s = stub.DeleteTrainer(Ctx().get(), del, &deleted);
  if (!s.ok()) return absl::StrCat("DeleteTrainer of a trainer made answered ", s.error_code(), ": ", s.error_message());
  return "";
}

}  // namespace npu::fuzz
