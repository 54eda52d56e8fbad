// A connection's bytes, plain or TLS (OpenSSL), on a non-blocking socket:
// every wait is a poll() with a deadline, so no read or write can hold a
// thread past the timeouts the server sets.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace npu::http {

class HttpTransport {
 public:
  virtual ~HttpTransport();  // closes the socket

  // TLS: the handshake. Plain: nothing.
  virtual absl::Status Start(absl::Time /*deadline*/) { return absl::OkStatus(); }
  // Up to `n` bytes (> 0), 0 at the end of input, DEADLINE_EXCEEDED when
  // nothing came by `deadline`, UNAVAILABLE when the connection failed.
  virtual absl::StatusOr<size_t> Read(char* buf, size_t n, absl::Time deadline) = 0;
  // All of `head` then all of `body`; DEADLINE_EXCEEDED when the peer takes
  // nothing for `stall` (however long the whole takes).
  virtual absl::Status Write(absl::string_view head, absl::string_view body, absl::Duration stall) = 0;
  // Input already received and decrypted, which poll() on the socket does not show.
  virtual bool HasPendingInput() const { return false; }
  // Sends nothing more (TLS: close_notify first); input can still be read.
  virtual void ShutdownWrite();

  int fd() const { return fd_; }

 protected:
  explicit HttpTransport(int fd) : fd_(fd) {}
  const int fd_;
};

// Waits until `fd` is ready for `events` (POLLIN, POLLOUT): OK (also on
// hang-up or error, which the next read or write reports) or DEADLINE_EXCEEDED.
absl::Status WaitForSocket(int fd, short events, absl::Time deadline);

// Takes the socket (made non-blocking).
std::unique_ptr<HttpTransport> PlainTransport(int fd);

struct TlsFiles {
  std::string cert_path;       // PEM chain
  std::string key_path;        // PEM
  std::string client_ca_path;  // when set, clients must present a certificate it signed
};

class TlsContext {
 public:
  static absl::StatusOr<std::shared_ptr<TlsContext>> Create(const TlsFiles& files);
  ~TlsContext();
  // A TLS server connection over the socket (handshake at Start).
  std::unique_ptr<HttpTransport> Wrap(int fd) const;

 private:
  explicit TlsContext(void* ctx) : ctx_(ctx) {}
  void* ctx_;  // SSL_CTX
};

}  // namespace npu::http
