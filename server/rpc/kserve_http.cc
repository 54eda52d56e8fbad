#include "server/rpc/kserve_http.h"

#include <algorithm>
#include <future>
#include <optional>
#include <utility>
#include <vector>

#include <google/protobuf/util/json_util.h>
#include <nlohmann/json.hpp>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "server/graph/bounded_text.h"
#include "server/rpc/grpc_status.h"
#include "server/rpc/kserve_http_infer.h"
#include "server/rpc/kserve_infer.h"
#include "server/rpc/kserve_json_parse.h"
#include "server/rpc/kserve_json_tensor.h"
#include "server/rpc/kserve_metadata.h"
#include "server/rpc/kserve_server_info.h"
#include "server/core/request_log.h"

namespace npu::rpc {
namespace {

using http::HttpRequest;
using http::HttpResponse;
using nlohmann::json;

constexpr char kJson[] = "application/json";
constexpr char kHeaderLength[] = "Inference-Header-Content-Length";

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

void ReplyJson(HttpResponse& res, const json& body) {
  res.body = Dump(body);
  res.content_type = kJson;
}

void ReplyError(HttpResponse& res, int status, absl::string_view message) {
  res.status = status;
  if (status == 401) res.SetHeader("WWW-Authenticate", "Bearer");
  // Bounded as gRPC's statuses are (grpc_status.h): the culprit and the reason are kept.
  ReplyJson(res, json{{"error", graph::BoundedMessage(message, kMaxStatusMessageBytes)}});
}

void ReplyError(HttpResponse& res, const absl::Status& s) { ReplyError(res, HttpStatusFor(s.code()), s.message()); }

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

}  // namespace

// What a /v2 path names: the endpoint, and the model and version in it.
struct KserveHttpServer::Route {
  enum Kind {
    kNone, kLive, kReady, kServerMetadata, kModelMetadata, kModelReady, kModelConfig, kInfer, kIndex, kLoad, kUnload,
  } kind = kNone;
  std::string model, version;
};

namespace {

using Route = KserveHttpServer::Route;

// The protocol's paths: /v2[/], /v2/health/{live,ready},
// /v2/models/NAME[/versions/V][/ready|/infer], /v2/repository/index,
// /v2/repository/models/NAME/{load,unload}. Names are whole segments, never
// empty, and are only ever looked up, never used as paths.
Route RouteOf(const HttpRequest& req) {
  const bool get = req.method == "GET" || req.method == "HEAD";
  const bool post = req.method == "POST";
  std::vector<absl::string_view> s = absl::StrSplit(req.path, '/');
  Route r;
  if (s.size() < 2 || !s[0].empty() || s[1] != "v2") return r;
  s.erase(s.begin(), s.begin() + 2);
  if (s.empty() || (s.size() == 1 && s[0].empty())) {
    if (get) r.kind = Route::kServerMetadata;
    return r;
  }
  if (s.size() == 2 && s[0] == "health" && get) {
    if (s[1] == "live") r.kind = Route::kLive;
    if (s[1] == "ready") r.kind = Route::kReady;
    return r;
  }
  if (s[0] == "models" && s.size() >= 2 && !s[1].empty()) {
    r.model = std::string(s[1]);
    size_t i = 2;
    if (s.size() >= i + 2 && s[i] == "versions" && !s[i + 1].empty()) {
      r.version = std::string(s[i + 1]);
      i += 2;
    }
    if (i == s.size() && get) r.kind = Route::kModelMetadata;
    if (i + 1 == s.size() && s[i] == "ready" && get) r.kind = Route::kModelReady;
    if (i + 1 == s.size() && s[i] == "config" && get) r.kind = Route::kModelConfig;
    if (i + 1 == s.size() && s[i] == "infer" && post) r.kind = Route::kInfer;
    return r;
  }
  if (s[0] == "repository" && post) {
    if (s.size() == 2 && s[1] == "index") r.kind = Route::kIndex;
    if (s.size() == 4 && s[1] == "models" && !s[2].empty()) {
      r.model = std::string(s[2]);
      if (s[3] == "load") r.kind = Route::kLoad;
      if (s[3] == "unload") r.kind = Route::kUnload;
    }
  }
  return r;
}

const char* MethodName(Route::Kind kind) {
  switch (kind) {
    case Route::kServerMetadata: return "http.ServerMetadata";
    case Route::kModelMetadata: return "http.ModelMetadata";
    case Route::kModelReady: return "http.ModelReady";
    case Route::kModelConfig: return "http.ModelConfig";
    case Route::kInfer: return "http.ModelInfer";
    case Route::kIndex: return "http.RepositoryIndex";
    case Route::kLoad: return "http.RepositoryModelLoad";
    case Route::kUnload: return "http.RepositoryModelUnload";
    default: return "http.Unknown";
  }
}

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
                                                                          core::ServerState& state) {
  http::HttpServerOptions http;
  http.listen = options.listen;
  http.flag = "--http_listen";
  http.threads = std::max(1, options.threads);
  http.limits = options.limits;
  http.limits.max_body_bytes = options.max_body_bytes;
  http.limits.body_limit_name = "--max_message_bytes";
  if (!options.tls_cert_path.empty() || !options.tls_key_path.empty()) {
    auto tls = http::TlsContext::Create({options.tls_cert_path, options.tls_key_path, options.tls_client_ca_path});
    if (!tls.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--http_listen: cannot serve HTTPS with --tls_cert \"",
                                                     options.tls_cert_path, "\" and --tls_key \"",
                                                     options.tls_key_path, "\": ", tls.status().message()));
    }
    http.tls = *std::move(tls);
  }
  std::unique_ptr<KserveHttpServer> s(new KserveHttpServer(state));
  auto server = http::HttpServer::Start(
      std::move(http), [p = s.get()](const HttpRequest& req, HttpResponse& res) { p->Handle(req, res); },
      [](int status, absl::string_view message, HttpResponse& res) { ReplyError(res, status, message); });
  if (!server.ok()) return server.status();
  s->http_ = *std::move(server);
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
  http_.reset();
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

