#include "server/rpc/device_service.h"

#include <algorithm>
#include <chrono>

namespace npu::rpc {
namespace {

void Describe(const device::Device& d, v1::DeviceInfo* info) {
  const device::DevicePreset& p = d.preset();
  info->set_id(d.id());
  info->set_preset(p.name);
  info->set_ai_cores(p.cube_cores);
  info->set_vector_cores(p.vector_cores);
  info->set_clock_mhz(p.clock_hz / 1e6);
  auto* b = info->mutable_buffers();
  b->set_l1_bytes(p.l1_bytes);
  b->set_l0a_bytes(p.l0a_bytes);
  b->set_l0b_bytes(p.l0b_bytes);
  b->set_l0c_bytes(p.l0c_bytes);
  b->set_ub_bytes(p.ub_bytes);
  info->set_memory_capacity_bytes(p.hbm_bytes);
  info->set_memory_used_bytes(d.memory_used());
  info->set_peak_fp16_tflops(p.peak_fp16_flops() / 1e12);
  info->set_hbm_bandwidth_gbps(p.hbm_bytes_per_s / 1e9);
  info->set_fp16_saturation(p.fp16_saturation);
}

double Ratio(uint64_t busy, uint64_t span) { return span == 0 ? 0.0 : static_cast<double>(busy) / span; }

}  // namespace

void DeviceServiceImpl::GetStats(v1::ServerStats* resp) const {
  resp->set_runs_total(state_.counters.runs_total.load());
  resp->set_runs_failed(state_.counters.runs_failed.load());
  resp->set_uploads_total(state_.counters.uploads_total.load());
  resp->set_downloads_total(state_.counters.downloads_total.load());
  resp->set_runs_in_flight(static_cast<uint64_t>(std::max<int64_t>(0, state_.counters.runs_in_flight.load())));
  resp->set_runs_cancelled(state_.counters.runs_cancelled.load());
  resp->set_uptime_s(std::chrono::duration<double>(std::chrono::steady_clock::now() - state_.started).count());
  for (const auto& d : state_.devices.devices()) {
    const device::DeviceStatsSnapshot s = d->Stats();
    v1::DeviceStats* ds = resp->add_devices();
    ds->set_device(d->id());
    ds->set_runs(s.runs);
    ds->set_queue_depth(s.queue_depth);
    ds->set_timeline_cycles(s.timeline_cycles);
    ds->set_memory_used_bytes(s.memory_used);
    ds->set_held_s(std::chrono::duration<double>(s.held_for).count());
    ds->set_wedged(state_.Wedged(s));
    const uint64_t span = s.timeline_cycles * static_cast<uint64_t>(s.cores);
    auto* u = ds->mutable_utilization();
    u->set_cube(Ratio(s.busy.cube, span));
    u->set_vector(Ratio(s.busy.vector, span));
    u->set_scalar(Ratio(s.busy.scalar, span));
    u->set_mte1(Ratio(s.busy.mte1, span));
    u->set_mte2(Ratio(s.busy.mte2, span));
    u->set_mte3(Ratio(s.busy.mte3, span));
    u->set_fixpipe(Ratio(s.busy.fixpipe, span));
  }
}

void DeviceServiceImpl::AddMethods(UnaryMethods& methods) {
  methods.Add<v1::ListDevicesRequest, v1::ListDevicesResponse>(
      *this, &DeviceServiceImpl::RequestListDevices, {"ListDevices", "/npu.v1.DeviceService/ListDevices"},
      [this](auto& call) {
        for (const auto& d : state_.devices.devices()) Describe(*d, call.response().add_devices());
        call.Finish(absl::OkStatus());
      });
  methods.Add<v1::GetDeviceRequest, v1::DeviceInfo>(
      *this, &DeviceServiceImpl::RequestGetDevice, {"GetDevice", "/npu.v1.DeviceService/GetDevice"},
      [this](auto& call) {
        auto d = state_.devices.Find(call.request().device());
        if (d.ok()) Describe(**d, &call.response());
        call.Finish(d.status());
      });
  methods.Add<v1::GetStatsRequest, v1::ServerStats>(*this, &DeviceServiceImpl::RequestGetStats,
                                                    {"GetStats", "/npu.v1.DeviceService/GetStats"},
                                                    [this](auto& call) {
                                                      GetStats(&call.response());
                                                      call.Finish(absl::OkStatus());
                                                    });
}

}  // namespace npu::rpc
