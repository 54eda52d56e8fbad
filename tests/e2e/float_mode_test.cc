// The float mode of the fp16 conversions, per run (RunOptions.float_mode,
// `npu run --float-mode`), against a real server on each preset: the
// issue's test vectors, exp(12) in fp16, sqrt(-1) in fp16, a Cast of 70000 and
// a MatMul of [1e5, 3] with [1, -1], give the saturated value (65504, 0,
// 65504, 65501) or IEEE's (inf, NaN, inf, inf) by the mode alone, whatever the
// preset; plans of a registered graph are kept per mode; an unknown mode is
// refused by name.
#include <cmath>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "client/cli/cli_status.h"
#include "client/cli/run_command.h"
#include "client/client.h"
#include "client/graph_builder.h"
#include "client/graph_json.h"
#include "client/host_tensor.h"
#include "client/npy.h"
#include "tests/client/test_support.h"
#include "tests/e2e/server_process.h"

namespace npu {
namespace {

using client::GraphBuilder;
using client::Value;

v1::Tensor Tensor(v1::DataType dtype, std::vector<int64_t> shape, const std::vector<float>& values) {
  auto t = client::MakeFloatTensor(dtype, std::move(shape), values);
  EXPECT_TRUE(t.ok()) << t.status();
  return *t;
}

// exp(h), sqrt(s) in fp16; Cast(c) to fp16; m (fp32 [1, 2]) x [1; -1] in fp32.
v1::Graph Vectors() {
  GraphBuilder g("float_modes");
  Value h = g.Input("h", v1::FLOAT16, {1});
  Value s = g.Input("s", v1::FLOAT16, {1});
  Value c = g.Input("c", v1::FLOAT32, {1});
  Value m = g.Input("m", v1::FLOAT32, {1, 2});
  g.Output(g.Op("Exp", {h}), "exp");
  g.Output(g.Op("Sqrt", {s}), "sqrt");
  g.Output(g.Op("Cast", {c}, {{"to", client::AttrInt(10)}}), "cast");  // ONNX FLOAT16
  g.Output(g.Op("MatMul", {m, g.Constant("w", Tensor(v1::FLOAT32, {2, 1}, {1.0f, -1.0f}))}), "matmul");
  return g.Build();
}

void AddInputs(v1::RunRequest& req) {
  auto add = [&](const char* name, v1::Tensor t) {
    v1::RunInput* in = req.add_inputs();
    in->set_name(name);
    *in->mutable_tensor() = std::move(t);
  };
  add("h", Tensor(v1::FLOAT16, {1}, {12.0f}));
  add("s", Tensor(v1::FLOAT16, {1}, {-1.0f}));
  add("c", Tensor(v1::FLOAT32, {1}, {70000.0f}));
  add("m", Tensor(v1::FLOAT32, {1, 2}, {1e5f, 3.0f}));
}

double Out(const v1::RunResponse& r, const std::string& name) {
  for (const auto& o : r.outputs()) {
    if (o.name() != name) continue;
    auto f = client::TensorToFloats(o.tensor());
    EXPECT_TRUE(f.ok()) << f.status();
    return f.ok() && !f->empty() ? (*f)[0] : 0.0;
  }
  ADD_FAILURE() << "no output " << name;
  return 0.0;
}

// Each vector as the mode gives it.
void ExpectMode(const v1::RunResponse& r, bool saturate, const std::string& where) {
  SCOPED_TRACE(where);
  if (saturate) {
    EXPECT_EQ(Out(r, "exp"), 65504.0);
    EXPECT_EQ(Out(r, "sqrt"), 0.0);
    EXPECT_EQ(Out(r, "cast"), 65504.0);
    EXPECT_EQ(Out(r, "matmul"), 65501.0);
    EXPECT_EQ(r.profile().float_mode(), v1::FLOAT_MODE_SATURATION);
  } else {
    EXPECT_EQ(Out(r, "exp"), INFINITY);
    EXPECT_TRUE(std::isnan(Out(r, "sqrt")));
    EXPECT_EQ(Out(r, "cast"), INFINITY);
    EXPECT_EQ(Out(r, "matmul"), INFINITY);
    EXPECT_EQ(r.profile().float_mode(), v1::FLOAT_MODE_INF_NAN);
  }
  // Every vector overflows in either mode, and the float status says so.
  EXPECT_GT(r.profile().overflow_elements(), 0u);
}

TEST(FloatModeE2E, TheRunsModeDecidesOnEitherPreset) {
  for (const char* preset : {"ascend910", "ascend910b"}) {
    testing::ServerProcess server({std::string("--preset=") + preset});
    auto c = client::Client::Connect(server.target());
    ASSERT_TRUE(c.ok()) << c.status();
    const bool preset_saturates = std::string(preset) == "ascend910";
    for (auto [mode, saturate] : {std::pair{v1::FLOAT_MODE_PRESET, preset_saturates},
                                  std::pair{v1::FLOAT_MODE_SATURATION, true},
                                  std::pair{v1::FLOAT_MODE_INF_NAN, false}}) {
      v1::RunRequest req;
      *req.mutable_graph() = Vectors();
      AddInputs(req);
      req.mutable_options()->set_profile(true);
      req.mutable_options()->set_float_mode(mode);
      auto r = (*c)->Run(req);
      ASSERT_TRUE(r.ok()) << r.status();
      ExpectMode(*r, saturate, std::string(preset) + " " + v1::FloatMode_Name(mode));
    }
  }
}

// A registered graph's plan is made per (preset, mode): runs that alternate
// modes each get their own mode's numbers, not a plan cached for the other.
TEST(FloatModeE2E, ARegisteredGraphKeepsAPlanPerMode) {
  testing::ServerProcess server({"--preset=ascend910"});
  auto c = client::Client::Connect(server.target());
  ASSERT_TRUE(c.ok()) << c.status();
  v1::RegisterGraphRequest reg;
  *reg.mutable_graph() = Vectors();
  auto id = (*c)->RegisterGraph(reg);
  ASSERT_TRUE(id.ok()) << id.status();
  for (int round = 0; round < 2; ++round) {
    for (auto mode : {v1::FLOAT_MODE_INF_NAN, v1::FLOAT_MODE_PRESET, v1::FLOAT_MODE_SATURATION}) {
      v1::RunRequest req;
      req.set_graph_id(id->graph_id());
      AddInputs(req);
      req.mutable_options()->set_profile(true);
      req.mutable_options()->set_float_mode(mode);
      auto r = (*c)->Run(req);
      ASSERT_TRUE(r.ok()) << r.status();
      ExpectMode(*r, mode != v1::FLOAT_MODE_INF_NAN, v1::FloatMode_Name(mode));
    }
  }
}

TEST(FloatModeE2E, AnUnknownModeIsRefusedByName) {
  testing::ServerProcess server;
  auto c = client::Client::Connect(server.target());
  ASSERT_TRUE(c.ok()) << c.status();
  v1::RunRequest req;
  *req.mutable_graph() = Vectors();
  AddInputs(req);
  req.mutable_options()->set_float_mode(static_cast<v1::FloatMode>(7));
  auto r = (*c)->Run(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("options.float_mode 7 is unknown"), std::string::npos) << r.status();
  // The server keeps serving.
  req.mutable_options()->set_float_mode(v1::FLOAT_MODE_INF_NAN);
  EXPECT_TRUE((*c)->Run(req).ok());
}

// `npu run --float-mode inf_nan` on the saturating 910 writes IEEE's inf;
// a word that is no mode is a usage error naming the modes.
TEST(FloatModeE2E, NpuRunTakesTheMode) {
  testing::ServerProcess server({"--preset=ascend910"});
  auto c = client::Client::Connect(server.target());
  ASSERT_TRUE(c.ok()) << c.status();
  client::testing::ScratchDir dir;
  GraphBuilder g("exp");
  g.Output(g.Op("Exp", {g.Input("h", v1::FLOAT16, {1})}), "y");
  auto json = client::GraphToJson(g.Build());
  ASSERT_TRUE(json.ok());
  { std::ofstream(dir.File("exp.json")) << *json; }
  ASSERT_TRUE(client::WriteNpy(dir.File("h.npy"), Tensor(v1::FLOAT16, {1}, {12.0f})).ok());
  for (auto [mode, want] : {std::pair{"", 65504.0}, std::pair{"inf_nan", double{INFINITY}},
                            std::pair{"saturation", 65504.0}}) {
    client::cli::RunCommandArgs args;
    args.graph_path = dir.File("exp.json");
    args.inputs = {"h=" + dir.File("h.npy")};
    args.output_dir = dir.File(std::string("out_") + mode);
    args.float_mode = mode;
    std::ostringstream out, notices;
    ASSERT_TRUE(client::cli::RunRunCommand(**c, args, out, notices).ok()) << notices.str();
    auto y = client::ReadNpy(args.output_dir + "/y.npy");
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ((*client::TensorToFloats(*y))[0], want) << "--float-mode " << mode;
  }
  client::cli::RunCommandArgs args;
  args.graph_path = dir.File("exp.json");
  args.inputs = {"h=" + dir.File("h.npy")};
  args.output_dir = dir.File("out_bad");
  args.float_mode = "ieee";
  std::ostringstream out, notices;
  const absl::Status s = client::cli::RunRunCommand(**c, args, out, notices);
  EXPECT_TRUE(client::cli::IsUsageError(s)) << s;
  EXPECT_NE(s.message().find("--float-mode ieee is not one of saturation, inf_nan"), std::string::npos) << s;
}

}  // namespace
}  // namespace npu
