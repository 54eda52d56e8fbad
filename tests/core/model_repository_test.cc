// The model repository's boundary (issue 28): paths resolve under the
// repository's realpath; a symbolic link that leaves it (a model folder, a
// version folder, a model file) is refused by name and its target never read,
// unless links are followed on purpose; a link that stays inside is fine; and
// no reason quotes a file's bytes. A model's config.pbtxt (Triton's model
// configuration) is read against the fields npuserve serves: an unknown or
// unserved field is refused naming it with its file and line, and so is a
// value npuserve cannot serve; version_policy picks the versions loaded.
#include "server/core/model_repository.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <google/protobuf/util/json_util.h>

#include "client/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/core_test_support.h"

namespace npu::core {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kSecret[] = "SECRET-0xC0FFEE";

std::string ReluJson() {
  client::GraphBuilder g("relu");
  g.Output(g.Relu(g.Input("x", v1::FLOAT32, {4})), "y");
  return testing::GraphJson(g.Build());
}

using testing::WriteFile;

class ModelRepositoryBoundaryTest : public ::testing::Test {
 protected:
  ModelRepositoryBoundaryTest() {
    char dir[] = "/tmp/npu-repo-test.XXXXXX";
    base_ = mkdtemp(dir);
    repo_ = base_ / "repo";
    const fs::path outside = base_ / "outside";
    WriteFile(outside / "model" / "1" / "graph.json", ReluJson());
    WriteFile(outside / "secret.json", std::string(kSecret) + " {");
    WriteFile(repo_ / "good" / "1" / "graph.json", ReluJson());
    fs::create_symlink(outside / "model", repo_ / "linked_model");          // a model folder
    fs::create_directories(repo_ / "linked_version");
    fs::create_symlink(outside / "model" / "1", repo_ / "linked_version" / "1");  // a version folder
    fs::create_directories(repo_ / "linked_file" / "1");
    fs::create_symlink(outside / "secret.json", repo_ / "linked_file" / "1" / "graph.json");  // a model file
    fs::create_directories(repo_ / "inside" / "1");
    fs::create_symlink("../../good/1/graph.json", repo_ / "inside" / "1" / "graph.json");  // stays inside
    WriteFile(repo_ / "garbled" / "1" / "graph.json", std::string(kSecret) + " {");
  }
  ~ModelRepositoryBoundaryTest() override { fs::remove_all(base_); }

  std::unique_ptr<ModelRepository> Open(bool follow) {
    return ModelRepository::Open(repo_.string(), device::PresetByName("ascend910").value(), {},
                                 {.follow_symlinks = follow})
        .value();
  }
  static std::string Reason(const ModelRepository& r, const std::string& name) {
    auto m = r.Get(name);
    EXPECT_TRUE(m.ok()) << m.status();
    return m.ok() ? m->versions.at(0).reason : "";
  }
  static bool Loaded(const ModelRepository& r, const std::string& name) {
    auto m = r.Get(name);
    return m.ok() && m->versions.at(0).graph != nullptr;
  }

