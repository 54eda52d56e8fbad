#include "server/rpc/grpc_status.h"

#include "server/graph/bounded_text.h"

namespace npu::rpc {

grpc::Status ToGrpcStatus(const absl::Status& s) {
  if (s.ok()) return grpc::Status::OK;
  // absl and gRPC share the canonical code numbering.
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()),
                      graph::BoundedMessage(s.message(), kMaxStatusMessageBytes));
}

}  // namespace npu::rpc
