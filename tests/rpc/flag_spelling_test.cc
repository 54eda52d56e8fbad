#include "server/rpc/flag_spelling.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace npu::rpc {
namespace {

std::vector<std::string> Rewritten(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  AcceptDashedFlagNames(static_cast<int>(argv.size()), argv.data());
  std::vector<std::string> out;
  for (char* a : argv) out.emplace_back(a);
  return out;
}

TEST(AcceptDashedFlagNames, RewritesOnlyTheNamesOfFlags) {
  EXPECT_EQ(Rewritten({"npu-server", "--max-queue=8", "-cpu-affinity", "0-1", "--tls-cert=/a-b/c-d.pem"}),
            (std::vector<std::string>{"npu-server", "--max_queue=8", "-cpu_affinity", "0-1",
                                      "--tls_cert=/a-b/c-d.pem"}));
}

TEST(AcceptDashedFlagNames, LeavesUnderscoresValuesAndTheEndOfFlagsAlone) {
  const std::vector<std::string> args = {"my-prog", "--max_queue=8", "--", "-1", "x-y", "--log_level", "warn"};
  EXPECT_EQ(Rewritten(args), args);
}

}  // namespace
}  // namespace npu::rpc
