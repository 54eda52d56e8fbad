#include "server/rpc/kserve_http.h"

#include <httplib.h>

#include <algorithm>
#include <future>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "server/graph/bounded_text.h"
#include "server/rpc/grpc_status.h"
#include "server/rpc/kserve_http_infer.h"
#include "server/rpc/kserve_infer.h"
#include "server/rpc/kserve_json_parse.h"
#include "server/rpc/kserve_json_tensor.h"
#include "server/rpc/kserve_server_info.h"
#include "server/rpc/request_log.h"

namespace npu::rpc {
namespace {

using nlohmann::json;

constexpr char kJson[] = "application/json";
constexpr char kHeaderLength[] = "Inference-Header-Content-Length";
// NAME and an optional /versions/V: matches[1] and matches[2].
constexpr char kModel[] = "/v2/models/([^/]+)(?:/versions/([^/]+))?";

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

void ReplyJson(httplib::Response& res, const json& body) { res.set_content(Dump(body), kJson); }

void ReplyError(httplib::Response& res, int status, absl::string_view message) {
  res.status = status;
  if (status == 401) res.set_header("WWW-Authenticate", "Bearer");
  // Bounded as gRPC's statuses are (grpc_status.h): the culprit and the reason are kept.
  ReplyJson(res, json{{"error", graph::BoundedMessage(message, kMaxStatusMessageBytes)}});
}

void ReplyError(httplib::Response& res, const absl::Status& s) {
  ReplyError(res, HttpStatusFor(s.code()), s.message());
}

// The body of a repository request: empty, or a JSON object.
absl::StatusOr<json> OptionalObject(const std::string& body) {
  if (body.empty()) return json::object();
  auto j = ParseClientJson(body);
  if (!j.ok() || j->is_object()) return j;
  return absl::InvalidArgumentError("the request body must be a JSON object");
}

json TensorsJson(const google::protobuf::RepeatedPtrField<inference::ModelMetadataResponse::TensorMetadata>& ts) {
  json out = json::array();
  for (const auto& t : ts) {
    out.push_back({{"name", t.name()},
                   {"datatype", t.datatype()},
                   {"shape", std::vector<int64_t>(t.shape().begin(), t.shape().end())}});
  }
  return out;
}

json MetadataJson(const inference::ModelMetadataResponse& m) {
  return {{"name", m.name()},
          {"versions", std::vector<std::string>(m.versions().begin(), m.versions().end())},
          {"platform", m.platform()},
          {"inputs", TensorsJson(m.inputs())},
          {"outputs", TensorsJson(m.outputs())}};
}

json IndexJson(const inference::RepositoryIndexResponse& index) {
  json out = json::array();
  for (const auto& m : index.models()) {
    json entry = {{"name", m.name()}, {"version", m.version()}, {"state", m.state()}};
    if (!m.reason().empty()) entry["reason"] = m.reason();
    out.push_back(std::move(entry));
  }
  return out;
}

std::string Version(const httplib::Request& req) { return req.matches.size() > 2 ? req.matches[2].str() : ""; }

}  // namespace

int HttpStatusFor(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk: return 200;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange: return 400;
    case absl::StatusCode::kUnauthenticated: return 401;
    case absl::StatusCode::kPermissionDenied: return 403;
    case absl::StatusCode::kNotFound: return 404;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kAborted: return 409;
    case absl::StatusCode::kResourceExhausted: return 429;
    case absl::StatusCode::kCancelled: return 499;  // the caller gave up (nginx's "client closed request")
    case absl::StatusCode::kUnimplemented: return 501;
    case absl::StatusCode::kUnavailable: return 503;
    case absl::StatusCode::kDeadlineExceeded: return 504;
    default: return 500;  // INTERNAL, UNKNOWN, DATA_LOSS
  }
}

