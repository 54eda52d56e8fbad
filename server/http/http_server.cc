#include "server/http/http_server.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <exception>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "server/http/http_content_coding.h"

namespace npu::http {
namespace {

constexpr size_t kReadBytes = 64 * 1024;
constexpr absl::Duration kLinger = absl::Seconds(2);  // draining what a refused request still sends
constexpr uint64_t kMaxLingerBytes = uint64_t{64} << 20;
// How long a worker waits for bytes before giving the connection back to the
// poller (whose hand-off costs two thread wake-ups).
constexpr absl::Duration kNextRequestGrace = absl::Milliseconds(1);
constexpr absl::Duration kBodyGrace = absl::Milliseconds(20);

bool SafeHeaderValue(absl::string_view v) { return v.find_first_of("\r\n") == absl::string_view::npos; }

std::string ResponseHead(const HttpResponse& res, bool keep_alive_http10) {
  std::string head = absl::StrCat("HTTP/1.1 ", res.status, " ", ReasonPhrase(res.status), "\r\n");
  if (!res.content_type.empty() && SafeHeaderValue(res.content_type)) {
    absl::StrAppend(&head, "Content-Type: ", res.content_type, "\r\n");
  }
  absl::StrAppend(&head, "Content-Length: ", res.body.size(), "\r\n");
  absl::StrAppend(&head, "Date: ", absl::FormatTime("%a, %d %b %Y %H:%M:%S GMT", absl::Now(), absl::UTCTimeZone()),
                  "\r\n");
  if (res.close) {
    head += "Connection: close\r\n";
  } else if (keep_alive_http10) {
    head += "Connection: keep-alive\r\n";
  }
  for (const HttpHeader& h : res.headers) {
    if (SafeHeaderValue(h.name) && SafeHeaderValue(h.value)) absl::StrAppend(&head, h.name, ": ", h.value, "\r\n");
  }
  head += "\r\n";
  return head;
}

absl::StatusOr<int> Listen(const std::string& listen, const std::string& flag) {
  const size_t colon = listen.rfind(':');
  int port = -1;
  if (colon == std::string::npos || !absl::SimpleAtoi(listen.substr(colon + 1), &port) || port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " \"", listen, "\" is not HOST:PORT"));
  }
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port_text = std::to_string(port);
  if (getaddrinfo(host.empty() ? nullptr : host.c_str(), port_text.c_str(), &hints, &found) != 0) {
    return absl::UnavailableError(absl::StrCat(flag, ": cannot listen on ", listen, " (unknown host)"));
  }
  int fd = -1;
  std::string why = "no address";
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
      why = std::strerror(errno);
      ::close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd < 0) return absl::UnavailableError(absl::StrCat(flag, ": cannot listen on ", listen, " (", why, ")"));
  return fd;
}

int BoundPort(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return -1;
  if (addr.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
  return -1;
}

}  // namespace

struct HttpServer::Connection {
  Connection(std::unique_ptr<HttpTransport> t, const HttpLimits& limits, bool tls)
      : transport(std::move(t)), reader(limits), started(!tls) {}
  std::unique_ptr<HttpTransport> transport;
  HttpRequestReader reader;
  bool started;  // the TLS handshake is done (plain: from the start)
  // While with the poller: when it stops waiting for this connection's bytes.
  absl::Time deadline;
  // The request's head must be in by then (set by its first bytes).
  absl::Time head_deadline = absl::InfiniteFuture();
  bool expired = false;    // its deadline passed mid-request: a worker answers 408 and closes
  bool lingering = false;  // answered for the last time: drained by the poller until the client closes
  uint64_t drained = 0;
};

HttpServer::HttpServer(HttpServerOptions options, HttpHandler handler, HttpErrorBody error_body)
    : options_(std::move(options)), handler_(std::move(handler)), error_body_(std::move(error_body)) {}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(HttpServerOptions options, HttpHandler handler,
                                                              HttpErrorBody error_body) {
  auto fd = Listen(options.listen, options.flag);
  if (!fd.ok()) return fd.status();
  // OpenSSL writes with write(2): a peer gone away must be an error, not SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  std::unique_ptr<HttpServer> s(new HttpServer(std::move(options), std::move(handler), std::move(error_body)));
  s->listen_fd_ = *fd;
  s->port_ = BoundPort(*fd);
  s->wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (s->wake_fd_ < 0) return absl::InternalError(absl::StrCat("eventfd: ", std::strerror(errno)));
  s->poller_ = std::thread([p = s.get()] { p->PollLoop(); });
  for (int i = 0; i < std::max(1, s->options_.threads); ++i) s->workers_.emplace_back([p = s.get()] { p->WorkLoop(); });
  return s;
}

