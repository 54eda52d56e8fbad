// A plaintext client talking to a TLS server (or the reverse, or a TLS client
// without the certificate a mutual-TLS server wants) gets only gRPC's
// "Socket closed" or "Ssl handshake failed". This adds what to try.
#pragma once

#include "absl/status/status.h"
#include "client/client_options.h"

namespace npu::client {

// `status` with a hint appended to its message when it looks like a TLS
// mismatch for a channel made with `options`; otherwise `status` unchanged.
absl::Status WithTransportHint(absl::Status status, const ClientOptions& options);

}  // namespace npu::client
