// The fuzzers of the server's other surfaces (fuzz/*_case.h), on seeds in
// CI: HTTP framing streams, KServe REST bodies, mutated real ONNX models
// (ONNX's conformance models) and TrainingService requests against a server
// in the process. Each case must keep its oracle. NPU_FUZZ_SEEDS=N scales
// every count (N per thousand of the HTTP stream count). Inputs a long
// libFuzzer run found bugs with go to tests/fuzz/regressions/SURFACE/ and are
// replayed here through the same target code.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <google/protobuf/stubs/logging.h>
#include <gtest/gtest.h>

#include "fuzz/choice_source.h"
#include "fuzz/http_case.h"
#include "fuzz/kserve_json_case.h"
#include "fuzz/model_config_case.h"
#include "fuzz/onnx_case.h"
#include "fuzz/training_case.h"

namespace npu::fuzz {
namespace {

namespace fs = std::filesystem;

uint64_t Scaled(uint64_t n) {
  const char* env = std::getenv("NPU_FUZZ_SEEDS");
  return env != nullptr ? std::max<uint64_t>(1, n * std::strtoull(env, nullptr, 10) / 3000) : n;
}

std::vector<std::string> Regressions(const std::string& surface) {
  std::vector<std::string> out;
  const fs::path dir = fs::path(NPU_SOURCE_DIR) / "tests/fuzz/regressions" / surface;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".md") continue;
    std::ifstream f(e.path(), std::ios::binary);
    out.emplace_back(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  return out;
}

TEST(SurfacesFuzzTest, HttpStreamsKeepTheReadersOracle) {
  for (uint64_t seed = 0, n = Scaled(3000); seed < n; ++seed) {
    SeededSource src(seed);
    const HttpStream s = GenerateHttpStream(src);
    ASSERT_EQ(CheckHttpStream(s), "") << "seed " << seed << ":\n" << s.bytes.substr(0, 2000);
  }
  for (const std::string& bytes : Regressions("http")) {
    EXPECT_EQ(CheckHttpStream({bytes, {1, 7, 64}}), "");
    EXPECT_EQ(CheckHttpStream({bytes, {1}}), "");  // every boundary a read can end on
  }
}

TEST(SurfacesFuzzTest, KserveBodiesGetClearAnswers) {
  for (uint64_t seed = 0, n = Scaled(2000); seed < n; ++seed) {
    SeededSource src(seed);
    const KserveBody b = GenerateKserveBody(src);
    ASSERT_EQ(CheckKserveBody(b), "") << "seed " << seed << ":\n" << b.body.substr(0, 2000);
  }
  for (const std::string& body : Regressions("kserve_json")) EXPECT_EQ(CheckKserveBody({body, std::nullopt}), "");
}

TEST(SurfacesFuzzTest, ModelConfigsGetClearAnswers) {
  for (uint64_t seed = 0, n = Scaled(3000); seed < n; ++seed) {
    SeededSource src(seed);
    const std::string text = GenerateModelConfigText(src);
    ASSERT_EQ(CheckModelConfigText(text), "") << "seed " << seed << ":\n" << text.substr(0, 2000);
  }
  for (const std::string& text : Regressions("model_config")) EXPECT_EQ(CheckModelConfigText(text), "");
}

TEST(SurfacesFuzzTest, MutatedRealOnnxModelsGetClearAnswers) {
  google::protobuf::SetLogHandler(nullptr);  // mutated models make protobuf log; the status says it all
  const fs::path cases = "/usr/share/libonnx-testdata/data/node";
  ASSERT_TRUE(fs::is_directory(cases)) << "scripts/install-deps.sh --test installs libonnx-testdata";
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(cases)) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  const uint64_t mutations = Scaled(8);
  int models = 0;
  for (size_t i = 0; i < dirs.size(); i += 16) {  // every 16th: 59 models of many ops and opsets
    std::ifstream f(dirs[i] / "model.onnx", std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    ::onnx::ModelProto seed_model;
    if (!seed_model.ParseFromString(bytes)) continue;
    ++models;
    ASSERT_EQ(CheckOnnxModel(bytes), "") << dirs[i];
    for (uint64_t m = 0; m < mutations; ++m) {
      ::onnx::ModelProto model = seed_model;
      SeededSource src(i * 1000 + m);
      MutateModel(model, src);
      ASSERT_EQ(CheckOnnxModel(model.SerializeAsString()), "") << dirs[i] << " mutation " << m << ":\n"
                                                               << model.DebugString().substr(0, 3000);
    }
  }
  EXPECT_GE(models, 50);
  for (const std::string& bytes : Regressions("onnx")) EXPECT_EQ(CheckOnnxModel(bytes), "");
}

TEST(SurfacesFuzzTest, TrainingRequestsGetClearAnswers) {
  for (uint64_t seed = 0, n = Scaled(40); seed < n; ++seed) {
    SeededSource src(seed);
    ASSERT_EQ(RunTrainingCase(src), "") << "seed " << seed;
  }
  for (const std::string& bytes : Regressions("training")) {
    BytesSource src(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    EXPECT_EQ(RunTrainingCase(src), "");
  }
}

}  // namespace
}  // namespace npu::fuzz
