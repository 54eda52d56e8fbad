// `npu run` without a server: request preparation, result files, profile text.
#include "client/cli/run_command.h"

#include <filesystem>
#include <sstream>

#include "client/cli/cli_status.h"
#include "client/cli/profile_table.h"
#include "client/graph_builder.h"
#include "client/graph_json.h"
#include "client/host_tensor.h"
#include "client/npy.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_support.h"

namespace npu::client::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::PythonResult;
using testing::RunPython;
using testing::ScratchDir;
using testing::WriteFileBytes;

// A graph with inputs x (float16 [2, 2]) and w, and output "y".
class RunCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GraphBuilder g("two_inputs");
    Value x = g.Input("x", npu::v1::FLOAT16, {2, 2});
    Value w = g.Input("w", npu::v1::FLOAT16, {2, 2});
    g.Output(g.MatMul(x, w), "y");
    args_.graph_path = dir_.File("graph.json");
    WriteFileBytes(args_.graph_path, *GraphToJson(g.Build()));
    ASSERT_TRUE(WriteNpy(dir_.File("x.npy"), Half({2, 2})).ok());
    ASSERT_TRUE(WriteNpy(dir_.File("w.npy"), Half({2, 2})).ok());
    args_.output_dir = dir_.File("out");
  }

  static npu::v1::Tensor Half(std::vector<int64_t> shape) {
    return *MakeFloatTensor(npu::v1::FLOAT16, shape,
                            std::vector<float>(*ElementCount(shape), 1.0f));
  }

  // The registration the server would answer for the graph file.
  absl::StatusOr<npu::v1::RunRequest> Prepare() {
    absl::StatusOr<npu::v1::Graph> graph = LoadGraphJson(args_.graph_path);
    if (!graph.ok()) return graph.status();
    npu::v1::RegisterGraphResponse model;
    model.set_graph_id("g-1");
    *model.mutable_inputs() = graph->inputs();
    for (const std::string& out : graph->outputs()) model.add_outputs()->set_name(out);
    return PrepareRunRequest(args_, model, notices_);
  }

  ScratchDir dir_;
  RunCommandArgs args_;
  std::ostringstream notices_;
};

TEST_F(RunCommandTest, BuildsARequestForTheRegisteredGraph) {
  args_.inputs = {"x=" + dir_.File("x.npy"), "w=" + dir_.File("w.npy")};
  args_.profile = true;
  args_.keep = {"y"};
  absl::StatusOr<npu::v1::RunRequest> request = Prepare();
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->graph_id(), "g-1");
  ASSERT_EQ(request->inputs_size(), 2);
  EXPECT_EQ(request->inputs(0).name(), "x");
  EXPECT_EQ(request->inputs(0).tensor().data().size(), 8u);
  EXPECT_EQ(request->options().device(), "npu:0");
  EXPECT_TRUE(request->options().profile());
  EXPECT_FALSE(request->options().debug());
  EXPECT_THAT(request->options().keep_on_device(), ::testing::ElementsAre("y"));
  EXPECT_EQ(notices_.str(), "");
}

TEST_F(RunCommandTest, CudaDeviceIsMappedWithOneNotice) {
  args_.inputs = {"x=" + dir_.File("x.npy"), "w=" + dir_.File("w.npy")};
  args_.device = "cuda:1";
  absl::StatusOr<npu::v1::RunRequest> request = Prepare();
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->options().device(), "npu:1");
  EXPECT_EQ(notices_.str(), "note: cuda:1 mapped to npu:1 (npuserve simulates Ascend NPUs)\n");
}

