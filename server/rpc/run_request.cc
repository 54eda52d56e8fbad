#include "server/rpc/run_request.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/graph/bounded_text.h"
#include "server/rpc/float_mode_from.h"
#include "server/rpc/tensor_codec.h"

namespace npu::rpc {

absl::StatusOr<core::Request> TranslateRun(const v1::RunRequest& req) {
  core::Request r;
  r.method = "Run";
  switch (req.graph_source_case()) {
    case v1::RunRequest::kGraphId: r.target = core::GraphRef{req.graph_id()}; break;
    case v1::RunRequest::kGraph: r.target = core::InlineGraph{&req.graph()}; break;
    case v1::RunRequest::kModel: r.target = core::ModelRef{req.model(), req.model_version()}; break;
    default: return absl::InvalidArgumentError("the run request names no graph (set graph_id, graph or model)");
  }
  for (const v1::RunInput& in : req.inputs()) {
    core::RequestInput& bound = r.inputs.emplace_back();
    bound.name = in.name();
    switch (in.source_case()) {
      case v1::RunInput::kTensor: {
        auto viewed = ViewTensor(in.tensor(), absl::StrCat("input ", graph::Quoted(in.name())));
        if (!viewed.ok()) return viewed.status();
        bound.tensor = *std::move(viewed);
        break;
      }
      case v1::RunInput::kHandle:
        bound.handle = in.handle();
        bound.release = in.release();
        break;
      default:
        return absl::InvalidArgumentError(
            absl::StrCat("input ", graph::Quoted(in.name()), " has neither a tensor nor a handle"));
    }
  }
  const v1::RunOptions& o = req.options();
  r.device = o.device();
  r.profile = o.profile();
  r.debug = o.debug();
  auto float_mode = FloatModeFrom(o.float_mode(), "options.float_mode");
  if (!float_mode.ok()) return float_mode.status();
  r.float_mode = *float_mode;
  switch (o.numerics()) {
    case v1::NUMERICS_DEVICE: break;
    case v1::NUMERICS_BENCH_FP32: r.bench = true; break;
    default:
      return absl::InvalidArgumentError(absl::StrCat("options.numerics ", static_cast<int>(o.numerics()),
                                                     " is unknown (NUMERICS_DEVICE, NUMERICS_BENCH_FP32)"));
  }
  r.keep_on_device.assign(o.keep_on_device().begin(), o.keep_on_device().end());
  r.keep_all_on_device = o.keep_all_on_device();
  r.priority = o.priority();
  r.timeout = std::chrono::microseconds(static_cast<int64_t>(std::min<uint64_t>(o.timeout_us(), INT64_MAX)));
  if (!req.model_version().empty() && req.graph_source_case() != v1::RunRequest::kModel) {
    return absl::InvalidArgumentError("model_version is set, but the run names no model");
  }
  return r;
}

void EncodeRunResponse(core::Response result, v1::RunResponse* resp) {
  for (core::ResponseOutput& o : result.outputs) {
    v1::RunOutput* out = resp->add_outputs();
    out->set_name(std::move(o.name));
    if (o.handle) {
      *out->mutable_handle() = *std::move(o.handle);
    } else {
      CopyToProto(o.tensor, out->mutable_tensor());
    }
  }
  for (const core::ResponseOutput& o : result.intermediates) {
    v1::RunOutput* out = resp->add_intermediates();
    out->set_name(o.name);
    CopyToProto(o.tensor, out->mutable_tensor());
  }
  if (result.profile != nullptr) *resp->mutable_profile() = *result.profile;
  v1::Execution* e = resp->mutable_execution();
  e->set_batch_size(result.execution.batch_size);
  e->set_requests(result.execution.requests);
  e->set_queue_ns(result.execution.queue.count());
  e->set_compute_ns(result.execution.compute.count());
}

}  // namespace npu::rpc
