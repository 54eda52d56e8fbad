// ONNX models exported by torch (examples/onnx/export_models.py) run unchanged
// through `npu run model.onnx` against a real server and match torch.
//
// Tolerance: max |npu - torch| <= 2e-3 * max |torch| per model. Weights and
// inputs are fp32, but the server rounds MatMul/Gemm/Conv operands to fp16 as
// an NPU does (relative error <= 2^-11 per operand, so ~1e-3 per product),
// accumulating in fp32; errors partly cancel over the sums, and the Vector ops
// in between run in fp32. Measured: mlp 4e-4, lenet5 2e-5, resnet_block 3e-4,
// bert_layer 7e-5 (relative to the output's largest magnitude).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "client/host_tensor.h"
#include "client/npy.h"
#include "gtest/gtest.h"
#include "tests/generated_dir.h"
#include "tests/e2e/server_process.h"

namespace npu {
namespace {

namespace fs = std::filesystem;

constexpr double kRelativeTolerance = 2e-3;

// Generated once per build dir; again when the script changes.
fs::path ModelDir() {
  static const fs::path dir = npu::testing::GeneratedDir(fs::path(NPU_SOURCE_DIR) / "examples/onnx/export_models.py",
                                                         fs::path(NPU_BINARY_DIR) / "onnx_models");
  return dir;
}

// Runs the CLI; returns its exit status and puts its output in `log`.
int RunCli(const std::string& args, const fs::path& log) {
  const std::string cmd = std::string(NPU_CLI_BIN) + " " + args + " >" + log.string() + " 2>&1";
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

std::string ReadText(const fs::path& p) {
  std::ifstream f(p);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

class OnnxModelsTest : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() { server_ = new testing::ServerProcess(); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  static testing::ServerProcess* server_;
};
testing::ServerProcess* OnnxModelsTest::server_ = nullptr;

TEST_P(OnnxModelsTest, MatchesTorch) {
  const fs::path dir = ModelDir();
  ASSERT_FALSE(dir.empty()) << "export_models.py failed (python3-torch and python3-onnx installed?)";
  const std::string name = GetParam();
  const fs::path out = dir / name / "npu_out";
  fs::remove_all(out);
  const int rc = RunCli("--target=" + server_->target() + " run " + (dir / (name + ".onnx")).string() +
                            " --input input=" + (dir / name / "input.npy").string() + " --output-dir " + out.string(),
                        dir / name / "npu.log");
  ASSERT_EQ(rc, 0) << ReadText(dir / name / "npu.log");
  auto got = client::ReadNpy((out / "output.npy").string());
  auto ref = client::ReadNpy((dir / name / "ref_output.npy").string());
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(ref.ok()) << ref.status();
  ASSERT_EQ(got->dtype(), ref->dtype());
  ASSERT_EQ(std::vector<int64_t>(got->shape().begin(), got->shape().end()),
            std::vector<int64_t>(ref->shape().begin(), ref->shape().end()));
  auto g = client::TensorToFloats(*got);
  auto r = client::TensorToFloats(*ref);
  ASSERT_TRUE(g.ok() && r.ok());
  double max_ref = 0, max_err = 0;
  for (size_t i = 0; i < r->size(); ++i) {
    max_ref = std::max(max_ref, std::fabs(double((*r)[i])));
    max_err = std::max(max_err, std::fabs(double((*g)[i]) - double((*r)[i])));
  }
  EXPECT_LE(max_err, kRelativeTolerance * max_ref) << name << ": max error " << max_err << ", max |torch| " << max_ref;
  std::printf("%s: max |npu - torch| = %.3g (%.3g of max |torch| = %.3g)\n", name.c_str(), max_err,
              max_err / max_ref, max_ref);
}

INSTANTIATE_TEST_SUITE_P(Exported, OnnxModelsTest,
                         ::testing::Values("mlp", "lenet5", "resnet_block", "bert_layer"));

TEST_F(OnnxModelsTest, UnsupportedElementsAreAllNamedBeforeAnythingRuns) {
  const fs::path dir = ModelDir();
  ASSERT_FALSE(dir.empty());
  fs::create_directories(dir / "unsupported");
  const fs::path out = dir / "unsupported" / "npu_out";
  const int rc = RunCli("--target=" + server_->target() + " run " + (dir / "unsupported.onnx").string() +
                            " --input input=" + (dir / "mlp" / "input.npy").string() + " --output-dir " + out.string(),
                        dir / "unsupported" / "npu.log");
  const std::string log = ReadText(dir / "unsupported" / "npu.log");
  EXPECT_NE(rc, 0);
  EXPECT_NE(log.find("\"LpNormalization\" is not supported"), std::string::npos) << log;
  EXPECT_NE(log.find("\"Shrink\" is not supported"), std::string::npos) << log;
  EXPECT_NE(log.find("attribute \"fancy\" is not supported"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(out / "output.npy"));
}

}  // namespace
}  // namespace npu
