#include "server/rpc/async_call_queue.h"

#include <chrono>
#include <cstdio>
#include <thread>

#include <grpcpp/support/proto_buffer_reader.h>
#include <grpcpp/impl/codegen/proto_utils.h>

#include "absl/strings/str_cat.h"
#include "server/rpc/parse_error_interceptor.h"

namespace npu::rpc {

void AsyncCallQueue::Start(int threads, const std::vector<Awaiter>& awaiters) {
  for (const Awaiter& a : awaiters) {
    for (int i = 0; i < a.per_thread * threads; ++i) a.await();
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
  // were cancelled (their tokens fired) and send their status soon. Each that
  // goes signals (Quieted), so nothing here polls.
  stopping_.store(true);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  {
    MutexLock lock(&quiet_mu_);
    while (awaiting_.load() > 0 || open_.load() > 0) {
      const auto left = give_up - std::chrono::steady_clock::now();
      if (left <= std::chrono::steady_clock::duration::zero()) {
        std::fprintf(stderr, "level=error msg=\"calls still open at shutdown; leaving their queue\"\n");
        for (auto& t : threads_) t.detach();
        return;
      }
      quiet_.WaitFor(&quiet_mu_, left);
    }
  }
  cq_->Shutdown();
  for (auto& t : threads_) t.join();
}

void AsyncCallQueue::Quieted() {
  if (!stopping_.load()) return;
  MutexLock lock(&quiet_mu_);
  quiet_.SignalAll();
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
