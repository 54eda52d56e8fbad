#include "server/rpc/training_service.h"

#include <future>
#include <utility>

#include "absl/strings/str_cat.h"
#include "onnx/onnx_export.h"
#include "onnx/onnx_import.h"
#include "onnx/onnx_reweight.h"
#include "server/graph/bounded_text.h"
#include "server/graph/passes/prepare_graph.h"
#include "server/graph/passes/shape_binding.h"
#include "server/core/serve.h"
#include "server/rpc/grpc_status.h"
#include "server/core/request_log.h"
#include "server/rpc/tensor_codec.h"
#include "server/rpc/training_request.h"
#include "server/train/host_tensors.h"
#include "server/train/training_forward.h"

namespace npu::rpc {
namespace {

// The forward model of a CreateTrainer (an ONNX model imported, or one the
// tenant registered).
absl::StatusOr<v1::Graph> ModelOf(core::ServerState& state, const std::string& tenant,
                                  const v1::CreateTrainerRequest& req) {
  switch (req.model_case()) {
    case v1::CreateTrainerRequest::kGraph: return req.graph();
    case v1::CreateTrainerRequest::kGraphId: {
      auto registered = state.graphs.Get(tenant, req.graph_id());
      if (!registered.ok()) return registered.status();
      return (*registered)->graph();
    }
    case v1::CreateTrainerRequest::kOnnxModel: {
      if (req.onnx_model().size() > state.limits.max_model_bytes) {
        return absl::InvalidArgumentError(absl::StrCat("the model is ", req.onnx_model().size(),
                                                       " bytes; the limit is ", state.limits.max_model_bytes));
      }
      auto imported = onnxio::ImportOnnxBytes(req.onnx_model());
      if (!imported.ok()) return imported.status();
      return std::move(imported->graph);
    }
    default: return absl::InvalidArgumentError("the request carries no model (graph, onnx_model or graph_id)");
  }
}

// Plans the forward model as given (batch dims of -1 bound to 1): so that
// every malformed part (initializer bytes, unknown ops, shapes) is refused by
// the planner, naming it, before the trainer reads a byte of it, and so that
// an export knows its outputs' types. A train-mode export's Dropout
// (training_mode true) is planned as inference: the step graph draws its own
// seeded masks.
absl::StatusOr<std::shared_ptr<const graph::Plan>> PlanForward(const core::ServerState& state, const v1::Graph& graph,
                                                               const device::DevicePreset& preset) {
  std::vector<graph::TensorType> types;
  for (const v1::ValueInfo& in : graph.inputs()) {
    graph::Shape shape(in.shape().begin(), in.shape().end());
    for (int64_t& d : shape) d = d == -1 ? 1 : d;
    types.push_back({in.dtype(), shape});
  }
  auto as_evaluated = std::make_shared<v1::Graph>(graph);
  train::DropoutsForInference(*as_evaluated);
  return graph::PreparePlan(std::move(as_evaluated), &types, preset, state.plan_limits());
}

// The trained Graph as ONNX, its outputs typed from a plan of it (their dims
// unknown when the model's input dims are dynamic: the plan binds them to 1).
absl::StatusOr<std::string> GraphAsOnnx(const core::ServerState& state, const train::Trainer& t) {
  const v1::Graph trained = t.TrainedModel();
  auto plan = PlanForward(state, trained, t.devices()[0]->preset());
  if (!plan.ok()) return plan.status();
  const bool dynamic = graph::HasDynamicInputs(trained);
  std::vector<v1::ValueInfo> outputs;
  for (int v : (*plan)->outputs) {
    const graph::TensorType& type = (*plan)->values[v].type;
    v1::ValueInfo& info = outputs.emplace_back();
    info.set_dtype(type.dtype);
    for (int64_t d : type.shape) info.add_shape(dynamic ? -1 : d);
  }
  return onnxio::ExportOnnx(trained, outputs);
}

// The ONNX model a trainer was made from, with its trained weights.
absl::StatusOr<std::string> ReweightedOnnx(const core::HostedTrainer& hosted) {
  const train::Trainer& t = *hosted.trainer;
  std::vector<std::string> names = t.spec().params;
  names.insert(names.end(), t.spec().buffers.begin(), t.spec().buffers.end());
  return onnxio::ReweightOnnx(hosted.onnx_model, t.TrainedModel(), names);
}

// A batch tensor as the core takes it: viewed in the request, or a handle
// (none when the request has neither: the core names what is missing).
absl::Status AddBatchInput(const v1::BatchTensor& t, const char* name, core::Request& r) {
  switch (t.source_case()) {
    case v1::BatchTensor::kTensor: {
      auto viewed = ViewTensor(t.tensor(), name);
      if (!viewed.ok()) return viewed.status();
      r.inputs.push_back({name, *std::move(viewed), ""});
      return absl::OkStatus();
    }
    case v1::BatchTensor::kHandle: r.inputs.push_back({name, {}, t.handle()}); return absl::OkStatus();
    default: return absl::OkStatus();
  }
}

}  // namespace

absl::StatusOr<core::Response> TrainingServiceImpl::ServeTrainerCall(
    const std::string& tenant, std::shared_ptr<device::CancelToken> cancel, core::TrainerRef target,
    const v1::BatchTensor& x, const v1::BatchTensor& labels, bool profile, bool predictions) {
  core::Request r;
  r.method = target.call == core::TrainerRef::Call::kStep ? "Step" : "Evaluate";
  r.tenant = tenant;
  r.target = std::move(target);
  if (auto s = AddBatchInput(x, "x", r); !s.ok()) return s;
  if (auto s = AddBatchInput(labels, "labels", r); !s.ok()) return s;
  r.profile = profile;
  r.return_predictions = predictions;
  r.cancel = std::move(cancel);
  std::promise<absl::StatusOr<core::Response>> answered;
  auto answer = answered.get_future();
  core::Serve(state_, std::move(r),
              [&answered](absl::StatusOr<core::Response> resp) { answered.set_value(std::move(resp)); });
  return answer.get();
}

absl::Status TrainingServiceImpl::DoCreate(const std::string& tenant, const v1::CreateTrainerRequest& req,
                                           v1::CreateTrainerResponse* resp) {
  auto config = TrainConfigFromRequest(req);
  if (!config.ok()) return config.status();
  if (!req.backend().empty() && req.backend() != "hccl" && req.backend() != "nccl") {
    return absl::InvalidArgumentError(absl::StrCat("backend ", graph::Quoted(req.backend()),
                                                   " is not served (hccl; nccl is accepted as hccl)"));
  }
  if (req.backend() == "nccl") {
    resp->set_notice("backend nccl: the gradients are allreduced by HCCL's ring on the simulated NPUs");
  }
  std::vector<device::Device*> devices;
  auto hosted = std::make_shared<core::HostedTrainer>();
  const std::vector<std::string> names =
      req.devices().empty() ? std::vector<std::string>{"npu:0"}
                            : std::vector<std::string>(req.devices().begin(), req.devices().end());
  for (const std::string& name : names) {
    auto d = state_.devices.Find(name);
    if (!d.ok()) return d.status();
    devices.push_back(*d);
    hosted->device_names.push_back((*d)->id());
  }
  auto graph = ModelOf(state_, tenant, req);
  if (!graph.ok()) return graph.status();
  if (auto plan = PlanForward(state_, *graph, devices[0]->preset()); !plan.ok()) return plan.status();
  auto spec = train::DescribeModel(*std::move(graph), {req.trainable().begin(), req.trainable().end()});
  if (!spec.ok()) return spec.status();
  auto trainer = train::Trainer::Create(*std::move(spec), *config, devices);
  if (!trainer.ok()) return trainer.status();
  hosted->trainer = *std::move(trainer);
  if (req.model_case() == v1::CreateTrainerRequest::kOnnxModel) hosted->onnx_model = req.onnx_model();
  const train::ModelSpec& s = hosted->trainer->spec();
  for (const std::string& p : s.params) resp->add_parameters(p);
  *resp->mutable_input() = s.graph.inputs(0);
  resp->set_output(s.output);
  for (const std::string& d : hosted->device_names) resp->add_devices(d);
  resp->set_loss_scale(hosted->trainer->State().loss_scale);
  auto id = state_.trainers.Add(tenant, std::move(hosted));
  if (!id.ok()) return id.status();
  resp->set_trainer_id(*id);
  return absl::OkStatus();
}

absl::Status TrainingServiceImpl::DoStep(const std::string& tenant, std::shared_ptr<device::CancelToken> cancel,
                                         const v1::StepRequest& req, v1::StepResponse* resp) {
  auto r = ServeTrainerCall(tenant, std::move(cancel), {req.trainer_id(), core::TrainerRef::Call::kStep}, req.x(),
                            req.labels(), req.profile(), false);
  if (!r.ok()) return r.status();
  resp->set_step(std::get<int64_t>(r->values.at("step")));
  resp->set_loss(std::get<double>(r->values.at("loss")));
  resp->set_loss_scale(std::get<double>(r->values.at("loss_scale")));
  resp->set_next_loss_scale(std::get<double>(r->values.at("next_loss_scale")));
  resp->set_skipped(std::get<bool>(r->values.at("skipped")));
  resp->set_overflow_elements(static_cast<uint64_t>(std::get<int64_t>(r->values.at("overflow_elements"))));
  for (auto& p : r->profiles) *resp->add_profiles() = std::move(p);
  return absl::OkStatus();
}

absl::Status TrainingServiceImpl::DoEvaluate(const std::string& tenant, std::shared_ptr<device::CancelToken> cancel,
                                             const v1::EvaluateRequest& req, v1::EvaluateResponse* resp) {
  auto r = ServeTrainerCall(tenant, std::move(cancel), {req.trainer_id(), core::TrainerRef::Call::kEvaluate},
                            req.x(), req.labels(), false, req.return_predictions());
  if (!r.ok()) return r.status();
  resp->set_loss(std::get<double>(r->values.at("loss")));
  resp->set_correct(std::get<int64_t>(r->values.at("correct")));
  resp->set_count(std::get<int64_t>(r->values.at("count")));
  if (auto it = r->values.find("accuracy"); it != r->values.end()) resp->set_accuracy(std::get<double>(it->second));
  if (!r->outputs.empty()) CopyToProto(r->outputs[0].tensor, resp->mutable_predictions());
  return absl::OkStatus();
}

absl::Status TrainingServiceImpl::DoExport(const std::string& tenant, const v1::ExportRequest& req,
                                           v1::ExportResponse* resp) {
  auto hosted = state_.trainers.Get(tenant, req.trainer_id());
  if (!hosted.ok()) return hosted.status();
  const train::Trainer& t = *(*hosted)->trainer;
  switch (req.format()) {
    case v1::ExportRequest::NPU_GRAPH: *resp->mutable_graph() = t.TrainedModel(); return absl::OkStatus();
    case v1::ExportRequest::ONNX: {
      // A trainer made from a Graph exports that graph as ONNX; one made from
      // ONNX gives back its own model (nodes, opset, metadata) with the trained weights.
      auto onnx = (*hosted)->onnx_model.empty() ? GraphAsOnnx(state_, t) : ReweightedOnnx(**hosted);
      if (!onnx.ok()) return onnx.status();
      resp->set_onnx_model(*std::move(onnx));
      return absl::OkStatus();
    }
    default:
      return absl::InvalidArgumentError(absl::StrCat("export format ", static_cast<int>(req.format()),
                                                     " is unknown (NPU_GRAPH, ONNX)"));
  }
}

absl::Status TrainingServiceImpl::DoRestore(const std::string& tenant, const v1::RestoreCheckpointRequest& req,
                                            v1::RestoreCheckpointResponse* resp) {
  if (auto s = state_.CheckAdmitting(); !s.ok()) return s;
  auto hosted = state_.trainers.Get(tenant, req.trainer_id());
  if (!hosted.ok()) return hosted.status();
  auto s = StateFromCheckpoint(req.checkpoint(), *(*hosted)->trainer);
  if (!s.ok()) return s.status();
  if (auto r = (*hosted)->trainer->Restore(*s); !r.ok()) return r;
  resp->set_step(s->step);
  return absl::OkStatus();
}

void TrainingServiceImpl::AddMethods(UnaryMethods& methods) {
  // Every call waits for something (a trainer's devices, an import, a copy of
  // its state): all run on the core's work pool.
  auto info = [](const char* name, const char* path) { return MethodInfo{name, path, CallWork::kPool}; };
  methods.Add<v1::CreateTrainerRequest, v1::CreateTrainerResponse>(
      *this, &TrainingServiceImpl::RequestCreateTrainer,
      info("CreateTrainer", "/npu.v1.TrainingService/CreateTrainer"), [this](auto& call) {
        absl::Status s = state_.CheckAdmitting();
        if (s.ok()) s = DoCreate(call.tenant(), call.request(), &call.response());
        call.Finish(std::move(s));
      });
  methods.Add<v1::StepRequest, v1::StepResponse>(
      *this, &TrainingServiceImpl::RequestStep, info("Step", "/npu.v1.TrainingService/Step"),
      [this](auto& call) { call.Finish(DoStep(call.tenant(), call.cancel(), call.request(), &call.response())); });
  methods.Add<v1::EvaluateRequest, v1::EvaluateResponse>(
      *this, &TrainingServiceImpl::RequestEvaluate, info("Evaluate", "/npu.v1.TrainingService/Evaluate"),
      [this](auto& call) { call.Finish(DoEvaluate(call.tenant(), call.cancel(), call.request(), &call.response())); });
  methods.Add<v1::ExportRequest, v1::ExportResponse>(
      *this, &TrainingServiceImpl::RequestExport, info("Export", "/npu.v1.TrainingService/Export"),
      [this](auto& call) { call.Finish(DoExport(call.tenant(), call.request(), &call.response())); });
  methods.Add<v1::SaveCheckpointRequest, v1::TrainerCheckpoint>(
      *this, &TrainingServiceImpl::RequestSaveCheckpoint,
      info("SaveCheckpoint", "/npu.v1.TrainingService/SaveCheckpoint"), [this](auto& call) {
        auto hosted = state_.trainers.Get(call.tenant(), call.request().trainer_id());
        if (hosted.ok()) call.response() = CheckpointOf(*(*hosted)->trainer);
        call.Finish(hosted.status());
      });
  methods.Add<v1::RestoreCheckpointRequest, v1::RestoreCheckpointResponse>(
      *this, &TrainingServiceImpl::RequestRestoreCheckpoint,
      info("RestoreCheckpoint", "/npu.v1.TrainingService/RestoreCheckpoint"),
      [this](auto& call) { call.Finish(DoRestore(call.tenant(), call.request(), &call.response())); });
  methods.Add<v1::DeleteTrainerRequest, v1::DeleteTrainerResponse>(
      *this, &TrainingServiceImpl::RequestDeleteTrainer,
      info("DeleteTrainer", "/npu.v1.TrainingService/DeleteTrainer"),
      [this](auto& call) { call.Finish(state_.trainers.Remove(call.tenant(), call.request().trainer_id())); });
}

}  // namespace npu::rpc
