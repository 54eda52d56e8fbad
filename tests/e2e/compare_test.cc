// `npu compare` against a real server, on a graph with two branches and a
// planted divergence: x -> Relu -> Mul(5e4) -> MatMul (values past 65504 reach
// the Cube), beside x -> Abs -> MatMul on values exact in fp16, joined by an
// Add. Every node before the first MatMul passes, that MatMul is the error
// diff_analyze.json names (the Add after it is an error too, but one of its
// inputs is), in saturation mode (65504 against 1e5) and in inf_nan mode
// (inf against a number). Its Cosine agrees with one computed here from
// `npu run --debug`'s intermediate and a float64 reference.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include "absl/strings/str_join.h"
#include "client/cli/compare_command.h"
#include "client/client.h"
#include "client/graph_builder.h"
#include "client/graph_json.h"
#include "client/host_tensor.h"
#include "client/npy.h"
#include "tests/client/test_support.h"
#include "tests/e2e/csv_fields.h"
#include "tests/e2e/server_process.h"

namespace npu {
namespace {

using client::GraphBuilder;
using client::Value;

constexpr int kRows = 4, kIn = 8, kOut = 4;

struct Planted {
  v1::Graph graph;
  std::vector<float> x, w, w2;
  std::vector<std::string> names;  // the nodes, in the order built: relu, scale, big_mm, abs, small_mm, join
};

// x and the weights are multiples of 1/16 and 1/4 within fp16's exact range,
// so the Abs branch is exact on the Cube; Relu(x) * 5e4 reaches 2e5.
Planted MakePlanted() {
  Planted p;
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> sixteenths(-64, 64), quarters(-8, 8);
  for (int i = 0; i < kRows * kIn; ++i) p.x.push_back(sixteenths(rng) / 16.0f);
  for (int i = 0; i < kIn * kOut; ++i) p.w.push_back(quarters(rng) / 4.0f);
  for (int i = 0; i < kIn * kOut; ++i) p.w2.push_back(quarters(rng) / 4.0f);
  GraphBuilder g("planted");
  Value x = g.Input("x", v1::FLOAT32, {kRows, kIn});
  Value w = g.Constant("w", *client::MakeFloatTensor(v1::FLOAT32, {kIn, kOut}, p.w));
  Value w2 = g.Constant("w2", *client::MakeFloatTensor(v1::FLOAT32, {kIn, kOut}, p.w2));
  Value k = g.Constant("k", *client::MakeFloatTensor(v1::FLOAT32, {}, {5e4f}));
  Value big = g.MatMul(g.Mul(g.Relu(x), k), w);
  Value small = g.MatMul(g.Op("Abs", {x}), w2);
  g.Output(g.Add(big, small), "z");
  p.graph = g.Build();
  for (const auto& n : p.graph.nodes()) p.names.push_back(n.name());
  return p;
}

struct CompareOutput {
  std::vector<std::vector<std::string>> rows;  // the CSV, header first
  google::protobuf::Struct analysis;
  std::string summary;
};

CompareOutput RunCompare(const std::string& preset, const std::string& mode, const Planted& p,
                         client::testing::ScratchDir& dir) {
  testing::ServerProcess server({"--preset=" + preset});
  auto c = client::Client::Connect(server.target());
  EXPECT_TRUE(c.ok());
  { std::ofstream(dir.File("planted.json")) << *client::GraphToJson(p.graph); }
  EXPECT_TRUE(client::WriteNpy(dir.File("x.npy"), *client::MakeFloatTensor(v1::FLOAT32, {kRows, kIn}, p.x)).ok());
  client::cli::CompareCommandArgs args;
  args.run.graph_path = dir.File("planted.json");
  args.run.inputs = {"x=" + dir.File("x.npy")};
  args.run.output_dir = dir.File("out_" + mode);
  args.run.float_mode = mode;
  std::ostringstream out, notices;
  const absl::Status s = client::cli::RunCompareCommand(**c, args, out, notices);
  EXPECT_TRUE(s.ok()) << s << notices.str();
  CompareOutput r;
  r.summary = out.str() + notices.str();
  std::ifstream csv(args.run.output_dir + "/compare_result.csv");
  for (std::string line; std::getline(csv, line);) r.rows.push_back(testing::CsvFields(line));
  std::ifstream json(args.run.output_dir + "/diff_analyze.json");
  std::stringstream text;
  text << json.rdbuf();
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(text.str(), &r.analysis).ok()) << text.str();
  EXPECT_TRUE(std::filesystem::exists(args.run.output_dir + "/compare.png")) << r.summary;
  return r;
}

const std::vector<std::string>* RowOf(const CompareOutput& r, const std::string& node) {
  for (const auto& row : r.rows) {
    if (!row.empty() && row[0] == node + ".output.0") return &row;
  }
  return nullptr;
}

TEST(CompareE2E, NamesThePlantedMatMulInEitherMode) {
  const Planted p = MakePlanted();
  const std::string relu = p.names[0], scale = p.names[1], big_mm = p.names[2], abs = p.names[3],
                    small_mm = p.names[4], join = p.names[5];
  for (auto [preset, mode] : {std::pair{"ascend910", "saturation"}, std::pair{"ascend910b", "inf_nan"}}) {
    client::testing::ScratchDir dir;
    const CompareOutput r = RunCompare(preset, mode, p, dir);
    SCOPED_TRACE(std::string(mode) + "\n" + r.summary);
    ASSERT_FALSE(r.rows.empty());
    EXPECT_EQ(absl::StrJoin(r.rows[0], ","),
              "NPU Name,Bench Name,NPU Dtype,Bench Dtype,NPU Tensor Shape,Bench Tensor Shape,Cosine,EucDist,"
              "MaxAbsErr,MaxRelativeErr,One Thousandth Err Ratio,Five Thousandth Err Ratio,Result,Err_message");
    ASSERT_EQ(r.rows.size(), 7u);  // one row per node output
    for (const auto& row : r.rows) ASSERT_EQ(row.size(), 14u) << absl::StrJoin(row, "|");
    EXPECT_EQ((*RowOf(r, relu))[4], "[4, 8]");  // msprobe's shape form
    for (const std::string& n : {relu, scale, abs, small_mm}) {
      const auto* row = RowOf(r, n);
      ASSERT_NE(row, nullptr) << n;
      EXPECT_EQ((*row)[12], "pass") << n;
      EXPECT_EQ((*row)[8], "0") << n << ": exact on both sides";
    }
    ASSERT_NE(RowOf(r, big_mm), nullptr);
    EXPECT_EQ((*RowOf(r, big_mm))[12], "error");
    EXPECT_EQ((*RowOf(r, join))[12], "error");
    const auto& first = r.analysis.fields().at("first_diverging_node").struct_value().fields();
    EXPECT_EQ(first.at("name").string_value(), big_mm);
    EXPECT_EQ(first.at("op_type").string_value(), "MatMul");
    EXPECT_EQ(r.analysis.fields().at("float_mode").string_value(), mode);
    if (std::string(mode) == "inf_nan") {
      EXPECT_NE(first.at("Err_message").string_value().find("inf or nan"), std::string::npos);
    }
    EXPECT_NE(r.summary.find("first diverging node: \"" + big_mm + "\" (MatMul)"), std::string::npos);
  }
}

// The MatMul row's Cosine, from `npu run --debug`'s value of that node and a
// float64 reference of Relu(x) * 5e4 x w.
TEST(CompareE2E, CosineAgreesWithAnIndependentComputation) {
  const Planted p = MakePlanted();
  client::testing::ScratchDir dir;
  const CompareOutput r = RunCompare("ascend910", "saturation", p, dir);
  ASSERT_NE(RowOf(r, p.names[2]), nullptr);
  const double csv_cosine = std::stod((*RowOf(r, p.names[2]))[6]);

  testing::ServerProcess server({"--preset=ascend910"});
  auto c = client::Client::Connect(server.target());
  ASSERT_TRUE(c.ok());
  v1::RunRequest req;
  *req.mutable_graph() = p.graph;
  req.add_inputs()->set_name("x");
  *req.mutable_inputs(0)->mutable_tensor() = *client::MakeFloatTensor(v1::FLOAT32, {kRows, kIn}, p.x);
  req.mutable_options()->set_debug(true);
  auto resp = (*c)->Run(req);
  ASSERT_TRUE(resp.ok()) << resp.status();
  std::vector<float> npu;
  const std::string big_value = p.graph.nodes(2).outputs(0);
  for (const auto& v : resp->intermediates()) {
    if (v.name() == big_value) npu = *client::TensorToFloats(v.tensor());
  }
  ASSERT_EQ(npu.size(), static_cast<size_t>(kRows * kOut));
  double dot = 0, nn = 0, rr = 0;
  for (int i = 0; i < kRows; ++i) {
    for (int j = 0; j < kOut; ++j) {
      double ref = 0;
      for (int k = 0; k < kIn; ++k) ref += std::max(0.0, double{p.x[i * kIn + k]}) * 5e4 * p.w[k * kOut + j];
      const double n = npu[i * kOut + j];
      dot += n * ref, nn += n * n, rr += ref * ref;
    }
  }
  const double cosine = dot / std::sqrt(nn * rr);
  EXPECT_NEAR(csv_cosine, cosine, 1e-3);
  EXPECT_LT(cosine, 0.999);  // the planted divergence is visible in the cosine too
}

TEST(CompareE2E, BadArgumentsAreUsageErrors) {
  testing::ServerProcess server;
  auto c = client::Client::Connect(server.target());
  ASSERT_TRUE(c.ok());
  client::cli::CompareCommandArgs args;
  args.run.graph_path = "/nonexistent/model.onnx";
  args.run.output_dir = "/tmp/unused";
  args.bench = "fp64";
  std::ostringstream out, notices;
  const absl::Status s = client::cli::RunCompareCommand(**c, args, out, notices);
  EXPECT_NE(s.message().find("--bench fp64 is not offered"), std::string::npos) << s;
}

}  // namespace
}  // namespace npu
