#include "server/rpc/runtime_service.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "server/graph/executor.h"
#include "server/rpc/grpc_status.h"
#include "server/rpc/request_log.h"
#include "server/rpc/run_binding.h"
#include "server/rpc/tensor_codec.h"

namespace npu::rpc {
namespace {

void DescribeValues(const graph::Plan& plan, const std::vector<int>& ids,
                    google::protobuf::RepeatedPtrField<v1::ValueInfo>* out) {
  for (int v : ids) {
    v1::ValueInfo* info = out->Add();
    info->set_name(plan.values[v].name);
    info->set_dtype(plan.values[v].type.dtype);
    for (int64_t d : plan.values[v].type.shape) info->add_shape(d);
  }
}

// Polled while a run waits for or occupies its device.
absl::Status CallerGaveUp(const grpc::ServerContext& ctx) {
  if (std::chrono::system_clock::now() >= ctx.deadline()) {
    return absl::DeadlineExceededError("the run passed its deadline; its device work was stopped");
  }
  if (ctx.IsCancelled()) return absl::CancelledError("the client cancelled the run; its device work was stopped");
  return absl::OkStatus();
}

// A run touching this few bytes takes microseconds: cheaper run on the
// calling thread than handed to the device's worker (Device::Execute).
bool IsSmall(const graph::Plan& plan) {
  constexpr uint64_t kSmallRunBytes = 256 << 10;
  uint64_t bytes = 0;
  for (const auto& v : plan.values) bytes += v.type.bytes();
  return bytes <= kSmallRunBytes;
}

// Counts a call as in flight for its whole life, so a drain can wait for it.
class InFlight {
 public:
  explicit InFlight(std::atomic<int64_t>& n) : n_(n) { n_.fetch_add(1); }
  ~InFlight() { n_.fetch_sub(1); }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;

 private:
  std::atomic<int64_t>& n_;
};

}  // namespace

grpc::Status RuntimeServiceImpl::RegisterGraph(grpc::ServerContext* ctx, const v1::RegisterGraphRequest* req,
                                               v1::RegisterGraphResponse* resp) {
  RequestLog log("RegisterGraph");
  auto tenant = state_.TenantOf(*ctx);
  if (!tenant.ok()) return ToGrpcStatus(log.Finish(tenant.status()));
  log.set_tenant(*tenant);
  if (auto s = state_.CheckAdmitting(); !s.ok()) return ToGrpcStatus(log.Finish(s));
  auto device = state_.devices.Find(req->device());
  if (!device.ok()) return ToGrpcStatus(log.Finish(device.status()));
  auto plan = graph::BuildPlan(std::make_shared<const v1::Graph>(req->graph()), (*device)->preset(),
                               state_.plan_limits());
  if (!plan.ok()) return ToGrpcStatus(log.Finish(plan.status()));
  resp->set_graph_id(state_.graphs.Add(*tenant, *plan));
  DescribeValues(**plan, (*plan)->inputs, resp->mutable_inputs());
  DescribeValues(**plan, (*plan)->outputs, resp->mutable_outputs());
  return ToGrpcStatus(log.Finish(absl::OkStatus()));
}

grpc::Status RuntimeServiceImpl::UnregisterGraph(grpc::ServerContext* ctx, const v1::UnregisterGraphRequest* req,
                                                 v1::UnregisterGraphResponse*) {
  RequestLog log("UnregisterGraph");
  auto tenant = state_.TenantOf(*ctx);
  if (!tenant.ok()) return ToGrpcStatus(log.Finish(tenant.status()));
  log.set_tenant(*tenant);
  return ToGrpcStatus(log.Finish(state_.graphs.Remove(*tenant, req->graph_id())));
}

absl::Status RuntimeServiceImpl::DoRun(const std::string& tenant, const v1::RunRequest& req,
                                       const grpc::ServerContext& ctx, v1::RunResponse* resp, double* device_us) {
  auto device = state_.devices.Find(req.options().device());
  if (!device.ok()) return device.status();
  std::shared_ptr<const graph::Plan> plan;
  switch (req.graph_source_case()) {
    case v1::RunRequest::kGraphId: {
      auto p = state_.graphs.Get(tenant, req.graph_id());
      if (!p.ok()) return p.status();
      plan = *std::move(p);
      break;
    }
    case v1::RunRequest::kGraph: {
      // The request outlives this run's plan: plan a view of it, weights uncopied.
      auto p = graph::BuildPlan(std::shared_ptr<const v1::Graph>(std::shared_ptr<void>(), &req.graph()),
                                (*device)->preset(), state_.plan_limits());
      if (!p.ok()) return p.status();
      plan = *std::move(p);
      break;
    }
    default:
      return absl::InvalidArgumentError("the run request names no graph (set graph_id or graph)");
  }
  auto binding = BindRun(*plan, req, tenant, **device, state_.tensors);
  if (!binding.ok()) return binding.status();

  graph::ExecOptions options{req.options().profile(), req.options().debug(), (*device)->id()};
  absl::StatusOr<graph::ExecResult> result = absl::InternalError("run did not execute");
  auto exec = (*device)->Execute(
      [&](device::DeviceSession& session) {
        result = graph::ExecutePlan(*plan, std::move(binding->inputs), options, session);
      },
      [&ctx] { return CallerGaveUp(ctx); }, IsSmall(*plan));
  if (!exec.ok()) {
    if (exec.code() == absl::StatusCode::kDeadlineExceeded || exec.code() == absl::StatusCode::kCancelled) {
      state_.counters.runs_cancelled.fetch_add(1);
    }
    return exec;
  }
  if (!result.ok()) return result.status();

  for (size_t i = 0; i < plan->outputs.size(); ++i) {
    v1::RunOutput* out = resp->add_outputs();
    out->set_name(plan->values[plan->outputs[i]].name);
    if (binding->keep_on_device[i]) {
      auto handle = state_.tensors.Put(tenant, *device, result->outputs[i]);
      if (!handle.ok()) return handle.status();
      *out->mutable_handle() = *std::move(handle);
    } else {
      CopyToProto(result->outputs[i], out->mutable_tensor());
    }
  }
  for (const auto& [name, tensor] : result->intermediates) {
    v1::RunOutput* out = resp->add_intermediates();
    out->set_name(name);
    CopyToProto(tensor, out->mutable_tensor());
  }
  if (req.options().profile()) {
    *device_us = result->profile.device_time_us();
    *resp->mutable_profile() = std::move(result->profile);
  }
  return absl::OkStatus();
}

grpc::Status RuntimeServiceImpl::Run(grpc::ServerContext* ctx, const v1::RunRequest* req, v1::RunResponse* resp) {
  RequestLog log("Run");
  auto tenant = state_.TenantOf(*ctx);
  if (!tenant.ok()) return ToGrpcStatus(log.Finish(tenant.status()));
  log.set_tenant(*tenant);
  // Counted before the drain check, so a drain that starts now waits for it or refuses it.
  InFlight in_flight(state_.counters.runs_in_flight);
  if (auto s = state_.CheckAdmitting(); !s.ok()) return ToGrpcStatus(log.Finish(s));
  state_.counters.runs_total.fetch_add(1);
  double device_us = -1;
  absl::Status s = DoRun(*tenant, *req, *ctx, resp, &device_us);
  if (!s.ok()) {
    state_.counters.runs_failed.fetch_add(1);
    resp->Clear();
  }
  log.set_device_us(device_us);
  return ToGrpcStatus(log.Finish(s));
}

}  // namespace npu::rpc