TEST_F(RunCommandTest, LocalMistakesAreUsageErrorsNamingTheCulprit) {
  struct Case {
    std::vector<std::string> inputs;
    std::string device;
    std::vector<std::string> keep;
    std::string expected;
  };
  const std::string x = "x=" + dir_.File("x.npy"), w = "w=" + dir_.File("w.npy");
  const std::vector<Case> cases = {
      {{x}, "npu:0", {}, "graph input \"w\" has no value"},
      {{x, w, "z=" + dir_.File("x.npy")}, "npu:0", {}, "--input \"z\": " + args_.graph_path + " has no input"},
      {{x, x, w}, "npu:0", {}, "--input \"x\" is given twice"},
      {{"x", w}, "npu:0", {}, "expected NAME=FILE.npy"},
      {{"=a.npy", w}, "npu:0", {}, "expected NAME=FILE.npy"},
      {{"x=" + dir_.File("nope.npy"), w}, "npu:0", {}, "nope.npy: cannot open"},
      {{x, w}, "cpu", {}, "device \"cpu\" is not an NPU"},
      {{x, w}, "npu:0", {"h"}, "--keep \"h\""},
  };
  for (const Case& c : cases) {
    args_.inputs = c.inputs;
    args_.device = c.device;
    args_.keep = c.keep;
    absl::StatusOr<npu::v1::RunRequest> request = Prepare();
    ASSERT_FALSE(request.ok()) << c.expected;
    EXPECT_TRUE(IsUsageError(request.status())) << request.status();
    EXPECT_THAT(std::string(request.status().message()), HasSubstr(c.expected));
  }
}

TEST_F(RunCommandTest, DtypeMismatchSuggestsTheCast) {
  npu::v1::Tensor f32 = *MakeFloatTensor(npu::v1::FLOAT32, {2, 2}, std::vector<float>(4, 1.0f));
  ASSERT_TRUE(WriteNpy(dir_.File("x32.npy"), f32).ok());
  args_.inputs = {"x=" + dir_.File("x32.npy"), "w=" + dir_.File("w.npy")};
  absl::StatusOr<npu::v1::RunRequest> request = Prepare();
  ASSERT_FALSE(request.ok());
  EXPECT_THAT(std::string(request.status().message()),
              HasSubstr("graph expects float16, " + dir_.File("x32.npy") + " holds float32"));
}

TEST_F(RunCommandTest, BadGraphFileIsAUsageError) {
  args_.graph_path = dir_.File("absent.json");
  absl::StatusOr<ModelFile> request = ReadModelArg(args_);
  ASSERT_FALSE(request.ok());
  EXPECT_TRUE(IsUsageError(request.status()));
  std::ostringstream err;
  EXPECT_EQ(ReportError(request.status(), err), kExitUsageError);
  // A usage error says what is wrong, without a gRPC status word.
  EXPECT_EQ(err.str(), "npu: error: " + dir_.File("absent.json") + ": cannot open graph file\n");
}

TEST(ReportErrorTest, ServerErrorsKeepTheirCode) {
  std::ostringstream err;
  EXPECT_EQ(ReportError(absl::InvalidArgumentError("node \"fc1\" (MatMul): bad"), err), kExitServerError);
  EXPECT_EQ(err.str(), "npu: error: INVALID_ARGUMENT: node \"fc1\" (MatMul): bad\n");
}

TEST(SafeFileNameTest, OnnxStyleNames) {
  EXPECT_EQ(SafeFileName("y"), "y");
  EXPECT_EQ(SafeFileName("layer1/fc:0"), "layer1_fc_0");
  EXPECT_EQ(SafeFileName("onnx::MatMul_12"), "onnx__MatMul_12");
  EXPECT_EQ(SafeFileName(".."), "_.");
  EXPECT_EQ(SafeFileName(""), "_");
  EXPECT_EQ(SafeFileName("a b\\c"), "a_b_c");
}

npu::v1::RunOutput TensorOutput(const std::string& name, npu::v1::Tensor tensor) {
  npu::v1::RunOutput output;
  output.set_name(name);
  *output.mutable_tensor() = std::move(tensor);
  return output;
}