void KserveHttpServer::Handle(const HttpRequest& req, HttpResponse& res) {
  const Route route = RouteOf(req);
  // Probes: no token, no log line. The status is the answer (200 or 400); the
  // body says it too, as KServe's own server and REST client expect.
  if (route.kind == Route::kLive) return ReplyJson(res, {{"live", true}});
  if (route.kind == Route::kReady) {
    if (absl::Status s = KserveServerReadiness(state_); !s.ok()) {
      return ReplyError(res, 400, absl::StrCat("not ready: ", s.message()));
    }
    return ReplyJson(res, {{"ready", true}});
  }
  if (route.kind == Route::kNone) {
    return ReplyError(res, 404,
                      absl::StrCat("no endpoint ", req.method, " ", req.path,
                                   "; the KServe v2 endpoints are under /v2 (docs/serving.md)"));
  }
  core::RequestLog log(MethodName(route.kind));
  auto tenant = state_.TenantOfAuthorization(req.HeaderOr("authorization"));
  absl::Status s = tenant.status();
  if (tenant.ok()) {
    log.set_tenant(*tenant);
    s = Serve(route, *tenant, req, res, log);
  }
  s = log.Finish(std::move(s));
  if (!s.ok()) ReplyError(res, s);
}

absl::Status KserveHttpServer::Serve(const Route& route, const std::string& tenant, const HttpRequest& req,
                                     HttpResponse& res, core::RequestLog& log) {
  switch (route.kind) {
    case Route::kServerMetadata: {
      const inference::ServerMetadataResponse m = KserveServerMetadata();
      ReplyJson(res, {{"name", m.name()},
                      {"version", m.version()},
                      {"extensions", std::vector<std::string>(m.extensions().begin(), m.extensions().end())}});
      return absl::OkStatus();
    }
    case Route::kModelMetadata: {
      auto m = state_.models.Metadata(tenant, route.model, route.version);
      if (!m.ok()) return m.status();
      ReplyJson(res, MetadataJson(KserveModelMetadata(*m)));
      return absl::OkStatus();
    }
    case Route::kModelConfig: {
      // Triton's extension: the ModelConfig in protobuf's JSON mapping, with
      // the proto's field names, as Triton answers it.
      auto config = state_.models.Config(tenant, route.model, route.version);
      if (!config.ok()) return config.status();
      google::protobuf::util::JsonPrintOptions options;
      options.preserve_proto_field_names = true;
      if (auto s = google::protobuf::util::MessageToJsonString(*config, &res.body, options); !s.ok()) {
        return absl::InternalError(absl::StrCat("the model's config could not be written as JSON: ", s.message().as_string()));
      }
      res.content_type = kJson;
      return absl::OkStatus();
    }
    case Route::kModelReady: {
      auto found = state_.models.Find(tenant, route.model, route.version);
      if (core::IsAbsentModel(found.status())) {
        ReplyError(res, 400, absl::StrCat("not ready: ", found.status().message()));
        return absl::OkStatus();
      }
      if (!found.ok()) return found.status();
      ReplyJson(res, {{"name", found->name}, {"version", found->version}, {"ready", true}});
      return absl::OkStatus();
    }
    case Route::kInfer: return Infer(route, tenant, req, res, log);
    case Route::kIndex: {
      auto body = OptionalObject(req.body);
      if (!body.ok()) return body.status();
      const json ready = body->value("ready", json(false));
      if (!ready.is_boolean()) return absl::InvalidArgumentError("\"ready\" must be a boolean");
      ReplyJson(res, IndexJson(KserveIndex(state_.models.Index(tenant, ready.get<bool>()))));
      return absl::OkStatus();
    }
    case Route::kLoad:
    case Route::kUnload: {
      auto body = OptionalObject(req.body);
      if (!body.ok()) return body.status();
      auto params = ParametersFromJson(body->value("parameters", json::object()), "request");
      if (!params.ok()) return params.status();
      if (route.kind == Route::kUnload) return state_.models.Unload(tenant, route.model);
      if (auto s = state_.CheckAdmitting(); !s.ok()) return s;
      std::vector<std::string> names;
      for (const auto& [key, value] : *params) names.push_back(key);
      return state_.models.Load(tenant, route.model, names);
    }
    default: return absl::InternalError("unrouted KServe endpoint");
  }
}

