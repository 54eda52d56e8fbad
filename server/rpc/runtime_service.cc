#include "server/rpc/runtime_service.h"

#include "server/rpc/grpc_status.h"
#include "server/rpc/request_log.h"

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
  // The one copy of the graph a registration keeps (the request goes when the call ends).
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

}  // namespace npu::rpc
