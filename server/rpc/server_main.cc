// npu-server: serves simulated Da Vinci NPUs over gRPC.
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "server/device/cpu_affinity.h"
#include "server/rpc/flag_spelling.h"
#include "server/rpc/npu_server.h"
#include "server/core/request_log.h"
#include "version/version.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:50051",
          "address to listen on (HOST:PORT; port 0 picks a free one). Loopback by default: "
          "expose it deliberately, e.g. 0.0.0.0:50051 in a container");
ABSL_FLAG(int, devices, 1, "number of simulated NPUs (npu:0 .. npu:N-1)");
ABSL_FLAG(std::string, preset, "ascend910",
          "device preset: ascend310, ascend910, ascend910b; NAME,key=value,... overrides fields; "
          "@FILE reads key=value lines (docs/device-model.md)");
ABSL_FLAG(int, threads, 0, "host threads computing for each device (OpenMP); 0 = all cores");
ABSL_FLAG(std::string, cpu_affinity, "",
          "pin each device's compute threads to these CPUs, taskset-style (e.g. 0-1 or 0,2)");
ABSL_FLAG(int, grpc_max_pollers, 64,
          "gRPC handler threads kept waiting for calls; below the number of concurrent callers, threads are "
          "started and ended with every burst of calls");
ABSL_FLAG(int, max_queue, 64, "runs that may wait for a device before new ones get RESOURCE_EXHAUSTED");
ABSL_FLAG(uint64_t, max_message_bytes, uint64_t{1} << 30, "largest gRPC message accepted or sent");
ABSL_FLAG(uint64_t, max_tensor_bytes, uint64_t{4} << 30, "largest tensor accepted or computed");
ABSL_FLAG(int64_t, max_graph_nodes, 100000, "largest graph accepted");
ABSL_FLAG(uint64_t, max_model_bytes, (uint64_t{2} << 30) - 1,
          "largest model RegisterGraph accepts, streamed or not (protobuf parses at most 2 GiB)");
ABSL_FLAG(int, max_plans_per_graph, 8,
          "plans a registered graph with dynamic input dims keeps, one per bound input shapes; the least "
          "recently used goes past this");
ABSL_FLAG(int, max_trainers_per_tenant, 16, "trainers (TrainingService) a tenant may hold at once");
ABSL_FLAG(bool, log_requests, false, "also log every successful request: the same as --log_level=info");
ABSL_FLAG(std::string, log_level, "warn",
          "request log lines (stderr) at or above this level: info (every request), warn (failed requests), "
          "error (server faults only), off");
ABSL_FLAG(uint64_t, tenant_memory_quota_bytes, 0, "device memory each tenant may hold in handles; 0 = no quota");
ABSL_FLAG(double, handle_idle_timeout_s, 0,
          "device memory handles unused for this long expire and free their memory; 0 = never");
ABSL_FLAG(double, device_watchdog_s, 300,
          "a device held this long by one run is reported wedged: health NOT_SERVING, npu stats shows it; 0 = off");
ABSL_FLAG(double, drain_timeout_s, 30, "on SIGTERM, how long runs in flight may take to finish");
ABSL_FLAG(std::string, tls_cert, "", "PEM certificate chain: serve TLS (with --tls_key)");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert");
ABSL_FLAG(std::string, tls_client_ca, "", "PEM CA: require client certificates signed by it (mutual TLS)");
ABSL_FLAG(std::string, auth_tokens, "",
          "token file, lines `TOKEN TENANT`: require \"authorization: Bearer TOKEN\", each token a tenant");
ABSL_FLAG(std::string, http_listen, "",
          "HOST:PORT for the KServe v2 / Open Inference Protocol over HTTP/REST (/v2/...; HTTPS with the TLS "
          "flags); empty = off. The gRPC form is always on --listen");
ABSL_FLAG(std::string, model_repository, "",
          "folder of models served by name over KServe v2 to every tenant: DIR/NAME/[VERSION/]model.onnx or "
          "graph.json; empty = none (registered graphs only)");
