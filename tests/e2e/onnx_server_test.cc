// Server-side ONNX against a real server: a model exported with dynamic_axes
// runs at two input shapes through `npu run`, registered once per content;
// RegisterModel streams a model that does not fit one message and finds it
// again by hash; Run uploads inputs that do not fit one message; and the
// CLI's upload/download/free/handles and --input NAME=handle:ID.
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/ascii.h"
#include "client/client.h"
#include "client/host_tensor.h"
#include "client/model_file.h"
#include "client/npy.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"
#include "tests/e2e/server_process.h"
#include "tests/generated_dir.h"

namespace npu {
namespace {

namespace fs = std::filesystem;

fs::path ModelDir() {
  static const fs::path dir = npu::testing::GeneratedDir(fs::path(NPU_SOURCE_DIR) / "examples/onnx/export_models.py",
                                                         fs::path(NPU_BINARY_DIR) / "onnx_models");
  return dir;
}

struct Cli {
  int rc;
  std::string out;
};

Cli RunCli(const std::string& args) {
  const fs::path log = fs::temp_directory_path() / ("npu-cli-" + std::to_string(getpid()) + ".log");
  const std::string cmd = std::string(NPU_CLI_BIN) + " " + args + " >" + log.string() + " 2>&1";
  const int rc = std::system(cmd.c_str());
  std::ifstream f(log);
  Cli r{WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, std::string(std::istreambuf_iterator<char>(f), {})};
  fs::remove(log);
  return r;
}

// max |got - ref| / max |ref| (Cube operands are fp16: see onnx_models_test.cc).
double RelativeError(const fs::path& got_path, const fs::path& ref_path) {
  auto got = client::ReadNpy(got_path.string());
  auto ref = client::ReadNpy(ref_path.string());
  if (!got.ok() || !ref.ok() || got->shape_size() != ref->shape_size()) return 1e9;
  for (int i = 0; i < got->shape_size(); ++i) {
    if (got->shape(i) != ref->shape(i)) return 1e9;
  }
  auto g = client::TensorToFloats(*got);
  auto r = client::TensorToFloats(*ref);
  double max_ref = 0, max_err = 0;
  for (size_t i = 0; i < r->size(); ++i) {
    max_ref = std::max(max_ref, std::fabs(double((*r)[i])));
    max_err = std::max(max_err, std::fabs(double((*g)[i]) - double((*r)[i])));
  }
  return max_err / max_ref;
}

class OnnxServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = new testing::ServerProcess(); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  std::unique_ptr<client::Client> Connect(int64_t max_send = int64_t{64} << 20) {
    client::ClientOptions options;
    options.max_send_message_bytes = max_send;
    return client::Client::Connect(server_->target(), options).value();
  }
  static testing::ServerProcess* server_;
};
testing::ServerProcess* OnnxServerTest::server_ = nullptr;

TEST_F(OnnxServerTest, ADynamicAxesModelRunsAtEveryShapeAndRegistersOnce) {
  const fs::path dir = ModelDir();
  ASSERT_FALSE(dir.empty()) << "export_models.py failed";
  const fs::path model = dir / "bert_dynamic.onnx";
  for (const char* tag : {"a", "b"}) {
    const fs::path out = dir / "bert_dynamic" / (std::string("out_") + tag);
    fs::remove_all(out);
    const Cli r = RunCli("--target " + server_->target() + " run " + model.string() + " --input input=" +
                         (dir / "bert_dynamic" / (std::string("input_") + tag + ".npy")).string() + " -o " +
                         out.string());
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_LE(RelativeError(out / "output.npy", dir / "bert_dynamic" / (std::string("ref_") + tag + ".npy")), 2e-3)
        << tag;
  }
  // One registration for both runs: the server knows the content by its hash.
  auto file = client::ReadModelFile(model.string());
  ASSERT_TRUE(file.ok());
  auto found = Connect()->FindGraph(file->sha256);
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_EQ(found->inputs_size(), 1);
  EXPECT_EQ(found->inputs(0).shape(0), -1);  // batch and seq stay dynamic in what Run expects
  EXPECT_EQ(found->inputs(0).shape(1), -1);
  EXPECT_EQ(found->inputs(0).shape(2), 256);
}

TEST_F(OnnxServerTest, AModelAboveTheMessageLimitIsStreamedAndFoundAgainByHash) {
  const fs::path dir = ModelDir();
  ASSERT_FALSE(dir.empty());
  auto file = client::ReadModelFile((dir / "bert_layer.onnx").string());
  ASSERT_TRUE(file.ok());
  ASSERT_GT(file->bytes.size(), size_t{1} << 20);
  auto small = Connect(int64_t{256} << 10);  // the model is ~3 MB: it must stream
  auto registered = small->RegisterModel(*file);
  ASSERT_TRUE(registered.ok()) << registered.status();
  EXPECT_EQ(registered->content_sha256(), file->sha256);
  ASSERT_EQ(registered->outputs_size(), 1);
  EXPECT_EQ(registered->outputs(0).dtype(), v1::FLOAT32);
  auto again = Connect()->RegisterModel(*file);  // unary this time; the same registration
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->graph_id(), registered->graph_id());
  // A claimed hash that does not match the bytes is refused.
  v1::RegisterGraphRequest lie;
  lie.set_onnx_model(file->bytes);
  lie.set_content_sha256(std::string(64, '0'));
  EXPECT_EQ(Connect()->RegisterGraph(lie).status().code(), absl::StatusCode::kInvalidArgument);
  // Two registrations (the stream's and RegisterModel's, found by hash): the graph goes with the second release.
  ASSERT_TRUE(small->UnregisterGraph(registered->graph_id()).ok());
  ASSERT_TRUE(small->UnregisterGraph(registered->graph_id()).ok());
  EXPECT_EQ(small->FindGraph(file->sha256).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(OnnxServerTest, InputsAboveTheMessageLimitAreUploadedFirstAndFreedAfter) {
  auto small = Connect(int64_t{1} << 20);
  v1::RegisterGraphRequest reg;
  v1::Graph& g = *reg.mutable_graph();
  g.set_name("add_big");
  for (const char* name : {"a", "b"}) {
    v1::ValueInfo* in = g.add_inputs();
    in->set_name(name);
    in->set_dtype(v1::FLOAT32);
    in->add_shape(1 << 18);  // 1 MiB each
  }
  testing::AddNode(g, "add", "Add", {"a", "b"}, {"y"});
  g.add_outputs("y");
  auto registered = small->RegisterGraph(reg);
  ASSERT_TRUE(registered.ok()) << registered.status();
  v1::RunRequest run;
  run.set_graph_id(registered->graph_id());
  std::vector<float> a(1 << 18), b(1 << 18);
  for (size_t i = 0; i < a.size(); ++i) a[i] = float(i % 1000), b[i] = 0.5f;
  *run.add_inputs()->mutable_tensor() = testing::Float32({1 << 18}, a);
  run.mutable_inputs(0)->set_name("a");
  *run.add_inputs()->mutable_tensor() = testing::Float32({1 << 18}, b);
  run.mutable_inputs(1)->set_name("b");
  auto response = small->Run(run);
  ASSERT_TRUE(response.ok()) << response.status();
  auto y = client::TensorToFloats(response->outputs(0).tensor());
  ASSERT_TRUE(y.ok());
  for (size_t i = 0; i < a.size(); i += 4099) EXPECT_EQ((*y)[i], a[i] + 0.5f) << i;
  EXPECT_EQ(small->ListHandles()->handles_size(), 0);  // the temporary uploads are gone
}

TEST_F(OnnxServerTest, DeviceHandlesFromTheCommandLine) {
  const fs::path dir = ModelDir();
  ASSERT_FALSE(dir.empty());
  const std::string target = "--target " + server_->target();
  const fs::path input = dir / "mlp" / "input.npy";
  const Cli up = RunCli(target + " upload " + input.string());
  ASSERT_EQ(up.rc, 0) << up.out;
  const std::string handle(absl::StripAsciiWhitespace(up.out));
  ASSERT_EQ(handle.size(), 32u) << up.out;
  const Cli listed = RunCli(target + " handles");
  EXPECT_NE(listed.out.find(handle), std::string::npos) << listed.out;
  const fs::path out = dir / "mlp" / "out_handle";
  fs::remove_all(out);
  const Cli run = RunCli(target + " run " + (dir / "mlp.onnx").string() + " --input input=handle:" + handle +
                         " --keep output -o " + out.string());
  ASSERT_EQ(run.rc, 0) << run.out;
  const size_t at = run.out.find("as handle ");
  ASSERT_NE(at, std::string::npos) << run.out;
  const std::string kept = run.out.substr(at + 10, 32);
  const Cli down = RunCli(target + " download " + kept + " -o " + (out / "output.npy").string());
  ASSERT_EQ(down.rc, 0) << down.out;
  EXPECT_LE(RelativeError(out / "output.npy", dir / "mlp" / "ref_output.npy"), 2e-3);
  const Cli freed = RunCli(target + " free " + handle + " " + kept);
  ASSERT_EQ(freed.rc, 0) << freed.out;
  EXPECT_EQ(RunCli(target + " handles").out.find(handle), std::string::npos);
  EXPECT_NE(RunCli(target + " download " + kept + " -o " + (out / "gone.npy").string()).rc, 0);
}

}  // namespace
}  // namespace npu
