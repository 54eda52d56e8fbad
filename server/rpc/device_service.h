#pragma once

#include "npu/v1/device.grpc.pb.h"
#include "server/core/server_state.h"

namespace npu::rpc {

class DeviceServiceImpl final : public v1::DeviceService::Service {
 public:
  explicit DeviceServiceImpl(core::ServerState& state) : state_(state) {}
  grpc::Status ListDevices(grpc::ServerContext* ctx, const v1::ListDevicesRequest* req,
                           v1::ListDevicesResponse* resp) override;
  grpc::Status GetDevice(grpc::ServerContext* ctx, const v1::GetDeviceRequest* req, v1::DeviceInfo* resp) override;
  grpc::Status GetStats(grpc::ServerContext* ctx, const v1::GetStatsRequest* req, v1::ServerStats* resp) override;

 private:
  core::ServerState& state_;
};

}  // namespace npu::rpc