HttpServer::~HttpServer() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    // Reads and writes in progress end now; handlers still running finish.
    for (int fd : busy_fds_) ::shutdown(fd, SHUT_RDWR);
  }
  ready_cv_.SignalAll();
  Wake();
  if (poller_.joinable()) poller_.join();
  for (std::thread& t : workers_) t.join();
  {
    MutexLock lock(&mu_);
    ready_.clear();
    idle_back_.clear();
  }
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void HttpServer::Wake() {
  const uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof(one));
}

void HttpServer::PollLoop() {
  std::vector<std::unique_ptr<Connection>> idle;
  std::vector<pollfd> fds;
  // The answer to a connection past max_connections, made once.
  HttpResponse busy = ErrorResponse(
      503, absl::StrCat("the server has ", options_.max_connections, " connections open, the most it takes; retry later"));
  busy.close = true;
  const std::string busy_bytes = ResponseHead(busy, false) + busy.body;

  for (;;) {
    {
      MutexLock lock(&mu_);
      if (stopping_) break;
      for (auto& c : idle_back_) idle.push_back(std::move(c));
      idle_back_.clear();
    }
    fds.assign({{wake_fd_, POLLIN, 0}, {listen_fd_, POLLIN, 0}});
    absl::Time next = absl::Now() + absl::Seconds(1);
    for (const auto& c : idle) {
      fds.push_back({c->transport->fd(), POLLIN, 0});
      next = std::min(next, c->deadline);
    }
    const int wait_ms = static_cast<int>(std::max<int64_t>(0, absl::ToInt64Milliseconds(next - absl::Now()) + 1));
    if (::poll(fds.data(), fds.size(), wait_ms) < 0 && errno != EINTR) break;
    if (fds[0].revents != 0) {
      uint64_t n = 0;
      (void)!::read(wake_fd_, &n, sizeof(n));
    }
    std::vector<std::unique_ptr<Connection>> ready;
    const absl::Time now = absl::Now();
    for (size_t i = 0; i < idle.size(); ++i) {
      Connection& c = *idle[i];
      if (c.lingering) {
        if ((fds[i + 2].revents != 0 && !Drain(c)) || now >= c.deadline) Close(std::move(idle[i]));
      } else if (fds[i + 2].revents != 0) {
        ready.push_back(std::move(idle[i]));
      } else if (now >= c.deadline) {
        if (c.started && c.reader.idle()) {
          Close(std::move(idle[i]));  // a kept-alive connection unused for idle_timeout
        } else {
          c.expired = true;  // a request (or a handshake) that stalled: 408 from a worker
          ready.push_back(std::move(idle[i]));
        }
      }
    }
    std::erase(idle, nullptr);
    if (fds[1].revents != 0) {
      for (;;) {
        const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) break;
        if (open_.load() >= options_.max_connections) {
          if (!options_.tls) (void)!::send(fd, busy_bytes.data(), busy_bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
          ::close(fd);
          continue;
        }
        const int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        std::unique_ptr<HttpTransport> t = options_.tls ? options_.tls->Wrap(fd) : PlainTransport(fd);
        if (t == nullptr) continue;
        ++open_;
        auto c = std::make_unique<Connection>(std::move(t), options_.limits, options_.tls != nullptr);
        // Its first request (a TLS client: its handshake) must start within the idle timeout.
        c->deadline = now + options_.idle_timeout;
        idle.push_back(std::move(c));
      }
    }
    if (!ready.empty()) {
      MutexLock lock(&mu_);
      for (auto& c : ready) ready_.push_back(std::move(c));
    }
    for (size_t i = 0; i < ready.size(); ++i) ready_cv_.Signal();
  }
  for (auto& c : idle) Close(std::move(c));
}

bool HttpServer::Drain(Connection& c) {
  char buf[kReadBytes];
  for (;;) {
    const ssize_t n = ::recv(c.transport->fd(), buf, sizeof(buf), MSG_DONTWAIT);
    if (n > 0) {
      if ((c.drained += static_cast<uint64_t>(n)) > kMaxLingerBytes) return false;
      continue;
    }
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
  }
}

void HttpServer::HandBack(std::unique_ptr<Connection> c, absl::Time deadline) {
  c->deadline = deadline;
  bool stopping;
  {
    MutexLock lock(&mu_);
    busy_fds_.erase(c->transport->fd());
    stopping = stopping_;
    if (!stopping) idle_back_.push_back(std::move(c));
  }
  if (stopping) return Close(std::move(c));
  Wake();
}

void HttpServer::WorkLoop() {
  for (;;) {
    std::unique_ptr<Connection> c;
    {
      MutexLock lock(&mu_);
      while (ready_.empty() && !stopping_) ready_cv_.Wait(&mu_);
      if (stopping_) return;
      c = std::move(ready_.front());
      ready_.pop_front();
      busy_fds_.insert(c->transport->fd());
    }
    Serve(std::move(c));
  }
}