TEST(WriteRunResultsTest, WritesNpyFilesNumpyCanRead) {
  ScratchDir dir;
  RunCommandArgs args;
  args.output_dir = dir.File("out/nested");
  args.debug = true;
  npu::v1::RunResponse response;
  *response.add_outputs() = TensorOutput(
      "y", *MakeFloatTensor(npu::v1::FLOAT32, {2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6}));
  *response.add_outputs() =
      TensorOutput("block/out:0", *MakeFloatTensor(npu::v1::FLOAT16, {1}, std::vector<float>{2}));
  *response.add_outputs() =
      TensorOutput("block_out:0", *MakeFloatTensor(npu::v1::FLOAT16, {1}, std::vector<float>{3}));
  npu::v1::RunOutput* kept = response.add_outputs();
  kept->set_name("h");
  kept->mutable_handle()->set_handle("abc123");
  kept->mutable_handle()->set_device("npu:0");
  kept->mutable_handle()->mutable_type()->set_dtype(npu::v1::FLOAT16);
  kept->mutable_handle()->mutable_type()->add_shape(8);
  *response.add_intermediates() =
      TensorOutput("MatMul_0_out", *MakeFloatTensor(npu::v1::FLOAT32, {1}, std::vector<float>{9}));

  std::ostringstream out, notices;
  ASSERT_TRUE(WriteRunResults(response, args, out, notices).ok());
  EXPECT_THAT(out.str(), HasSubstr("y: float32 [2, 3] -> " + args.output_dir + "/y.npy"));
  EXPECT_THAT(out.str(), HasSubstr("h: float16 [8] kept on npu:0 as handle abc123"));
  EXPECT_THAT(out.str(), HasSubstr("debug: 1 intermediate values"));
  // Two names that sanitize alike still get two files.
  EXPECT_THAT(notices.str(), HasSubstr("\"block/out:0\" written as block_out_0.npy"));
  EXPECT_THAT(notices.str(), HasSubstr("\"block_out:0\" written as block_out_0_2.npy"));

  PythonResult result = RunPython(
      dir, "d = '" + args.output_dir +
               "'\nprint(np.load(d + '/y.npy').tolist(), np.load(d + '/block_out_0.npy').tolist(),"
               " np.load(d + '/block_out_0_2.npy').tolist(),"
               " np.load(d + '/intermediates/MatMul_0_out.npy').tolist())");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output, "[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]] [2.0] [3.0] [9.0]\n");
}

TEST(WriteRunResultsTest, ProfileTable) {
  npu::v1::Profile profile;
  profile.set_device("npu:0");
  profile.set_preset("ascend910");
  profile.set_clock_mhz(1000);
  profile.set_total_cycles(3000);
  profile.set_device_time_us(3.0);
  profile.set_host_time_us(120.5);
  profile.set_model_version("davinci-cost-1");
  npu::v1::NodeProfile* node = profile.add_nodes();
  node->set_name("MatMul_0");
  node->set_op_type("MatMul");
  node->set_task_type("AI_CORE");
  node->set_block_dim(4);
  node->set_start_cycle(500);
  node->set_end_cycle(2500);
  node->mutable_busy()->set_cube(1800);
  node->mutable_busy()->set_mte2(700);
  for (int c = 0; c < 4; ++c) {
    npu::v1::TileSlice* t = node->add_tiles();
    t->set_core(c);
    t->set_start_cycle(500);
    t->set_end_cycle(2500);
  }

  std::ostringstream out;
  PrintProfile(profile, out);
  const std::string text = out.str();
  EXPECT_THAT(text, HasSubstr("MatMul_0"));
  EXPECT_THAT(text, HasSubstr("AI_CORE"));
  EXPECT_THAT(text, HasSubstr("aic_mac_ratio"));  // msprof op_summary columns
  EXPECT_THAT(text, HasSubstr("2.000"));  // 2000 cycles at 1000 MHz
  EXPECT_THAT(text, HasSubstr("0.225"));  // cube 1800 / aic_total_cycles (4 blocks x 2000)
  EXPECT_THAT(text, HasSubstr("device_time_us 3.000"));
  EXPECT_THAT(text, HasSubstr("host_time_us 120.500"));
  EXPECT_THAT(text, HasSubstr("model_version davinci-cost-1"));
  EXPECT_THAT(text, Not(HasSubstr("nan")));
}

}  // namespace
}  // namespace npu::client::cli