  fs::path base_, repo_;
};

TEST_F(ModelRepositoryBoundaryTest, LinksThatLeaveTheRepositoryAreRefusedByName) {
  auto repo = Open(false);
  EXPECT_TRUE(Loaded(*repo, "good"));
  EXPECT_TRUE(Loaded(*repo, "inside")) << Reason(*repo, "inside");
  for (const char* name : {"linked_model", "linked_version", "linked_file"}) {
    EXPECT_FALSE(Loaded(*repo, name)) << name;
    EXPECT_THAT(Reason(*repo, name), HasSubstr("is a symbolic link that leaves the model repository")) << name;
    EXPECT_THAT(Reason(*repo, name), Not(HasSubstr(kSecret)));
    EXPECT_THAT(Reason(*repo, name), Not(HasSubstr((base_ / "outside").string()))) << "the target is not named";
  }
  EXPECT_THAT(Reason(*repo, "linked_model"), HasSubstr("/linked_model is a symbolic link"));
  EXPECT_THAT(Reason(*repo, "linked_version"), HasSubstr("/linked_version/1 is a symbolic link"));
  EXPECT_THAT(Reason(*repo, "linked_file"), HasSubstr("/linked_file/1/graph.json is a symbolic link"));
  // A reload reads the disk again and refuses again.
  EXPECT_THAT(std::string(repo->Load("linked_file").message()), HasSubstr("leaves the model repository"));
}

TEST_F(ModelRepositoryBoundaryTest, FollowingLinksIsAnExplicitChoice) {
  auto repo = Open(true);
  EXPECT_TRUE(Loaded(*repo, "linked_model")) << Reason(*repo, "linked_model");
  EXPECT_TRUE(Loaded(*repo, "linked_version")) << Reason(*repo, "linked_version");
  EXPECT_FALSE(Loaded(*repo, "linked_file"));  // followed, and not a graph: still no bytes quoted
  EXPECT_THAT(Reason(*repo, "linked_file"), Not(HasSubstr(kSecret)));
}

TEST_F(ModelRepositoryBoundaryTest, ReasonsSayWhatIsWrongNotWhatTheFileHolds) {
  auto repo = Open(false);
  const std::string reason = Reason(*repo, "garbled");
  EXPECT_THAT(reason, HasSubstr("garbled/1/graph.json is not an npu.v1.Graph in JSON"));
  EXPECT_THAT(reason, Not(HasSubstr(kSecret)));
}

// A Triton-style model: max_batch_size, a dynamic batcher, instance groups.
constexpr char kTritonConfig[] = R"(name: "mlp"
platform: "onnxruntime_onnx"
max_batch_size: 16
input [ { name: "x" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "y" data_type: TYPE_FP32 dims: [ 4 ] reshape { shape: [ 4 ] } } ]
dynamic_batching {
  preferred_batch_size: [ 8, 16 ]
  max_queue_delay_microseconds: 2000
  preserve_ordering: true
  priority_levels: 2
  default_priority_level: 2
  default_queue_policy { timeout_action: REJECT default_timeout_microseconds: 5000 allow_timeout_override: true max_queue_size: 64 }
}
instance_group [ { count: 2 kind: KIND_GPU gpus: [ 0 ] } ]
version_policy { all { } }
)";

TEST(ModelConfigTest, TritonsServedFieldsParse) {
  auto c = ParseModelConfig(kTritonConfig, "repo/mlp/config.pbtxt", "mlp");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->max_batch_size(), 16);
  ASSERT_EQ(c->input_size(), 1);
  EXPECT_EQ(c->input(0).data_type(), inference::TYPE_FP32);
  EXPECT_EQ(c->dynamic_batching().preferred_batch_size_size(), 2);
  EXPECT_EQ(c->dynamic_batching().max_queue_delay_microseconds(), 2000u);
  EXPECT_EQ(c->dynamic_batching().default_queue_policy().max_queue_size(), 64u);
  EXPECT_EQ(c->instance_group(0).count(), 2);
  EXPECT_TRUE(c->version_policy().has_all());
}

TEST(ModelConfigTest, UnknownAndUnservedFieldsAreRefusedWithFileAndLine) {
  // Triton's `optimization` (unserved here) on line 3, a misspelt field on line 2.
  auto unserved = ParseModelConfig("name: \"m\"\nmax_batch_size: 4\noptimization { }\n", "r/m/config.pbtxt", "m");
  EXPECT_THAT(std::string(unserved.status().message()), HasSubstr("r/m/config.pbtxt:3:"));
  EXPECT_THAT(std::string(unserved.status().message()), HasSubstr("optimization"));
  auto misspelt = ParseModelConfig("name: \"m\"\nmax_batch: 4\n", "r/m/config.pbtxt", "m");
  EXPECT_THAT(std::string(misspelt.status().message()), HasSubstr("r/m/config.pbtxt:2:"));
  EXPECT_THAT(std::string(misspelt.status().message()), HasSubstr("max_batch"));
  auto nested = ParseModelConfig("input [ { name: \"x\" format: FORMAT_NCHW } ]", "f", "m");
  EXPECT_THAT(std::string(nested.status().message()), HasSubstr("format"));
}

