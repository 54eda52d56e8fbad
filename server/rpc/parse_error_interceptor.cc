#include "server/rpc/parse_error_interceptor.h"

#include <cstdio>
#include <mutex>
#include <string>

#include <google/protobuf/stubs/logging.h>

#include "absl/strings/str_cat.h"

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
      last_parse_complaint.clear();
    }
    // A unary request that failed to parse reaches this hook without a message
    // (on the thread that tried to parse it).
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE) &&
        methods->GetRecvMessage() == nullptr) {
      parse_failed_ = true;
      complaint_ = std::move(last_parse_complaint);
      last_parse_complaint.clear();
    }
    // gRPC answers INTERNAL (sync handlers) or UNIMPLEMENTED (callback handlers)
    // with an empty message.
    if (parse_failed_ && methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS) &&
        !methods->GetSendStatus().ok()) {
      std::string message = absl::StrCat("the request to ", info_->method(), " is not a valid protobuf message");
      if (!complaint_.empty()) absl::StrAppend(&message, ": ", complaint_);
      methods->ModifySendStatus(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, message));
    }
    methods->Proceed();
  }

 private:
  grpc::experimental::ServerRpcInfo* info_;
  bool parse_failed_ = false;
  std::string complaint_;
};

}  // namespace

grpc::experimental::Interceptor* ParseErrorInterceptorFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  // Only unary calls: for streams a missing message also means "end of stream",
  // and the handlers report short or garbled streams themselves.
  if (info->type() != grpc::experimental::ServerRpcInfo::Type::UNARY) return nullptr;
  return new ParseErrorInterceptor(info);
}

void InstallProtobufLogCapture() {
  static std::once_flag once;
  std::call_once(once, [] { google::protobuf::SetLogHandler(&CaptureProtobufLog); });
}

}  // namespace npu::rpc