absl::StatusOr<std::unique_ptr<KserveHttpServer>> KserveHttpServer::Start(const KserveHttpOptions& options,
                                                                          ServerState& state, KserveModels& models) {
  std::unique_ptr<httplib::Server> http;
  if (options.tls_cert_path.empty() && options.tls_key_path.empty()) {
    http = std::make_unique<httplib::Server>();
  } else {
    auto ssl = std::make_unique<httplib::SSLServer>(
        options.tls_cert_path.c_str(), options.tls_key_path.c_str(),
        options.tls_client_ca_path.empty() ? nullptr : options.tls_client_ca_path.c_str());
    if (!ssl->is_valid()) {
      return absl::InvalidArgumentError(absl::StrCat("--http_listen: cannot serve HTTPS with --tls_cert \"",
                                                     options.tls_cert_path, "\" and --tls_key \"", options.tls_key_path,
                                                     "\""));
    }
    http = std::move(ssl);
  }
  const int threads = std::max(1, options.threads);
  http->new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  http->set_payload_max_length(options.max_body_bytes);
  http->set_keep_alive_max_count(1000);  // load tools reuse connections
  // httplib writes headers and body apart: without TCP_NODELAY, Nagle holds
  // the body until the client's delayed ACK, 40 ms a response.
  http->set_tcp_nodelay(true);
  std::unique_ptr<KserveHttpServer> s(new KserveHttpServer(state, models));
  s->AddRoutes(*http, options.max_body_bytes);
  auto listener = HttpListener::Start(std::move(http), options.listen, "--http_listen");
  if (!listener.ok()) return listener.status();
  s->listener_ = *std::move(listener);
  return s;
}

KserveHttpServer::~KserveHttpServer() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    for (const auto& token : running_) {
      token->Cancel(absl::UnavailableError("the server is shutting down; the inference was stopped"));
    }
  }
  listener_.reset();
}

bool KserveHttpServer::Track(const std::shared_ptr<device::CancelToken>& token) {
  MutexLock lock(&mu_);
  if (stopping_) return false;
  running_.insert(token);
  return true;
}

void KserveHttpServer::Untrack(const std::shared_ptr<device::CancelToken>& token) {
  MutexLock lock(&mu_);
  running_.erase(token);
}

