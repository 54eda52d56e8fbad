// Device memory from the command line: `npu upload FILE.npy` (prints the
// handle), `npu download HANDLE -o FILE.npy`, `npu free HANDLE...` and `npu
// handles`. A handle (from upload or `npu run --keep`) feeds a run as
// `--input NAME=handle:ID`.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "client/client.h"

namespace npu::client::cli {

absl::Status RunUploadCommand(Client& client, const std::string& npy_path, const std::string& device,
                              std::ostream& out);
absl::Status RunDownloadCommand(Client& client, const std::string& handle, const std::string& npy_path,
                                std::ostream& out);
absl::Status RunFreeCommand(Client& client, const std::vector<std::string>& handles, std::ostream& out);
absl::Status RunHandlesCommand(Client& client, std::ostream& out);

}  // namespace npu::client::cli
