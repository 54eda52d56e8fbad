// npu.v1.DeviceService: the devices, one of them, and the server's counters.
// Unary calls on the server's call queue (unary_call.h), answered inline.
#pragma once

#include "npu/v1/device.grpc.pb.h"
#include "server/core/server_state.h"
#include "server/rpc/unary_call.h"

namespace npu::rpc {

using DeviceAsyncService = v1::DeviceService::WithRawMethod_ListDevices<
    v1::DeviceService::WithRawMethod_GetDevice<v1::DeviceService::WithRawMethod_GetStats<v1::DeviceService::Service>>>;

class DeviceServiceImpl final : public DeviceAsyncService {
 public:
  explicit DeviceServiceImpl(core::ServerState& state) : state_(state) {}
  void AddMethods(UnaryMethods& methods);

 private:
  void GetStats(v1::ServerStats* resp) const;

  core::ServerState& state_;
};

}  // namespace npu::rpc
