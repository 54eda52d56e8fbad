// `npu migrate SCRIPT.py [--out DIR] [--ops OPS.md]`: the migration report is
// a Python program (client/migrate/npu_migrate.py; Python's ast is the parser),
// which `npu` runs with Debian's interpreter, passing the arguments through.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace npu::client::cli {

struct MigrateTool {
  std::string python;  // interpreter
  std::string script;  // npu_migrate.py
};

// Where the tool is: $NPU_MIGRATE (a path to npu_migrate.py), then next to the
// installed binary (<prefix>/bin/npu -> <prefix>/share/npuserve/migrate/), then
// the source tree this binary was built from. The interpreter: $NPU_PYTHON,
// else the build's (/usr/bin/python3). NOT_FOUND naming the places looked at.
absl::StatusOr<MigrateTool> FindMigrateTool(const std::string& npu_binary);

// Replaces this process with `python script args...`; returns only on failure.
absl::Status ExecMigrateTool(const MigrateTool& tool, const std::vector<std::string>& args);

}  // namespace npu::client::cli
