// npu-server's request log: failures are logged by default, successes only
// with --log-requests (a load test would otherwise write a line per request).
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"
#include "tests/e2e/server_process.h"

namespace npu::testing {
namespace {

// One good and one bad Run, then the server's stderr once it has stopped.
std::string LogOfOneGoodAndOneBadRun(std::vector<std::string> flags) {
  ServerProcess server(std::move(flags));
  auto runtime = v1::RuntimeService::NewStub(TestChannel(server.target()));
  v1::RunResponse resp;
  EXPECT_TRUE(runtime->Run(Ctx().get(), AddRun(), &resp).ok());
  v1::RunRequest bad = AddRun();
  bad.mutable_inputs()->RemoveLast();
  EXPECT_FALSE(runtime->Run(Ctx().get(), bad, &resp).ok());
  server.Stop();
  std::ifstream in(server.log_path());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(RequestLog, FailuresOnlyByDefault) {
  const std::string log = LogOfOneGoodAndOneBadRun({});
  EXPECT_EQ(log.find("status=OK"), std::string::npos) << log;
  EXPECT_NE(log.find("level=warn"), std::string::npos) << log;
  EXPECT_NE(log.find("method=Run status=INVALID_ARGUMENT"), std::string::npos) << log;
}

TEST(RequestLog, EveryRequestWithLogRequests) {
  for (const char* flag : {"--log-requests", "--log_level=info"}) {
    const std::string log = LogOfOneGoodAndOneBadRun({flag});
    EXPECT_NE(log.find("level=info"), std::string::npos) << flag << "\n" << log;
    EXPECT_NE(log.find("method=Run status=OK"), std::string::npos) << flag << "\n" << log;
    EXPECT_NE(log.find("method=Run status=INVALID_ARGUMENT"), std::string::npos) << flag << "\n" << log;
  }
}

TEST(RequestLog, OffWritesNoRequestLines) {
  const std::string log = LogOfOneGoodAndOneBadRun({"--log-level=off"});
  EXPECT_EQ(log.find("method=Run"), std::string::npos) << log;
}

}  // namespace
}  // namespace npu::testing
