#include "server/rpc/parse_error_interceptor.h"

#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include <google/protobuf/stubs/logging.h>

#include "absl/strings/str_cat.h"
#include "server/rpc/grpc_status.h"
#include "server/core/request_log.h"

namespace npu::rpc {
namespace {

thread_local std::string last_parse_complaint;

void CaptureProtobufLog(google::protobuf::LogLevel level, const char* filename, int line, const std::string& message) {
  if (level == google::protobuf::LOGLEVEL_ERROR) last_parse_complaint = message;
  static const char* const kNames[] = {"INFO", "WARNING", "ERROR", "FATAL"};
  const int l = static_cast<int>(level);
  std::fprintf(stderr, "[libprotobuf %s %s:%d] %s\n", l >= 0 && l < 4 ? kNames[l] : "?", filename, line,
               message.c_str());
}

class ParseErrorInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit ParseErrorInterceptor(grpc::experimental::ServerRpcInfo* info) : info_(info) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    using grpc::experimental::InterceptionHookPoints;
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_RECV_MESSAGE)) {
      TakeProtobufParseComplaint();  // what earlier calls on this thread left
    }
    // A request that failed to parse reaches this hook without a message
    // (on the thread that tried to parse it).
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE) &&
        methods->GetRecvMessage() == nullptr) {
      parse_failed_ = true;
      complaint_ = TakeProtobufParseComplaint();
    }
    // gRPC answers INTERNAL (sync handlers) or UNIMPLEMENTED (callback handlers)
    // with an empty message; no handler ran, so the request is logged here.
    if (parse_failed_ && methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS) &&
        !methods->GetSendStatus().ok()) {
      std::string message = absl::StrCat("the request to ", info_->method(), " is not a valid protobuf message");
      if (!complaint_.empty()) absl::StrAppend(&message, ": ", complaint_);
      core::RequestLog log(MethodName(info_->method()));
      methods->ModifySendStatus(ToGrpcStatus(log.Finish(absl::InvalidArgumentError(message))));
    }
    methods->Proceed();
  }

 private:
  // "Download" of "/npu.v1.MemoryService/Download", as the handlers log it;
  // the method string lives as long as the server.
  static const char* MethodName(const char* full) {
    const char* slash = std::strrchr(full, '/');
    return slash != nullptr ? slash + 1 : full;
  }

  grpc::experimental::ServerRpcInfo* info_;
  bool parse_failed_ = false;
  std::string complaint_;
};

}  // namespace

grpc::experimental::Interceptor* ParseErrorInterceptorFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  // Calls with one request message: for client streams a missing message also
  // means "end of stream", and their handlers report short or garbled streams.
  using Type = grpc::experimental::ServerRpcInfo::Type;
  if (info->type() != Type::UNARY && info->type() != Type::SERVER_STREAMING) return nullptr;
  return new ParseErrorInterceptor(info);
}

std::string TakeProtobufParseComplaint() {
  std::string complaint = std::move(last_parse_complaint);
  last_parse_complaint.clear();
  return complaint;
}

void InstallProtobufLogCapture() {
  static std::once_flag once;
  std::call_once(once, [] { google::protobuf::SetLogHandler(&CaptureProtobufLog); });
}

}  // namespace npu::rpc
