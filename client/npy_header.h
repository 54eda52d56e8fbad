// The header dict of a NumPy .npy file:
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// Parsed by a small parser for exactly this Python literal subset.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace npu::client {

struct NpyHeader {
  std::string descr;  // "<f4"
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

// Errors say what is wrong, without the file name (the caller adds it).
absl::StatusOr<NpyHeader> ParseNpyHeaderDict(absl::string_view text);

// The dict as NumPy writes it, without padding or newline.
std::string FormatNpyHeaderDict(const NpyHeader& header);

}  // namespace npu::client
