#include "server/rpc/npu_server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>

#include "absl/strings/str_cat.h"

namespace npu::rpc {

NpuServer::NpuServer(ServerConfig config, device::DevicePreset preset)
    : config_(std::move(config)), state_(config_.devices, preset, config_.device_options, config_.limits) {}

NpuServer::~NpuServer() { Shutdown(); }

absl::StatusOr<std::unique_ptr<NpuServer>> NpuServer::Start(const ServerConfig& config) {
  auto preset = device::ParsePresetSpec(config.preset);
  if (!preset.ok()) return preset.status();
  if (config.devices < 1 || config.devices > 64) {
    return absl::InvalidArgumentError(absl::StrCat("--devices must be 1..64, got ", config.devices));
  }
  std::unique_ptr<NpuServer> s(new NpuServer(config, *preset));

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(config.listen, grpc::InsecureServerCredentials(), &s->port_);
  const int max_message = static_cast<int>(std::min<uint64_t>(config.limits.max_message_bytes, INT32_MAX));
  builder.SetMaxReceiveMessageSize(max_message);
  builder.SetMaxSendMessageSize(max_message);
  builder.RegisterService(&s->device_service_);
  builder.RegisterService(&s->memory_service_);
  builder.RegisterService(&s->runtime_service_);
  s->server_ = builder.BuildAndStart();
  if (s->server_ == nullptr || s->port_ == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", config.listen));
  }
  s->server_->GetHealthCheckService()->SetServingStatus(true);
  return s;
}

void NpuServer::Shutdown() {
  if (server_ == nullptr) return;
  server_->GetHealthCheckService()->SetServingStatus(false);
  server_->Shutdown();
}

}  // namespace npu::rpc
