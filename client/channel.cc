#include "client/channel.h"

#include <fstream>
#include <limits>
#include <sstream>
#include <tuple>

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace npu::client {
namespace {

int ClampToInt(int64_t bytes) {
  if (bytes < 0) return -1;  // gRPC: unlimited
  return bytes > std::numeric_limits<int>::max() ? std::numeric_limits<int>::max()
                                                 : static_cast<int>(bytes);
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open \"", path, "\""));
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

}  // namespace

std::string MakeServiceConfigJson(const ClientOptions& options) {
  std::string json = absl::StrFormat(R"({"loadBalancingConfig":[{"%s":{}}])",
                                     options.load_balancing_policy);
  if (options.retry_unavailable && options.retry_max_attempts > 1) {
    // An empty name is the channel's default: every method of every service.
    absl::StrAppendFormat(
        &json,
        R"(,"methodConfig":[{"name":[{}],"retryPolicy":{"maxAttempts":%d,)"
        R"("initialBackoff":"0.1s","maxBackoff":"2s","backoffMultiplier":2,)"
        R"("retryableStatusCodes":["UNAVAILABLE"]}}])",
        std::min(options.retry_max_attempts, 5));
  }
  json += "}";
  return json;
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(const std::string& target,
                                                           const ClientOptions& options) {
  if (target.empty()) return absl::InvalidArgumentError("empty target; use HOST:PORT");

  if (options.client_cert_path.empty() != options.client_key_path.empty()) {
    return absl::InvalidArgumentError(
        "a TLS client certificate needs its key and the key its certificate (--tls-cert with --tls-key)");
  }
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (options.use_tls || !options.root_cert_path.empty() || !options.client_cert_path.empty()) {
    grpc::SslCredentialsOptions ssl;
    for (auto [path, pem, what] : {std::tuple{&options.root_cert_path, &ssl.pem_root_certs, "root certificate"},
                                   std::tuple{&options.client_cert_path, &ssl.pem_cert_chain, "client certificate"},
                                   std::tuple{&options.client_key_path, &ssl.pem_private_key, "client key"}}) {
      if (path->empty()) continue;
      absl::StatusOr<std::string> contents = ReadWholeFile(*path);
      if (!contents.ok()) {
        return absl::Status(contents.status().code(), absl::StrCat("TLS ", what, ": ", contents.status().message()));
      }
      *pem = *std::move(contents);
    }
    credentials = grpc::SslCredentials(ssl);
  } else {
    credentials = grpc::InsecureChannelCredentials();
  }

  grpc::ChannelArguments args;
  args.SetMaxSendMessageSize(ClampToInt(options.max_send_message_bytes));
  args.SetMaxReceiveMessageSize(ClampToInt(options.max_receive_message_bytes));
  args.SetServiceConfigJSON(MakeServiceConfigJson(options));
  return grpc::CreateCustomChannel(target, credentials, args);
}

}  // namespace npu::client
