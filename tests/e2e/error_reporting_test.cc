// Errors a client can read: a status message that names a huge client-chosen
// name quotes its start and length and keeps the reason, so it fits the wire
// (and the `npu` CLI shows it, not a metadata-size error); the server's log
// has the same line; requests that do not decode are logged like any other.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "client/graph_json.h"
#include "client/npy.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"
#include "tests/e2e/server_process.h"

namespace npu::testing {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// x: FLOAT32[2,3]; MatMul(x, x) fails (inner dims 3 and 2) at a node with a 16 KiB name.
v1::Graph LongNamedBadMatMul() {
  v1::Graph g;
  v1::ValueInfo* x = g.add_inputs();
  x->set_name("x");
  x->set_dtype(v1::FLOAT32);
  x->add_shape(2);
  x->add_shape(3);
  AddNode(g, std::string(16384, 'n'), "MatMul", {"x", "x"}, {"y"});
  g.add_outputs("y");
  return g;
}

TEST(ErrorReporting, AHugeNameIsQuotedInPartAndTheReasonKept) {
  ServerProcess server;
  auto runtime = v1::RuntimeService::NewStub(TestChannel(server.target()));
  v1::RegisterGraphRequest req;
  *req.mutable_graph() = LongNamedBadMatMul();
  v1::RegisterGraphResponse resp;
  const grpc::Status st = runtime->RegisterGraph(Ctx().get(), req, &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_LE(st.error_message().size(), 4096u);
  EXPECT_EQ(st.error_message().rfind("node \"nnnn", 0), 0u) << st.error_message();
  EXPECT_NE(st.error_message().find("(16384 bytes) (MatMul): inner dimensions 3"), std::string::npos)
      << st.error_message();

  v1::RunRequest run;
  run.set_graph_id(std::string(65536, 'g'));
  v1::RunResponse run_resp;
  const grpc::Status missing = runtime->Run(Ctx().get(), run, &run_resp);
  EXPECT_EQ(missing.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_LE(missing.error_message().size(), 4096u);

  runtime.reset();  // an open channel would hold the server's shutdown for its grace period
  server.Stop();
  const std::string log = ReadFile(server.log_path());
  // Names are bounded where the message is made (a log line per request must not take 64 KiB either).
  EXPECT_NE(log.find("method=RegisterGraph status=INVALID_ARGUMENT"), std::string::npos) << log.substr(0, 2000);
  EXPECT_NE(log.find("(MatMul): inner dimensions 3"), std::string::npos);
  EXPECT_NE(log.find("method=Run status=NOT_FOUND"), std::string::npos);
}

TEST(ErrorReporting, TheCliShowsTheRealErrorForAHugeName) {
  ServerProcess server;
  const std::string dir = ::testing::TempDir() + "/error_reporting_cli";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto json = client::GraphToJson(LongNamedBadMatMul());
  ASSERT_TRUE(json.ok()) << json.status();
  std::ofstream(dir + "/graph.json") << *json;
  v1::Tensor x = Float32({2, 3}, {1, 2, 3, 4, 5, 6});
  ASSERT_TRUE(client::WriteNpy(dir + "/x.npy", x).ok());
  const std::string cmd = std::string(NPU_CLI_BIN) + " --target " + server.target() + " run " + dir +
                          "/graph.json --input x=" + dir + "/x.npy --output-dir " + dir + "/out > " + dir + "/out.txt 2>&1";
  EXPECT_NE(std::system(cmd.c_str()), 0);
  const std::string out = ReadFile(dir + "/out.txt");
  EXPECT_EQ(out.find("metadata"), std::string::npos) << out;
  EXPECT_NE(out.find("(16384 bytes) (MatMul): inner dimensions 3"), std::string::npos) << out.substr(0, 600);
}

TEST(ErrorReporting, RequestsThatDoNotDecodeAreLogged) {
  ServerProcess server;
  auto channel = TestChannel(server.target());
  EXPECT_EQ(RawStreaming(channel.get(), "/npu.v1.MemoryService/Download", {"\xff\xff\xff\xff\x0f garbage"}).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(RawUnary(channel.get(), "/npu.v1.RuntimeService/RegisterGraph", "\xff\xff\xff\xff\x0f garbage").error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  server.Stop();
  const std::string log = ReadFile(server.log_path());
  EXPECT_NE(log.find("method=Download status=INVALID_ARGUMENT"), std::string::npos) << log;
  EXPECT_NE(log.find("/npu.v1.MemoryService/Download is not a valid protobuf message"), std::string::npos) << log;
  EXPECT_NE(log.find("method=RegisterGraph status=INVALID_ARGUMENT"), std::string::npos) << log;
}

}  // namespace
}  // namespace npu::testing
