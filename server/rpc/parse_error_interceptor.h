// A request protobuf cannot parse (a proto3 string holding invalid UTF-8,
// truncated or garbled bytes) is answered by gRPC itself with INTERNAL (or, for
// a callback-API method, UNIMPLEMENTED) and an empty message, before any handler
// runs: that blames the server for the client's input and leaves no log line.
// This server interceptor turns that answer into INVALID_ARGUMENT naming the
// method and, when protobuf said which, the field at fault, and logs it like
// any failed request. It covers every call with exactly one request message
// (unary and server-streaming, e.g. Download). A client stream (Upload) cannot
// tell a message that did not parse from the end of the stream here; its
// handler asks TakeProtobufParseComplaint after a failed read.
#pragma once

#include <string>

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

// The last complaint protobuf logged on this thread (empty if none), which is
// then forgotten. Call it once before a read to clear what earlier calls left.
std::string TakeProtobufParseComplaint();

}  // namespace npu::rpc