void HttpServer::Serve(std::unique_ptr<Connection> c) {
  if (c->expired) {
    if (c->started && !c->reader.idle()) {
      Error(*c, 408, "the request did not arrive in time");
      return Linger(std::move(c));
    }
    return Close(std::move(c));
  }
  if (!c->started) {
    // One step of the handshake; the poller waits for the client's next flight.
    const absl::Status s = c->transport->Start(absl::Now());
    if (absl::IsDeadlineExceeded(s)) return HandBack(std::move(c), std::min(c->deadline, absl::Now() + options_.read_timeout));
    if (!s.ok()) return Close(std::move(c));
    c->started = true;
  }
  char buf[kReadBytes];
  for (;;) {
    switch (c->reader.Next()) {
      case HttpRequestReader::Event::kNeedInput: {
        // What arrives within a moment: the rest of a body in flight, or the
        // next request of a client that sends it right after its answer. A
        // worker waits no longer for a client's bytes, so slow clients hold
        // connections, not threads.
        auto n = c->transport->Read(buf, sizeof(buf),
                                    absl::Now() + (c->reader.idle() ? kNextRequestGrace : kBodyGrace));
        const absl::Time now = absl::Now();
        if (absl::IsDeadlineExceeded(n.status())) {
          return HandBack(std::move(c), c->reader.idle() ? now + options_.idle_timeout
                                                         : std::min(c->head_deadline, now + options_.read_timeout));
        }
        if (!n.ok()) return Close(std::move(c));
        if (*n == 0) {
          c->reader.EndOfInput();
        } else {
          if (c->reader.idle()) c->head_deadline = now + options_.read_timeout;  // the whole head within it
          c->reader.Append(absl::string_view(buf, *n));
        }
        continue;
      }
      case HttpRequestReader::Event::kHead:
        c->head_deadline = absl::InfiniteFuture();
        if (c->reader.expects_continue() && !c->transport->Write("HTTP/1.1 100 Continue\r\n\r\n", "", options_.write_timeout).ok()) {
          return Close(std::move(c));
        }
        continue;
      case HttpRequestReader::Event::kRequest: {
        const bool keep_alive = c->reader.keep_alive();
        HttpRequest request = c->reader.TakeRequest();
        // A pipelined request already begun has its head timed from now.
        if (!c->reader.idle()) c->head_deadline = absl::Now() + options_.read_timeout;
        HttpResponse response;
        if (auto e = DecodeContentEncoding(request, options_.limits)) {
          // The body was read whole: the framing holds, the connection may go on.
          response = ErrorResponse(e->status, e->message);
        } else {
          try {
            handler_(request, response);
          } catch (const std::exception& ex) {
            response = ErrorResponse(500, absl::StrCat("the server failed to answer: ", ex.what()));
          }
        }
        CompressResponse(request, response);
        response.close |= !keep_alive;
        if (!Answer(*c, response, &request)) return Linger(std::move(c));
        continue;
      }
      case HttpRequestReader::Event::kError:
        Error(*c, c->reader.error().status, c->reader.error().message);
        return Linger(std::move(c));
      case HttpRequestReader::Event::kEnd: return Close(std::move(c));
    }
  }
}

bool HttpServer::Answer(Connection& c, HttpResponse& response, const HttpRequest* request) {
  const bool head_only = request != nullptr && request->method == "HEAD";
  const bool http10 = request != nullptr && request->minor_version == 0;
  const std::string head = ResponseHead(response, http10 && !response.close);
  const bool sent = c.transport->Write(head, head_only ? "" : response.body, options_.write_timeout).ok();
  return sent && !response.close;
}

HttpResponse HttpServer::ErrorResponse(int status, absl::string_view message) const {
  HttpResponse response;
  if (error_body_) {
    error_body_(status, message, response);
  } else {
    response.content_type = "text/plain";
    response.body = absl::StrCat(message, "\n");
  }
  response.status = status;
  return response;
}

void HttpServer::Error(Connection& c, int status, absl::string_view message) {
  HttpResponse response = ErrorResponse(status, message);
  response.close = true;
  Answer(c, response, nullptr);
}

void HttpServer::Linger(std::unique_ptr<Connection> c) {
  // Read what the client still sends (the rest of a refused body) before
  // closing: closing with unread input resets the connection, and the client
  // could lose the answer it has not read yet. The poller drains it.
  c->transport->ShutdownWrite();
  c->lingering = true;
  HandBack(std::move(c), absl::Now() + kLinger);
}

void HttpServer::Close(std::unique_ptr<Connection> c) {
  {
    MutexLock lock(&mu_);
    busy_fds_.erase(c->transport->fd());
  }
  c.reset();
  --open_;
}

}  // namespace npu::http
