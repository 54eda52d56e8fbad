#include "server/rpc/kserve_infer.h"

#include <cmath>
#include <algorithm>
#include <cstdint>
#include <utility>

#include <google/protobuf/util/json_util.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/graph/bounded_text.h"
#include "server/core/serve.h"
#include "server/rpc/kserve_datatype.h"

namespace npu::rpc {
namespace {

std::string DataTypeWord(v1::DataType dtype) { return KserveDataTypeName(dtype); }

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

// A count parameter (Triton's "priority", "timeout"): a non-negative int64 or
// a uint64; 0 when absent.
absl::StatusOr<uint64_t> CountParameter(const InferParameters& params, const std::string& name, const char* unit) {
  auto it = params.find(name);
  if (it == params.end()) return 0;
  const inference::InferParameter& p = it->second;
  if (p.parameter_choice_case() == inference::InferParameter::kUint64Param) return p.uint64_param();
  if (p.parameter_choice_case() == inference::InferParameter::kInt64Param && p.int64_param() >= 0) {
    return static_cast<uint64_t>(p.int64_param());
  }
  return absl::InvalidArgumentError(
      absl::StrCat("request parameter ", graph::Quoted(name), " must be a non-negative integer", unit));
}

// The KServe request as the core takes it.
absl::StatusOr<core::Request> Translate(const std::string& tenant, InferRequest& req,
                                        std::shared_ptr<device::CancelToken> cancel) {
  core::Request r;
  r.method = "inference.ModelInfer";
  r.tenant = tenant;
  r.id = req.id;
  r.target = core::ModelRef{req.model_name, req.model_version};
  r.dtype_name = DataTypeWord;
  r.cancel = std::move(cancel);
  if (auto s = CheckParameterNames(req.parameters); !s.ok()) return s;
  auto nodes = BoolParameter(req.parameters, kParamProfile, false, "request");
  if (!nodes.ok()) return nodes.status();
  r.profile = true;  // every response carries the profile's figures
  // Triton's scheduling parameters, read by a model with dynamic batching.
  auto priority = CountParameter(req.parameters, kParamPriority, "");
  if (!priority.ok()) return priority.status();
  r.priority = *priority;
  auto timeout = CountParameter(req.parameters, kParamTimeout, " (microseconds)");
  if (!timeout.ok()) return timeout.status();
  r.timeout = std::chrono::microseconds(static_cast<int64_t>(std::min<uint64_t>(*timeout, INT64_MAX)));
  r.profile_nodes = *nodes;
  if (auto it = req.parameters.find(kParamDevice); it != req.parameters.end()) {
    if (it->second.parameter_choice_case() != inference::InferParameter::kStringParam) {
      return absl::InvalidArgumentError(
          absl::StrCat("parameter \"", kParamDevice, "\" must be a string such as \"npu:0\""));
    }
    r.device = it->second.string_param();
  } else {
    r.least_busy_device = true;
  }
  for (InferTensor& in : req.inputs) r.inputs.push_back({std::move(in.name), std::move(in.tensor), ""});
  for (const auto& [name, params] : req.outputs) {
    if (params.contains("classification")) {
      return absl::UnimplementedError(absl::StrCat("output ", graph::Quoted(name),
                                                   ": the classification extension is not served; ask for the "
                                                   "tensor and rank it on the client"));
    }
    r.outputs.push_back({name});
  }
  return r;
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

InferResult ResultOf(core::Response resp, bool profile_nodes) {
  InferResult result{std::move(resp.model_name), std::move(resp.model_version), std::move(resp.id), {}, {}};
  for (core::ResponseOutput& o : resp.outputs) result.outputs.push_back({std::move(o.name), std::move(o.tensor)});
  if (resp.profile != nullptr) ProfileParameters(*resp.profile, profile_nodes, result.parameters);
  const core::Execution& e = resp.execution;
  SetInt(result.parameters, kParamBatchSize, e.batch_size);
  SetInt(result.parameters, kParamBatchRequests, e.requests);
  SetInt(result.parameters, kParamQueueNs, e.queue.count());
  SetInt(result.parameters, kParamComputeNs, e.compute.count());
  return result;
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

void StartInfer(core::ServerState& state, const std::string& tenant, InferRequest request,
                std::shared_ptr<device::CancelToken> cancel, InferDone done) {
  auto translated = Translate(tenant, request, std::move(cancel));
  if (!translated.ok()) return done(translated.status());
  const bool nodes = translated->profile_nodes;
  core::Serve(state, *std::move(translated), [done = std::move(done), nodes](absl::StatusOr<core::Response> resp) {
    if (!resp.ok()) return done(resp.status());
    done(ResultOf(*std::move(resp), nodes));
  });
}

}  // namespace npu::rpc
