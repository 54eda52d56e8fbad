// The KServe v2 / Open Inference Protocol over HTTP/REST (server/http), on
// --http-listen:
//   GET  /v2/health/live, /v2/health/ready            200, or 400 saying why not
//   GET  /v2                                          server metadata
//   GET  /v2/models/NAME[/versions/V]                 model metadata
//   GET  /v2/models/NAME[/versions/V]/ready           200, or 400 saying why not
//   POST /v2/models/NAME[/versions/V]/infer           JSON, binary tensor data extension
//   POST /v2/repository/index                         model-repository extension
//   POST /v2/repository/models/NAME/load|unload
// Errors are {"error": "..."} with the HTTP status of the failure (400 for a
// bad request, 401, 404, 429, 501, 503, 504, 500; HttpStatusFor). Tenants
// and models are those of the gRPC frontend: "Authorization: Bearer TOKEN"
// when --auth_tokens is on (not for the health probes). With the server's TLS
// flags the endpoint serves HTTPS with the same certificate and client CA.
//
// A request runs on one of the HTTP server's workers, which waits for the
// run; HTTP gives no sign of a client that went away, so a run stops at the
// request's "timeout" parameter (microseconds) or when the server shuts down.
// Framing, limits and content coding are the HTTP server's
// (http_request_reader.h); its own errors get the protocol's {"error": ...}.
#pragma once

#include <memory>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "base/mutex.h"
#include "server/device/cancel_token.h"
#include "server/http/http_server.h"
#include "server/core/request_log.h"
#include "server/core/server_state.h"

namespace npu::rpc {

struct KserveHttpOptions {
  std::string listen;         // HOST:PORT; port 0 picks a free one
  std::string tls_cert_path;  // with tls_key_path: HTTPS
  std::string tls_key_path;
  std::string tls_client_ca_path;  // clients must present a certificate signed by it
  uint64_t max_body_bytes = uint64_t{1} << 30;
  int threads = 64;  // requests served at once (each waits for its run)
  http::HttpLimits limits;  // request line and header limits (max_body_bytes above is the body's)
};

// The HTTP status for a failure's code.
int HttpStatusFor(absl::StatusCode code);

class KserveHttpServer {
 public:
  static absl::StatusOr<std::unique_ptr<KserveHttpServer>> Start(const KserveHttpOptions& options,
                                                                 core::ServerState& state);
  // Stops the runs in flight, then serving, and joins the HTTP server's threads.
  ~KserveHttpServer();

  int port() const { return http_->port(); }

  struct Route;

 private:
  explicit KserveHttpServer(core::ServerState& state) : state_(state) {}
  void Handle(const http::HttpRequest& req, http::HttpResponse& res);
  absl::Status Serve(const Route& route, const std::string& tenant, const http::HttpRequest& req,
                     http::HttpResponse& res, core::RequestLog& log);
  absl::Status Infer(const Route& route, const std::string& tenant, const http::HttpRequest& req,
                     http::HttpResponse& res, core::RequestLog& log);
  // Tracks a run's token so that shutdown can stop it; false once stopping.
  bool Track(const std::shared_ptr<device::CancelToken>& token);
  void Untrack(const std::shared_ptr<device::CancelToken>& token);

  core::ServerState& state_;
  Mutex mu_;
  std::set<std::shared_ptr<device::CancelToken>> running_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::unique_ptr<http::HttpServer> http_;  // last: destroyed (joined) first
};

}  // namespace npu::rpc
