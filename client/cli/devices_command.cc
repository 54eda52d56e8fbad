#include "client/cli/devices_command.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/cli/text_table.h"

namespace npu::client::cli {
namespace {

std::string KiB(uint64_t bytes) { return absl::StrCat(bytes / 1024); }

}  // namespace

void PrintDevices(const npu::v1::ListDevicesResponse& devices, std::ostream& out) {
  using Align = TextTable::Align;
  TextTable table({"DEVICE", "PRESET", "AI CORES", "VECTOR CORES", "CLOCK MHZ", "L1 KIB", "L0A KIB",
                   "L0B KIB", "L0C KIB", "UB KIB", "MEMORY USED / CAPACITY"},
                  {Align::kLeft, Align::kLeft, Align::kRight, Align::kRight, Align::kRight,
                   Align::kRight, Align::kRight, Align::kRight, Align::kRight, Align::kRight,
                   Align::kRight});
  for (const npu::v1::DeviceInfo& device : devices.devices()) {
    const npu::v1::BufferSizes& buffers = device.buffers();
    table.AddRow({device.id(), device.preset(), absl::StrCat(device.ai_cores()),
                  absl::StrCat(device.vector_cores()), absl::StrFormat("%.0f", device.clock_mhz()),
                  KiB(buffers.l1_bytes()), KiB(buffers.l0a_bytes()), KiB(buffers.l0b_bytes()),
                  KiB(buffers.l0c_bytes()), KiB(buffers.ub_bytes()),
                  absl::StrCat(FormatBytes(device.memory_used_bytes()), " / ",
                               FormatBytes(device.memory_capacity_bytes()))});
  }
  table.Print(out);
}

absl::Status RunDevicesCommand(Client& client, std::ostream& out) {
  absl::StatusOr<npu::v1::ListDevicesResponse> devices = client.ListDevices();
  if (!devices.ok()) return devices.status();
  PrintDevices(*devices, out);
  return absl::OkStatus();
}

}  // namespace npu::client::cli
