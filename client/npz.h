// NumPy .npz archives (np.savez, np.savez_compressed) -> npu.v1.Tensor by
// array name ("x" for the archive member "x.npy"). A .npz is a ZIP file (ZIP64
// fields as NumPy writes them) of .npy members, stored or deflated. Every
// malformed archive is an absl error naming the file and what is wrong.
#pragma once

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "npu/v1/tensor.pb.h"

namespace npu::client {

absl::StatusOr<std::map<std::string, npu::v1::Tensor>> ReadNpz(const std::string& path);

}  // namespace npu::client
