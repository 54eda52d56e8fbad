// Helpers shared by the end-to-end tests: raw stubs on a channel to a test
// server, a small known-good graph, and sending raw bytes to a method.
#pragma once

#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>
#include <grpcpp/completion_queue.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/support/byte_buffer.h>

#include <chrono>
#include <cstring>
#include <future>
#include <string>
#include <vector>

#include "grpc/health/v1/health.grpc.pb.h"
#include "npu/v1/device.grpc.pb.h"
#include "npu/v1/memory.grpc.pb.h"
#include "npu/v1/runtime.grpc.pb.h"

namespace npu::testing {

inline std::shared_ptr<grpc::Channel> TestChannel(const std::string& target, int max_send = 64 << 20) {
  grpc::ChannelArguments args;
  args.SetMaxSendMessageSize(max_send);
  args.SetMaxReceiveMessageSize(256 << 20);
  return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
}

// A context with a deadline, so no test can hang on a call.
inline std::unique_ptr<grpc::ClientContext> Ctx(std::chrono::milliseconds timeout = std::chrono::seconds(20),
                                                const std::string& token = "") {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + timeout);
  if (!token.empty()) ctx->AddMetadata("authorization", "Bearer " + token);
  return ctx;
}

inline v1::Tensor Float32(std::vector<int64_t> shape, const std::vector<float>& values) {
  v1::Tensor t;
  t.set_dtype(v1::FLOAT32);
  for (int64_t d : shape) t.add_shape(d);
  t.set_data(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  return t;
}

// out = x + y, FLOAT32[4].
inline v1::Graph AddGraph() {
  v1::Graph g;
  g.set_name("add");
  for (const char* name : {"x", "y"}) {
    v1::ValueInfo* in = g.add_inputs();
    in->set_name(name);
    in->set_dtype(v1::FLOAT32);
    in->add_shape(4);
  }
  v1::Node* n = g.add_nodes();
  n->set_name("add");
  n->set_op_type("Add");
  // std::string arguments: GCC 12 -O3 warns falsely (-Wrestrict) on add_inputs(const char*) here.
  for (const std::string input : {"x", "y"}) n->add_inputs(input);
  n->add_outputs(std::string("out"));
  g.add_outputs("out");
  return g;
}

inline v1::RunRequest AddRun(const v1::Graph& graph = AddGraph()) {
  v1::RunRequest req;
  *req.mutable_graph() = graph;
  v1::RunInput* x = req.add_inputs();
  x->set_name("x");
  *x->mutable_tensor() = Float32({4}, {1, 2, 3, 4});
  v1::RunInput* y = req.add_inputs();
  y->set_name("y");
  *y->mutable_tensor() = Float32({4}, {10, 20, 30, 40});
  return req;
}

// Sends `bytes` as the request of a unary `method` ("/npu.v1.RuntimeService/Run")
// without protobuf's client-side checks.
inline grpc::Status RawUnary(grpc::Channel* channel, const std::string& method, const std::string& bytes) {
  grpc::GenericStub stub(std::shared_ptr<grpc::Channel>(channel, [](grpc::Channel*) {}));
  grpc::Slice slice(bytes);
  grpc::ByteBuffer request(&slice, 1), response;
  auto ctx = Ctx();
  std::promise<grpc::Status> done;
  stub.UnaryCall(ctx.get(), method, grpc::StubOptions(), &request, &response,
                 [&done](grpc::Status s) { done.set_value(std::move(s)); });
  return done.get_future().get();
}

// Sends `messages` as raw request bytes on a streaming `method` (client- or
// server-streaming: the generic call is a bidi stream on the client's side),
// reads whatever comes back, and returns the call's status.
inline grpc::Status RawStreaming(grpc::Channel* channel, const std::string& method,
                                 const std::vector<std::string>& messages) {
  grpc::GenericStub stub(std::shared_ptr<grpc::Channel>(channel, [](grpc::Channel*) {}));
  grpc::CompletionQueue cq;
  auto ctx = Ctx();
  auto call = stub.PrepareCall(ctx.get(), method, &cq);
  void* tag = nullptr;
  bool ok = false;
  auto step = [&](void* t) {  // waits for the operation tagged `t`
    return cq.Next(&tag, &ok) && tag == t && ok;
  };
  int t = 1;
  call->StartCall(&t);
  bool open = step(&t);
  for (const std::string& m : messages) {
    if (!open) break;
    grpc::Slice slice(m);
    grpc::ByteBuffer buffer(&slice, 1);
    call->Write(buffer, &t);
    open = step(&t);
  }
  if (open) {
    call->WritesDone(&t);
    open = step(&t);
  }
  grpc::ByteBuffer response;
  while (open) {
    call->Read(&response, &t);
    open = step(&t);
  }
  grpc::Status status;
  call->Finish(&status, &t);
  cq.Next(&tag, &ok);
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  return status;
}

// Replaces the first occurrence of `marker` in `bytes` with `replacement` of
// the same length, so protobuf framing stays valid.
inline std::string Patch(std::string bytes, const std::string& marker, const std::string& replacement) {
  const size_t at = bytes.find(marker);
  if (at != std::string::npos && marker.size() == replacement.size()) bytes.replace(at, marker.size(), replacement);
  return bytes;
}

// Appends a node to a graph under construction.
inline v1::Node* AddNode(v1::Graph& g, const std::string& name, const std::string& op,
                         std::vector<std::string> inputs, std::vector<std::string> outputs) {
  v1::Node* n = g.add_nodes();
  n->set_name(name);
  n->set_op_type(op);
  for (auto& i : inputs) n->add_inputs(i);
  for (auto& o : outputs) n->add_outputs(o);
  return n;
}

}  // namespace npu::testing
