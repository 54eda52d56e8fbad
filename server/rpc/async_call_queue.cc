#include "server/rpc/async_call_queue.h"

#include <chrono>
#include <cstdio>

#include <grpcpp/support/proto_buffer_reader.h>
#include <grpcpp/impl/codegen/proto_utils.h>

#include "absl/strings/str_cat.h"
#include "server/rpc/parse_error_interceptor.h"

namespace npu::rpc {

void AsyncCallQueue::Start(int threads, const std::vector<std::function<void()>>& awaiters) {
  // A few calls waiting per thread: each accepted call asks for the next one at once.
  for (const auto& await : awaiters) {
    for (int i = 0; i < 4 * threads; ++i) await();
  }
  for (int i = 0; i < threads; ++i) {
    threads_.emplace_back([this] {
      void* tag = nullptr;
      bool ok = false;
      while (cq_->Next(&tag, &ok)) static_cast<AsyncEvent*>(tag)->Fire(ok);
    });
  }
}

void AsyncCallQueue::Stop() {
  if (stopped_) return;
  stopped_ = true;
  // The server has shut down: waiting calls come back refused, accepted ones
  // were cancelled (their tokens fired) and send their status soon.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (awaiting_.load() > 0 || open_.load() > 0) {
    if (std::chrono::steady_clock::now() >= give_up) {
      std::fprintf(stderr, "level=error msg=\"calls still open at shutdown; leaving their queue\"\n");
      for (auto& t : threads_) t.detach();
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  cq_->Shutdown();
  for (auto& t : threads_) t.join();
}

absl::Status ParseRawRequest(grpc::ByteBuffer& bytes, google::protobuf::Message& request, absl::string_view method) {
  TakeProtobufParseComplaint();  // protobuf names what it could not parse on this thread
  grpc::ProtoBufferReader reader(&bytes);
  const bool parsed = request.ParseFromZeroCopyStream(&reader);
  bytes.Clear();
  if (parsed) return absl::OkStatus();
  std::string message = absl::StrCat("the request to ", method, " is not a valid protobuf message");
  if (std::string complaint = TakeProtobufParseComplaint(); !complaint.empty()) absl::StrAppend(&message, ": ", complaint);
  return absl::InvalidArgumentError(message);
}

void FinishRawCall(grpc::ServerAsyncResponseWriter<grpc::ByteBuffer>& writer,
                   const google::protobuf::Message& response, const grpc::Status& status, void* tag) {
  if (!status.ok()) {
    writer.FinishWithError(status, tag);
    return;
  }
  grpc::ByteBuffer out;
  bool own_buffer = false;
  grpc::Status serialized = grpc::SerializationTraits<google::protobuf::Message>::Serialize(response, &out, &own_buffer);
  if (serialized.ok()) {
    writer.Finish(out, status, tag);
  } else {
    writer.FinishWithError(serialized, tag);
  }
}

}  // namespace npu::rpc
