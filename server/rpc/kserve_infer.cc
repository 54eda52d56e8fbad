#include "server/rpc/kserve_infer.h"

#include <cmath>
#include <cstdint>
#include <utility>

#include <google/protobuf/util/json_util.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/graph/bounded_text.h"
#include "server/graph/runner.h"
#include "server/rpc/kserve_datatype.h"

namespace npu::rpc {
namespace {

std::string Describe(const graph::TensorType& t) {
  return absl::StrCat(KserveDataTypeName(t.dtype), graph::ShapeToString(t.shape));
}

std::string ValueNames(const graph::Plan& plan, const std::vector<int>& ids) {
  std::vector<std::string> names;
  for (int v : ids) names.push_back(plan.values[v].name);
  return absl::StrJoin(names, ", ");
}

absl::Status CheckParameterNames(const InferParameters& params) {
  for (const auto& [name, value] : params) {
    if (absl::StartsWith(name, "npu_") && name != kParamDevice && name != kParamProfile) {
      return absl::InvalidArgumentError(absl::StrCat("unknown request parameter ", graph::Quoted(name),
                                                     " (this server reads ", kParamDevice, " and ", kParamProfile,
                                                     ")"));
    }
  }
  return absl::OkStatus();
}

// `npu_device`, or the device with the fewest runs waiting or running.
absl::StatusOr<device::Device*> ChooseDevice(const core::ServerState& state, const InferParameters& params) {
  if (auto it = params.find(kParamDevice); it != params.end()) {
    if (it->second.parameter_choice_case() != inference::InferParameter::kStringParam) {
      return absl::InvalidArgumentError(
          absl::StrCat("parameter \"", kParamDevice, "\" must be a string such as \"npu:0\""));
    }
    return state.devices.Find(it->second.string_param());
  }
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

// A model input as the errors name it: its name and the type it takes.
struct DeclaredInput {
  std::string name;
  std::string type;
};

// For each declared input, the index of the request's tensor of that name;
// an unknown, repeated or missing input is named.
absl::StatusOr<std::vector<size_t>> MatchInputs(const std::vector<DeclaredInput>& declared, const std::string& model,
                                                const std::vector<InferTensor>& given) {
  constexpr size_t kNone = SIZE_MAX;
  std::vector<size_t> match(declared.size(), kNone);
  for (size_t i = 0; i < given.size(); ++i) {
    size_t k = 0;
    while (k < declared.size() && declared[k].name != given[i].name) ++k;
    if (k == declared.size()) {
      std::vector<std::string> names;
      for (const DeclaredInput& d : declared) names.push_back(d.name);
      return absl::InvalidArgumentError(absl::StrCat("model ", graph::Quoted(model), " has no input ",
                                                     graph::Quoted(given[i].name),
                                                     " (inputs: ", absl::StrJoin(names, ", "), ")"));
    }
    if (match[k] != kNone) {
      return absl::InvalidArgumentError(absl::StrCat("input ", graph::Quoted(given[i].name), " is given twice"));
    }
    match[k] = i;
  }
  for (size_t k = 0; k < declared.size(); ++k) {
    if (match[k] == kNone) {
      return absl::InvalidArgumentError(absl::StrCat("input ", graph::Quoted(declared[k].name), " of model ",
                                                     graph::Quoted(model), " is missing; it takes ",
                                                     declared[k].type));
    }
  }
  return match;
}

// The plan that serves this request. A model with dynamic dims (-1) is planned
// for the shapes the request's inputs bring (one cached plan per signature);
// a static model has one plan per preset.
absl::StatusOr<std::shared_ptr<const graph::Plan>> PlanForRequest(core::RegisteredGraph& model, const std::string& name,
                                                                  const device::DevicePreset& preset,
                                                                  const graph::PlanLimits& limits,
                                                                  const std::vector<InferTensor>& given) {
  if (!model.dynamic()) return model.PlanFor(preset, limits);
  std::vector<DeclaredInput> declared;
  for (const v1::ValueInfo& in : model.inputs()) {
    declared.push_back(
        {in.name(), Describe(graph::TensorType{in.dtype(), graph::Shape(in.shape().begin(), in.shape().end())})});
  }
  auto match = MatchInputs(declared, name, given);
  if (!match.ok()) return match.status();
  std::vector<graph::TensorType> types;
  for (size_t i : *match) types.push_back(given[i].tensor.type());
  return model.PlanFor(preset, types, limits);
}

// The request's inputs in plan order, each checked against the plan.
absl::StatusOr<std::vector<graph::HostTensor>> BindInputs(const graph::Plan& plan, const std::string& model,
                                                          std::vector<InferTensor>& given) {
  std::vector<DeclaredInput> declared;
  for (int v : plan.inputs) declared.push_back({plan.values[v].name, Describe(plan.values[v].type)});
  auto match = MatchInputs(declared, model, given);
  if (!match.ok()) return match.status();
  std::vector<graph::HostTensor> bound;
  for (size_t k = 0; k < match->size(); ++k) {
    InferTensor& in = given[(*match)[k]];
    const graph::TensorType& want = plan.values[plan.inputs[k]].type;
    if (!(in.tensor.type() == want)) {
      return absl::InvalidArgumentError(absl::StrCat("input ", graph::Quoted(in.name), " is ",
                                                     Describe(in.tensor.type()), "; model ", graph::Quoted(model),
                                                     " takes ", Describe(want)));
    }
    bound.push_back(std::move(in.tensor));
  }
  return bound;
}

// Indices into Plan::outputs, in the order the response lists them.
absl::StatusOr<std::vector<size_t>> SelectOutputs(const graph::Plan& plan, const std::string& model,
                                                  const std::vector<RequestedOutput>& requested) {
  std::vector<size_t> picked;
  if (requested.empty()) {
    for (size_t k = 0; k < plan.outputs.size(); ++k) picked.push_back(k);
    return picked;
  }
  for (const auto& [name, params] : requested) {
    if (params.contains("classification")) {
      return absl::UnimplementedError(absl::StrCat("output ", graph::Quoted(name),
                                                   ": the classification extension is not served; ask for the "
                                                   "tensor and rank it on the client"));
    }
    size_t k = 0;
    while (k < plan.outputs.size() && plan.values[plan.outputs[k]].name != name) ++k;
    if (k == plan.outputs.size()) {
      return absl::InvalidArgumentError(absl::StrCat("model ", graph::Quoted(model), " has no output ",
                                                     graph::Quoted(name), " (outputs: ", ValueNames(plan, plan.outputs),
                                                     ")"));
    }
    for (size_t p : picked) {
      if (p == k)
        return absl::InvalidArgumentError(absl::StrCat("output ", graph::Quoted(name), " is requested twice"));
    }
    picked.push_back(k);
  }
  return picked;
}

void SetInt(InferParameters& params, const char* name, int64_t value) { params[name].set_int64_param(value); }
void SetString(InferParameters& params, const char* name, std::string value) {
  params[name].set_string_param(std::move(value));
}

// The profile's figures as response parameters; int64 nanoseconds rather than
// doubles, which KServe's own proto has no field for.
void ProfileParameters(v1::Profile profile, bool nodes, InferParameters& params) {
  SetString(params, "npu_device", profile.device());
  SetString(params, "npu_preset", profile.preset());
  SetString(params, "npu_cost_model", profile.model_version());
  SetInt(params, "npu_device_time_ns", std::llround(profile.device_time_us() * 1000.0));
  SetInt(params, "npu_total_cycles", static_cast<int64_t>(profile.total_cycles()));
  SetInt(params, "npu_queue_cycles", static_cast<int64_t>(profile.queue_cycles()));
  SetInt(params, "npu_host_time_ns", std::llround(profile.host_time_us() * 1000.0));
  if (!nodes) return;
  for (v1::NodeProfile& node : *profile.mutable_nodes()) node.clear_tiles();
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string json;
  // A message of known fields always prints; a failure would be a protobuf bug.
  if (google::protobuf::util::MessageToJsonString(profile, &json, options).ok()) {
    SetString(params, kParamProfile, std::move(json));
  }
}

// One inference from binding to `done`; shared by the runner's callback.
struct InferRun {
  core::ServerState& state;
  InferRequest request;
  InferDone done;
  KserveModel model;
  std::shared_ptr<const graph::Plan> plan;
  std::vector<size_t> outputs;
  bool profile_nodes = false;
  bool admitted = false;

  absl::StatusOr<InferResult> Result(absl::StatusOr<graph::ExecResult> run) {
    if (!run.ok()) return run.status();
    InferResult result{model.name, model.version, request.id, {}, {}};
    for (size_t k : outputs) {
      result.outputs.push_back({plan->values[plan->outputs[k]].name, std::move(run->outputs[k])});
    }
    ProfileParameters(std::move(run->profile), profile_nodes, result.parameters);
    return result;
  }

  void Finish(absl::StatusOr<InferResult> result) {
    if (!result.ok()) {
      const absl::StatusCode code = result.status().code();
      if (code == absl::StatusCode::kDeadlineExceeded || code == absl::StatusCode::kCancelled) {
        state.counters.runs_cancelled.fetch_add(1);
      }
      if (admitted) state.counters.runs_failed.fetch_add(1);
    }
    done(std::move(result));
    state.counters.runs_in_flight.fetch_sub(1);
  }
};

absl::Status Submit(const std::shared_ptr<InferRun>& run, const KserveModels& models, const std::string& tenant,
                    std::shared_ptr<device::CancelToken> cancel) {
  core::ServerState& state = run->state;
  if (auto s = state.CheckAdmitting(); !s.ok()) return s;
  state.counters.runs_total.fetch_add(1);
  run->admitted = true;
  InferRequest& req = run->request;
  if (auto s = CheckParameterNames(req.parameters); !s.ok()) return s;
  auto nodes = BoolParameter(req.parameters, kParamProfile, false, "request");
  if (!nodes.ok()) return nodes.status();
  run->profile_nodes = *nodes;
  auto model = models.Find(tenant, req.model_name, req.model_version);
  if (!model.ok()) return model.status();
  run->model = *std::move(model);
  auto device = ChooseDevice(state, req.parameters);
  if (!device.ok()) return device.status();
  auto plan = PlanForRequest(*run->model.graph, run->model.name, (*device)->preset(), state.plan_limits(), req.inputs);
  if (!plan.ok()) return plan.status();
  run->plan = *std::move(plan);
  auto inputs = BindInputs(*run->plan, run->model.name, req.inputs);
  if (!inputs.ok()) return inputs.status();
  auto outputs = SelectOutputs(*run->plan, run->model.name, req.outputs);
  if (!outputs.ok()) return outputs.status();
  run->outputs = *std::move(outputs);

  graph::ExecOptions options;
  options.profile = true;
  options.device_id = (*device)->id();
  graph::RunPlanAsync(run->plan, *std::move(inputs), std::move(options), **device, std::move(cancel),
                      [run](absl::StatusOr<graph::ExecResult> r) { run->Finish(run->Result(std::move(r))); });
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> BoolParameter(const InferParameters& params, const std::string& name, bool fallback,
                                   absl::string_view where) {
  auto it = params.find(name);
  if (it == params.end()) return fallback;
  if (it->second.parameter_choice_case() != inference::InferParameter::kBoolParam) {
    return absl::InvalidArgumentError(absl::StrCat(where, " parameter ", graph::Quoted(name), " must be a bool"));
  }
  return it->second.bool_param();
}

void StartInfer(core::ServerState& state, const KserveModels& models, const std::string& tenant, InferRequest request,
                std::shared_ptr<device::CancelToken> cancel, InferDone done) {
  // Counted before the drain check, so a drain that starts now waits for it or refuses it.
  state.counters.runs_in_flight.fetch_add(1);
  auto run = std::make_shared<InferRun>(InferRun{state, std::move(request), std::move(done), {}, nullptr, {}});
  if (auto s = Submit(run, models, tenant, std::move(cancel)); !s.ok()) run->Finish(std::move(s));
}

}  // namespace npu::rpc
