#include "server/rpc/npu_server.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "server/rpc/parse_error_interceptor.h"

namespace npu::rpc {
namespace {

absl::StatusOr<std::string> ReadPem(const std::string& path, const char* flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(flag, ": cannot read \"", path, "\""));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeCredentials(const TlsConfig& tls) {
  if (tls.cert_path.empty() && tls.key_path.empty()) {
    if (!tls.client_ca_path.empty()) return absl::InvalidArgumentError("--tls_client_ca needs --tls_cert and --tls_key");
    return grpc::InsecureServerCredentials();
  }
  if (tls.cert_path.empty() || tls.key_path.empty()) {
    return absl::InvalidArgumentError("TLS needs both --tls_cert and --tls_key");
  }
  auto cert = ReadPem(tls.cert_path, "--tls_cert");
  if (!cert.ok()) return cert.status();
  auto key = ReadPem(tls.key_path, "--tls_key");
  if (!key.ok()) return key.status();
  grpc::SslServerCredentialsOptions options(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  options.pem_key_cert_pairs.push_back({*key, *cert});
  if (!tls.client_ca_path.empty()) {
    auto ca = ReadPem(tls.client_ca_path, "--tls_client_ca");
    if (!ca.ok()) return ca.status();
    options.pem_root_certs = *ca;
    options.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(options);
}

}  // namespace

NpuServer::NpuServer(ServerConfig config, device::DevicePreset preset)
    : config_(std::move(config)), state_(config_.devices, preset, config_.device_options, config_.limits) {}

NpuServer::~NpuServer() { Shutdown(); }

absl::StatusOr<std::unique_ptr<NpuServer>> NpuServer::Start(const ServerConfig& config) {
  auto preset = device::ParsePresetSpec(config.preset);
  if (!preset.ok()) return preset.status();
  if (config.grpc_max_pollers < 1) {
    return absl::InvalidArgumentError(absl::StrCat("--grpc_max_pollers must be >= 1, got ", config.grpc_max_pollers));
  }
  if (config.devices < 1 || config.devices > 64) {
    return absl::InvalidArgumentError(absl::StrCat("--devices must be 1..64, got ", config.devices));
  }
  auto credentials = MakeCredentials(config.tls);
  if (!credentials.ok()) return credentials.status();
  std::unique_ptr<NpuServer> s(new NpuServer(config, *preset));
  if (!config.auth_tokens_path.empty()) {
    auto tokens = core::AuthTokens::Load(config.auth_tokens_path);
    if (!tokens.ok()) return tokens.status();
    s->state_.auth = std::make_unique<const core::AuthTokens>(*std::move(tokens));
  }

  if (!config.model_repository.empty()) {
    auto repository = core::ModelRepository::Open(
        config.model_repository, *preset, s->state_.plan_limits(),
        {config.model_repository_follow_symlinks, config.limits.max_model_bytes});
    if (!repository.ok()) return repository.status();
    s->state_.models.SetRepository(*std::move(repository));
  }

  InstallProtobufLogCapture();
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(config.listen, *credentials, &s->port_);
  const int max_message = static_cast<int>(std::min<uint64_t>(config.limits.max_message_bytes, INT32_MAX));
  builder.SetMaxReceiveMessageSize(max_message);
  builder.SetMaxSendMessageSize(max_message);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, config.grpc_max_pollers);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(std::make_unique<ParseErrorInterceptorFactory>());
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  builder.RegisterService(&s->device_service_);
  builder.RegisterService(&s->memory_service_);
  builder.RegisterService(&s->runtime_service_);
  builder.RegisterService(&s->training_service_);
  builder.RegisterService(&s->kserve_service_);
  auto run_cq = builder.AddCompletionQueue();
  s->server_ = builder.BuildAndStart();
  if (s->server_ == nullptr) return absl::UnavailableError(absl::StrCat("cannot listen on ", config.listen));
  // The queue outlives the server: made now, before any early return.
  s->async_calls_ = std::make_unique<AsyncCallQueue>(std::move(run_cq));
  if (s->port_ == 0) return absl::UnavailableError(absl::StrCat("cannot listen on ", config.listen));
  s->device_service_.AddMethods(s->unary_methods_);
  s->memory_service_.AddMethods(s->unary_methods_);
  s->runtime_service_.AddMethods(s->unary_methods_);
  s->training_service_.AddMethods(s->unary_methods_);
  s->kserve_service_.AddMethods(s->unary_methods_);
  s->async_calls_->Start(std::max(1, config.run_threads), s->unary_methods_.Awaiters(*s->async_calls_, s->state_));
  s->server_->GetHealthCheckService()->SetServingStatus(true);
  if (config.limits.device_watchdog.count() > 0) s->watchdog_ = std::thread([p = s.get()] { p->WatchDevices(); });
  // Freed memory goes back to the system within a second once 16 MiB of it piles up,
  // and a device's run arena above 4 MiB once the device has been idle for 3 s.
  s->memory_returner_ = std::make_unique<core::MemoryReturner>(std::chrono::seconds(1), uint64_t{16} << 20, [p = s.get()] {
    for (const auto& d : p->state_.devices.devices()) d->ReleaseIdleArena(std::chrono::seconds(3), uint64_t{4} << 20);
  });
  s->state_.memory_returner = s->memory_returner_.get();
  if (!config.metrics_listen.empty()) {
    auto metrics = MetricsHttpServer::Start(config.metrics_listen, s->state_);
    if (!metrics.ok()) return metrics.status();
    s->metrics_ = *std::move(metrics);
  }
  if (!config.http_listen.empty()) {
    const KserveHttpOptions http{config.http_listen,     config.tls.cert_path, config.tls.key_path,
                                 config.tls.client_ca_path, config.limits.max_message_bytes,
                                 config.grpc_max_pollers};
    auto kserve_http = KserveHttpServer::Start(http, s->state_);
    if (!kserve_http.ok()) return kserve_http.status();
    s->kserve_http_ = *std::move(kserve_http);
  }
  return s;
}

bool NpuServer::Drain(std::chrono::milliseconds timeout) {
  if (server_ == nullptr) return true;
  state_.draining.store(true);
  server_->GetHealthCheckService()->SetServingStatus(false);
  const auto give_up = std::chrono::steady_clock::now() + timeout;
  bool drained = true;
  while (state_.counters.runs_in_flight.load() > 0) {
    if (std::chrono::steady_clock::now() >= give_up) {
      drained = false;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  // Uploads and downloads still streaming get a short grace, then are cancelled.
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  async_calls_->Stop();
  return drained;
}

void NpuServer::WatchDevices() {
  // Checked often enough that a wedge shows within a fraction of the bound.
  const auto period = std::clamp<std::chrono::nanoseconds>(config_.limits.device_watchdog / 10,
                                                           std::chrono::milliseconds(10), std::chrono::seconds(1));
  bool was_wedged = false;
  MutexLock lock(&watch_mu_);
  while (!watch_stop_) {
    std::string wedged;
    for (const auto& d : state_.devices.devices()) {
      const device::DeviceStatsSnapshot s = d->Stats();
      if (state_.Wedged(s)) {
        absl::StrAppend(&wedged, wedged.empty() ? "" : ", ", d->id(), " (held ",
                        absl::FormatDuration(absl::FromChrono(s.held_for)), ")");
      }
    }
    const bool is_wedged = !wedged.empty();
    if (is_wedged != was_wedged && !state_.draining.load()) {
      server_->GetHealthCheckService()->SetServingStatus(!is_wedged);
      if (is_wedged) {
        std::fprintf(stderr, "level=error msg=\"device watchdog: %s past --device_watchdog_s; health NOT_SERVING\"\n",
                     wedged.c_str());
      } else {
        std::fprintf(stderr, "level=warn msg=\"device watchdog: every device released; health SERVING\"\n");
      }
      was_wedged = is_wedged;
    }
    watch_cv_.WaitFor(&watch_mu_, period);
  }
}

void NpuServer::Shutdown() {
  {
    MutexLock lock(&watch_mu_);
    watch_stop_ = true;
  }
  watch_cv_.SignalAll();
  if (watchdog_.joinable()) watchdog_.join();
  if (server_ == nullptr) return;
  state_.draining.store(true);
  server_->GetHealthCheckService()->SetServingStatus(false);
  kserve_http_.reset();  // stops its runs in flight and joins its threads
  server_->Shutdown(std::chrono::system_clock::now());
  if (async_calls_ != nullptr) async_calls_->Stop();
  metrics_.reset();
}

}  // namespace npu::rpc
