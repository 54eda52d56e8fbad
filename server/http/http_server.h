// An HTTP/1.1 server (RFC 9112) for the server's HTTP endpoints: KServe's
// REST frontend and the Prometheus metrics. Written here rather than taken
// from cpp-httplib, whose 0.11 (Debian 12) takes the first of two
// conflicting Content-Lengths, keeps a connection open after Content-Length
// with Transfer-Encoding, drops pipelined requests, often leaves a request
// followed by a half-close unanswered, bounds neither the header count nor
// its bytes, and reads chunked and gzip bodies whole before any limit.
//
// Threads: one poller waits on the listening socket and on every connection
// that has no bytes to read now (between requests, or in the middle of a
// slow one); a connection with bytes goes to a pool of `threads` workers,
// which read what has arrived, answer each request it completes (the handler
// may wait, as an inference does), and give the connection back to the
// poller when its bytes run out. So a worker never waits for a client:
// idle keep-alive connections and slow clients (slowloris) hold no thread,
// and `threads` requests run at once. The poller also times connections out
// and drains the ones closing. Framing (http_request_reader.h),
// content coding (http_content_coding.h) and the answers the server gives
// itself (400, 408, 413, 414, 431, 501, 503, 505) are here; what a request
// means is the handler's.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "base/mutex.h"
#include "server/http/http_message.h"
#include "server/http/http_request_reader.h"
#include "server/http/http_transport.h"

namespace npu::http {

struct HttpServerOptions {
  std::string listen;       // HOST:PORT ([V6]:PORT too); port 0 picks a free one
  std::string flag = "--listen";  // names the setting in errors
  int threads = 64;          // requests served at once
  int max_connections = 1024;  // open at once, idle ones included; past it: 503 and close
  HttpLimits limits;
  absl::Duration idle_timeout = absl::Seconds(5);   // keep-alive: an idle connection closes after it
  absl::Duration read_timeout = absl::Seconds(30);  // a request's head, and any wait for body bytes
  absl::Duration write_timeout = absl::Seconds(30);  // any wait, while sending, for the client to take bytes
  std::shared_ptr<TlsContext> tls;  // HTTPS when set
};

using HttpHandler = std::function<void(const HttpRequest&, HttpResponse&)>;
// How the server's own errors look ({"error": ...} for KServe); plain text by default.
using HttpErrorBody = std::function<void(int status, absl::string_view message, HttpResponse&)>;

class HttpServer {
 public:
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(HttpServerOptions options, HttpHandler handler,
                                                           HttpErrorBody error_body = nullptr);
  // Stops accepting, closes idle connections, ends reads in progress, waits
  // for the handlers running (stop their work first) and joins every thread.
  ~HttpServer();

  int port() const { return port_; }

 private:
  struct Connection;

  HttpServer(HttpServerOptions options, HttpHandler handler, HttpErrorBody error_body);
  void PollLoop();
  void WorkLoop();
  // Serves `c` with the bytes it has: its requests are answered as they
  // complete, and when it has no more bytes for now it goes back to the poller.
  void Serve(std::unique_ptr<Connection> c);
  // To the poller, which hands it to a worker when bytes arrive or `deadline` passes.
  void HandBack(std::unique_ptr<Connection> c, absl::Time deadline);
  // False once the connection must close.
  bool Answer(Connection& c, HttpResponse& response, const HttpRequest* request);
  HttpResponse ErrorResponse(int status, absl::string_view message) const;
  // Answers the server's own error and marks the connection for closing.
  void Error(Connection& c, int status, absl::string_view message);
  // After the last answer: no more writes, and the poller reads what the client
  // still sends until it closes (at most 2 s, 64 MiB).
  void Linger(std::unique_ptr<Connection> c);
  // The poller's part of lingering: false once the client closed or sent too much.
  bool Drain(Connection& c);
  void Close(std::unique_ptr<Connection> c);
  void Wake();

  const HttpServerOptions options_;
  const HttpHandler handler_;
  const HttpErrorBody error_body_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;
  int port_ = 0;
  std::atomic<int> open_{0};

  Mutex mu_;
  CondVar ready_cv_;
  std::deque<std::unique_ptr<Connection>> ready_ ABSL_GUARDED_BY(mu_);  // for the workers
  std::vector<std::unique_ptr<Connection>> idle_back_ ABSL_GUARDED_BY(mu_);  // for the poller
  std::set<int> busy_fds_ ABSL_GUARDED_BY(mu_);  // being served: shut down on stop
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;

  std::thread poller_;
  std::vector<std::thread> workers_;
};

}  // namespace npu::http
