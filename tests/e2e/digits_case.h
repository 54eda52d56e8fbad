// scikit-learn's digits, the MLP and CNN exported from torch, and torch's
// curves of the CNN (tests/train/make_digits_case.py), generated once per
// build directory. One definition for every test that reads them: the same
// script and modules, so the same stamp (tests/generated_dir.h) — two stamps
// for one folder would regenerate it under a test reading it.
#pragma once

#include <filesystem>

#include "tests/generated_dir.h"

namespace npu::testing {

inline std::filesystem::path DigitsCase() {
  namespace fs = std::filesystem;
  static const fs::path dir = GeneratedDir(fs::path(NPU_SOURCE_DIR) / "tests/train/make_digits_case.py",
                                           fs::path(NPU_BINARY_DIR) / "digits_case",
                                           {fs::path(NPU_SOURCE_DIR) / "tests/train/graph_reference.py",
                                            fs::path(NPU_SOURCE_DIR) / "tests/graph/op_cases.py"});
  return dir;
}

}  // namespace npu::testing
