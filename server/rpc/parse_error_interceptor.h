// A request protobuf cannot parse (a proto3 string holding invalid UTF-8,
// truncated or garbled bytes) is answered by gRPC itself with INTERNAL (or, for a
// callback-API method, UNIMPLEMENTED) and an empty message, which blames the server for the client's input. This server
// interceptor turns that answer into INVALID_ARGUMENT naming the method and,
// when protobuf said which, the field at fault.
#pragma once

#include <grpcpp/support/server_interceptor.h>

namespace npu::rpc {

class ParseErrorInterceptorFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateServerInterceptor(grpc::experimental::ServerRpcInfo* info) override;
};

// Routes protobuf's own log lines through a handler that remembers, per
// thread, the last parse complaint (e.g. "String field 'npu.v1.Node.name'
// contains invalid UTF-8 data"), so the interceptor can quote it. Idempotent.
void InstallProtobufLogCapture();

}  // namespace npu::rpc
