// Assembles the gRPC server: services, health, reflection, message limits.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/server.h>

#include "absl/status/statusor.h"
#include "server/rpc/device_service.h"
#include "server/rpc/memory_service.h"
#include "server/rpc/runtime_service.h"
#include "server/rpc/server_state.h"

namespace npu::rpc {

struct ServerConfig {
  std::string listen = "127.0.0.1:50051";
  int devices = 1;
  std::string preset = "ascend910";
  device::DeviceOptions device_options;
  ServerLimits limits;
};

class NpuServer {
 public:
  static absl::StatusOr<std::unique_ptr<NpuServer>> Start(const ServerConfig& config);
  ~NpuServer();

  int port() const { return port_; }
  // Health goes NOT_SERVING, new calls are refused, in-flight calls finish.
  void Shutdown();
  void Wait() { server_->Wait(); }

 private:
  NpuServer(ServerConfig config, device::DevicePreset preset);

  ServerConfig config_;
  ServerState state_;
  DeviceServiceImpl device_service_{state_};
  MemoryServiceImpl memory_service_{state_};
  RuntimeServiceImpl runtime_service_{state_};
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

}  // namespace npu::rpc