void KserveHttpServer::AddRoutes(httplib::Server& http, uint64_t max_body_bytes) {
  // Runs `body(tenant, res)` for the caller's tenant; logs; answers failures.
  auto serve = [this](const char* method, const httplib::Request& req, httplib::Response& res, auto body) {
    RequestLog log(method);
    auto tenant = state_.TenantOfAuthorization(req.get_header_value("Authorization"));
    absl::Status s = tenant.status();
    if (tenant.ok()) {
      log.set_tenant(*tenant);
      s = body(*tenant, log);
    }
    s = log.Finish(std::move(s));
    if (!s.ok()) ReplyError(res, s);
  };

  // Probes: no token, no log line. The status is the answer (200 or 400); the
  // body says it too, as KServe's own server and REST client expect.
  http.Get("/v2/health/live", [](const httplib::Request&, httplib::Response& res) {
    ReplyJson(res, {{"live", true}});
  });
  http.Get("/v2/health/ready", [this](const httplib::Request&, httplib::Response& res) {
    if (absl::Status s = KserveServerReadiness(state_); !s.ok()) {
      ReplyError(res, 400, absl::StrCat("not ready: ", s.message()));
    } else {
      ReplyJson(res, {{"ready", true}});
    }
  });
  http.Get("/v2/?", [serve](const httplib::Request& req, httplib::Response& res) {
    serve("http.ServerMetadata", req, res, [&](const std::string&, RequestLog&) {
      const inference::ServerMetadataResponse m = KserveServerMetadata();
      ReplyJson(res, {{"name", m.name()},
                      {"version", m.version()},
                      {"extensions", std::vector<std::string>(m.extensions().begin(), m.extensions().end())}});
      return absl::OkStatus();
    });
  });
  http.Get(kModel, [this, serve](const httplib::Request& req, httplib::Response& res) {
    serve("http.ModelMetadata", req, res, [&](const std::string& tenant, RequestLog&) {
      auto m = models_.Metadata(tenant, req.matches[1].str(), Version(req));
      if (!m.ok()) return m.status();
      ReplyJson(res, MetadataJson(*m));
      return absl::OkStatus();
    });
  });
  http.Get(absl::StrCat(kModel, "/ready"), [this, serve](const httplib::Request& req, httplib::Response& res) {
    serve("http.ModelReady", req, res, [&](const std::string& tenant, RequestLog&) {
      auto found = models_.Find(tenant, req.matches[1].str(), Version(req));
      if (IsAbsentModel(found.status())) {
        ReplyError(res, 400, absl::StrCat("not ready: ", found.status().message()));
        return absl::OkStatus();
      }
      if (!found.ok()) return found.status();
      ReplyJson(res, {{"name", found->name}, {"version", found->version}, {"ready", true}});
      return absl::OkStatus();
    });
  });
  http.Post(absl::StrCat(kModel, "/infer"), [this, serve](const httplib::Request& req, httplib::Response& res) {
    serve("http.ModelInfer", req, res, [&](const std::string& tenant, RequestLog& log) -> absl::Status {
      std::optional<uint64_t> header_length;
      if (req.has_header(kHeaderLength)) {
        uint64_t n = 0;
        if (!absl::SimpleAtoi(req.get_header_value(kHeaderLength), &n)) {
          return absl::InvalidArgumentError(absl::StrCat(
              kHeaderLength, " ", graph::Quoted(req.get_header_value(kHeaderLength)), " is not a byte count"));
        }
        header_length = n;
      }
      auto asked = DecodeHttpInferRequest(req.body, header_length, req.matches[1].str(), Version(req));
      if (!asked.ok()) return asked.status();

      auto cancel = std::make_shared<device::CancelToken>();
      if (!Track(cancel)) return absl::UnavailableError("the server is shutting down and takes no new work");
      auto finished = std::make_shared<std::promise<absl::StatusOr<InferResult>>>();
      std::future<absl::StatusOr<InferResult>> result = finished->get_future();
      StartInfer(state_, models_, tenant, std::move(asked->request), cancel,
                 [finished](absl::StatusOr<InferResult> r) { finished->set_value(std::move(r)); });
      if (asked->timeout && result.wait_for(*asked->timeout) == std::future_status::timeout) {
        cancel->Cancel(
            absl::DeadlineExceededError(absl::StrCat("the inference passed its timeout parameter (",
                                                     asked->timeout->count(), " us); its device work was stopped")));
      }
      absl::StatusOr<InferResult> done = result.get();
      Untrack(cancel);
      if (!done.ok()) return done.status();
      if (auto it = done->parameters.find("npu_device_time_ns"); it != done->parameters.end()) {
        log.set_device_us(static_cast<double>(it->second.int64_param()) / 1000.0);
      }
      HttpInferResponse body = EncodeHttpInferResponse(*done, *asked);
      if (body.binary) {
        res.set_header(kHeaderLength, std::to_string(body.header_length));
        res.set_content(std::move(body.body), "application/octet-stream");
      } else {
        res.set_content(std::move(body.body), kJson);
      }
      return absl::OkStatus();
    });
  });
  http.Post("/v2/repository/index", [this, serve](const httplib::Request& req, httplib::Response& res) {
    serve("http.RepositoryIndex", req, res, [&](const std::string& tenant, RequestLog&) -> absl::Status {
      auto body = OptionalObject(req.body);
      if (!body.ok()) return body.status();
      const json ready = body->value("ready", json(false));
      if (!ready.is_boolean()) return absl::InvalidArgumentError("\"ready\" must be a boolean");
      ReplyJson(res, IndexJson(models_.Index(tenant, ready.get<bool>())));
      return absl::OkStatus();
    });
  });
  http.Post("/v2/repository/models/([^/]+)/(load|unload)",
            [this, serve](const httplib::Request& req, httplib::Response& res) {
              const bool load = req.matches[2] == "load";
              serve(load ? "http.RepositoryModelLoad" : "http.RepositoryModelUnload", req, res,
                    [&](const std::string& tenant, RequestLog&) -> absl::Status {
                      auto body = OptionalObject(req.body);
                      if (!body.ok()) return body.status();
                      auto params = ParametersFromJson(body->value("parameters", json::object()), "request");
                      if (!params.ok()) return params.status();
                      if (!load) return models_.Unload(tenant, req.matches[1].str());
                      if (auto s = state_.CheckAdmitting(); !s.ok()) return s;
                      std::vector<std::string> names;
                      for (const auto& [key, value] : *params) names.push_back(key);
                      return models_.Load(tenant, req.matches[1].str(), names);
                    });
            });

  // What httplib answers itself (no route, a body past the limit) gets the
  // protocol's error form too.
  http.set_error_handler([limit = max_body_bytes](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 404) {
      ReplyError(res, 404,
                 absl::StrCat("no endpoint ", req.method, " ", req.path,
                              "; the KServe v2 endpoints are under /v2 (docs/serving.md)"));
    } else if (res.status == 413) {
      ReplyError(res, 413,
                 absl::StrCat("the request body is larger than the server's limit of ", limit,
                              " bytes (--max_message_bytes)"));
    } else if (res.status == 400) {
      ReplyError(res, 400, "the HTTP request could not be read (a POST needs Content-Length or a chunked body)");
    } else {
      ReplyError(res, res.status, absl::StrCat("the HTTP request could not be served (status ", res.status, ")"));
    }
  });
}

}  // namespace npu::rpc
