// How a Client connects and what every call carries.
#pragma once

#include <cstdint>
#include <string>

#include "absl/time/time.h"

namespace npu::client {

struct ClientOptions {
  // Deadline of each call, streaming calls included; InfiniteDuration() = none.
  absl::Duration timeout = absl::Seconds(60);

  // Bytes. Outputs can be large, so receiving is nearly unbounded; sending big
  // tensors should use Upload, which streams 1 MiB chunks.
  int64_t max_send_message_bytes = int64_t{64} << 20;
  int64_t max_receive_message_bytes = int64_t{1} << 30;

  // gRPC load-balancing policy, set through the service config, so a DNS name
  // resolving to several replicas spreads calls over them (DESIGN.md 7).
  std::string load_balancing_policy = "round_robin";

  // Retry calls that fail UNAVAILABLE before the server saw them.
  bool retry_unavailable = true;
  int retry_max_attempts = 4;

  // TLS: off by default. With use_tls and an empty root_cert_path, the system
  // roots are used. A client certificate and its key (PEM files, both or
  // neither) are presented to servers that require one (mutual TLS); setting
  // them implies TLS.
  bool use_tls = false;
  std::string root_cert_path;
  std::string client_cert_path;
  std::string client_key_path;

  // Sent as "authorization: Bearer TOKEN" when not empty.
  std::string bearer_token;
};

}  // namespace npu::client