TEST(ModelConfigTest, ValuesNpuserveCannotServeAreRefusedByName) {
  const std::pair<const char*, const char*> cases[] = {
      {"platform: \"tensorrt_plan\"", "platform \"tensorrt_plan\" is not served"},
      {"backend: \"pytorch\"", "backend \"pytorch\" is not served"},
      {"name: \"other\"", "is not the model's folder name"},
      {"max_batch_size: 4 instance_group [ { kind: KIND_CPU } ]", "KIND_CPU"},
      {"dynamic_batching { }", "dynamic_batching needs max_batch_size > 0"},
      {"max_batch_size: 4 dynamic_batching { preferred_batch_size: [ 8 ] }", "preferred_batch_size 8"},
      {"max_batch_size: 4 dynamic_batching { priority_levels: 2 default_priority_level: 3 }",
       "default_priority_level 3"},
      {"input [ { name: \"x\" data_type: TYPE_FP32 dims: [ -2 ] } ]", "has dimension -2"},
      {"input [ { name: \"x\" dims: [ 4 ] } ]", "has no data_type"},
  };
  for (const auto& [text, want] : cases) {
    auto c = ParseModelConfig(text, "r/m/config.pbtxt", "m");
    EXPECT_FALSE(c.ok()) << text;
    EXPECT_THAT(std::string(c.status().message()), HasSubstr(want)) << text;
  }
  EXPECT_TRUE(ParseModelConfig("max_batch_size: 4 instance_group [ { kind: KIND_NPU count: 1 } ]", "f", "m").ok());
}

TEST(ModelConfigTest, NestingAndSizeAreBounded) {
  std::string deep;
  for (int i = 0; i < 10000; ++i) deep += "version_policy { ";
  auto c = ParseModelConfig(deep, "f", "m");
  EXPECT_FALSE(c.ok());
  EXPECT_LT(c.status().message().size(), 600u);
  auto big = ParseModelConfig(std::string(kMaxModelConfigBytes + 1, ' '), "f", "m");
  EXPECT_THAT(std::string(big.status().message()), HasSubstr("at most"));
}

TEST_F(ModelRepositoryBoundaryTest, AConfigChoosesTheVersionsAndABadOneKeepsTheModelFromLoading) {
  for (const char* v : {"1", "2", "3"}) WriteFile(repo_ / "versioned" / v / "graph.json", ReluJson());
  WriteFile(repo_ / "versioned" / "config.pbtxt", "version_policy { latest { num_versions: 2 } }\n");
  WriteFile(repo_ / "specific" / "1" / "graph.json", ReluJson());
  WriteFile(repo_ / "specific" / "2" / "graph.json", ReluJson());
  WriteFile(repo_ / "specific" / "config.pbtxt", "version_policy { specific { versions: [ 1 ] } }\n");
  WriteFile(repo_ / "bad_config" / "1" / "graph.json", ReluJson());
  WriteFile(repo_ / "bad_config" / "config.pbtxt", "# a comment\nmax_batch: 1\n");
  auto repo = Open(false);
  auto versioned = repo->Get("versioned");
  ASSERT_TRUE(versioned.ok());
  ASSERT_EQ(versioned->versions.size(), 2u);
  EXPECT_EQ(versioned->versions[0].version, "2");
  EXPECT_EQ(versioned->versions[1].version, "3");
  ASSERT_NE(versioned->config, nullptr);
  auto specific = repo->Get("specific");
  ASSERT_TRUE(specific.ok());
  ASSERT_EQ(specific->versions.size(), 1u);
  EXPECT_EQ(specific->versions[0].version, "1");
  EXPECT_FALSE(Loaded(*repo, "bad_config"));
  EXPECT_THAT(Reason(*repo, "bad_config"), HasSubstr("bad_config/config.pbtxt:2:"));
  EXPECT_THAT(Reason(*repo, "bad_config"), HasSubstr("no field named \"max_batch\""));
  EXPECT_TRUE(Loaded(*repo, "good"));  // no config: as before
  EXPECT_EQ(repo->Get("good")->config, nullptr);
}

}  // namespace
}  // namespace npu::core
