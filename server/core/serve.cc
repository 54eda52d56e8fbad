#include "server/core/serve.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/core/batched_inference.h"
#include "server/core/input_binding.h"
#include "server/core/model_batchers.h"
#include "server/core/serve_call.h"
#include "server/core/trainer_calls.h"
#include "server/graph/bounded_text.h"
#include "server/graph/passes/prepare_graph.h"
#include "server/graph/passes/shape_binding.h"
#include "server/graph/runner.h"

namespace npu::core {
namespace {

// What a request runs: a graph (registered, a repository model's, or inline)
// and the name errors and answers give it.
struct Resolved {
  std::shared_ptr<RegisteredGraph> graph;  // null for an inline graph
  BindSubject subject;
  std::string model_name, model_version;
  std::shared_ptr<const inference::ModelConfig> config;  // a repository model's, or null
};

absl::StatusOr<Resolved> Resolve(ServerState& state, const Request& req) {
  Resolved r;
  r.subject.dtype_name = req.dtype_name;
  if (const auto* model = std::get_if<ModelRef>(&req.target)) {
    auto found = state.models.Find(req.tenant, model->name, model->version);
    if (!found.ok()) return found.status();
    r.graph = std::move(found->graph);
    r.subject.name = absl::StrCat("model ", graph::Quoted(found->name));
    r.model_name = std::move(found->name);
    r.model_version = std::move(found->version);
    r.config = std::move(found->config);
  } else if (const auto* id = std::get_if<GraphRef>(&req.target)) {
    auto found = state.graphs.Get(req.tenant, id->id);
    if (!found.ok()) return found.status();
    r.graph = *std::move(found);
    r.subject.name = "the graph";
  } else {
    r.subject.name = "the graph";
  }
  return r;
}

// The device named, or npu:0, or the device with the fewest runs waiting or running.
absl::StatusOr<device::Device*> ChooseDevice(const ServerState& state, const Request& req) {
  if (!req.device.empty() || !req.least_busy_device) return state.devices.Find(req.device);
  device::Device* best = nullptr;
  uint64_t best_load = UINT64_MAX;
  for (const auto& d : state.devices.devices()) {
    const device::DeviceStatsSnapshot s = d->Stats();
    const uint64_t load = s.queue_depth + (s.held_for.count() > 0 ? 1 : 0);
    if (load < best_load) {
      best = d.get();
      best_load = load;
    }
  }
  return best;
}

struct Bound {
  std::shared_ptr<const graph::Plan> plan;
  std::vector<graph::HostTensor> inputs;
};

// Plan selection and binding, written once. A graph with dynamic dims is
// planned for the shapes its inputs bring (cached per signature), so they are
// bound first; a static inline graph is planned (validated) first, and its
// inputs bound against the plan.
absl::StatusOr<Bound> PlanAndBind(ServerState& state, Request& req, const Resolved& r, const device::Device& device) {
  const graph::PlanOptions options{.fuse = !req.debug && !req.bench};
  // The device's preset in the run's float mode: what the plan is made (and cached) for.
  const device::DevicePreset preset = PresetFor(device.preset(), req);
  Bound b;
  std::vector<v1::ValueInfo> declared;
  std::shared_ptr<const v1::Graph> inline_view;
  if (r.graph != nullptr) {
    declared = r.graph->inputs();
  } else {
    const v1::Graph* graph = std::get<InlineGraph>(req.target).graph;
    // The frontend keeps the graph alive past the run: its weights are read in place.
    inline_view = std::shared_ptr<const v1::Graph>(std::shared_ptr<void>(), graph);
    if (!graph::HasDynamicInputs(*graph)) {
      auto plan = graph::PreparePlan(inline_view, nullptr, preset, state.plan_limits(), options);
      if (!plan.ok()) return plan.status();
      b.plan = *std::move(plan);
      declared = DeclaredInputs(*b.plan);
    } else {
      declared.assign(graph->inputs().begin(), graph->inputs().end());
    }
  }
  auto inputs = BindInputs(declared, req.inputs, r.subject, req.tenant, device, state.tensors);
  if (!inputs.ok()) return inputs.status();
  b.inputs = *std::move(inputs);
  if (b.plan == nullptr) {
    const std::vector<graph::TensorType> types = TypesOf(b.inputs);
    auto plan = r.graph != nullptr
                    ? r.graph->PlanFor(preset, types, state.plan_limits(), options)
                    : graph::PreparePlan(inline_view, &types, preset, state.plan_limits(), options);
    if (!plan.ok()) return plan.status();
    b.plan = *std::move(plan);
  }
  if (auto s = CheckPlanInputs(*b.plan, b.inputs, r.subject); !s.ok()) return s;
  return b;
}

// The run's results as the response holds them: the selected outputs (kept
// outputs as the tenant's handles), intermediates and the profile.
absl::StatusOr<Response> Answer(ServerState& state, const Request& req, const graph::Plan& plan,
                                const OutputSelection& selection, device::Device* device, graph::ExecResult run) {
  Response resp;
  for (size_t i = 0; i < selection.outputs.size(); ++i) {
    const size_t k = selection.outputs[i];
    ResponseOutput& out = resp.outputs.emplace_back();
    out.name = plan.values[plan.outputs[k]].name;
    if (selection.keep_on_device[i]) {
      auto handle = state.tensors.Put(req.tenant, device, std::move(run.outputs[k]));
      if (!handle.ok()) return handle.status();
      out.handle = *std::move(handle);
    } else {
      out.tensor = std::move(run.outputs[k]);
    }
  }
  for (auto& [name, tensor] : run.intermediates) resp.intermediates.push_back({name, std::move(tensor), {}});
  if (req.profile) resp.profile = std::make_shared<const v1::Profile>(std::move(run.profile));
  return resp;
}

// The rows of a run of a model whose first dim is the batch (max_batch_size > 0).
int64_t BatchRows(const graph::Plan& plan) {
  if (plan.inputs.empty()) return 1;
  const graph::Shape& shape = plan.values[plan.inputs[0]].type.shape;
  return shape.empty() ? 1 : shape[0];
}

void ServeInference(const std::shared_ptr<ServeCall>& call) {
  ServerState& state = call->state();
  Request& req = call->request();
  auto resolved = Resolve(state, req);
  if (!resolved.ok()) return call->Finish(resolved.status());
  if (!resolved->model_name.empty()) call->SetModel(resolved->model_name, resolved->model_version);
  // A debug run keeps every intermediate of its own run: it runs alone.
  if (BatchesDynamically(resolved->config.get()) && !req.debug) {
    auto batcher = state.batchers.For(resolved->graph, *resolved->config, resolved->model_name,
                                      resolved->model_version, static_cast<int>(state.devices.devices().size()),
                                      BatchRunner(state));
    if (!batcher.ok()) return call->Finish(batcher.status());
    return EnqueueBatched(call,
                          BatchedModel{std::move(resolved->graph), std::move(resolved->subject),
                                       std::move(resolved->model_name), std::move(resolved->model_version)},
                          **batcher);
  }
  auto device = ChooseDevice(state, req);
  if (!device.ok()) return call->Finish(device.status());
  auto bound = PlanAndBind(state, req, *resolved, **device);
  if (!bound.ok()) return call->Finish(bound.status());
  auto selection = SelectOutputs(*bound->plan, req.outputs, req.keep_on_device, req.keep_all_on_device,
                                 resolved->subject);
  if (!selection.ok()) return call->Finish(selection.status());

  graph::ExecOptions options;
  options.profile = req.profile;
  options.debug = req.debug;
  const auto started = std::chrono::steady_clock::now();
  graph::RunPlanAsync(
      bound->plan, std::move(bound->inputs), std::move(options), **device, req.cancel,
      [call, plan = bound->plan, selection = *std::move(selection), device = *device, started,
       batch_dim = resolved->config != nullptr && resolved->config->max_batch_size() > 0,
       names = std::pair(std::move(resolved->model_name), std::move(resolved->model_version))](
          absl::StatusOr<graph::ExecResult> run) mutable {
        if (!run.ok()) return call->Finish(run.status());
        const auto ran = std::chrono::steady_clock::now();
        if (!names.first.empty()) call->state().inference_metrics.ObserveExecution(names);
        auto resp = Answer(call->state(), call->request(), *plan, selection, device, *std::move(run));
        if (resp.ok()) {
          resp->model_name = std::move(names.first);
          resp->model_version = std::move(names.second);
          Execution& e = resp->execution;
          if (batch_dim) e.batch_size = e.rows = BatchRows(*plan);
          const auto now = std::chrono::steady_clock::now();
          e.compute_input = started - call->started();
          e.compute_infer = ran - started;
          e.compute_output = now - ran;
          e.compute = now - call->started();
        }
        call->Finish(std::move(resp));
      });
}

}  // namespace

void Serve(ServerState& state, Request request, ServeDone done) {
  auto call = std::make_shared<ServeCall>(state, std::move(request), std::move(done));
  if (auto s = call->Admit(); !s.ok()) return call->Finish(std::move(s));
  if (std::holds_alternative<TrainerRef>(call->request().target)) return ServeTrainer(call);
  ServeInference(call);
}

}  // namespace npu::core
