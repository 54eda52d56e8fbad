// `npu run` raises msprof's overflow alarm: a warning per node whose fp16
// results saturated (ascend910) or became inf (ascend910b), counted by the
// server, against a float64 count of the values past fp16's range.
#include <cmath>
#include <fstream>
#include <sstream>
#include <tuple>

#include "absl/strings/str_cat.h"

#include <gtest/gtest.h>

#include "client/cli/run_command.h"
#include "client/client.h"
#include "client/graph_json.h"
#include "client/graph_builder.h"
#include "client/host_tensor.h"
#include "client/npy.h"
#include "tests/client/test_support.h"
#include "tests/e2e/server_process.h"

namespace npu {
namespace {

// y = x * x over fp16 [2, 3], then z = y * 0.5: the first node overflows where
// |x| > sqrt(65504). With `output_square`, y is an output too, so the two
// nodes run apart; otherwise the server fuses them into one node.
std::string RunSquare(const std::string& preset, const std::vector<float>& x, std::string* out_text = nullptr,
                      bool output_square = true, int overflow_nums = 0) {
  testing::ServerProcess server({"--preset=" + preset});
  auto c = client::Client::Connect(server.target());
  EXPECT_TRUE(c.ok());
  client::testing::ScratchDir dir;
  client::GraphBuilder g("square");
  client::Value in = g.Input("x", v1::FLOAT16, {2, 3});
  client::Value sq = g.Op("Mul", {in, in});
  g.Output(g.Mul(sq, g.Constant("h", *client::MakeFloatTensor(v1::FLOAT16, {}, {0.5f}))), "z");
  if (output_square) g.Output(sq, "y");
  auto json = client::GraphToJson(g.Build());
  EXPECT_TRUE(json.ok());
  { std::ofstream(dir.File("square.json")) << *json; }
  EXPECT_TRUE(client::WriteNpy(dir.File("x.npy"), *client::MakeFloatTensor(v1::FLOAT16, {2, 3}, x)).ok());
  client::cli::RunCommandArgs args;
  args.graph_path = dir.File("square.json");
  args.inputs = {"x=" + dir.File("x.npy")};
  args.output_dir = dir.File("out");
  if (overflow_nums != 0) {  // --overflow-check --overflow-nums N
    args.overflow_check = true;
    args.overflow_nums = overflow_nums;
  }
  std::ostringstream out, notices;
  EXPECT_TRUE(client::cli::RunRunCommand(**c, args, out, notices).ok()) << notices.str();
  if (out_text != nullptr) *out_text = out.str();
  return notices.str();
}

int PastFp16(const std::vector<float>& x) {
  int n = 0;
  for (float v : x) n += std::abs(static_cast<double>(v) * v) > 65504.0 ? 1 : 0;
  return n;
}

TEST(OverflowWarning, NpuRunNamesEachNodeThatSaturated) {
  const std::vector<float> x = {300, 1, 2, 400, -500, 3};
  ASSERT_EQ(PastFp16(x), 3);
  for (const char* preset : {"ascend910", "ascend910b"}) {  // saturating, and IEEE inf
    std::string out;
    const std::string notices = RunSquare(preset, x, &out);
    EXPECT_NE(notices.find("warning: overflow in node \"Mul_0\" (Mul): 3 of 6 results"), std::string::npos)
        << preset << "\n" << notices;
    if (std::string(preset) == "ascend910") {
      // Saturated to 65504, the next node computes 32752: in range. (On the
      // 910B the inf it gets stays inf, and the server counts that too.)
      EXPECT_EQ(notices.find("\"Mul_1\""), std::string::npos) << notices;
      EXPECT_NE(notices.find("1 node overflowed on ascend910 (msprof's overflow alarm)"), std::string::npos)
          << notices;
    }
    EXPECT_EQ(out.find("op summary"), std::string::npos) << "no --profile: no table, only the warning";
  }
}

TEST(OverflowWarning, FusedNodeCountsTheStoresOfItsNodes) {
  const std::vector<float> x = {300, 1, 2, 400, -500, 3};
  const int past = PastFp16(x);
  // 910: Mul_0 saturates, Mul_1 halves 65504 into range. 910B: Mul_0's infs
  // stay inf through Mul_1, which stores them again.
  for (auto [preset, count] : {std::pair{"ascend910", past}, std::pair{"ascend910b", 2 * past}}) {
    const std::string notices = RunSquare(preset, x, nullptr, /*output_square=*/false);
    EXPECT_NE(notices.find("warning: overflow in node \"Mul_0+Mul_1\" (Mul+Mul): " + std::to_string(count) +
                           " results saturated to +-65504 or became inf/NaN (counted over the results of its 2 "
                           "fused nodes)\n"),
              std::string::npos)
        << preset << "\n"
        << notices;
  }
}

// `npu run --overflow-check` runs unfused (the fused graph's nodes are
// named apart) and names the first node that overflowed, in the run's mode:
// on the 910 only Mul_0 saturates; on the 910B its infs overflow Mul_1 too.
TEST(OverflowWarning, OverflowCheckNamesTheFirstNodeInTopologicalOrder) {
  const std::vector<float> x = {300, 1, 2, 400, -500, 3};
  for (auto [preset, mode, nodes] : {std::tuple{"ascend910", "saturation", 1}, std::tuple{"ascend910b", "inf_nan", 2}}) {
    for (int nums : {1, -1}) {
      std::string out;
      const std::string notices = RunSquare(preset, x, &out, /*output_square=*/false, nums);
      SCOPED_TRACE(std::string(preset) + " --overflow-nums " + std::to_string(nums) + "\n" + out);
      EXPECT_NE(out.find(absl::StrCat("overflow check (", preset, ", ", mode, " mode): ", nodes,
                                      " of 2 nodes overflowed; the first is \"Mul_0\" (Mul)\n")),
                std::string::npos);
      EXPECT_NE(out.find("Mul_0  Mul  3 "), std::string::npos);
      const bool second_listed = out.find("Mul_1  Mul") != std::string::npos;
      EXPECT_EQ(second_listed, nodes == 2 && nums == -1);
      EXPECT_EQ(out.find("1 more not listed") != std::string::npos, nodes == 2 && nums == 1);
      EXPECT_EQ(out.find("Mul_0+Mul_1"), std::string::npos) << "the check runs unfused";
      EXPECT_EQ(notices.find("warning: overflow"), std::string::npos) << "the table replaces the warnings";
    }
  }
  std::string out;
  RunSquare("ascend910", {255, 1, 2, -255, 0, 3}, &out, true, -1);
  EXPECT_NE(out.find("overflow check (ascend910, saturation mode): no node overflowed (2 nodes ran)"),
            std::string::npos) << out;
}

TEST(OverflowWarning, QuietWhenEverythingFits) {
  EXPECT_EQ(RunSquare("ascend910", {255, 1, 2, -255, 0, 3}), "");  // 255^2 = 65025 < 65504
}

}  // namespace
}  // namespace npu
