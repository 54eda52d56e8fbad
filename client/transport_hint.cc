#include "client/transport_hint.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace npu::client {

absl::Status WithTransportHint(absl::Status status, const ClientOptions& options) {
  if (status.code() != absl::StatusCode::kUnavailable) return status;
  const absl::string_view message = status.message();
  const bool tls = options.use_tls || !options.root_cert_path.empty();
  const bool client_cert = !options.client_cert_path.empty();
  absl::string_view hint;
  if (absl::StrContains(message, "Ssl handshake failed") && absl::StrContains(message, "wrong version number")) {
    hint = "the server does not speak TLS: connect without --tls/--tls-ca";
  } else if (absl::StrContains(message, "Socket closed") && !tls) {
    hint = "the server closed a plaintext connection; if it serves TLS, pass --tls-ca CA.pem "
           "(ClientOptions::root_cert_path), and --tls-cert/--tls-key if it wants client certificates";
  } else if (absl::StrContains(message, "Socket closed") && !client_cert) {
    hint = "the server closed the TLS connection; if it requires client certificates (mutual TLS), pass "
           "--tls-cert CERT.pem --tls-key KEY.pem (ClientOptions::client_cert_path/client_key_path)";
  } else if (absl::StrContains(message, "Ssl handshake failed") ||
             absl::StrContains(message, "certificate verify failed")) {
    hint = "TLS handshake failed: check that --tls-ca holds the CA that signed the server's certificate "
           "and that the target's host name is in it";
  }
  if (hint.empty()) return status;
  return absl::Status(status.code(), absl::StrCat(message, " (hint: ", hint, ")"));
}

}  // namespace npu::client
