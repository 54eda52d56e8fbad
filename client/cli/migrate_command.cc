#include "client/cli/migrate_command.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace npu::client::cli {
namespace fs = std::filesystem;

absl::StatusOr<MigrateTool> FindMigrateTool(const std::string& npu_binary) {
  MigrateTool tool;
  const char* python = std::getenv("NPU_PYTHON");
  tool.python = python != nullptr && *python != '\0' ? python : NPU_MIGRATE_PYTHON;

  std::vector<std::string> candidates;
  if (const char* env = std::getenv("NPU_MIGRATE"); env != nullptr && *env != '\0') candidates.push_back(env);
  std::error_code error;
  const fs::path self = fs::weakly_canonical(npu_binary, error);
  if (!error) {
    candidates.push_back((self.parent_path().parent_path() / "share/npuserve/migrate/npu_migrate.py").string());
  }
  candidates.push_back(NPU_MIGRATE_SOURCE_SCRIPT);
  for (const std::string& c : candidates) {
    if (fs::is_regular_file(c, error)) {
      tool.script = c;
      return tool;
    }
  }
  return absl::NotFoundError(absl::StrCat("the migration tool npu_migrate.py is not at ",
                                          absl::StrJoin(candidates, " nor "), "; set NPU_MIGRATE to its path"));
}

absl::Status ExecMigrateTool(const MigrateTool& tool, const std::vector<std::string>& args) {
  std::vector<std::string> argv_storage = {tool.python, tool.script};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  execv(tool.python.c_str(), argv.data());
  return absl::NotFoundError(absl::StrCat("cannot run ", tool.python, " (", std::strerror(errno),
                                          "); npu migrate needs Python 3 (Debian: python3), or set NPU_PYTHON"));
}

}  // namespace npu::client::cli
