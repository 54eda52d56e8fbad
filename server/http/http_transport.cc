#include "server/http/http_transport.h"

#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace npu::http {
namespace {

int PollMillis(absl::Time deadline) {
  const absl::Duration left = deadline - absl::Now();
  if (left <= absl::ZeroDuration()) return 0;
  return static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(left) + 1, 1 << 30));
}

absl::Status Errno(const char* what) { return absl::UnavailableError(absl::StrCat(what, ": ", std::strerror(errno))); }

class Plain final : public HttpTransport {
 public:
  explicit Plain(int fd) : HttpTransport(fd) {}

  absl::StatusOr<size_t> Read(char* buf, size_t n, absl::Time deadline) override {
    for (;;) {
      const ssize_t got = ::recv(fd_, buf, n, MSG_DONTWAIT);
      if (got >= 0) return static_cast<size_t>(got);
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return Errno("recv");
      if (auto s = WaitForSocket(fd_, POLLIN, deadline); !s.ok()) return s;
    }
  }

  absl::Status Write(absl::string_view head, absl::string_view body, absl::Duration stall) override {
    iovec iov[2] = {{const_cast<char*>(head.data()), head.size()}, {const_cast<char*>(body.data()), body.size()}};
    int first = 0;
    while (first < 2) {
      if (iov[first].iov_len == 0) {
        ++first;
        continue;
      }
      msghdr msg{};
      msg.msg_iov = iov + first;
      msg.msg_iovlen = static_cast<size_t>(2 - first);
      // MSG_NOSIGNAL: a peer that went away is an error here, not SIGPIPE.
      const ssize_t sent = ::sendmsg(fd_, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (sent < 0) {
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return Errno("send");
        if (auto s = WaitForSocket(fd_, POLLOUT, absl::Now() + stall); !s.ok()) return s;
        continue;
      }
      size_t n = static_cast<size_t>(sent);
      while (n > 0 && first < 2) {
        const size_t step = std::min(n, iov[first].iov_len);
        iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + step;
        iov[first].iov_len -= step;
        n -= step;
        if (iov[first].iov_len == 0) ++first;
      }
    }
    return absl::OkStatus();
  }
};

std::string TlsErrors() {
  std::string out;
  for (unsigned long e = ERR_get_error(); e != 0; e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    absl::StrAppend(&out, out.empty() ? "" : "; ", buf);
  }
  return out.empty() ? "no OpenSSL error" : out;
}

class Tls final : public HttpTransport {
 public:
  Tls(int fd, SSL* ssl) : HttpTransport(fd), ssl_(ssl) { SSL_set_fd(ssl_, fd); }
  ~Tls() override { SSL_free(ssl_); }

  absl::Status Start(absl::Time deadline) override {
    for (;;) {
      ERR_clear_error();
      const int rc = SSL_accept(ssl_);
      if (rc == 1) return absl::OkStatus();
      if (auto s = Wait(rc, deadline, "TLS handshake"); !s.ok()) return s;
    }
  }

  absl::StatusOr<size_t> Read(char* buf, size_t n, absl::Time deadline) override {
    for (;;) {
      ERR_clear_error();
      size_t got = 0;
      const int rc = SSL_read_ex(ssl_, buf, n, &got);
      if (rc == 1) return got;
      const int err = SSL_get_error(ssl_, rc);
      if (err == SSL_ERROR_ZERO_RETURN) return size_t{0};
      if (err == SSL_ERROR_SYSCALL && errno == 0) return size_t{0};
      if (auto s = Wait(rc, deadline, "TLS read"); !s.ok()) return s;
    }
  }

  absl::Status Write(absl::string_view head, absl::string_view body, absl::Duration stall) override {
    for (absl::string_view part : {head, body}) {
      while (!part.empty()) {
        ERR_clear_error();
        size_t sent = 0;
        const int rc = SSL_write_ex(ssl_, part.data(), part.size(), &sent);
        if (rc == 1) {
          part.remove_prefix(sent);
          continue;
        }
        if (auto s = Wait(rc, absl::Now() + stall, "TLS write"); !s.ok()) return s;
      }
    }
    return absl::OkStatus();
  }

  bool HasPendingInput() const override { return SSL_pending(ssl_) > 0; }

  void ShutdownWrite() override {
    SSL_shutdown(ssl_);  // close_notify, as far as the socket takes it now
    HttpTransport::ShutdownWrite();
  }

 private:
  // After a failed SSL call: waits for what it wants, or says why it failed.
  absl::Status Wait(int rc, absl::Time deadline, const char* what) {
    const int err = SSL_get_error(ssl_, rc);
    if (err == SSL_ERROR_WANT_READ) return WaitForSocket(fd_, POLLIN, deadline);
    if (err == SSL_ERROR_WANT_WRITE) return WaitForSocket(fd_, POLLOUT, deadline);
    if (err == SSL_ERROR_SYSCALL) return Errno(what);
    return absl::UnavailableError(absl::StrCat(what, " failed: ", TlsErrors()));
  }

  SSL* ssl_;
};

}  // namespace

HttpTransport::~HttpTransport() { ::close(fd_); }

void HttpTransport::ShutdownWrite() { ::shutdown(fd_, SHUT_WR); }

absl::Status WaitForSocket(int fd, short events, absl::Time deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int rc = ::poll(&p, 1, PollMillis(deadline));
    if (rc > 0) return absl::OkStatus();
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) return Errno("poll");
    if (absl::Now() >= deadline) return absl::DeadlineExceededError("the peer sent nothing in time");
  }
}

std::unique_ptr<HttpTransport> PlainTransport(int fd) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  return std::make_unique<Plain>(fd);
}

absl::StatusOr<std::shared_ptr<TlsContext>> TlsContext::Create(const TlsFiles& files) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) return absl::InternalError(absl::StrCat("cannot make a TLS context: ", TlsErrors()));
  std::shared_ptr<TlsContext> out(new TlsContext(ctx));
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  // A peer that closes without close_notify ends the input (HTTP frames its own messages).
  SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
  SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (SSL_CTX_use_certificate_chain_file(ctx, files.cert_path.c_str()) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read the certificate \"", files.cert_path, "\": ", TlsErrors()));
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, files.key_path.c_str(), SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_check_private_key(ctx) != 1) {
    return absl::InvalidArgumentError(absl::StrCat("cannot use the key \"", files.key_path, "\" with the certificate \"",
                                                   files.cert_path, "\": ", TlsErrors()));
  }
  if (!files.client_ca_path.empty()) {
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(files.client_ca_path.c_str());
    if (names == nullptr || SSL_CTX_load_verify_locations(ctx, files.client_ca_path.c_str(), nullptr) != 1) {
      if (names != nullptr) sk_X509_NAME_pop_free(names, X509_NAME_free);
      return absl::InvalidArgumentError(
          absl::StrCat("cannot read the client CA \"", files.client_ca_path, "\": ", TlsErrors()));
    }
    SSL_CTX_set_client_CA_list(ctx, names);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  }
  return out;
}

TlsContext::~TlsContext() { SSL_CTX_free(static_cast<SSL_CTX*>(ctx_)); }

std::unique_ptr<HttpTransport> TlsContext::Wrap(int fd) const {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  SSL* ssl = SSL_new(static_cast<SSL_CTX*>(ctx_));
  if (ssl == nullptr) {
    ::close(fd);
    return nullptr;
  }
  return std::make_unique<Tls>(fd, ssl);
}

}  // namespace npu::http