ABSL_FLAG(bool, model_repository_follow_symlinks, false,
          "follow symbolic links in --model_repository that lead out of it (off: such a link is refused by name). "
          "Risk: whoever can write into the repository can then make the server read any file it may read");
ABSL_FLAG(std::string, metrics_listen, "",
          "HOST:PORT for Prometheus metrics over HTTP (GET /metrics); empty = off. Keep it on loopback or a "
          "cluster-internal address");

namespace {

constexpr char kUsage[] =
    "Serves simulated Huawei Da Vinci NPUs over gRPC.\n\n"
    "Usage: npu-server [--listen HOST:PORT] [--devices N] [--preset NAME] [flags]\n\n"
    "Flag names take dashes or underscores alike: --max-queue=128 is --max_queue=128.\n"
    "Values follow '=' or come as the next argument. --helpfull also lists abseil's own\n"
    "flags (--flagfile, --fromenv, ...).";

// --help lists the flags of this file (abseil's default looks for a file named
// after the binary, npu-server.cc, and finds none); --version is the project's.
void ConfigureUsage() {
  absl::SetProgramUsageMessage(kUsage);
  absl::FlagsUsageConfig config;
  auto ours = [](absl::string_view file) { return absl::EndsWith(file, "server/rpc/server_main.cc"); };
  config.contains_help_flags = ours;
  config.contains_helpshort_flags = ours;
  config.contains_helppackage_flags = ours;
  config.normalize_filename = [](absl::string_view file) {
    while (absl::ConsumePrefix(&file, "../")) {
    }
    return std::string(file);
  };
  config.version_string = [] { return npu::VersionLine("npu-server") + "\n"; };
  absl::SetFlagsUsageConfig(config);
}

// Blocks SIGTERM/SIGINT in every thread and waits for them on one.
void WaitForTerminationSignal() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  int sig = 0;
  sigwait(&set, &sig);
  std::fprintf(stderr, "npu-server: %s received: draining\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
}

}  // namespace