absl::Status KserveHttpServer::Infer(const Route& route, const std::string& tenant, const HttpRequest& req,
                                     HttpResponse& res, core::RequestLog& log) {
  std::optional<uint64_t> header_length;
  if (const std::string* h = req.Header(kHeaderLength)) {
    uint64_t n = 0;
    if (!absl::SimpleAtoi(*h, &n)) {
      return absl::InvalidArgumentError(absl::StrCat(kHeaderLength, " ", graph::Quoted(*h), " is not a byte count"));
    }
    header_length = n;
  }
  auto asked = DecodeHttpInferRequest(req.body, header_length, route.model, route.version);
  if (!asked.ok()) return asked.status();

  auto cancel = std::make_shared<device::CancelToken>();
  if (!Track(cancel)) return absl::UnavailableError("the server is shutting down and takes no new work");
  auto finished = std::make_shared<std::promise<absl::StatusOr<InferResult>>>();
  std::future<absl::StatusOr<InferResult>> result = finished->get_future();
  StartInfer(state_, tenant, std::move(asked->request), cancel,
             [finished](absl::StatusOr<InferResult> r) { finished->set_value(std::move(r)); });
  if (asked->timeout && result.wait_for(*asked->timeout) == std::future_status::timeout) {
    cancel->Cancel(absl::DeadlineExceededError(absl::StrCat(
        "the inference passed its timeout parameter (", asked->timeout->count(), " us); its device work was stopped")));
  }
  absl::StatusOr<InferResult> done = result.get();
  Untrack(cancel);
  if (!done.ok()) return done.status();
  if (auto it = done->parameters.find("npu_device_time_ns"); it != done->parameters.end()) {
    log.set_device_us(static_cast<double>(it->second.int64_param()) / 1000.0);
  }
  HttpInferResponse body = EncodeHttpInferResponse(*done, *asked);
  if (body.binary) {
    res.SetHeader(kHeaderLength, std::to_string(body.header_length));
    res.content_type = "application/octet-stream";
  } else {
    res.content_type = kJson;
  }
  res.body = std::move(body.body);
  return absl::OkStatus();
}

}  // namespace npu::rpc
