#include "client/cli/memory_commands.h"

#include "absl/strings/str_cat.h"
#include "client/cli/cli_status.h"
#include "client/cli/text_table.h"
#include "client/device_name.h"
#include "client/host_tensor.h"
#include "client/npy.h"

namespace npu::client::cli {
namespace {

std::string TypeText(const npu::v1::TensorType& t) {
  return absl::StrCat(DataTypeName(t.dtype()), " ", ShapeString(absl::MakeConstSpan(t.shape().data(), t.shape_size())));
}

}  // namespace

absl::Status RunUploadCommand(Client& client, const std::string& npy_path, const std::string& device,
                              std::ostream& out) {
  absl::StatusOr<std::string> dev = NormalizeDevice(device);
  if (!dev.ok()) return UsageError(dev.status());
  absl::StatusOr<npu::v1::Tensor> tensor = ReadNpy(npy_path);
  if (!tensor.ok()) return UsageError(tensor.status());
  absl::StatusOr<npu::v1::TensorHandle> handle = client.Upload(*tensor, *dev);
  if (!handle.ok()) return handle.status();
  out << handle->handle() << "\n";  // alone on its line: scripts read it as is
  return absl::OkStatus();
}

absl::Status RunDownloadCommand(Client& client, const std::string& handle, const std::string& npy_path,
                                std::ostream& out) {
  if (npy_path.empty()) return UsageError(absl::InvalidArgumentError("--output FILE.npy is required"));
  absl::StatusOr<npu::v1::Tensor> tensor = client.Download(handle);
  if (!tensor.ok()) return tensor.status();
  if (absl::Status s = WriteNpy(npy_path, *tensor); !s.ok()) return s;
  npu::v1::TensorType type;
  type.set_dtype(tensor->dtype());
  *type.mutable_shape() = tensor->shape();
  out << handle << ": " << TypeText(type) << " -> " << npy_path << "\n";
  return absl::OkStatus();
}

absl::Status RunFreeCommand(Client& client, const std::vector<std::string>& handles, std::ostream& out) {
  for (const std::string& h : handles) {
    if (absl::Status s = client.Free(h); !s.ok()) return s;
    out << "freed " << h << "\n";
  }
  return absl::OkStatus();
}

absl::Status RunHandlesCommand(Client& client, std::ostream& out) {
  absl::StatusOr<npu::v1::ListHandlesResponse> list = client.ListHandles();
  if (!list.ok()) return list.status();
  using Align = TextTable::Align;
  TextTable table({"HANDLE", "DEVICE", "TYPE", "BYTES"}, {Align::kLeft, Align::kLeft, Align::kLeft, Align::kRight});
  for (const npu::v1::TensorHandle& h : list->handles()) {
    table.AddRow({h.handle(), h.device(), TypeText(h.type()), FormatBytes(h.bytes())});
  }
  table.Print(out);
  return absl::OkStatus();
}

}  // namespace npu::client::cli