int main(int argc, char** argv) {
  // One malloc arena for every thread. glibc gives each thread that allocates
  // an arena of its own (up to 8 per core), and malloc_trim cannot shrink the
  // top of any arena but the main one, where a thread's freed large buffers
  // (a request body, a JSON tree, an inflated upload) stay resident: after
  // one 512 MiB request the server kept 35 MB that no trim returned. With the
  // main arena only, MemoryReturner's trim gives all of it back; on these two
  // cores `npu load` measured the same throughput either way.
  mallopt(M_ARENA_MAX, 1);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // before any thread starts, so all inherit it

  ConfigureUsage();
  npu::rpc::AcceptDashedFlagNames(argc, argv);
  const std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  if (positional.size() > 1) {
    std::fprintf(stderr, "npu-server: unexpected argument \"%s\"; flags start with --, see --help\n", positional[1]);
    return 2;
  }

  npu::rpc::ServerConfig config;
  config.listen = absl::GetFlag(FLAGS_listen);
  config.devices = absl::GetFlag(FLAGS_devices);
  config.preset = absl::GetFlag(FLAGS_preset);
  config.device_options.omp_threads = absl::GetFlag(FLAGS_threads);
  auto cpus = npu::device::ParseCpuList(absl::GetFlag(FLAGS_cpu_affinity));
  if (absl::Status s = cpus.ok() ? npu::device::CheckCpusAllowed(*cpus) : cpus.status(); !s.ok()) {
    std::fprintf(stderr, "npu-server: %s\n", std::string(s.message()).c_str());
    return 2;
  }
  config.device_options.cpu_affinity = *cpus;
  config.device_options.max_queue = static_cast<size_t>(std::max(1, absl::GetFlag(FLAGS_max_queue)));
  config.limits.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  config.limits.max_tensor_bytes = absl::GetFlag(FLAGS_max_tensor_bytes);
  config.limits.max_graph_nodes = absl::GetFlag(FLAGS_max_graph_nodes);
  config.limits.max_model_bytes = absl::GetFlag(FLAGS_max_model_bytes);
  config.limits.max_plans_per_graph = static_cast<size_t>(std::max(1, absl::GetFlag(FLAGS_max_plans_per_graph)));
  config.limits.max_trainers_per_tenant = static_cast<size_t>(std::max(0, absl::GetFlag(FLAGS_max_trainers_per_tenant)));
  config.limits.tenant_memory_quota_bytes = absl::GetFlag(FLAGS_tenant_memory_quota_bytes);
  config.limits.handle_idle_timeout = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(std::max(0.0, absl::GetFlag(FLAGS_handle_idle_timeout_s))));
  config.limits.device_watchdog = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(std::max(0.0, absl::GetFlag(FLAGS_device_watchdog_s))));
  config.tls = {absl::GetFlag(FLAGS_tls_cert), absl::GetFlag(FLAGS_tls_key), absl::GetFlag(FLAGS_tls_client_ca)};
  config.auth_tokens_path = absl::GetFlag(FLAGS_auth_tokens);
  config.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  config.http_listen = absl::GetFlag(FLAGS_http_listen);
  config.model_repository = absl::GetFlag(FLAGS_model_repository);
  config.model_repository_follow_symlinks = absl::GetFlag(FLAGS_model_repository_follow_symlinks);
  config.grpc_max_pollers = absl::GetFlag(FLAGS_grpc_max_pollers);
  config.limits.blocking_calls = static_cast<size_t>(std::max(1, config.grpc_max_pollers));
  if (auto s = npu::core::RequestLog::SetLevel(absl::GetFlag(FLAGS_log_level)); !s.ok()) {
    std::fprintf(stderr, "npu-server: %s\n", std::string(s.message()).c_str());
    return 2;
  }
  if (absl::GetFlag(FLAGS_log_requests)) npu::core::RequestLog::LogEveryRequest();

  auto server = npu::rpc::NpuServer::Start(config);
  if (!server.ok()) {
    std::fprintf(stderr, "npu-server: %s\n", std::string(server.status().message()).c_str());
    return 1;
  }
  const std::string host = config.listen.substr(0, config.listen.rfind(':'));
  std::printf("npu-server listening on %s:%d (%d x %s)\n", host.c_str(), (*server)->port(), config.devices,
              config.preset.c_str());
  std::fflush(stdout);
  if ((*server)->metrics_port() > 0) {
    const std::string& m = config.metrics_listen;
    std::fprintf(stderr, "npu-server: metrics on http://%s:%d/metrics\n", m.substr(0, m.rfind(':')).c_str(),
                 (*server)->metrics_port());
  }
  if (const npu::core::ModelRepository* repo = (*server)->state().models.repository(); repo != nullptr) {
    std::fprintf(stderr, "npu-server: model repository %s\n", repo->Summary().c_str());
  }
  if ((*server)->http_port() > 0) {
    const std::string& h = config.http_listen;
    std::fprintf(stderr, "npu-server: KServe v2 HTTP/REST on %s://%s:%d/v2\n",
                 config.tls.cert_path.empty() ? "http" : "https", h.substr(0, h.rfind(':')).c_str(),
                 (*server)->http_port());
  }

  WaitForTerminationSignal();
  const auto drain_timeout = std::chrono::milliseconds(
      static_cast<int64_t>(std::max(0.0, absl::GetFlag(FLAGS_drain_timeout_s)) * 1000));
  if (!(*server)->Drain(drain_timeout)) {
    std::fprintf(stderr, "npu-server: runs still in flight after --drain_timeout_s; cancelling them\n");
  }
  server->reset();  // stops the devices and the metrics endpoint
  std::fprintf(stderr, "npu-server: stopped\n");
  return 0;
}
